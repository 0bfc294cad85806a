// How a training run's replicas agree on their gradients, as its parallelism says: DDP's bucketed
// all-reduce (distributed/gradient_synchronizer.h); beside a model parallelism that splits a part
// of the model (expert parallelism), its plug-in's (ModelParallelism::replica_sync); with --shard,
// the sharded units (sharded_data_parallel.h).
#pragma once

#include <memory>
#include <vector>

#include <torch/torch.h>

#include "distributed/collectives.h"
#include "distributed/gradient_sync.h"
#include "features/parallelism/model_parallelism.h"
#include "features/parallelism/sharded_data_parallel.h"
#include "settings/benchmark.h"

namespace gpubench::parallelism {

struct DataParallelSync {
  std::unique_ptr<GradientSync> sync;
  ShardedDataParallel* sharded = nullptr;  // sync, where it shards
};

// `benchmark`'s synchronisation of `module`'s `trainable` parameters over `replicas` (the ranks
// with their own batches); `model_parallelism` (null: none) and `slice_replicas`, the ranks that
// hold this rank's slice, where the run has one. A sharded run gathers its parameters in
// `compute_dtype`.
DataParallelSync data_parallel_sync(const ResolvedBenchmark& benchmark, torch::nn::Module& module,
                                    const std::vector<torch::Tensor>& trainable,
                                    Collectives& replicas,
                                    const ModelParallelism* model_parallelism,
                                    Collectives* slice_replicas, torch::ScalarType compute_dtype);

}  // namespace gpubench::parallelism
