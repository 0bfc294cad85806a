// Dynamic loss scaling for fp16 training, with PyTorch's torch.amp.GradScaler semantics.
// LibTorch has no GradScaler; on CUDA this uses the same fused operators PyTorch uses
// (_amp_foreach_non_finite_check_and_unscale_, _amp_update_scale_). Other devices run an
// equivalent composite implementation, which is what the CPU unit tests exercise.
#pragma once

#include <functional>
#include <vector>

#include <torch/torch.h>

#include "optim/multi_tensor_optimizer.h"

namespace gpubench {

struct GradScalerOptions {
  double init_scale = 65536.0;
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  int64_t growth_interval = 2000;
};

class GradScaler {
 public:
  GradScaler(torch::Device device, GradScalerOptions options = {});

  torch::Tensor scale(const torch::Tensor& loss) const { return loss * scale_; }
  // Unscales the gradients in place and runs the optimiser step unless a gradient is inf/NaN.
  // Returns whether the step ran.
  bool step(torch::optim::Optimizer& optimizer);
  // With a fused optimiser (SGD, AdamW) on CUDA: unscale, inf check, and the step skipped on the
  // device where a gradient is inf/NaN; no host sync (PyTorch's GradScaler with fused=True).
  // Falls back to step(Optimizer&) otherwise.
  void step(MultiTensorOptimizer& optimizer);
  // Where each rank holds a different part of the gradients (sharded data parallelism): makes
  // every rank's found-inf flag the ranks' largest, so that all skip the same steps (PyTorch's
  // ShardedGradScaler).
  void set_found_inf_agreement(std::function<void(torch::Tensor&)> agree) {
    found_inf_agreement_ = std::move(agree);
  }
  // Backs the scale off after a skipped step; grows it after growth_interval clean steps.
  void update();

  double current_scale() const { return scale_.item<double>(); }
  // Steps skipped so far (reads the device counter: a host sync).
  int64_t skipped_steps() const;

 private:
  void unscale(const std::vector<torch::Tensor>& grads);
  GradScalerOptions options_;
  bool fused_;
  torch::Tensor scale_;              // float32 [1]
  torch::Tensor growth_tracker_;     // int32 [1]: clean steps since the last change
  torch::Tensor found_inf_;          // float32 [1]
  int64_t skipped_steps_ = 0;        // counted on the host (step(Optimizer&))
  torch::Tensor skipped_on_device_;  // float32 [1]: counted on the device (fused step)
  std::function<void(torch::Tensor&)> found_inf_agreement_;
};

}  // namespace gpubench
