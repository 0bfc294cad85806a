// The public API's one benchmark in this process (include/gpubench/benchmark.h): the settings by
// their suite keys, as a suite entry gives them, through the field table; resolved here and run
// through the one launcher's launch, as `gpubench train` runs one device.
#include "gpubench/benchmark.h"

#include <string>

#include "api/run_result.h"
#include "common/input_limits.h"
#include "launcher/launch.h"
#include "settings/benchmark_fields.h"

namespace gpubench {

RunResult run_in_this_process(const RequestedSettings& settings) {
  BenchmarkRequest request;
  for (const auto& [key, text] : settings) {
    const BenchmarkField* field = find_benchmark_field(key);
    if (field == nullptr || !field->suite) {
      throw UsageError("unknown setting '" + echoed(key) +
                       "': the keys are the suite keys of docs/reference/options.md");
    }
    set_requested_field(request, key, field_value_from_text(*field, text));
  }
  const ResolvedBenchmark benchmark = resolve_here(request);
  if (benchmark.runs_process_group()) {
    throw UsageError("run_in_this_process runs one process, not " +
                     (benchmark.gpus > 1 ? std::to_string(benchmark.gpus) + " ranks"
                                         : std::string("a process group of one")) +
                     ": data parallelism and sharding run through the command line (train "
                     "--gpus N, --shard)");
  }
  if (benchmark.batch_size == kSearchBatchSize) {
    throw UsageError(
        "run_in_this_process runs one process, and batch_size max searches with "
        "probes in child processes: give a batch size, or run train --batch-size "
        "max through the command line");
  }
  BenchmarkLaunch alone;
  alone.benchmark = benchmark;
  return run_result_of(launch(alone, LaunchOptions{}));
}

}  // namespace gpubench
