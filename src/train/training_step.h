// One training step as the reference recipes do it: forward and loss (under autocast for
// fp16/bf16), backward (loss-scaled for fp16), gradient averaging across ranks, SGD with
// momentum (multi-tensor: MultiTensorSgd).
#pragma once

#include <memory>

#include <torch/torch.h>

#include "distributed/gradient_synchronizer.h"
#include "models/model_registry.h"
#include "train/grad_scaler.h"
#include "train/multi_tensor_sgd.h"
#include "train/precision_policy.h"

namespace gpubench {

struct OptimizerSettings {
  double learning_rate = 0.1;  // torchvision's recipe scales it by global batch / 256
  double momentum = 0.9;
  double weight_decay = 1e-4;
};

class TrainingStep {
 public:
  // With a synchronizer, gradients are averaged over the ranks between backward and the
  // optimizer step (before loss-scale unscaling, so every rank skips the same fp16 steps).
  TrainingStep(TrainableModel& model, const PrecisionPolicy& policy, OptimizerSettings settings,
               GradientSynchronizer* synchronizer = nullptr);

  // Runs one step and returns the loss (detached, still on the device: no host sync).
  torch::Tensor run(const SyntheticBatch& batch);
  int64_t skipped_steps() const { return scaler_ ? scaler_->skipped_steps() : 0; }
  SgdImplementation optimizer_implementation() const { return optimizer_.implementation(); }

 private:
  TrainableModel& model_;
  PrecisionPolicy policy_;
  MultiTensorSgd optimizer_;
  std::unique_ptr<GradScaler> scaler_;
  GradientSynchronizer* synchronizer_;
};

}  // namespace gpubench
