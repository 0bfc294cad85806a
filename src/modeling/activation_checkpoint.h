// Activation checkpointing (torch.utils.checkpoint's reentrant form): a block runs its forward
// without keeping activations, and backward runs it again, with grad on, the RNG state it saw
// (dropout draws the same masks) and the autocast state it ran under, then back-propagates
// through the recomputed graph. Parameter gradients accumulate as usual; the block's input
// gradient is returned.
#pragma once

#include <vector>

#include <torch/torch.h>

namespace gpubench {

// A transformer block that can be checkpointed: hidden states in, hidden states out; `extras`
// are inputs without gradients (masks, rotary tables). It must outlive the backward pass.
// Whether it is checkpointed is set from outside the model (checkpoint_blocks).
class CheckpointableBlock {
 public:
  virtual ~CheckpointableBlock() = default;
  virtual torch::Tensor run_block(const torch::Tensor& hidden,
                                  const std::vector<torch::Tensor>& extras) = 0;
  bool checkpointed() const { return checkpointed_; }
  void set_checkpointed(bool checkpointed) { checkpointed_ = checkpointed; }

 private:
  bool checkpointed_ = false;
};

// Every CheckpointableBlock of `module` checkpointed (--activation-checkpointing), as
// torchtitan applies it to a built model's blocks; returns how many.
int checkpoint_blocks(torch::nn::Module& module);

// block.run_block(hidden, extras), its activations recomputed in backward. An input that does
// not require grad (the first block over frozen embeddings, under LoRA) is given one, so the
// recomputation still runs and reaches the adapters, as PEFT's enable_input_require_grads does.
torch::Tensor checkpointed(CheckpointableBlock& block, const torch::Tensor& hidden,
                           const std::vector<torch::Tensor>& extras);

}  // namespace gpubench
