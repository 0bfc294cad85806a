#include "process/suite_runner.h"

#include <cstdio>
#include <filesystem>

#include "common/atomic_file.h"
#include "common/errors.h"
#include "common/log.h"
#include "process/child_process.h"
#include "process/temporary_folder.h"
#include "process/train_child.h"
#include "results/result_path.h"
#include "run/benchmark_runner.h"

namespace gpubench {
namespace fs = std::filesystem;
namespace {

// "0.5", "300": the limit as it was given, not cut to whole seconds.
std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", seconds);
  return text;
}

}  // namespace

std::vector<Result> run_suite(const std::vector<ResolvedBenchmark>& benchmarks,
                              const SuiteRunOptions& options) {
  ensure_writable_directory(options.output_directory);
  const TemporaryFolder folder("gpubench-suite");
  std::vector<Result> results;
  for (size_t i = 0; i < benchmarks.size(); ++i) {
    throw_if_interrupted();
    const ResolvedBenchmark& benchmark = benchmarks[i];
    // The child writes into the suite's private folder; the result then takes a new name in the
    // output folder, never one another run (another suite writing there) has taken meanwhile.
    const std::string wanted = prepare_result_path(options.output_directory, benchmark);
    const std::string child_output = folder.file("result-" + std::to_string(i) + ".json");
    log::info("[{}/{}] {} {} on {} (batch {})", i + 1, benchmarks.size(), benchmark.model,
              to_string(benchmark.precision), to_string(benchmark.device), benchmark.batch_size);
    const std::string benchmark_file = folder.file("benchmark-" + std::to_string(i) + ".json");
    const ProcessOutcome outcome = run_child_process(
        train_child_command(benchmark, benchmark_file,
                            {options.executable, options.log_level, child_output}),
        options.timeout_seconds, /*discard_stdout=*/true);  // the suite prints one table
    std::error_code ignored;
    fs::remove(benchmark_file, ignored);

    std::optional<Result> written;
    if (!outcome.timed_out) written = read_result_if_present(child_output);
    fs::remove(child_output, ignored);
    if (!written) {
      written = failed_result_for(
          benchmark,
          "benchmark process " + outcome.describe() +
              (outcome.timed_out ? " after " + seconds_text(options.timeout_seconds) + " s"
                                 : " without writing a result"));
    }
    const std::string path = write_new_file(wanted, result_to_json(*written).dump(2) + "\n");
    log::info("result: {}", path);
    results.push_back(*written);
  }
  return results;
}

}  // namespace gpubench
