// gpubench infer: one resolved inference benchmark on this process's device (docs/inference.md).
// Throughput from device-synchronised windows of forward passes, as training measures steps;
// latency per request, each synchronised; for the models that generate text, greedy generation
// with a preallocated key/value cache: prefill and decode rates, time to first token, time per
// output token.
#pragma once

#include "results/result.h"
#include "spec/benchmark.h"
#include "train/benchmark_runner.h"

namespace gpubench {

// Never throws for a run-time failure (as run_benchmark): an out-of-memory gives status oom.
Result run_inference(const ResolvedBenchmark& benchmark, const RunContext& context = {});

}  // namespace gpubench
