#include "process/suite_runner.h"

#include <filesystem>

#include "common/atomic_file.h"
#include "common/errors.h"
#include "common/log.h"
#include "process/child_process.h"
#include "process/temporary_folder.h"
#include "process/train_child.h"
#include "results/result_path.h"
#include "train/benchmark_runner.h"

namespace gpubench {
namespace fs = std::filesystem;

std::vector<Result> run_suite(const std::vector<ResolvedBenchmark>& benchmarks,
                              const SuiteRunOptions& options) {
  ensure_writable_directory(options.output_directory);
  const TemporaryFolder folder("gpubench-suite");
  std::vector<Result> results;
  for (size_t i = 0; i < benchmarks.size(); ++i) {
    throw_if_interrupted();
    const ResolvedBenchmark& benchmark = benchmarks[i];
    const std::string path = prepare_result_path(options.output_directory, benchmark);
    log::info("[{}/{}] {} {} on {} (batch {})", i + 1, benchmarks.size(), benchmark.model,
              to_string(benchmark.precision), to_string(benchmark.device), benchmark.batch_size);
    const std::string benchmark_file = folder.file("benchmark-" + std::to_string(i) + ".json");
    const ProcessOutcome outcome =
        run_child_process(train_child_command(benchmark, benchmark_file,
                                              {options.executable, options.log_level, path}),
                          options.timeout_seconds);
    std::error_code ignored;
    fs::remove(benchmark_file, ignored);

    std::optional<Result> written;
    if (!outcome.timed_out) written = read_result_if_present(path);
    if (!written) {
      written = failed_result_for(
          benchmark,
          "benchmark process " + outcome.describe() +
              (outcome.timed_out
                   ? " after " + std::to_string(static_cast<int>(options.timeout_seconds)) + " s"
                   : " without writing a result"));
      write_json_atomically(path, result_to_json(*written));
    }
    results.push_back(*written);
  }
  return results;
}

}  // namespace gpubench
