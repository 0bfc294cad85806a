// The groups a rank of a run joins, as its model parallelism says (model_parallelism.h), once its
// world is connected: the world split into groups of N neighbouring ranks (--tensor-parallel or
// --expert-parallel N) and the ranks that hold the same slice in each group, as Megatron-LM orders
// them (split_world). They outlive the run; the launcher hands them to it in its rank placement.
#pragma once

#include "distributed/collectives.h"
#include "features/parallelism/model_parallel_collectives.h"
#include "features/parallelism/model_parallelism.h"
#include "settings/benchmark.h"

namespace gpubench::parallelism {

class RankGroups {
 public:
  RankGroups() = default;
  // Every rank of `world` makes them together (c10d's groups); throws what connecting throws.
  RankGroups(Collectives& world, const ResolvedBenchmark& benchmark);

  // The parallelism whose groups these are; each null where the run makes none.
  const ModelParallelism* kind() const { return kind_; }
  ModelParallelCollectives* model_parallel() const { return groups_.model_parallel.get(); }
  Collectives* slice_replicas() const { return groups_.replicas.get(); }

  // Every group shut down, after a run that ended well.
  void shutdown();

 private:
  const ModelParallelism* kind_ = nullptr;
  ParallelGroups groups_;
};

}  // namespace gpubench::parallelism
