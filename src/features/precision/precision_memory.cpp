#include "features/precision/precision_memory.h"

namespace gpubench::precision {

void fp8_memory_term(const MemoryPlanInputs& inputs, MemoryPlan& plan) {
  const ResolvedBenchmark& b = inputs.benchmark;
  if (b.precision == Precision::kFp8 && uses_lora(b.tuning)) {
    plan.weights += 2 * inputs.frozen_float_params();
  }
}

}  // namespace gpubench::precision
