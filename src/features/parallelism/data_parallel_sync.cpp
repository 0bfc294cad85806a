#include "features/parallelism/data_parallel_sync.h"

#include "distributed/gradient_synchronizer.h"

namespace gpubench::parallelism {

DataParallelSync data_parallel_sync(const ResolvedBenchmark& benchmark, torch::nn::Module& module,
                                    const std::vector<torch::Tensor>& trainable,
                                    Collectives& replicas,
                                    const ModelParallelism* model_parallelism,
                                    Collectives* slice_replicas, torch::ScalarType compute_dtype) {
  const int64_t bucket_bytes = int64_t{benchmark.bucket_mb} << 20;
  DataParallelSync chosen;
  if (benchmark.sharded()) {
    auto sharded = std::make_unique<ShardedDataParallel>(
        module, replicas, shard_mode_from(benchmark.shard), compute_dtype);
    chosen.sharded = sharded.get();
    chosen.sync = std::move(sharded);
  } else if (model_parallelism && slice_replicas) {
    chosen.sync = model_parallelism->replica_sync(benchmark, replicas, *slice_replicas, module,
                                                  trainable, bucket_bytes);
  }
  if (!chosen.sync) {
    chosen.sync = std::make_unique<GradientSynchronizer>(replicas, trainable, bucket_bytes);
  }
  return chosen;
}

}  // namespace gpubench::parallelism
