// Runs one resolved benchmark on this process's device and measures it (docs/method.md).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "distributed/collectives.h"
#include "results/result.h"
#include "spec/benchmark.h"
#include "train/fault_injection.h"
#include "train/measurement.h"

namespace gpubench {

// This process's place in a data-parallel run. The default is a single process.
struct RankContext {
  Collectives* collectives = nullptr;  // connected to the other ranks; null: one process
  int device_index = 0;                // CUDA device of this rank
  std::string launcher = "none";
};

struct RunContext {
  RankContext rank;
  ProgressCallback progress;            // rank 0's; empty for the others
  std::optional<FaultInjection> fault;  // made to happen at the first timed step
  // The host memory this process may take, which the run's planned bytes are checked against
  // (train/memory_plan.h); unset: MemAvailable.
  std::optional<int64_t> host_memory_available;
};

// Never throws for a run-time failure: an out-of-memory gives status oom, anything else
// status failed, both with the error text. With several ranks every rank runs this; the
// result's throughput is global and its metrics are rank 0's, with the exposed communication
// and peak memory of the worst rank.
Result run_benchmark(const ResolvedBenchmark& benchmark, const RunContext& context = {});

// The result before any measurement: the benchmark, its planned placement (planned_result),
// the model's facts, the unit, the system as it is now. run_benchmark starts from it, and a
// parent records a child that died with it (failed_result_for), so both are built alike.
Result result_for(const ResolvedBenchmark& benchmark);
Result failed_result_for(const ResolvedBenchmark& benchmark, const std::string& error);

}  // namespace gpubench
