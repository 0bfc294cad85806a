// Precision's term of the memory plan (features/memory_terms.h).
#pragma once

#include "features/memory_plan.h"

namespace gpubench::precision {

// fp8 LoRA: each frozen weight keeps its two FP8 operands, a byte a weight each
// (fp8::FrozenWeightOperands; the norms' few weights, which keep none, are counted too).
void fp8_memory_term(const MemoryPlanInputs& inputs, MemoryPlan& plan);

}  // namespace gpubench::precision
