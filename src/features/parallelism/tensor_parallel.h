// Tensor parallelism as Megatron-LM shards a transformer (Shoeybi et al. 2019, arXiv 1909.08053;
// docs/parallelism.md), applied to a model from outside it: each rank of a tensor-parallel group
// holds a slice of every projection, column-parallel (a slice of the outputs) or row-parallel (a
// slice of the inputs, the partial outputs summed over the group), and a slice of the
// vocabulary's rows in the embedding and the head. Which side a projection holds follows its
// role: the roles that read the block's input ("q", "k", "v", "gate", "up", and the vocabulary's
// "head") column-parallel, those that write back to it ("o", "down") row-parallel. Two operators
// carry the group's communication through autograd:
//   copy_to_group      f: identity forward, all-reduce of the input gradient in backward;
//   reduce_from_group  g: all-reduce forward, identity backward.
// The models see this through modeling/layer_groups.h's TensorParallelGroup alone; the group's
// collectives come from the run (features/parallelism/model_parallel_collectives.h).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <torch/torch.h>

#include "features/parallelism/layer_collectives.h"
#include "modeling/layer_groups.h"

namespace gpubench::parallelism {

class TensorParallelLayers final : public layers::TensorParallelGroup {
 public:
  // `collectives` outlive it.
  explicit TensorParallelLayers(LayerCollectives& collectives) : collectives_(collectives) {}

  int rank() const override { return collectives_.rank(); }
  int size() const override { return collectives_.size(); }
  layers::Split split_of(const std::string& role) const override;
  // f of the input it was last given, while that copy lives, is that copy.
  torch::Tensor copy_to_group(const torch::Tensor& input) override;
  // Outside autograd, in place (the callers' inputs are temporaries).
  torch::Tensor reduce_from_group(const torch::Tensor& input) override;
  torch::Tensor gather_vocabulary(const torch::Tensor& local_logits) override;
  torch::Tensor embed(const torch::Tensor& tokens, const torch::Tensor& weight) override;
  // Megatron's vocabulary-parallel cross-entropy: the group's maximum, its sum of exponentials
  // and the target's logit are all-reduced.
  torch::Tensor cross_entropy(const torch::Tensor& local_logits,
                              const torch::Tensor& targets) override;
  torch::Tensor summed(const torch::Tensor& part) override;

 private:
  LayerCollectives& collectives_;
  // copy_to_group's last input and the autograd node of its copy, both held weakly (no step's
  // graph outlives its step): the layers that read one input (q, k and v; gate and up) share
  // one copy, so that backward sums their gradients before it and all-reduces once, as a fused
  // projection's would.
  using WeakTensor = c10::weak_intrusive_ptr<c10::TensorImpl, c10::UndefinedTensorImpl>;
  std::optional<WeakTensor> last_input_;
  std::weak_ptr<torch::autograd::Node> last_copy_node_;
};

// Rank 0 of a group of `size` ranks, alone: its collectives move nothing (an all-reduce leaves
// the tensor as it is, a gather repeats the rank's slice `size` times), so that one rank's
// shapes and memory can be measured without its peers (fit's probes). Null for a size of 1.
layers::TensorParallelGroup* one_rank_alone(int size);

// How a projection of `role` is split (the plan above); std::logic_error for a role it does not
// place.
layers::Split split_of(const std::string& role);

// [out, in] of a linear weight's slice on one of `ranks` tensor-parallel ranks (the sizes
// divide), as its `role` splits it; a weight without a role ("") is held whole.
std::array<int64_t, 2> weight_slice(int64_t out, int64_t in, const std::string& role,
                                    int64_t ranks);

// Copies this rank's slice of `full` (a parameter of the unsharded model) into `local`: where
// their shapes differ in one dimension, local's size there times the group's is full's, and the
// rank's contiguous slice is taken; where they agree, the whole. What the proofs against one rank
// build their sharded models from.
void copy_shard(const torch::Tensor& full, torch::Tensor& local, int rank, int size);

}  // namespace gpubench::parallelism
