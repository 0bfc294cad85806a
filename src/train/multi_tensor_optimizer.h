// What the training step needs of an optimiser beyond torch::optim::Optimizer: which kernel
// path runs (the result's optimizer_impl), and, for the fused kernels, a step skipped on the
// device where the fp16 loss scaler found inf/NaN gradients (no host sync, so capturable).
#pragma once

#include <string>

#include <torch/torch.h>

namespace gpubench {

enum class OptimizerImplementation { kFused, kForeach };

// "fused" or "foreach": the result's optimizer_impl.
std::string to_string(OptimizerImplementation implementation);

class MultiTensorOptimizer : public torch::optim::Optimizer {
 public:
  using torch::optim::Optimizer::Optimizer;

  virtual OptimizerImplementation implementation() const = 0;
  // Fused implementations only: the update, skipped on the device where `found_inf` (float32
  // [1]) is nonzero. Throws std::invalid_argument for the foreach implementation.
  virtual void step_unless(const torch::Tensor& found_inf) = 0;
  // The recipe in words, for the result: "SGD momentum 0.9, weight decay 0.0001".
  virtual std::string description() const = 0;
};

}  // namespace gpubench
