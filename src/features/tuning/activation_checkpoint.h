// Activation checkpointing (torch.utils.checkpoint's reentrant form), applied to a built model's
// blocks from outside it (modeling/checkpointable_block.h): a block runs its forward without
// keeping activations, and backward runs it again, with grad on, the RNG state it saw (dropout
// draws the same masks), the autocast state and the product rule it ran under, then
// back-propagates through the recomputed graph. Parameter gradients accumulate as usual; the
// block's input gradient is returned.
#pragma once

#include <vector>

#include <torch/torch.h>

#include "modeling/checkpointable_block.h"

namespace gpubench::tuning {

// Every CheckpointableBlock of `module` checkpointed (--activation-checkpointing), as
// torchtitan applies it to a built model's blocks; returns how many.
int checkpoint_blocks(torch::nn::Module& module);

// block.run_block(hidden, extras), its activations recomputed in backward. An input that does
// not require grad (the first block over frozen embeddings, under LoRA) is given one, so the
// recomputation still runs and reaches the adapters, as PEFT's enable_input_require_grads does.
torch::Tensor checkpointed(CheckpointableBlock& block, const torch::Tensor& hidden,
                           const std::vector<torch::Tensor>& extras);

}  // namespace gpubench::tuning
