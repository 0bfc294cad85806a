// Sharded data parallelism (--shard, docs/parallelism.md), as PyTorch's FSDP2 (fully_shard) does
// it, over the data-parallel group:
//   units: each repeated block (the parameters named under "layers.3", say) is one, the rest of
//   the model (embeddings, final norm, head) the root;
//   each unit's parameters are flattened, padded to a multiple of the ranks and split, each rank
//   keeping its float32 slice (the master shard, what the optimiser updates: gradients and
//   AdamW's moments are sharded with it);
//   a unit's parameters are all-gathered, in the compute dtype (bf16 or fp16 under mixed
//   precision, FSDP2's param_dtype), before its block runs forward, the next block's gather
//   started one block ahead; `full` frees them after the block's forward and gathers them again
//   before its backward (the one before it prefetched), `grads` keeps them between steps and
//   gathers the updated ones after the optimiser step;
//   after a unit's backward its gradients are reduce-scattered in float32 (FSDP2's reduce_dtype),
//   averaged, into the master shard's gradient, and the unsharded ones freed; one reduce-scatter
//   is in flight at a time (the one before completes as the next starts).
// The model's parameter tensors stay the ones its layers hold: they become views into one
// buffer per unit, whose storage is released and reallocated in place as FSDP does, so the
// autograd graph's saved views see the gathered values again in backward.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "distributed/collectives.h"
#include "distributed/gradient_sync.h"
#include "torch_support/device_timers.h"

namespace gpubench {

enum class ShardMode { kNone, kGradients, kFull };
ShardMode shard_mode_from(const std::string& name);  // "none", "grads", "full"

// The sharding unit of a parameter: the dotted name up to its first all-digit part
// ("model.layers.3.mlp.up_proj.weight" is in "model.layers.3"), or "" (the root).
std::string shard_unit_of(const std::string& parameter_name);

class ShardedDataParallel : public GradientSync, private BlockObserver {
 public:
  // Shards `module`'s parameters (identical on every rank) over `group`; `compute_dtype` is
  // what the gathered parameters and their gradients are held in.
  ShardedDataParallel(torch::nn::Module& module, Collectives& group, ShardMode mode,
                      torch::ScalarType compute_dtype);
  ~ShardedDataParallel() override;
  ShardedDataParallel(const ShardedDataParallel&) = delete;
  ShardedDataParallel& operator=(const ShardedDataParallel&) = delete;

  std::vector<torch::Tensor> optimized(std::vector<torch::Tensor> trainable) override;
  void begin_step() override;
  BlockObserver* block_observer() override { return this; }
  void finish_step() override;
  void after_update() override;
  void agree_on_found_inf(torch::Tensor& found_inf) override;

  int bucket_count() const override { return static_cast<int>(units_.size()); }
  // Reduce-scattered per step per rank (the padded float32 gradients).
  int64_t gradient_bytes() const override;
  std::vector<double> take_exposed_communication_ms() override;
  // The device's wait inside forward and backward, in the steps' total since the last call: on
  // the all-gathers the prefetch did not hide, and on each reduce-scatter's predecessor.
  double take_exposed_in_passes_ms();
  // All-gathered per step per rank: each unit once (`grads`), or twice but the root (`full`).
  int64_t gathered_bytes_per_step() const;
  int units() const { return static_cast<int>(units_.size()); }

  // Every parameter whole, in float32, by its name in the module: the master shards gathered
  // (a collective: every rank calls it).
  std::map<std::string, torch::Tensor> gathered_parameters();
  // The same for the gradients the optimiser last stepped with (the master shards' gradients).
  std::map<std::string, torch::Tensor> gathered_gradients();

 private:
  struct Unit;
  std::map<std::string, torch::Tensor> gathered(bool gradients);
  torch::Tensor before_block(const torch::nn::Module& block, const torch::Tensor& hidden) override;
  torch::Tensor after_block(const torch::nn::Module& block, const torch::Tensor& output) override;
  friend struct ShardedBackwardHooks;
  void before_backward(size_t unit);
  void after_backward(size_t unit);

  size_t unit_of(const torch::nn::Module& block) const;
  void prefetch(size_t unit);
  void gather(size_t unit);
  void release(size_t unit);
  void reduce_scatter(size_t unit);
  void complete_reduce(size_t unit);

  Collectives& group_;
  ShardMode mode_;
  torch::ScalarType compute_dtype_;
  std::vector<std::unique_ptr<Unit>> units_;  // the root first, then the blocks in order
  std::map<const torch::nn::Module*, size_t> unit_of_block_;
  std::vector<size_t> reduce_order_;  // this step's reduce-scatters, in the order issued
  DeviceIntervals waits_in_passes_, reduce_waits_;
};

}  // namespace gpubench
