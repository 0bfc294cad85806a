#include "train/training_step.h"

#include "memory/tensor_memory.h"
#include "modeling/flop_counter.h"

namespace gpubench {

std::vector<torch::Tensor> trainable_parameters(torch::nn::Module& module) {
  std::vector<torch::Tensor> trainable;
  for (const auto& parameter : module.parameters()) {
    if (parameter.requires_grad()) trainable.push_back(parameter);
  }
  return trainable;
}

TrainingStep::TrainingStep(TrainableModel& model, const PrecisionPolicy& policy,
                           OptimizerSettings settings, GradientSync* synchronizer)
    : model_(model),
      policy_(policy),
      optimizer_(make_optimizer(synchronizer
                                    ? synchronizer->optimized(trainable_parameters(model.module()))
                                    : trainable_parameters(model.module()),
                                settings, policy.device())),
      synchronizer_(synchronizer) {
  if (policy_.uses_loss_scaling()) {
    scaler_ = std::make_unique<GradScaler>(policy_.device());
    if (synchronizer_) {
      scaler_->set_found_inf_agreement(
          [this](torch::Tensor& found_inf) { synchronizer_->agree_on_found_inf(found_inf); });
    }
  }
}

namespace {

void mark(StepTimeline* timeline, StepPoint point) {
  if (timeline) timeline->mark(point);
}

}  // namespace

torch::Tensor TrainingStep::forward_backward(const SyntheticBatch& batch, bool clear_gradients,
                                             StepTimeline* timeline) {
  const std::optional<torch::Device> measured = measured_device_;
  if (clear_gradients) {
    for (auto& group : optimizer_->param_groups()) {
      for (auto& parameter : group.params()) parameter.mutable_grad().reset();
    }
  }
  if (measured) {
    tensor_memory::reset_peak(*measured);
    step_memory_.start = tensor_memory::allocated_bytes(*measured);
    step_memory_.peak = 0;
    step_memory_.backward_moments.clear();
  }
  mark(timeline, StepPoint::kBegin);
  if (synchronizer_) synchronizer_->begin_step();
  torch::Tensor loss;
  {
    BlockObserverScope blocks(synchronizer_ ? synchronizer_->block_observer() : nullptr);
    MixedPrecisionScope mixed_precision(policy_);
    FlopCounter counter;
    loss = model_.training_loss(batch);
    forward_counts_ += counter.counts();
  }
  if (measured) step_memory_.after_forward = tensor_memory::allocated_bytes(*measured);
  mark(timeline, StepPoint::kForwardEnd);
  {
    std::optional<BackwardMoments> moments;
    if (measured && backward_moments_) moments.emplace(*measured);
    (scaler_ ? scaler_->scale(loss) : loss).backward();
    if (moments) {
      step_memory_.backward_moments = moments->take();
      step_memory_.peak = moments->highest();
    }
  }
  mark(timeline, StepPoint::kBackwardEnd);
  if (synchronizer_) {
    synchronizer_->finish_step();
    mark(timeline, StepPoint::kSyncEnd);
  }
  return loss;
}

void TrainingStep::finish_measurement() {
  if (measured_device_) {
    step_memory_.peak =
        std::max(step_memory_.peak, tensor_memory::peak_allocated_bytes(*measured_device_));
  }
  measured_device_.reset();
  backward_moments_ = false;
}

torch::Tensor TrainingStep::run_forward_backward(const SyntheticBatch& batch,
                                                 bool clear_gradients) {
  const torch::Tensor loss = forward_backward(batch, clear_gradients, nullptr);
  finish_measurement();
  return loss.detach();
}

torch::Tensor TrainingStep::run(const SyntheticBatch& batch) {
  const torch::Tensor loss = forward_backward(batch, true, timeline_);
  if (scaler_) {
    scaler_->step(*optimizer_);
    scaler_->update();
  } else {
    optimizer_->step();
  }
  if (synchronizer_) synchronizer_->after_update();
  mark(timeline_, StepPoint::kEnd);
  finish_measurement();
  return loss.detach();
}

}  // namespace gpubench
