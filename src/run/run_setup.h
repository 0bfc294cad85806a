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
namespace parallelism {
class ModelParallelism;
}

// This process's place in a data-parallel run. The default is a single process.
struct RankPlacement {
  Collectives* collectives = nullptr;  // connected to the other ranks; null: one process
  // --tensor-parallel or --expert-parallel N (features/parallelism/model_parallelism.h): the
  // parallelism, this rank's group of neighbouring ranks (whose collectives a model makes inside
  // its passes), and the ranks holding this rank's slice in the other groups; all null without a
  // model parallelism (a run has at most one).
  const parallelism::ModelParallelism* model_parallelism = nullptr;
  ModelParallelCollectives* model_parallel = nullptr;
  Collectives* slice_replicas = nullptr;
  // The group across model replicas, which data parallelism averages over: the slice's replicas
  // where the model parallelism splits every layer, else every rank; null: one process.
  Collectives* replicas() const;
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
