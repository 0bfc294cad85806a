// The bytes a run needs before its first activation, counted from the model, the recipe and the
// precision: the weights (frozen ones in the compute dtype under LoRA), their gradients and the
// optimiser's state, and the float32 copy the model is built in on the host. A run whose
// certain bytes do not fit ends as an `oom` result before anything is allocated, and a CPU run
// is held to the memory the host has (an allocation past it fails as an out-of-memory error
// instead of the kernel killing the process).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "models/model_registry.h"
#include "spec/benchmark.h"

namespace gpubench {

struct MemoryPlan {
  int64_t weights = 0;
  int64_t gradients = 0;
  int64_t optimizer_state = 0;
  int64_t host_build = 0;  // the model as built, in float32 on the host, before it moves
  int64_t device_total() const { return weights + gradients + optimizer_state; }
};

MemoryPlan plan_memory(const ModelStats& stats, const ResolvedBenchmark& benchmark,
                       OptimizerKind optimizer);

// Why the plan does not fit, or empty: the host build against `host_available`, and the device
// bytes against `device_memory` (the CPU's: host_available too).
std::string memory_shortfall(const MemoryPlan& plan, const ResolvedBenchmark& benchmark,
                             int64_t host_available, int64_t device_memory);

// MemAvailable of /proc/meminfo, in bytes; nullopt where it cannot be read.
std::optional<int64_t> host_available_memory();

// Limits this process's data segment (RLIMIT_DATA) to what it uses now plus `bytes`, so that
// an allocation past them fails in the allocator. Returns false where the limit cannot be set.
bool limit_host_memory_growth(int64_t bytes);

// "16.1 GiB"
std::string gib_text(int64_t bytes);

}  // namespace gpubench
