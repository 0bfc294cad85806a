// The groups a rank of a run joins, as its parallelism says, once its world is connected:
//   --tensor-parallel N: the world split into replicas of N neighbouring ranks (tensor-parallel
//   groups) and the ranks that hold the same slice in each replica (data-parallel groups), as
//   Megatron-LM orders them (split_world); also a launcher's world of one with a model that
//   shards, which runs the sharded path over a group of one, as its process group of one runs
//   DDP's all-reduces (the GPU check's one-GPU proof of the NCCL path);
//   --expert-parallel N: the same split, into the experts' groups and their replicas.
// They outlive the run; the launcher hands them to it in its rank placement.
#pragma once

#include "distributed/collectives.h"
#include "features/parallelism/model_parallel_collectives.h"
#include "settings/benchmark.h"

namespace gpubench::parallelism {

class RankGroups {
 public:
  RankGroups() = default;
  // Every rank of `world` makes them together (c10d's groups); throws what connecting throws.
  RankGroups(Collectives& world, const ResolvedBenchmark& benchmark);

  // Each null where the run has no such group.
  ModelParallelCollectives* tensor_parallel() const {
    return tensor_parallel_.model_parallel.get();
  }
  Collectives* data_parallel() const { return tensor_parallel_.replicas.get(); }
  ModelParallelCollectives* expert_parallel() const {
    return expert_parallel_.model_parallel.get();
  }
  Collectives* expert_replicas() const { return expert_parallel_.replicas.get(); }

  // Every group shut down, after a run that ended well.
  void shutdown();

 private:
  ParallelGroups tensor_parallel_;
  ParallelGroups expert_parallel_;
};

}  // namespace gpubench::parallelism
