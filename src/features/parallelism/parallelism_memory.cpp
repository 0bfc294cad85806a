#include "features/parallelism/parallelism_memory.h"

#include <algorithm>

#include "features/parallelism/model_parallelism.h"

namespace gpubench {

void parallelism::rank_memory_term(const MemoryPlanInputs& inputs, MemoryPlan& plan) {
  const ResolvedBenchmark& b = inputs.benchmark;
  if (b.sharded()) {
    const int64_t ranks = std::max(1, b.gpus);
    plan.share_state(ranks);
    plan.host_build = plan.weights * ranks;
    return;
  }
  if (const ModelParallelism* kind = asked_model_parallelism(b)) kind->rank_share(inputs, plan);
  plan.host_build = plan.weights;
}

ShardUnitParams count_shard_units(const ModelInfo& info, const ModelOptions& options) {
  ModelOptions one = options, two = options;
  one.blocks = 1;
  two.blocks = 2;
  ShardUnitParams units;
  units.total = info.count(options).params;
  const int64_t with_one = info.count(one).params;
  units.block = info.count(two).params - with_one;
  units.root = with_one - units.block;
  units.embedding = info.capabilities.vocab * info.capabilities.hidden_size;
  return units;
}

void shard_memory_fit(MemoryFit& fit, const ShardUnitParams& units, const ResolvedBenchmark& b,
                      bool autocast_keeps_copies) {
  if (!b.sharded()) return;
  const int64_t ranks = b.gpus;
  const bool half = b.precision == Precision::kBf16 || b.precision == Precision::kFp16;
  const int64_t compute = half ? 2 : 4;
  const int64_t gathered =
      b.shard == "full" ? compute * (units.root + 2 * units.block) : compute * units.total;
  fit.weights = fit.weights / ranks + gathered;
  fit.gradients /= ranks;
  fit.optimizer_states /= ranks;
  fit.optimizer_workspace /= ranks;
  fit.sharded_unit_gradients = compute * (units.root + units.block) + 4 * units.block;
  if (half && autocast_keeps_copies && !b.activation_checkpointing) {
    fit.activations.fixed -= static_cast<double>(compute * (units.total - units.embedding));
  }
}

}  // namespace gpubench
