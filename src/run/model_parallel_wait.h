// What a workload reports of its tensor-parallel collectives, or its expert-parallel exchanges
// (docs/parallelism.md; RankPlacement::model_parallel): the time the device waited on them, per
// step, taken from the group's marks around each one.
#pragma once

#include <cstdint>

#include <torch/torch.h>

#include "features/parallelism/model_parallel_collectives.h"
#include "run/run_setup.h"

namespace gpubench {

struct ModelParallelWait {
  double ms = 0;            // per step, the slowest rank's mean
  int64_t collectives = 0;  // per step
};

// What the group waited since the last take, once the device is synchronised; nothing without
// tensor or expert parallelism.
ModelParallelCollectives::Waited take_model_parallel_wait(const RankPlacement& rank,
                                                          torch::Device device);

// `waited` over `steps` steps, the slowest rank's; every rank calls it (a collective).
ModelParallelWait per_step_on_slowest_rank(const RankPlacement& rank,
                                           const ModelParallelCollectives::Waited& waited,
                                           int64_t steps);

}  // namespace gpubench
