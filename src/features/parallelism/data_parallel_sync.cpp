#include "features/parallelism/data_parallel_sync.h"

#include "distributed/gradient_synchronizer.h"
#include "features/parallelism/expert_parallel_sync.h"

namespace gpubench::parallelism {

DataParallelSync data_parallel_sync(const ResolvedBenchmark& benchmark, torch::nn::Module& module,
                                    const std::vector<torch::Tensor>& trainable,
                                    Collectives& replicas, Collectives* expert_replicas,
                                    torch::ScalarType compute_dtype) {
  const int64_t bucket_bytes = int64_t{benchmark.bucket_mb} << 20;
  DataParallelSync chosen;
  if (benchmark.sharded()) {
    auto sharded = std::make_unique<ShardedDataParallel>(
        module, replicas, shard_mode_from(benchmark.shard), compute_dtype);
    chosen.sharded = sharded.get();
    chosen.sync = std::move(sharded);
  } else if (expert_replicas) {
    chosen.sync = std::make_unique<ExpertParallelSync>(
        replicas, *expert_replicas, benchmark.expert_parallel, module, trainable, bucket_bytes);
  } else {
    chosen.sync = std::make_unique<GradientSynchronizer>(replicas, trainable, bucket_bytes);
  }
  return chosen;
}

}  // namespace gpubench::parallelism
