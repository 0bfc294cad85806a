#include "train/training_step.h"

namespace gpubench {

TrainingStep::TrainingStep(TrainableModel& model, const PrecisionPolicy& policy,
                           OptimizerSettings settings, GradientSynchronizer* synchronizer)
    : model_(model),
      policy_(policy),
      optimizer_(model.module().parameters(),
                 torch::optim::SGDOptions(settings.learning_rate)
                     .momentum(settings.momentum)
                     .weight_decay(settings.weight_decay),
                 best_sgd_implementation(policy.device())),
      synchronizer_(synchronizer) {
  if (policy_.uses_loss_scaling()) scaler_ = std::make_unique<GradScaler>(policy_.device());
}

torch::Tensor TrainingStep::run(const SyntheticBatch& batch) {
  optimizer_.zero_grad();
  torch::Tensor loss;
  {
    AutocastScope autocast(policy_);
    loss = model_.training_loss(batch);
  }
  if (scaler_) {
    scaler_->scale(loss).backward();
    if (synchronizer_) synchronizer_->finish_step();
    scaler_->step(optimizer_);
    scaler_->update();
  } else {
    loss.backward();
    if (synchronizer_) synchronizer_->finish_step();
    optimizer_.step();
  }
  return loss.detach();
}

}  // namespace gpubench
