// What the training step needs of an optimiser beyond torch::optim::Optimizer: which kernel
// path runs (the result's optimizer_impl), and, for the fused kernels, a step skipped on the
// device where the fp16 loss scaler found inf/NaN gradients (no host sync, so capturable).
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include <torch/torch.h>

namespace gpubench {

enum class OptimizerImplementation { kFused, kForeach };

// "fused" or "foreach": the result's optimizer_impl.
std::string to_string(OptimizerImplementation implementation);

// The defined tensors of the lists, for state_tensors().
std::vector<torch::Tensor> defined_tensors(
    std::initializer_list<const std::vector<torch::Tensor>*> lists);
// The bytes of `parameters`' storages.
int64_t parameter_bytes(const std::vector<torch::Tensor>& parameters);
// step_workspace_bytes() of an implementation over `parameters`.
int64_t foreach_workspace_bytes(const std::vector<torch::Tensor>& parameters,
                                OptimizerImplementation implementation);

class MultiTensorOptimizer : public torch::optim::Optimizer {
 public:
  using torch::optim::Optimizer::Optimizer;

  virtual OptimizerImplementation implementation() const = 0;
  // Fused implementations only: the update, skipped on the device where `found_inf` (float32
  // [1]) is nonzero. Throws std::invalid_argument for the foreach implementation.
  virtual void step_unless(const torch::Tensor& found_inf) = 0;
  // The recipe in words, for the result: "SGD momentum 0.9, weight decay 0.0001".
  virtual std::string description() const = 0;
  // Its state, for the memory breakdown: momentum buffers, moments, step counts on the device.
  virtual std::vector<torch::Tensor> state_tensors() const = 0;
  // The bytes of temporaries a step allocates and frees: the foreach implementations make one
  // float32 copy of the trainable parameters (SGD's weight-decayed gradient, AdamW's
  // denominator); the fused kernels none.
  virtual int64_t step_workspace_bytes() const = 0;
  // The bytes of state_tensors() once every parameter has been updated, from the parameters
  // alone (what `fit` counts without running a step).
  virtual int64_t planned_state_bytes() const = 0;
  // The part of planned_state_bytes() held once per parameter tensor, whatever its size (the
  // fused AdamW's float32 step count): what does not grow with a model's width.
  virtual int64_t planned_per_tensor_state_bytes() const { return 0; }
};

}  // namespace gpubench
