// A transformer block that can be checkpointed: the seam through which activation checkpointing
// (features/tuning/activation_checkpoint.h) is applied to a built model's blocks from outside
// it, as torchtitan applies it. The models run their blocks through run_observed_block()
// (modeling/block_observer.h), which hands a checkpointed block to its recomputation.
#pragma once

#include <vector>

#include <torch/torch.h>

namespace gpubench {

class CheckpointableBlock;

// What runs a checkpointed block: its forward without keeping activations, recomputed in
// backward.
class BlockRecomputation {
 public:
  virtual ~BlockRecomputation() = default;
  virtual torch::Tensor run(CheckpointableBlock& block, const torch::Tensor& hidden,
                            const std::vector<torch::Tensor>& extras) const = 0;
};

// Hidden states in, hidden states out; `extras` are inputs without gradients (masks, rotary
// tables). It must outlive the backward pass.
class CheckpointableBlock {
 public:
  virtual ~CheckpointableBlock() = default;
  virtual torch::Tensor run_block(const torch::Tensor& hidden,
                                  const std::vector<torch::Tensor>& extras) = 0;
  // Set from outside the model; null: the block runs itself, keeping its activations.
  const BlockRecomputation* recomputation() const { return recomputation_; }
  void set_recomputation(const BlockRecomputation* recomputation) {
    recomputation_ = recomputation;
  }

 private:
  const BlockRecomputation* recomputation_ = nullptr;
};

}  // namespace gpubench
