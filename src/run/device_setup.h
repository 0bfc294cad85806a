// The first steps of every run on a device, `fit`'s probes included: the device, the precision
// policy and its global flags, the intra-op threads, the seed and CPU tensor accounting. (The
// memory limit is a run's, RunSession's: fit's probes measure what a step takes, unlimited.)
#pragma once

#include <torch/torch.h>

#include "features/precision/precision_policy.h"
#include "modeling/model_registry.h"
#include "settings/benchmark.h"

namespace gpubench {

class DeviceSetup {
 public:
  // `device_index`: the CUDA device of this rank (unused on the CPU).
  DeviceSetup(const ResolvedBenchmark& benchmark, int device_index);

  const ResolvedBenchmark& benchmark() const { return benchmark_; }
  const ModelInfo& info() const { return info_; }
  torch::Device device() const { return device_; }
  const PrecisionPolicy& policy() const { return policy_; }

 private:
  const ResolvedBenchmark& benchmark_;
  const ModelInfo& info_;
  torch::Device device_;
  PrecisionPolicy policy_;
};

}  // namespace gpubench
