// AdamW (decoupled weight decay), torch::optim::AdamW's update rule and state, applied to every
// parameter at once: the _foreach_ operators (LibTorch 1.13 and 2.x, any device), or on LibTorch
// 2.4 and newer the fused operator at::_fused_adamw_ (PyTorch's AdamW(fused=True); CUDA and
// CPU), which also takes the fp16 loss scaler's found_inf so a skipped step needs no host sync.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "optim/multi_tensor_optimizer.h"

namespace gpubench {

// The fastest implementation this LibTorch has for parameters on `device`.
OptimizerImplementation best_adamw_implementation(torch::Device device);

class MultiTensorAdamW : public MultiTensorOptimizer {
 public:
  MultiTensorAdamW(std::vector<torch::Tensor> parameters, const torch::optim::AdamWOptions& options,
                   OptimizerImplementation implementation);
  const torch::optim::AdamWOptions& options() const;

  // One update of every parameter that has a gradient; one without keeps its value, its moments
  // and its step count, as with torch::optim::AdamW. `closure` is not supported (nullptr).
  torch::Tensor step(LossClosure closure = nullptr) override;
  void step_unless(const torch::Tensor& found_inf) override;

  OptimizerImplementation implementation() const override { return implementation_; }
  std::string description() const override;
  std::vector<torch::Tensor> state_tensors() const override;
  int64_t step_workspace_bytes() const override;
  int64_t planned_state_bytes() const override;
  int64_t planned_per_tensor_state_bytes() const override;

 private:
  void update(const std::optional<torch::Tensor>& found_inf);
  OptimizerImplementation implementation_;
  std::vector<torch::Tensor> parameters_;
  // Per parameter, undefined until its first update: first and second moments; the step count
  // (float32 [1] on the device for the fused kernel, which reads it there; on the host else).
  std::vector<torch::Tensor> exp_avgs_, exp_avg_sqs_, device_steps_;
  std::vector<int64_t> host_steps_;
};

}  // namespace gpubench
