#include "benchmark_run.h"

#include <cstdio>
#include <cstdlib>
#include <functional>

#include "common/errors.h"
#include "modeling/model_registry.h"
#include "reporters.h"
#include "results/result_path.h"

namespace gpubench::cli {

ProgressPrinter progress_for(const ResolvedBenchmark& benchmark) {
  return ProgressPrinter(
      benchmark.model,
      ModelRegistry::instance().get(benchmark.model).throughput_unit(benchmark.task));
}

RunnerOptions runner_options(const GlobalOptions& global, ProgressPrinter* progress) {
  RunnerOptions options;
  options.log_level = global.log_level;
  if (progress != nullptr) options.progress = std::ref(*progress);
  return options;
}

[[noreturn]] void run_launched_rank(const LaunchedRank& rank, const std::string& output,
                                    const GlobalOptions& global) {
  int code = kExitOk;
  try {
    // Rank 0 of another launcher writes the result: its path is checked before the run.
    const bool reports = rank.launch.rank == 0 && rank.launch.rank_results_folder.empty();
    const std::string path = reports ? prepare_result_path(output, rank.benchmark) : "";
    ProgressPrinter progress = progress_for(rank.benchmark);
    const RankOutcome outcome = run_as_launched_rank(rank, runner_options(global, &progress));
    code = outcome.result.status == RunStatus::kOk ? kExitOk : kExitBenchmarkFailed;
    if (outcome.to_report) code = report_result(outcome.result, path, !names_result_file(output));
  } catch (const UsageError& error) {  // _Exit below, not unwinding past c10d's threads
    code = usage_error(error.what());
  }
  code = with_output_checked(code);
  std::fflush(nullptr);
  std::_Exit(code);
}

}  // namespace gpubench::cli
