#include "optim/grad_scaler.h"

namespace gpubench {
namespace {

std::vector<torch::Tensor> defined_grads(const torch::optim::Optimizer& optimizer) {
  std::vector<torch::Tensor> grads;
  for (const auto& group : optimizer.param_groups()) {
    for (const auto& parameter : group.params()) {
      if (parameter.grad().defined()) grads.push_back(parameter.grad());
    }
  }
  return grads;
}

}  // namespace

GradScaler::GradScaler(torch::Device device, GradScalerOptions options)
    : options_(options), fused_(device.is_cuda()) {
  const auto float_options = torch::TensorOptions().device(device).dtype(torch::kFloat);
  scale_ = torch::full({1}, options_.init_scale, float_options);
  growth_tracker_ = torch::zeros({1}, float_options.dtype(torch::kInt));
  found_inf_ = torch::zeros({1}, float_options);
  skipped_on_device_ = torch::zeros({1}, float_options);
}

int64_t GradScaler::skipped_steps() const {
  return skipped_steps_ + static_cast<int64_t>(skipped_on_device_.item<float>());
}

void GradScaler::step(MultiTensorOptimizer& optimizer) {
  if (!fused_ || optimizer.implementation() != OptimizerImplementation::kFused) {
    step(static_cast<torch::optim::Optimizer&>(optimizer));
    return;
  }
  unscale(defined_grads(optimizer));
  optimizer.step_unless(found_inf_);
  skipped_on_device_.add_(found_inf_);
}

void GradScaler::unscale(const std::vector<torch::Tensor>& grads) {
  found_inf_.zero_();
  const torch::Tensor inv_scale = scale_.to(torch::kDouble).reciprocal().to(torch::kFloat);
  if (fused_) {
    at::_amp_foreach_non_finite_check_and_unscale_(grads, found_inf_, inv_scale);
  } else {
    for (const auto& grad : grads) {
      found_inf_.add_(grad.isfinite().all().logical_not().to(torch::kFloat));
      grad.mul_(inv_scale);
    }
    found_inf_.clamp_max_(1.0);
  }
  if (found_inf_agreement_) found_inf_agreement_(found_inf_);
}

bool GradScaler::step(torch::optim::Optimizer& optimizer) {
  unscale(defined_grads(optimizer));
  // One host sync per step, as in PyTorch's GradScaler.step.
  if (found_inf_.item<float>() != 0.0f) {
    ++skipped_steps_;
    return false;
  }
  optimizer.step();
  return true;
}

void GradScaler::update() {
  if (fused_) {
    at::_amp_update_scale_(scale_, growth_tracker_, found_inf_, options_.growth_factor,
                           options_.backoff_factor, options_.growth_interval);
    return;
  }
  if (found_inf_.item<float>() != 0.0f) {
    scale_.mul_(options_.backoff_factor);
    growth_tracker_.zero_();
    return;
  }
  growth_tracker_.add_(1);
  if (growth_tracker_.item<int>() >= options_.growth_interval) {
    scale_.mul_(options_.growth_factor);
    growth_tracker_.zero_();
  }
}

}  // namespace gpubench
