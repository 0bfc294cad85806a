#include "features/parallelism/rank_groups.h"

#include "modeling/model_registry.h"

namespace gpubench::parallelism {
namespace {

bool tensor_parallel_group_wanted(const ResolvedBenchmark& benchmark, int world_size) {
  if (benchmark.tensor_parallel > 1) return true;
  if (benchmark.sharded()) return false;  // its group of one shards, and nothing more
  const ModelInfo& info = ModelRegistry::instance().get(benchmark.model);
  return world_size == 1 && !info.capabilities.split_counts.empty();
}

}  // namespace

RankGroups::RankGroups(Collectives& world, const ResolvedBenchmark& benchmark) {
  if (benchmark.expert_parallel > 1) {
    expert_parallel_ = split_world(world, benchmark.expert_parallel);
  } else if (tensor_parallel_group_wanted(benchmark, world.world_size())) {
    tensor_parallel_ = split_world(world, benchmark.tensor_parallel);
  }
}

void RankGroups::shutdown() {
  for (ParallelGroups* groups : {&tensor_parallel_, &expert_parallel_}) {
    if (groups->model_parallel) groups->model_parallel->collectives().shutdown();
    if (groups->replicas) groups->replicas->shutdown();
  }
}

}  // namespace gpubench::parallelism
