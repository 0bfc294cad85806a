#include "benchmark_command.h"

#include <functional>
#include <mutex>
#include <thread>

#include "common/errors.h"
#include "common/log.h"
#include "modeling/model_registry.h"
#include "reporters.h"
#include "results/result_path.h"
#include "system/timing_conditions.h"

namespace gpubench::cli {

std::string progress_unit(const ResolvedBenchmark& benchmark) {
  return ModelRegistry::instance().get(benchmark.model).throughput_unit(benchmark.task);
}

ProgressPrinter progress_for(const ResolvedBenchmark& benchmark) {
  return ProgressPrinter(benchmark.model, progress_unit(benchmark));
}

LaunchOptions runner_options(const GlobalOptions& global, ProgressPrinter* progress) {
  LaunchOptions options;
  options.log_level = global.log_level;
  if (progress != nullptr) options.progress = std::ref(*progress);
  return options;
}

void warn_of_timing_hazards() {
  static std::once_flag warned;  // an infer sweep runs here once a batch
  std::call_once(warned, [] {
    for (const std::string& hazard : timing_hazards(std::thread::hardware_concurrency())) {
      log::warn("{}", hazard);
    }
  });
}

int run_and_report(const ResolvedBenchmark& benchmark, const std::string& output,
                   const GlobalOptions& global, Result* kept, bool with_table) {
  const std::string path = prepare_result_path(output, benchmark);
  warn_of_timing_hazards();
  ProgressPrinter progress = progress_for(benchmark);
  const Result result = launch({benchmark, std::nullopt}, runner_options(global, &progress));
  if (kept != nullptr) *kept = result;
  return report_result(result, path, !names_result_file(output), with_table);
}

void run_launched_rank(const BenchmarkLaunch& rank, const std::string& output,
                       const GlobalOptions& global) {
  int code = kExitOk;
  try {
    // The path of the result this rank reports is checked before the run.
    const std::string path = rank.reports() ? prepare_result_path(output, rank.benchmark) : "";
    ProgressPrinter progress = progress_for(rank.benchmark);
    const Result result = launch(rank, runner_options(global, &progress));
    code = rank.reports() ? report_result(result, path, !names_result_file(output))
                          : exit_code_of(result);
  } catch (const UsageError& error) {  // not unwinding past c10d's threads
    code = usage_error(error.what());
  }
  end_process(code);
}

}  // namespace gpubench::cli
