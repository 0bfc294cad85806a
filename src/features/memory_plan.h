// The bytes a run needs before its first activation, counted from the model and the features
// applied to it (features/memory_terms.h): the weights (frozen ones in the compute dtype under
// LoRA), their gradients and the optimiser's state, and the weights as built on the host before
// they move. A run whose certain bytes do not fit ends as an `oom` result before anything is
// allocated; on the CPU, where running out means the kernel kills the process, so does one whose
// estimated activations do not fit. (A ceiling on the process's memory, RLIMIT_DATA, is no
// alternative: OpenBLAS retries a failed allocation forever.)
#pragma once

#include <cstdint>
#include <string>

#include "modeling/model_registry.h"
#include "results/memory_info.h"
#include "settings/benchmark.h"

namespace gpubench {

struct MemoryPlan {
  int64_t weights = 0;
  int64_t gradients = 0;
  int64_t optimizer_state = 0;
  int64_t host_build = 0;   // the weights as built on the host, before they move
  int64_t activations = 0;  // estimated (ModelInfo::activation_bytes); 0: not estimated
  int64_t device_total() const { return weights + gradients + optimizer_state; }
  // The weights, gradients and optimiser state one of `ranks` holds where each holds an even share.
  void share_state(int64_t ranks) {
    weights /= ranks;
    gradients /= ranks;
    optimizer_state /= ranks;
  }
};

// What the plan's terms read: the model's counts as built for the run (LoRA's adapters, QLoRA's
// NF4 base), the benchmark, the model's registration and what it was built with.
struct MemoryPlanInputs {
  const ModelStats& stats;
  const ResolvedBenchmark& benchmark;
  const ModelInfo& model;
  const ModelOptions& options;

  // The weights that do not train, less those held in NF4 (LoRA's and QLoRA's frozen base).
  int64_t frozen_float_params() const {
    return stats.params - stats.trainable_params - stats.nf4_params;
  }
};

// One term of the plan: what the model, or a feature applied to it, adds to or changes in the
// bytes. The plan is its terms in one list (features/memory_terms.h: plan_memory), each feature's
// in its folder, as resolve's rules are.
using MemoryTerm = void (*)(const MemoryPlanInputs& inputs, MemoryPlan& plan);

// The model's own: every weight in float32 and every trainable weight's gradient, as it trains
// in full on one device; its activations as it estimates them.
void model_memory_term(const MemoryPlanInputs& inputs, MemoryPlan& plan);

// Why the plan does not fit, or empty: the host build against `host_available`; the certain
// device bytes against `device_memory` (the CPU's: host_available); on the CPU, where running
// out kills the process, the estimated activations on top of them too. On a GPU running out is an
// error the run records, so the estimate does not stop it.
std::string memory_shortfall(const MemoryPlan& plan, const ResolvedBenchmark& benchmark,
                             int64_t host_available, int64_t device_memory);

}  // namespace gpubench
