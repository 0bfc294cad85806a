// The collectives a model's split layers need of their group: what features/parallelism/'s
// tensor- and expert-parallel layers communicate through. On c10d: ModelParallelCollectives;
// alone, with no peers: parallelism::one_rank_alone's.
#pragma once

#include <cstdint>
#include <vector>

#include <torch/torch.h>

namespace gpubench {

class LayerCollectives {
 public:
  virtual ~LayerCollectives() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // In place; the result is ready on the current stream when the call returns.
  virtual void allreduce_sum(torch::Tensor& tensor) = 0;
  virtual void allreduce_max(torch::Tensor& tensor) = 0;
  // Every rank's `tensor` concatenated along the last dimension, in rank order.
  virtual torch::Tensor allgather_last_dim(const torch::Tensor& tensor) = 0;
  // `rows` [n, ...] in consecutive chunks, send_counts[p] rows for rank p; returns the chunks the
  // ranks sent this one, receive_counts[p] rows from rank p, in rank order. The counts agree
  // across the ranks.
  virtual torch::Tensor all_to_all(const torch::Tensor& rows,
                                   const std::vector<int64_t>& send_counts,
                                   const std::vector<int64_t>& receive_counts) = 0;
};

}  // namespace gpubench
