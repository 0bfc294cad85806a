#include "features/tuning/tuning_memory.h"

#include "optim/optimizer_registry.h"

namespace gpubench::tuning {

void qlora_memory_term(const MemoryPlanInputs& inputs, MemoryPlan& plan) {
  const int64_t nf4 = inputs.stats.nf4_params;
  plan.weights += nf4 / 2 + nf4 / 64 * 4 - 4 * nf4;
}

void lora_memory_term(const MemoryPlanInputs& inputs, MemoryPlan& plan) {
  const ResolvedBenchmark& b = inputs.benchmark;
  if (uses_lora(b.tuning) && compute_element_bytes(b.precision) == 2) {
    plan.weights -= 2 * inputs.frozen_float_params();
  }
}

void optimizer_memory_term(const MemoryPlanInputs& inputs, MemoryPlan& plan) {
  plan.optimizer_state = OptimizerRegistry::instance()
                             .get(optimizer_for(inputs.benchmark.optimizer, inputs.model.optimizer))
                             .state_bytes_per_parameter *
                         inputs.stats.trainable_params;
}

}  // namespace gpubench::tuning
