// Parallelism's rules of resolve (docs/parallelism.md): tensor, expert and sharded data
// parallelism over the ranks that --gpus gives.
#pragma once

#include "features/resolve_rule.h"

namespace gpubench::parallelism {

// --tensor-parallel: a divisor of the world, a model that declares what its ranks split and
// sizes they divide, eager mode, and one node's ranks.
void resolve_tensor_parallel(const ResolveInputs& inputs, ResolvedBenchmark& benchmark);
// --expert-parallel: a mixture of experts, a divisor of its experts and of the world, and no
// other model parallelism beside it.
void resolve_expert_parallel(const ResolveInputs& inputs, ResolvedBenchmark& benchmark);
// --shard: training a model by its repeated blocks, every parameter trained, in eager mode, over
// the data-parallel ranks alone.
void resolve_shard(const ResolveInputs& inputs, ResolvedBenchmark& benchmark);

}  // namespace gpubench::parallelism
