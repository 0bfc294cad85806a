// Expert parallelism (docs/parallelism.md#expert-parallelism), applied to a model from outside
// it: the ranks of a group each hold a contiguous share of every MoE layer's experts and their
// own tokens. A layer sends each routed token to the rank that holds its expert and brings the
// expert's output back, both by all-to-all (GShard, Lepikhin et al. 2020, arXiv 2006.16668;
// DeepSpeed-MoE and Megatron-LM's token dispatcher do the same). The exchange goes through
// autograd: its gradient comes back by the reverse exchange. The models see this through
// modeling/layer_groups.h's ExpertParallelGroup alone.
#pragma once

#include <cstdint>
#include <vector>

#include <torch/torch.h>

#include "features/parallelism/layer_collectives.h"
#include "modeling/layer_groups.h"

namespace gpubench::parallelism {

class ExpertParallelLayers final : public layers::ExpertParallelGroup {
 public:
  // `collectives` outlive it.
  explicit ExpertParallelLayers(LayerCollectives& collectives) : collectives_(collectives) {}

  int rank() const override { return collectives_.rank(); }
  int size() const override { return collectives_.size(); }
  // The counts travel on `device`, the group's.
  std::vector<int64_t> receive_counts(const std::vector<int64_t>& send_counts,
                                      torch::Device device) override;
  torch::Tensor exchange(const torch::Tensor& rows, const std::vector<int64_t>& send_counts,
                         const std::vector<int64_t>& receive_counts) override;

 private:
  LayerCollectives& collectives_;
};

}  // namespace gpubench::parallelism
