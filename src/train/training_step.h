// One training step as the reference recipes do it: forward and loss (under autocast for
// fp16/bf16), backward (loss-scaled for fp16), gradient averaging across ranks, the model's
// optimiser over its trainable parameters (multi-tensor: MultiTensorSgd, MultiTensorAdamW).
#pragma once

#include <memory>
#include <optional>

#include <torch/torch.h>

#include "distributed/gradient_sync.h"
#include "features/precision/precision_policy.h"
#include "memory/training_memory.h"
#include "modeling/flop_counter.h"
#include "modeling/model_registry.h"
#include "optim/grad_scaler.h"
#include "optim/multi_tensor_optimizer.h"
#include "optim/optimizer_registry.h"
#include "train/step_timeline.h"

namespace gpubench {

// The parameters that train (requires_grad): all of them, or LoRA's adapters.
std::vector<torch::Tensor> trainable_parameters(torch::nn::Module& module);

class TrainingStep {
 public:
  // With a synchronizer, gradients are averaged over the ranks between backward and the
  // optimizer step (before loss-scale unscaling, so every rank skips the same fp16 steps), and
  // the optimiser updates what it names (a sharded run's master shards).
  TrainingStep(TrainableModel& model, const PrecisionPolicy& policy, OptimizerSettings settings,
               GradientSync* synchronizer = nullptr);

  // Runs one step and returns the loss (detached, still on the device: no host sync). The
  // gradients are cleared to none first, as PyTorch's zero_grad() does.
  torch::Tensor run(const SyntheticBatch& batch);
  // The step without the optimiser's update: what `fit` measures activations on; with
  // `clear_gradients` false, backward accumulates into the gradients already there.
  torch::Tensor run_forward_backward(const SyntheticBatch& batch, bool clear_gradients = true);
  // The next step records its tensor bytes on `device` (last_step_memory), and with
  // `backward_moments` the peak of each of backward's moments; it resets the device's peak count.
  void measure_memory_of_next_step(torch::Device device, bool backward_moments = false) {
    measured_device_ = device;
    backward_moments_ = backward_moments;
  }
  const StepMemory& last_step_memory() const { return step_memory_; }
  // The products of every forward pass run so far (not those a graph replays), for the share
  // that ran in FP8.
  const FlopCounts& forward_counts() const { return forward_counts_; }
  int64_t skipped_steps() const { return scaler_ ? scaler_->skipped_steps() : 0; }
  // Steps run by run() mark their phases on `timeline` (nullptr: none).
  void set_timeline(StepTimeline* timeline) { timeline_ = timeline; }
  const MultiTensorOptimizer& optimizer() const { return *optimizer_; }
  MultiTensorOptimizer& optimizer() { return *optimizer_; }

 private:
  torch::Tensor forward_backward(const SyntheticBatch& batch, bool clear_gradients,
                                 StepTimeline* timeline);
  // A measured step's end: its peak read on the device, with what BackwardMoments reset away;
  // the next step is not measured unless asked again.
  void finish_measurement();
  std::optional<torch::Device> measured_device_;
  bool backward_moments_ = false;
  StepMemory step_memory_;
  FlopCounts forward_counts_;
  TrainableModel& model_;
  PrecisionPolicy policy_;
  std::unique_ptr<MultiTensorOptimizer> optimizer_;
  std::unique_ptr<GradScaler> scaler_;
  GradientSync* synchronizer_;
  StepTimeline* timeline_ = nullptr;
};

}  // namespace gpubench
