// What a run is given from outside (RunSession's second argument): its rank placement, who
// watches its progress, a test fault, the host memory it may take.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "run/measurement.h"
#include "testing/fault_injection.h"

namespace gpubench {

// distributed/ and features/parallelism/: the run setup itself needs no LibTorch header
class Collectives;
class ModelParallelCollectives;

// This process's place in a data-parallel run. The default is a single process.
struct RankPlacement {
  Collectives* collectives = nullptr;  // connected to the other ranks; null: one process
  // --tensor-parallel N (features/parallelism/model_parallel_collectives.h): this rank's replica
  // and the ranks holding its slice in the other replicas; both null without tensor parallelism.
  ModelParallelCollectives* tensor_parallel = nullptr;
  Collectives* data_parallel = nullptr;
  // --expert-parallel N (features/parallelism/expert_parallel.h): the neighbouring ranks that split
  // the experts, and the ranks holding the same experts in the other such groups; both null without
  // expert parallelism. Every rank is a replica of the rest of the model.
  ModelParallelCollectives* expert_parallel = nullptr;
  Collectives* expert_replicas = nullptr;
  // The group whose collectives a model makes inside its passes (tensor or expert parallel; a run
  // has at most one).
  ModelParallelCollectives* model_parallel() const {
    return tensor_parallel ? tensor_parallel : expert_parallel;
  }
  // The group across model replicas, which data parallelism averages over: the data-parallel
  // group, or every rank without tensor parallelism; null: one process.
  Collectives* replicas() const { return data_parallel ? data_parallel : collectives; }
  int device_index = 0;  // CUDA device of this rank
  std::string launcher = "none";
};

struct RunSetup {
  RankPlacement rank;
  ProgressCallback progress;            // rank 0's; empty for the others
  std::optional<FaultInjection> fault;  // made to happen at the first timed step
  // The host memory this process may take, which the run's planned bytes are checked against
  // (features/memory_plan.h); unset: MemAvailable.
  std::optional<int64_t> host_memory_available;
};

}  // namespace gpubench
