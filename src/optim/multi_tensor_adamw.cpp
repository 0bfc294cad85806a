#include "optim/multi_tensor_adamw.h"

#include <cmath>
#include <sstream>
#include <stdexcept>

#include "optim/optimizer_registry.h"
#include "torch_support/compat.h"

namespace gpubench {

OptimizerImplementation best_adamw_implementation(torch::Device device) {
  return compat::fused_adamw_available(device) ? OptimizerImplementation::kFused
                                               : OptimizerImplementation::kForeach;
}

MultiTensorAdamW::MultiTensorAdamW(std::vector<torch::Tensor> parameters,
                                   const torch::optim::AdamWOptions& options,
                                   OptimizerImplementation implementation)
    : MultiTensorOptimizer(parameters, std::make_unique<torch::optim::AdamWOptions>(options)),
      implementation_(implementation),
      parameters_(std::move(parameters)),
      exp_avgs_(parameters_.size()),
      exp_avg_sqs_(parameters_.size()),
      device_steps_(parameters_.size()),
      host_steps_(parameters_.size(), 0) {
  if (options.amsgrad()) throw std::invalid_argument("MultiTensorAdamW has no AMSGrad");
  if (implementation_ == OptimizerImplementation::kFused && !parameters_.empty() &&
      !compat::fused_adamw_available(parameters_.front().device())) {
    throw std::invalid_argument("this LibTorch has no fused AdamW for this device");
  }
}

const torch::optim::AdamWOptions& MultiTensorAdamW::options() const {
  return static_cast<const torch::optim::AdamWOptions&>(defaults());
}

std::vector<torch::Tensor> MultiTensorAdamW::state_tensors() const {
  return defined_tensors({&exp_avgs_, &exp_avg_sqs_, &device_steps_});
}

int64_t MultiTensorAdamW::step_workspace_bytes() const {
  return foreach_workspace_bytes(parameters_, implementation_);
}

int64_t MultiTensorAdamW::planned_state_bytes() const {
  // Two moments like the parameters, and the step counts.
  return 2 * parameter_bytes(parameters_) + planned_per_tensor_state_bytes();
}

int64_t MultiTensorAdamW::planned_per_tensor_state_bytes() const {
  // The fused kernel's float32 step count per parameter.
  return implementation_ == OptimizerImplementation::kFused
             ? 4 * static_cast<int64_t>(parameters_.size())
             : 0;
}

std::string MultiTensorAdamW::description() const {
  const auto& o = options();
  std::ostringstream text;
  text << "AdamW betas (" << std::get<0>(o.betas()) << ", " << std::get<1>(o.betas()) << "), eps "
       << o.eps() << ", weight decay " << o.weight_decay();
  return text.str();
}

torch::Tensor MultiTensorAdamW::step(LossClosure closure) {
  if (closure) throw std::invalid_argument("MultiTensorAdamW::step takes no closure");
  update(std::nullopt);
  return {};
}

void MultiTensorAdamW::step_unless(const torch::Tensor& found_inf) {
  if (implementation_ != OptimizerImplementation::kFused) {
    throw std::invalid_argument("a step skipped on the device needs the fused AdamW");
  }
  update(found_inf);
}

void MultiTensorAdamW::update(const std::optional<torch::Tensor>& found_inf) {
  torch::NoGradGuard no_grad;
  const auto& o = options();
  const double beta1 = std::get<0>(o.betas()), beta2 = std::get<1>(o.betas());
  std::vector<size_t> index;
  std::vector<torch::Tensor> params, grads, exp_avgs, exp_avg_sqs, steps;
  for (size_t i = 0; i < parameters_.size(); ++i) {
    const torch::Tensor& grad = parameters_[i].grad();
    if (!grad.defined()) continue;
    if (!exp_avgs_[i].defined()) {
      exp_avgs_[i] = torch::zeros_like(parameters_[i], torch::MemoryFormat::Preserve);
      exp_avg_sqs_[i] = torch::zeros_like(parameters_[i], torch::MemoryFormat::Preserve);
      if (implementation_ == OptimizerImplementation::kFused) {
        device_steps_[i] = torch::zeros({}, parameters_[i].options().dtype(torch::kFloat));
      }
    }
    index.push_back(i);
    params.push_back(parameters_[i]);
    grads.push_back(grad);
    exp_avgs.push_back(exp_avgs_[i]);
    exp_avg_sqs.push_back(exp_avg_sqs_[i]);
    if (implementation_ == OptimizerImplementation::kFused) steps.push_back(device_steps_[i]);
  }
  if (params.empty()) return;
  if (implementation_ == OptimizerImplementation::kFused) {
    // As PyTorch's _fused_adamw: the count goes up first and back down where the step was
    // skipped, all on the device.
    at::_foreach_add_(steps, 1);
    compat::fused_adamw_(params, grads, exp_avgs, exp_avg_sqs, steps, o.lr(), beta1, beta2,
                         o.weight_decay(), o.eps(), found_inf);
    if (found_inf) {  // the steps are 0-dimensional, the scaler's found_inf [1]
      at::_foreach_sub_(steps, std::vector<torch::Tensor>(steps.size(), found_inf->squeeze(0)));
    }
    return;
  }
  // torch::optim::AdamW's rule: p *= 1 - lr * wd; m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2;
  // p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps).
  std::vector<c10::Scalar> step_sizes, bias_correction2_sqrts;
  for (const size_t i : index) {
    const auto t = static_cast<double>(++host_steps_[i]);
    step_sizes.emplace_back(-o.lr() / (1 - std::pow(beta1, t)));
    bias_correction2_sqrts.emplace_back(std::sqrt(1 - std::pow(beta2, t)));
  }
  if (o.weight_decay() != 0) at::_foreach_mul_(params, 1 - o.lr() * o.weight_decay());
  at::_foreach_mul_(exp_avgs, beta1);
  at::_foreach_add_(exp_avgs, grads, 1 - beta1);
  at::_foreach_mul_(exp_avg_sqs, beta2);
  at::_foreach_addcmul_(exp_avg_sqs, grads, grads, 1 - beta2);
  std::vector<torch::Tensor> denominators = at::_foreach_sqrt(exp_avg_sqs);
  at::_foreach_div_(denominators, bias_correction2_sqrts);
  at::_foreach_add_(denominators, o.eps());
  at::_foreach_addcdiv_(params, exp_avgs, denominators, step_sizes);
}

namespace {

// As the fine-tuning recipes use it: learning rate 1e-4, betas 0.9 and 0.999, weight decay 0.01.
const OptimizerRegistration kAdamW{
    {"adamw", "AdamW", "the fine-tuning recipes': lr 1e-4, betas 0.9 and 0.999, weight decay 0.01",
     8,
     [](int64_t) {
       OptimizerSettings settings;
       settings.name = "adamw";
       settings.learning_rate = 1e-4;
       settings.weight_decay = 0.01;
       return settings;
     },
     [](std::vector<torch::Tensor> parameters, const OptimizerSettings& settings,
        torch::Device device) -> std::unique_ptr<MultiTensorOptimizer> {
       return std::make_unique<MultiTensorAdamW>(
           std::move(parameters),
           torch::optim::AdamWOptions(settings.learning_rate).weight_decay(settings.weight_decay),
           best_adamw_implementation(device));
     }}};

}  // namespace

}  // namespace gpubench
