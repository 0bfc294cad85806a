// Tensor parallelism as Megatron-LM shards a transformer (Shoeybi et al. 2019, arXiv 1909.08053;
// docs/parallelism.md): each rank of a tensor-parallel group holds a slice of every projection,
// column-parallel (a slice of the outputs) or row-parallel (a slice of the inputs, the partial
// outputs summed over the group), and a slice of the vocabulary's rows in the embedding and the
// head. Two operators carry the group's communication through autograd:
//   copy_to_group      f: identity forward, all-reduce of the input gradient in backward;
//   reduce_from_group  g: all-reduce forward, identity backward.
// The group's collectives come from the run (distributed/tensor_parallel_collectives.h). The
// models see none of this: they build their layers through modeling/layer_placement.h.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <torch/torch.h>

namespace gpubench::tensor_parallel {

class Group {
 public:
  virtual ~Group() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // In place; the result is ready on the current stream when the call returns.
  virtual void allreduce_sum(torch::Tensor& tensor) = 0;
  virtual void allreduce_max(torch::Tensor& tensor) = 0;
  // Every rank's `tensor` concatenated along the last dimension, in rank order.
  virtual torch::Tensor allgather_last_dim(const torch::Tensor& tensor) = 0;
  // Expert parallelism's exchange (modeling/expert_parallel.h): `rows` [n, ...] in consecutive
  // chunks, send_counts[p] rows for rank p; returns the chunks the ranks sent this one,
  // receive_counts[p] rows from rank p, in rank order. The counts agree across the ranks.
  virtual torch::Tensor all_to_all(const torch::Tensor& rows,
                                   const std::vector<int64_t>& send_counts,
                                   const std::vector<int64_t>& receive_counts) = 0;

 private:
  // copy_to_group's last input and the autograd node of its copy, both held weakly (no step's
  // graph outlives its step): the layers that read one input (q, k and v; gate and up) share
  // one copy, so that backward sums their gradients before it and all-reduces once, as a fused
  // projection's would.
  friend torch::Tensor copy_to_group(const torch::Tensor& input, Group* group);
  using WeakTensor = c10::weak_intrusive_ptr<c10::TensorImpl, c10::UndefinedTensorImpl>;
  std::optional<WeakTensor> last_input_;
  std::weak_ptr<torch::autograd::Node> last_copy_node_;
};

// Rank 0 of a group of `size` ranks, alone: its collectives move nothing (an all-reduce leaves
// the tensor as it is, a gather repeats the rank's slice `size` times), so that one rank's
// shapes and memory can be measured without its peers (fit's probes). Null for a size of 1.
Group* one_rank_alone(int size);

// How a linear layer's weight [out, in] is split over the group.
enum class Split {
  kNone,     // replicated
  kColumns,  // out / size rows each: the outputs sharded
  kRows,     // in / size columns each: the inputs sharded, the outputs partial sums
};

// `count` / the group's size, or `count` without a group; throws std::logic_error where it does
// not divide (resolve refuses such a run first).
int64_t local_count(int64_t count, const Group* group, const std::string& what);

// f and g; without a group, the input itself. f of the input it was last given, while that copy
// lives, is that copy.
torch::Tensor copy_to_group(const torch::Tensor& input, Group* group);
torch::Tensor reduce_from_group(const torch::Tensor& input, Group* group);

// Logits [..., vocab / size] of a vocabulary-parallel head gathered to [..., vocab] (inference:
// no gradient flows back through it).
torch::Tensor gather_vocabulary(const torch::Tensor& local_logits, Group* group);

// The rows of a vocabulary-parallel embedding (this rank's `weight` holds tokens
// rank * rows .. (rank + 1) * rows - 1): each rank looks up the tokens it holds, zero for the
// others, and the group sums them.
torch::Tensor embed(const torch::Tensor& tokens, const torch::Tensor& weight, Group* group);

// Megatron's vocabulary-parallel cross-entropy: the mean over rows of -log softmax(logits)[target]
// from each rank's slice of the logits [rows, vocab / size] (float32), without gathering them:
// the group's maximum, its sum of exponentials and the target's logit are all-reduced.
torch::Tensor cross_entropy(const torch::Tensor& local_logits, const torch::Tensor& targets,
                            Group* group);

// Copies this rank's slice of `full` (a parameter of the unsharded model) into `local`: where
// their shapes differ in one dimension, local's size there times the group's is full's, and the
// rank's contiguous slice is taken; where they agree, the whole. What the proofs against one rank
// build their sharded models from.
void copy_shard(const torch::Tensor& full, torch::Tensor& local, int rank, int size);

}  // namespace gpubench::tensor_parallel
