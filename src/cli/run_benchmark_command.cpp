// The hidden child subcommand (process/child_command.h): what suite entries, gpubench's ranks and
// batch probes run. A resolved benchmark file run as given, never resolved again; the result
// goes to --output (a rank's to its rank file). Nobody types it; it is left out of --help.
#include "benchmark_command.h"
#include "commands.h"
#include "common/errors.h"
#include "reporters.h"

namespace gpubench::cli {

void add_run_benchmark_command(CLI::App& app, const GlobalOptions& global) {
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
  cmd->callback([options, &global] {
    int code = kExitOk;
    try {
      code = exit_code_of(
          run_child(options->benchmark_file, options->output, runner_options(global, nullptr)));
    } catch (const UsageError& error) {  // not unwinding past a rank's c10d threads
      code = usage_error(error.what());
    }
    end_process(code);
  });
}

}  // namespace gpubench::cli
