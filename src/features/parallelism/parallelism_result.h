// What parallelism adds to a run's result (docs/parallelism.md): the wait on the model-parallel
// group's collectives, which the workloads measure on whichever group the run has
// (RankPlacement::model_parallel), under its kind's keys.
#pragma once

#include "results/result.h"

namespace gpubench::parallelism {

// `measured`'s wait (the workload's, kept in the tensor-parallel fields) into `result`: the
// expert-parallel fields for an expert-parallel group, the tensor-parallel ones otherwise.
void record_model_parallel_wait(const DistributedInfo& measured, bool expert_parallel,
                                DistributedInfo& result);

}  // namespace gpubench::parallelism
