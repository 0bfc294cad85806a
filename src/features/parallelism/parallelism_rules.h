// Sharded data parallelism's rule of resolve (docs/parallelism.md), over the ranks that --gpus
// gives. The model parallelisms' rules are their plug-ins' (model_parallelism.h).
#pragma once

#include "features/resolve_rule.h"

namespace gpubench::parallelism {

// --shard: training a model by its repeated blocks, every parameter trained, in eager mode, over
// the data-parallel ranks alone.
void resolve_shard(const ResolveInputs& inputs, ResolvedBenchmark& benchmark);

}  // namespace gpubench::parallelism
