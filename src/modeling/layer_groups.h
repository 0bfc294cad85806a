// The groups of ranks a model's layers may be split over, as the layers see them: what a layer
// asks of its tensor-parallel group (Megatron-LM's f and g, a vocabulary's embedding, logits and
// loss) and of its expert-parallel group (the routed rows' exchange). This is the seam through
// which parallelism is applied from outside the models: features/parallelism/ implements both
// over the run's collectives, and the models build their layers through
// modeling/layer_placement.h, which calls these and never names a split.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <torch/torch.h>

namespace gpubench::layers {

// How a linear layer's weight [out, in] is split over a tensor-parallel group.
enum class Split {
  kNone,     // replicated
  kColumns,  // out / size rows each: the outputs sharded
  kRows,     // in / size columns each: the inputs sharded, the outputs partial sums
};

class TensorParallelGroup {
 public:
  virtual ~TensorParallelGroup() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // How a projection of `role` is split; std::logic_error for a role it does not place.
  virtual Split split_of(const std::string& role) const = 0;
  // f: identity forward, the input's gradient summed over the group in backward. The layers that
  // read one input are given one copy, so that their gradients are summed before it, once.
  virtual torch::Tensor copy_to_group(const torch::Tensor& input) = 0;
  // g: summed over the group forward, identity backward.
  virtual torch::Tensor reduce_from_group(const torch::Tensor& input) = 0;
  // Logits [..., vocab / size] gathered to [..., vocab] (inference: no gradient flows back).
  virtual torch::Tensor gather_vocabulary(const torch::Tensor& local_logits) = 0;
  // The rows of a vocabulary-parallel embedding whose `weight` holds this rank's slice of the
  // vocabulary (rank x rows onwards), summed over the group.
  virtual torch::Tensor embed(const torch::Tensor& tokens, const torch::Tensor& weight) = 0;
  // The mean over rows of -log softmax(logits)[target] from each rank's slice of the logits
  // [rows, vocab / size] (float32), without gathering them.
  virtual torch::Tensor cross_entropy(const torch::Tensor& local_logits,
                                      const torch::Tensor& targets) = 0;
  // A gradient each rank computed part of, summed over the group (as a gradient hook returns it).
  virtual torch::Tensor summed(const torch::Tensor& part) = 0;
};

class ExpertParallelGroup {
 public:
  virtual ~ExpertParallelGroup() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // How many rows each rank sends this one, given what this one sends each (every rank calls it).
  virtual std::vector<int64_t> receive_counts(const std::vector<int64_t>& send_counts,
                                              torch::Device device) = 0;
  // `rows` [n, ...] in consecutive chunks, send_counts[p] rows for rank p; returns the chunks the
  // ranks sent this one, receive_counts[p] rows from rank p, in rank order. Its gradient comes
  // back by the reverse exchange.
  virtual torch::Tensor exchange(const torch::Tensor& rows, const std::vector<int64_t>& send_counts,
                                 const std::vector<int64_t>& receive_counts) = 0;
};

// `count` / `ranks`; throws std::logic_error where it does not divide (resolve refuses such a run
// first), naming `what`.
int64_t local_count(int64_t count, int ranks, const std::string& what);

}  // namespace gpubench::layers
