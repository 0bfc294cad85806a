#include "gpubench/suite_runner.h"

#include "gpubench/log.h"

#include "gpubench/benchmark_fields.h"
#include "gpubench/benchmark_runner.h"
#include "gpubench/child_process.h"
#include "gpubench/result_output.h"

namespace gpubench {

std::vector<Result> run_suite(const std::vector<BenchmarkSpec>& specs,
                              const SuiteRunOptions& options) {
  ensure_writable_directory(options.output_directory);
  std::vector<Result> results;
  for (size_t i = 0; i < specs.size(); ++i) {
    const BenchmarkSpec& spec = specs[i];
    const std::string path = prepare_result_path(options.output_directory, spec);
    log::info("[{}/{}] {} {} on {} (batch {})", i + 1, specs.size(), spec.model,
              to_string(spec.precision), to_string(spec.device), spec.batch_size);
    std::vector<std::string> argv{options.executable, "--log-level", options.log_level, "train"};
    for (auto& argument : to_train_arguments(spec)) argv.push_back(std::move(argument));
    argv.insert(argv.end(), {"--output", path});
    const ProcessOutcome outcome = run_child_process(argv, options.timeout_seconds);

    std::optional<Result> written;
    if (!outcome.timed_out) written = read_result_if_present(path);
    if (!written) {
      written = failed_result_for(
          spec,
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
