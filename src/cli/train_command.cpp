// gpubench train: one benchmark, one result file. Parses, hands the benchmark to the launcher
// (launcher/launch.h: one process, N local ranks, a batch search, or a launcher's rank) and the
// result to the reporters (cli/reporters.h).
#include "benchmark_command.h"
#include "benchmark_options.h"
#include "benchmark_to_run.h"
#include "commands.h"
#include "common/errors.h"
#include "launcher/launch.h"
#include "reporters.h"

namespace gpubench::cli {

namespace {

int run_train(const TrainOptions& options, const GlobalOptions& global) {
  const BenchmarkRequest request = requested(*options.settings);
  if (const auto launch = launched_by()) {
    if (!options.settings->benchmark_file.empty()) {
      throw UsageError("--benchmark-file is not for a launcher's ranks; give them the options");
    }
    run_launched_rank(launch_as_rank(request, *launch), options.output, global);
  }
  return run_and_report(benchmark_to_run(*options.settings, request), options.output, global);
}

}  // namespace

void add_train_command(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  auto options = std::make_shared<TrainOptions>();
  CLI::App* cmd = add_train_subcommand(app, options);
  cmd->callback([options, &global, &exit_code] {
    set_results_format(options->format);
    exit_code = naming_options([&] { return run_train(*options, global); });
  });
}

}  // namespace gpubench::cli
