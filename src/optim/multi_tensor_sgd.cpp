#include "optim/multi_tensor_sgd.h"

#include <sstream>
#include <stdexcept>

#include "optim/optimizer_registry.h"
#include "torch_support/compat.h"

namespace gpubench {

OptimizerImplementation best_sgd_implementation(torch::Device device) {
  return device.is_cuda() && compat::kHasFusedSgd ? OptimizerImplementation::kFused
                                                  : OptimizerImplementation::kForeach;
}

MultiTensorSgd::MultiTensorSgd(std::vector<torch::Tensor> parameters,
                               const torch::optim::SGDOptions& options,
                               OptimizerImplementation implementation)
    : MultiTensorOptimizer(parameters, std::make_unique<torch::optim::SGDOptions>(options)),
      implementation_(implementation),
      parameters_(std::move(parameters)),
      momentum_buffers_(parameters_.size()) {
  if (options.nesterov() && (options.momentum() <= 0 || options.dampening() != 0)) {
    throw std::invalid_argument("Nesterov momentum needs a momentum and zero dampening");
  }
  if (implementation_ == OptimizerImplementation::kFused && !compat::kHasFusedSgd) {
    throw std::invalid_argument("this LibTorch has no fused SGD");
  }
}

std::vector<torch::Tensor> MultiTensorSgd::state_tensors() const {
  return defined_tensors({&momentum_buffers_});
}

int64_t MultiTensorSgd::step_workspace_bytes() const {
  return foreach_workspace_bytes(parameters_, implementation_);
}

int64_t MultiTensorSgd::planned_state_bytes() const {
  return options().momentum() != 0 ? parameter_bytes(parameters_) : 0;  // the momentum buffers
}

std::string MultiTensorSgd::description() const {
  const auto& o = options();
  std::ostringstream text;
  text << "SGD momentum " << o.momentum() << ", weight decay " << o.weight_decay();
  if (o.nesterov()) text << ", Nesterov";
  return text.str();
}

const torch::optim::SGDOptions& MultiTensorSgd::options() const {
  return static_cast<const torch::optim::SGDOptions&>(defaults());
}

torch::Tensor MultiTensorSgd::step(LossClosure closure) {
  if (closure) throw std::invalid_argument("MultiTensorSgd::step takes no closure");
  update(std::nullopt);
  return {};
}

void MultiTensorSgd::step_unless(const torch::Tensor& found_inf) {
  if (implementation_ != OptimizerImplementation::kFused) {
    throw std::invalid_argument("a step skipped on the device needs the fused SGD");
  }
  update(found_inf);
}

void MultiTensorSgd::update(const std::optional<torch::Tensor>& found_inf) {
  torch::NoGradGuard no_grad;
  const auto& o = options();
  const bool momentum = o.momentum() != 0;
  // [0]: parameters with a momentum buffer; [1]: those whose buffer starts at this step.
  struct Group {
    std::vector<size_t> index;
    std::vector<torch::Tensor> params, grads, buffers;
  } groups[2];
  for (size_t i = 0; i < parameters_.size(); ++i) {
    const torch::Tensor& grad = parameters_[i].grad();
    if (!grad.defined()) continue;
    const bool first = momentum && !momentum_buffers_[i].defined();
    Group& group = groups[first];
    group.index.push_back(i);
    group.params.push_back(parameters_[i]);
    group.grads.push_back(grad);
    if (momentum && !first) group.buffers.push_back(momentum_buffers_[i]);
  }
  for (const bool first : {false, true}) {
    Group& group = groups[first];
    if (group.params.empty()) continue;
    if (implementation_ == OptimizerImplementation::kFused) {
      if (first) {  // the kernel writes the gradient into a first step's buffer
        for (size_t k = 0; k < group.index.size(); ++k) {
          // Zeros where the step may be skipped on the device: a skipped first step leaves the
          // buffer as it is, and the next step's m * 0 + g is then the first step's rule.
          momentum_buffers_[group.index[k]] =
              found_inf ? torch::zeros_like(group.params[k]) : torch::empty_like(group.params[k]);
          group.buffers.push_back(momentum_buffers_[group.index[k]]);
        }
      }
      compat::fused_sgd_(group.params, group.grads, group.buffers, o.weight_decay(), o.momentum(),
                         o.lr(), o.dampening(), o.nesterov(), first, found_inf);
      continue;
    }
    // torch::optim::SGD's rule: d = g + wd * p; b = d on the first step, else
    // m * b + (1 - dampening) * d; d = nesterov ? d + m * b : b; p -= lr * d.
    std::vector<torch::Tensor> update = group.grads;
    if (o.weight_decay() != 0) update = at::_foreach_add(update, group.params, o.weight_decay());
    if (momentum) {
      if (first) {
        for (size_t k = 0; k < group.index.size(); ++k) {
          momentum_buffers_[group.index[k]] = update[k].clone().detach();
          group.buffers.push_back(momentum_buffers_[group.index[k]]);
        }
      } else {
        at::_foreach_mul_(group.buffers, o.momentum());
        at::_foreach_add_(group.buffers, update, 1 - o.dampening());
      }
      update = o.nesterov() ? at::_foreach_add(update, group.buffers, o.momentum()) : group.buffers;
    }
    at::_foreach_add_(group.params, update, -o.lr());
  }
}

namespace {

// torchvision's recipe: learning rate 0.1 x global batch / 256, momentum 0.9, weight decay 1e-4.
const OptimizerRegistration kSgd{
    {"sgd", "SGD", "torchvision's: lr 0.1 x global batch / 256, momentum 0.9, weight decay 1e-4", 4,
     [](int64_t global_batch) {
       OptimizerSettings settings;
       settings.name = "sgd";
       settings.learning_rate = 0.1 * static_cast<double>(global_batch) / 256.0;
       return settings;
     },
     [](std::vector<torch::Tensor> parameters, const OptimizerSettings& settings,
        torch::Device device) -> std::unique_ptr<MultiTensorOptimizer> {
       return std::make_unique<MultiTensorSgd>(std::move(parameters),
                                               torch::optim::SGDOptions(settings.learning_rate)
                                                   .momentum(settings.momentum)
                                                   .weight_decay(settings.weight_decay),
                                               best_sgd_implementation(device));
     }}};

}  // namespace

}  // namespace gpubench
