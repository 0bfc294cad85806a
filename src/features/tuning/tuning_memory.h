// Tuning's terms of the memory plan (features/memory_terms.h): what trains decides the bytes
// held beside the weights, and how the frozen ones are held.
#pragma once

#include "features/memory_plan.h"

namespace gpubench::tuning {

// QLoRA: its frozen base in NF4, half a byte a weight and a float32 absmax a block of 64
// (features/weights/nf4_weights.h), where the model's term counted four bytes.
void qlora_memory_term(const MemoryPlanInputs& inputs, MemoryPlan& plan);
// LoRA under bf16 and fp16 (and fp8, whose weights are bf16): the frozen weights in the compute
// dtype, two bytes where the model's term counted four.
void lora_memory_term(const MemoryPlanInputs& inputs, MemoryPlan& plan);
// The optimiser's state per trainable parameter: AdamW's two moments, SGD's momentum.
void optimizer_memory_term(const MemoryPlanInputs& inputs, MemoryPlan& plan);

}  // namespace gpubench::tuning
