// SGD with momentum and weight decay, torch::optim::SGD's update rule, applied to every
// parameter at once. torch::optim::SGD loops over the parameters (three or four kernels each:
// 161 tensors for ResNet-50); PyTorch's Python SGD runs multi-tensor (_foreach_) kernels by
// default on CUDA and one fused kernel with fused=True. This does the same: the _foreach_
// operators (LibTorch 1.13 and 2.x, any device), or on LibTorch 2.x with CUDA the fused
// operator at::_fused_sgd_.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "optim/multi_tensor_optimizer.h"

namespace gpubench {

// The fastest implementation this LibTorch has for parameters on `device`.
OptimizerImplementation best_sgd_implementation(torch::Device device);

class MultiTensorSgd : public MultiTensorOptimizer {
 public:
  MultiTensorSgd(std::vector<torch::Tensor> parameters, const torch::optim::SGDOptions& options,
                 OptimizerImplementation implementation);

  // One update of every parameter that has a gradient; a parameter without one keeps its value
  // and its momentum buffer, as with torch::optim::SGD. `closure` is not supported (nullptr).
  torch::Tensor step(LossClosure closure = nullptr) override;
  // The fused implementation only: the same update, skipped on the device where `found_inf`
  // (float32 [1]) is nonzero, so the fp16 loss scaler needs no host sync (and the step can be
  // captured in a CUDA graph).
  void step_unless(const torch::Tensor& found_inf) override;

  OptimizerImplementation implementation() const override { return implementation_; }
  std::string description() const override;
  std::vector<torch::Tensor> state_tensors() const override;
  int64_t step_workspace_bytes() const override;
  int64_t planned_state_bytes() const override;

 private:
  const torch::optim::SGDOptions& options() const;
  void update(const std::optional<torch::Tensor>& found_inf);
  OptimizerImplementation implementation_;
  std::vector<torch::Tensor> parameters_;
  std::vector<torch::Tensor> momentum_buffers_;  // undefined until a parameter's first update
};

}  // namespace gpubench
