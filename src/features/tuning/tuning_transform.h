// Tuning applied to a built model from outside it (docs/fine-tuning.md): LoRA's adapters
// (lora.h) and activation checkpointing (activation_checkpoint.h), registered as a model transform
// (modeling/model_transforms.h) that ModelInfo::instantiate applies to every model it builds; and
// their part of the counts of a model counted from its configuration. QLoRA's NF4 base is
// quantised once the weights are drawn (qlora.h).
#pragma once

#include <torch/torch.h>

#include "modeling/fine_tuning_model.h"
#include "modeling/model_registry.h"

namespace gpubench::tuning {

// `options`' tuning applied to a built model: LoRA's adapters (LoRA and QLoRA; the targets
// already checked by resolve), activation checkpointing.
void apply_tuning(torch::nn::Module& module, const ModelOptions& options);

// `base` (the model's counts with every weight trained) with `options`' tuning: LoRA's adapters
// on the target roles (their parameters, trainable alone, and their FLOPs), the frozen weights'
// FLOPs (ModelStats::weight_flops), and QLoRA's NF4 base (every block projection).
ModelStats with_tuning(ModelStats stats, const models::BlockProjections& projections,
                       const ModelOptions& options);

}  // namespace gpubench::tuning
