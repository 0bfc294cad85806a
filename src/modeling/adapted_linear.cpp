#include "modeling/adapted_linear.h"

#include <algorithm>
#include <cmath>

#include "common/errors.h"
#include "common/input_limits.h"
#include "modeling/flop_counter.h"
#include "modeling/shared_input_products.h"

namespace gpubench::layers {

AdaptedLinearImpl::AdaptedLinearImpl(int64_t in_features, int64_t out_features, bool with_bias,
                                     std::string role, tensor_parallel::Split split,
                                     tensor_parallel::Group* group)
    : in_features_(split == tensor_parallel::Split::kRows
                       ? tensor_parallel::local_count(in_features, group, "input features")
                       : in_features),
      out_features_(split == tensor_parallel::Split::kColumns
                        ? tensor_parallel::local_count(out_features, group, "output features")
                        : out_features),
      role_(std::move(role)),
      split_(group ? split : tensor_parallel::Split::kNone),
      group_(group) {
  // Uninitialised: the models draw their weights themselves (fine_tuning_model.h).
  weight = register_parameter("weight", torch::empty({out_features_, in_features_}));
  if (with_bias) bias = register_parameter("bias", torch::zeros({out_features_}));
}

torch::Tensor AdaptedLinearImpl::forward(const torch::Tensor& input) {
  using tensor_parallel::Split;
  // Its weight held in the shared product's format: its part of that product.
  if (shared_ && shared_->quantized()) return shared_->forward(input)[shared_->index_of(this)];
  const torch::Tensor x =
      split_ == Split::kColumns ? tensor_parallel::copy_to_group(input, group_) : input;
  const torch::Tensor own_bias = split_ == Split::kRows ? torch::Tensor() : bias;
  torch::Tensor output = compute_.forward(x, weight, own_bias);
  if (adapted()) {
    const int64_t rows = x.numel() / in_features_;
    const int64_t rank = lora_a_.size(0);
    const torch::Tensor update =
        torch::nn::functional::linear(torch::nn::functional::linear(x, lora_a_), lora_b_);
    FlopCounter::record_multiply_adds(rows * rank * (in_features_ + out_features_));
    output = output + update * scaling_;
  }
  if (split_ != Split::kRows) return output;
  const torch::Tensor sum = tensor_parallel::reduce_from_group(output, group_);
  return bias.defined() ? sum + bias : sum;
}

bool AdaptedLinearImpl::hold_weight_in(const WeightFormat& format) {
  if (const std::shared_ptr<SharedInputProduct> product = shared_) {
    // The first of the layers to be asked holds the stack; where the format cannot, the product
    // gives each layer its weight back (and shared_ is null) and each holds its own.
    if (product->quantized() || product->hold_weight_in(format)) return true;
  }
  return compute_.quantize(*this, weight, format);
}

bool AdaptedLinearImpl::weight_held() const {
  return compute_.quantized() || (shared_ && shared_->quantized());
}

void AdaptedLinearImpl::add_adapter(int64_t rank, double alpha) {
  const auto options = weight.options().dtype(torch::kFloat);
  lora_a_ = register_parameter("lora_A", torch::empty({rank, in_features_}, options));
  lora_b_ = register_parameter("lora_B", torch::zeros({out_features_, rank}, options));
  torch::NoGradGuard no_grad;
  torch::nn::init::kaiming_uniform_(lora_a_, std::sqrt(5.0));
  scaling_ = alpha / static_cast<double>(rank);
  if (split_ == tensor_parallel::Split::kNone) return;
  torch::Tensor& whole = split_ == tensor_parallel::Split::kColumns ? lora_a_ : lora_b_;
  whole.register_hook([group = group_](const torch::Tensor& part) {
    torch::Tensor sum = part.clone();
    group->allreduce_sum(sum);
    return sum;
  });
}

bool is_adapter_parameter(const std::string& name) {
  return name.find("lora_") != std::string::npos;
}

std::vector<std::string> parse_lora_targets(const std::string& text,
                                            const std::vector<std::string>& roles,
                                            const std::string& model) {
  if (text == "all-linear") return roles;
  std::vector<std::string> targets;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string role = text.substr(start, comma - start);
    if (std::find(roles.begin(), roles.end(), role) == roles.end()) {
      throw UsageError("lora_targets '" + echoed(text) + "': " +
                       (role.empty() ? std::string("an empty name")
                                     : "'" + echoed(role) + "' is not a projection of " + model) +
                       "; allowed: a comma-separated list of " + join(roles) + ", or all-linear");
    }
    if (std::find(targets.begin(), targets.end(), role) != targets.end()) {
      throw UsageError("lora_targets '" + echoed(text) + "' names '" + role + "' twice");
    }
    targets.push_back(role);
    start = comma + 1;
  }
  std::vector<std::string> in_model_order;
  for (const std::string& role : roles) {
    if (std::find(targets.begin(), targets.end(), role) != targets.end()) {
      in_model_order.push_back(role);
    }
  }
  return in_model_order;
}

int apply_lora(torch::nn::Module& module, const std::vector<std::string>& targets, int64_t rank,
               double alpha) {
  for (auto& parameter : module.parameters()) parameter.requires_grad_(false);
  int adapted = 0;
  for (const auto& child : module.modules(/*include_self=*/false)) {
    auto* linear = dynamic_cast<AdaptedLinearImpl*>(child.get());
    if (linear == nullptr) continue;
    if (std::find(targets.begin(), targets.end(), linear->role()) == targets.end()) continue;
    linear->add_adapter(rank, alpha);
    ++adapted;
  }
  return adapted;
}

}  // namespace gpubench::layers
