// Runs one resolved benchmark on this process's device and measures it (DESIGN.md, Measurement).
#pragma once

#include <functional>
#include <string>

#include "gpubench/benchmark_spec.h"
#include "gpubench/collectives.h"
#include "gpubench/result.h"

namespace gpubench {

struct ProgressEvent {
  bool warmup = false;
  int trial = 0;  // 1-based; 0 during warm-up
  int trials = 0;
  int step = 0;  // 1-based within the phase
  int steps = 0;
  double samples_per_second = 0;  // so far in this trial (host clock; 0 during warm-up)
};
using ProgressCallback = std::function<void(const ProgressEvent&)>;

// This process's place in a data-parallel run. The default is a single process.
struct RankContext {
  Collectives* collectives = nullptr;  // connected to the other ranks; null: one process
  int device_index = 0;                // CUDA device of this rank
  std::string launcher = "none";
};

// Never throws for a run-time failure: an out-of-memory gives status oom, anything else
// status failed, both with the error text. Throws UsageError for a spec it cannot run. With
// several ranks every rank runs this; the result's throughput is global and its metrics are
// rank 0's, with the exposed communication and peak memory of the worst rank.
Result run_benchmark(const BenchmarkSpec& resolved, const ProgressCallback& progress = {},
                     const RankContext& rank = {});

// A result with the benchmark's identity filled in (spec, model facts, unit, start time, the
// system as it is now) and no measurement yet: run_benchmark starts from it, and the suite
// runner records a benchmark whose process died with it.
Result result_for(const BenchmarkSpec& resolved);
// The same with status failed and `error`.
Result failed_result_for(const BenchmarkSpec& resolved, const std::string& error);

// Test hook: GPUBENCH_FAULT_INJECTION=throw|oom|abort|hang[:MODEL_OR_PRECISION_OR_rankN] makes
// the first timed step fail in that way (only for that model, precision or rank when one is
// given), so the failure paths of train and run can be exercised on any machine.
inline constexpr const char* kFaultInjectionVariable = "GPUBENCH_FAULT_INJECTION";

}  // namespace gpubench
