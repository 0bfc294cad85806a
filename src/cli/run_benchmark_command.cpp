// The hidden child subcommand (launcher/child_command.h): what suite entries, gpubench's ranks and
// batch probes run. A resolved benchmark file run as given, never resolved again, through the
// launcher's one entry point (launcher/launch.h); the result goes to --output (a rank's to its rank
// file, which the launcher writes). Nobody types it; it is left out of --help.
#include <optional>

#include "benchmark_command.h"
#include "commands.h"
#include "common/errors.h"
#include "reporters.h"
#include "settings/benchmark_fields.h"

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
      const BenchmarkLaunch launch{read_benchmark_file(options->benchmark_file), launched_by()};
      if (launch.rank && !launch.under_gpubench()) {
        throw UsageError(std::string(kChildSubcommand) +
                         " is what gpubench starts its children with; under " +
                         launch.rank->launcher + " run `gpubench train` or `gpubench infer`");
      }
      if (!launch.rank && options->output.empty()) {
        throw UsageError("--output names the child's result file");
      }
      // A suite's child, or rank 0 of gpubench's own ranks, shows the progress (stderr is the
      // parent's); a batch probe's child runs at --log-level warn and shows none.
      const ResolvedBenchmark& benchmark = launch.benchmark;
      const bool shows_progress = !launch.rank || launch.rank->rank == 0;
      const std::string label =
          launch.rank ? " rank 0 of " + std::to_string(launch.rank->world_size) : "";
      std::optional<ProgressPrinter> progress;
      if (shows_progress) progress.emplace(benchmark.model + label, progress_unit(benchmark));
      const Result result =
          gpubench::launch(launch, runner_options(global, progress ? &*progress : nullptr));
      if (!launch.rank) save_result(result, options->output, /*new_name=*/false);
      code = exit_code_of(result);
    } catch (const UsageError& error) {  // not unwinding past a rank's c10d threads
      code = usage_error(error.what());
    }
    end_process(code);
  });
}

}  // namespace gpubench::cli
