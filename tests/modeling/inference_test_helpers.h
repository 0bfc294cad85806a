// What the inference format tests (fp8_test.cpp, integer_weights_test.cpp) share: a tiny Llama
// taught one sequence, and the refusals resolve gives on a machine described by hand.
#pragma once

#include <string>
#include <utility>

#include <torch/torch.h>

#include "features/precision/precision_policy.h"
#include "modeling/model_registry.h"
#include "optim/optimizer_registry.h"
#include "run/resolve_benchmark.h"
#include "system/machine.h"
#include "test_helpers.h"
#include "train/training_step.h"

namespace gpubench::testing {

// test-tiny-llama taught one sequence of `length` tokens in fp32 (150 AdamW steps from fixed
// seeds, so every call starts from the same weights), in eval mode, with that sequence [1, length].
inline std::pair<std::unique_ptr<TrainableModel>, torch::Tensor> taught_tiny_llama(int64_t length) {
  torch::manual_seed(21);
  ModelOptions options;
  options.seq_len = length;
  auto model = ModelRegistry::instance().get("test-tiny-llama").instantiate(options);
  model->module().train();
  torch::manual_seed(22);
  const SyntheticBatch batch = model->synthetic_batch(1, torch::kCPU, false);
  OptimizerSettings settings = optimizer_settings_for("adamw", 1);
  settings.learning_rate = 1e-2;
  TrainingStep step(*model, PrecisionPolicy(Precision::kFp32, torch::kCPU), settings);
  for (int i = 0; i < 150; ++i) step.run(batch);
  model->module().eval();
  return {std::move(model), batch.inputs};
}

inline MachineFacts one_gpu(const std::string& name, int capability) {
  MachineFacts machine;
  machine.cuda_available = true;
  machine.cuda_device_count = 1;
  machine.cpu_cores = 8;
  machine.cuda_device_name = name;
  machine.cuda_compute_capability = capability;
  return machine;
}

// resolve's one line for `request` on `machine`; empty when it resolves.
inline std::string refusal(const BenchmarkRequest& request, const MachineFacts& machine = {}) {
  return usage_error_of([&] { resolve(request, machine); });
}

}  // namespace gpubench::testing
