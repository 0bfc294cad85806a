#include "features/parallelism/parallelism_result.h"

namespace gpubench::parallelism {

void record_model_parallel_wait(const DistributedInfo& measured, bool expert_parallel,
                                DistributedInfo& result) {
  if (expert_parallel) {
    result.expert_parallel_exposed_ms = measured.tensor_parallel_exposed_ms;
    result.expert_parallel_prefill_exposed_ms = measured.tensor_parallel_prefill_exposed_ms;
    result.expert_parallel_collectives = measured.tensor_parallel_collectives;
  } else {
    result.tensor_parallel_exposed_ms = measured.tensor_parallel_exposed_ms;
    result.tensor_parallel_prefill_exposed_ms = measured.tensor_parallel_prefill_exposed_ms;
    result.tensor_parallel_collectives = measured.tensor_parallel_collectives;
  }
}

}  // namespace gpubench::parallelism
