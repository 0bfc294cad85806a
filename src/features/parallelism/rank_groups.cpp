#include "features/parallelism/rank_groups.h"

namespace gpubench::parallelism {
namespace {

const ModelParallelism* grouped_parallelism(const ResolvedBenchmark& benchmark, int world_size) {
  if (const ModelParallelism* asked = asked_model_parallelism(benchmark)) return asked;
  for (const ModelParallelism* kind : model_parallelisms()) {
    if (kind->makes_group_unasked(benchmark, world_size)) return kind;
  }
  return nullptr;
}

}  // namespace

RankGroups::RankGroups(Collectives& world, const ResolvedBenchmark& benchmark)
    : kind_(grouped_parallelism(benchmark, world.world_size())) {
  if (kind_) groups_ = split_world(world, kind_->ranks(benchmark));
}

void RankGroups::shutdown() {
  if (groups_.model_parallel) groups_.model_parallel->collectives().shutdown();
  if (groups_.replicas) groups_.replicas->shutdown();
}

}  // namespace gpubench::parallelism
