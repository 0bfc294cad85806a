// The hidden child subcommand (process/child_command.h): what suite entries, gpubench's ranks and
// batch probes run. A resolved benchmark file run as given, never resolved again; the result
// goes to --output (a rank's to its rank file). Nobody types it; it is left out of --help.
#include <cstdio>
#include <cstdlib>

#include "benchmark_run.h"
#include "commands.h"
#include "common/errors.h"

namespace gpubench::cli {

void add_run_benchmark_command(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  struct ChildOptions {
    std::string benchmark_file;
    std::string output;
  };
  auto options = std::make_shared<ChildOptions>();
  CLI::App* cmd = app.add_subcommand(kChildSubcommand, "");
  cmd->group("");
  cmd->add_option("benchmark_file", options->benchmark_file, "A resolved benchmark file")
      ->required();
  cmd->add_option("--output,-o", options->output, "The result file");
  cmd->callback([options, &global, &exit_code] {
    int code = kExitOk;
    try {
      const Result result =
          run_child(options->benchmark_file, options->output, runner_options(global, nullptr));
      code = result.status == RunStatus::kOk ? kExitOk : kExitBenchmarkFailed;
    } catch (const UsageError& error) {  // _Exit below: a rank leaves c10d's threads behind
      code = usage_error(error.what());
    }
    exit_code = with_output_checked(code);
    std::fflush(nullptr);
    std::_Exit(exit_code);
  });
}

}  // namespace gpubench::cli
