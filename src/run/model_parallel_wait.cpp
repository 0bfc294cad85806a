#include "run/model_parallel_wait.h"

namespace gpubench {

ModelParallelCollectives::Waited take_model_parallel_wait(const RankPlacement& rank,
                                                          torch::Device device) {
  if (!rank.model_parallel) return {};
  synchronize_device(device);
  return rank.model_parallel->take_waited();
}

ModelParallelWait per_step_on_slowest_rank(const RankPlacement& rank,
                                           const ModelParallelCollectives::Waited& waited,
                                           int64_t steps) {
  if (!rank.model_parallel || steps <= 0) return {};
  const double mean = waited.total_ms / static_cast<double>(steps);
  return {rank.collectives->max_over_ranks(mean), waited.collectives / steps};
}

}  // namespace gpubench
