// How a training run's replicas agree on their gradients, as its parallelism says: DDP's bucketed
// all-reduce (distributed/gradient_synchronizer.h); beside expert parallelism, the experts'
// gradients apart (expert_parallel_sync.h); with --shard, the sharded units
// (sharded_data_parallel.h).
#pragma once

#include <memory>
#include <vector>

#include <torch/torch.h>

#include "distributed/collectives.h"
#include "distributed/gradient_sync.h"
#include "features/parallelism/sharded_data_parallel.h"
#include "settings/benchmark.h"

namespace gpubench::parallelism {

struct DataParallelSync {
  std::unique_ptr<GradientSync> sync;
  ShardedDataParallel* sharded = nullptr;  // sync, where it shards
};

// `benchmark`'s synchronisation of `module`'s `trainable` parameters over `replicas` (the ranks
// with their own batches); `expert_replicas`, beside expert parallelism, the ranks that hold the
// same experts. A sharded run gathers its parameters in `compute_dtype`.
DataParallelSync data_parallel_sync(const ResolvedBenchmark& benchmark, torch::nn::Module& module,
                                    const std::vector<torch::Tensor>& trainable,
                                    Collectives& replicas, Collectives* expert_replicas,
                                    torch::ScalarType compute_dtype);

}  // namespace gpubench::parallelism
