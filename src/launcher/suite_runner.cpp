#include "launcher/suite_runner.h"

#include <filesystem>

#include "common/atomic_file.h"
#include "common/errors.h"
#include "common/json_text.h"
#include "common/log.h"
#include "launcher/child_command.h"
#include "launcher/child_process.h"
#include "launcher/rank_run.h"
#include "launcher/temporary_folder.h"
#include "results/result_path.h"
#include "run/resolve_benchmark.h"
#include "run/run_benchmark.h"
#include "system/machine.h"

namespace gpubench {
namespace fs = std::filesystem;
namespace {

// One benchmark in a child given it as a benchmark file, writing into the suite's private
// folder: its result, or a failed one saying how the child ended.
Result run_in_child(const ResolvedBenchmark& benchmark, size_t index, const TemporaryFolder& folder,
                    const SuiteRunOptions& options) {
  const std::string child_output = folder.file("result-" + std::to_string(index) + ".json");
  const std::string benchmark_file = folder.file("benchmark-" + std::to_string(index) + ".json");
  const ProcessOutcome outcome = run_child_process(
      child_command_line(benchmark, benchmark_file,
                         {options.executable.empty() ? current_executable() : options.executable,
                          options.log_level, child_output}),
      options.timeout_seconds, /*discard_stdout=*/true);  // the suite prints one table
  std::error_code ignored;
  fs::remove(benchmark_file, ignored);
  std::optional<Result> written;
  if (!outcome.timed_out) written = read_result_if_present(child_output);
  fs::remove(child_output, ignored);
  if (written) return *written;
  return failed_result_for(benchmark, "benchmark process " + outcome.describe() +
                                          (outcome.timed_out ? "" : " without writing a result"));
}

// One benchmark, in a child or, for one of several ranks, as its ranks started from here: a
// child between them would only start them (a LibTorch start each). A batch search runs its
// probes from a child first.
Result run_apart(const ResolvedBenchmark& benchmark, size_t index, const TemporaryFolder& folder,
                 const SuiteRunOptions& options) {
  if (!benchmark.runs_process_group() || benchmark.batch_size == kSearchBatchSize) {
    return run_in_child(benchmark, index, folder, options);
  }
  LocalRanksOptions ranks;
  ranks.executable = options.executable.empty() ? current_executable() : options.executable;
  ranks.log_level = options.log_level;
  ranks.run_limit_seconds = options.timeout_seconds;
  ranks.discard_stdout = true;
  return run_local_ranks(benchmark, ranks);
}

}  // namespace

std::vector<SuiteBenchmark> resolve_suite_entries(const std::vector<SuiteEntry>& entries,
                                                  bool skip_unavailable) {
  const MachineFacts machine = read_machine_facts();
  std::vector<SuiteBenchmark> benchmarks;
  for (const SuiteEntry& entry : entries) {
    try {
      benchmarks.push_back({resolve(entry.request, machine), std::nullopt});
    } catch (const Unavailable& missing) {
      if (!skip_unavailable) throw UsageError(entry.origin + ": " + missing.what());
      benchmarks.push_back(
          {as_requested(entry.request),
           Unavailable(missing.requirement(), entry.origin + ": " + missing.what())});
    } catch (const UsageError& error) {
      throw UsageError(entry.origin + ": " + error.what());
    }
  }
  return benchmarks;
}

std::vector<Result> run_suite(const std::vector<SuiteBenchmark>& benchmarks,
                              const SuiteRunOptions& options) {
  ensure_writable_directory(options.output_directory);
  const TemporaryFolder folder("gpubench-suite");
  std::vector<Result> results;
  for (size_t i = 0; i < benchmarks.size(); ++i) {
    throw_if_interrupted();
    const ResolvedBenchmark& benchmark = benchmarks[i].benchmark;
    // The result takes a new name in the output folder, never one another run (another suite
    // writing there) has taken meanwhile.
    const std::string wanted = prepare_result_path(options.output_directory, benchmark);
    Result result;
    if (benchmarks[i].unavailable) {
      result = skipped_result_for(benchmark, *benchmarks[i].unavailable);
      log::info("[{}/{}] {}: skipped, this machine lacks {}", i + 1, benchmarks.size(),
                benchmark.model, result.requirement);
    } else {
      log::info("[{}/{}] {} {} on {} (batch {})", i + 1, benchmarks.size(), benchmark.model,
                to_string(benchmark.precision), to_string(benchmark.device), benchmark.batch_size);
      result = run_apart(benchmark, i, folder, options);
    }
    log::info("result: {}", write_new_file(wanted, json_text(result_to_json(result)) + "\n"));
    results.push_back(std::move(result));
  }
  return results;
}

}  // namespace gpubench
