// A model-parallel group's collectives (features/parallelism/layer_collectives.h) on c10d: a
// tensor-parallel group's, or an expert-parallel one's. And the groups of a run with
// --tensor-parallel (or --expert-parallel): the world split into replicas of neighbouring ranks
// (tensor-parallel groups) and the ranks that hold the same slice in each replica (data-parallel
// groups), as Megatron-LM orders them.
#pragma once

#include <memory>
#include <vector>

#include "distributed/collectives.h"
#include "features/parallelism/layer_collectives.h"
#include "torch_support/device_timers.h"

namespace gpubench {

class ModelParallelCollectives : public LayerCollectives {
 public:
  explicit ModelParallelCollectives(std::unique_ptr<Collectives> group);

  int rank() const override { return group_->rank(); }
  int size() const override { return group_->world_size(); }
  void allreduce_sum(torch::Tensor& tensor) override;
  void allreduce_max(torch::Tensor& tensor) override;
  torch::Tensor allgather_last_dim(const torch::Tensor& tensor) override;
  torch::Tensor all_to_all(const torch::Tensor& rows, const std::vector<int64_t>& send_counts,
                           const std::vector<int64_t>& receive_counts) override;

  Collectives& collectives() { return *group_; }
  // The time the device waited on each collective since the last call, in ms, and how many
  // there were. Call after the device has been synchronised.
  struct Waited {
    double total_ms = 0;
    int64_t collectives = 0;
    Waited& operator+=(const Waited& more) {
      total_ms += more.total_ms;
      collectives += more.collectives;
      return *this;
    }
  };
  Waited take_waited();

 private:
  template <typename Collective>
  void timed(Collective&& collective);
  template <typename Reduce>
  void reduced(torch::Tensor& tensor, Reduce&& reduce);

  std::unique_ptr<Collectives> group_;
  DeviceIntervals waited_;
};

// This rank's groups in a world of `world.world_size()` ranks with `group_size` ranks per model
// replica (--tensor-parallel's or --expert-parallel's N): replica k is ranks k * group_size ..
// (k + 1) * group_size - 1, and `replicas` the ranks holding this rank's slice in every replica.
struct ParallelGroups {
  std::unique_ptr<ModelParallelCollectives> model_parallel;
  std::unique_ptr<Collectives> replicas;
};
ParallelGroups split_world(Collectives& world, int group_size);

}  // namespace gpubench
