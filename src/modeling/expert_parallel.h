// Expert parallelism (docs/parallelism.md#expert-parallelism): the ranks of a group each hold
// a contiguous share of every MoE layer's experts and their own tokens. A layer sends each routed
// token to the rank that holds its expert and brings the expert's output back, both by
// all-to-all (GShard, Lepikhin et al. 2020, arXiv 2006.16668; DeepSpeed-MoE and Megatron-LM's
// token dispatcher do the same). The exchange goes through autograd: its gradient comes back by
// the reverse exchange.
#pragma once

#include <cstdint>
#include <vector>

#include <torch/torch.h>

#include "modeling/tensor_parallel.h"

namespace gpubench::expert_parallel {

// How many rows each rank sends this one, given what this one sends each (every rank calls it;
// the counts travel on `device`, the group's).
std::vector<int64_t> receive_counts(const std::vector<int64_t>& send_counts,
                                    tensor_parallel::Group& group, torch::Device device);

// Group::all_to_all as an autograd function.
torch::Tensor exchange(const torch::Tensor& rows, const std::vector<int64_t>& send_counts,
                       const std::vector<int64_t>& receive_counts, tensor_parallel::Group& group);

}  // namespace gpubench::expert_parallel
