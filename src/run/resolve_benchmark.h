// From what the user asked for to what runs: every default decided by its owner (the table's
// fixed defaults, the model's registration, the precision policy, this machine).
#pragma once

#include "modeling/model_registry.h"
#include "spec/benchmark.h"
#include "system/machine.h"

namespace gpubench {

// infer, the models that generate text: the lengths when none are given.
inline constexpr int64_t kDefaultPromptLength = 512;
inline constexpr int64_t kDefaultGenerationLength = 128;

// kAuto becomes CUDA when present. Throws UsageError for CUDA without a device, or more ranks
// here than devices.
DeviceKind resolve_device(DeviceKind requested, int ranks, const MachineFacts& machine);

// Throws UsageError for an unknown model, a precision the device cannot run, settings the
// model does not take, too few warm-up steps for the model, or devices this machine lacks.
ResolvedBenchmark resolve(const BenchmarkRequest& request, const MachineFacts& machine);

// int4's rules on the model's linear weights (each rank's slice) at the benchmark's group: the
// kernels' shape rules (integer_weights::why_not_int4). Throws UsageError.
void check_int4_shapes(const ModelInfo& info, const ResolvedBenchmark& benchmark);

// A request that could not resolve here (common/errors.h's Unavailable), described for a result
// that records it: the table's defaults, the model's name and batch, the device as asked; none
// of this machine's decisions.
ResolvedBenchmark as_requested(const BenchmarkRequest& request);

// The fewest warm-up steps `benchmark` runs with: the model's steady state and, in graph mode,
// what the capture needs; at least 1 (what batch probes run).
int fewest_warmup_steps(const ResolvedBenchmark& benchmark);

}  // namespace gpubench
