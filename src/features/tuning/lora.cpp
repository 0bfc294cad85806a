#include "features/tuning/lora.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "common/errors.h"
#include "common/input_limits.h"
#include "modeling/adapted_linear.h"
#include "modeling/flop_counter.h"

namespace gpubench::tuning {
namespace {

class LoraAdapter : public layers::LinearAdapter {
 public:
  LoraAdapter(layers::AdaptedLinearImpl& layer, int64_t rank, double alpha)
      : in_features_(layer.in_features()),
        out_features_(layer.out_features()),
        scaling_(alpha / static_cast<double>(rank)) {
    const auto options = layer.weight.options().dtype(torch::kFloat);
    a_ = layer.register_adapter_parameter("lora_A", torch::empty({rank, in_features_}, options));
    b_ = layer.register_adapter_parameter("lora_B", torch::zeros({out_features_, rank}, options));
    torch::NoGradGuard no_grad;
    torch::nn::init::kaiming_uniform_(a_, std::sqrt(5.0));
    if (layer.split() == layers::Split::kNone) return;
    torch::Tensor& whole = layer.split() == layers::Split::kColumns ? a_ : b_;
    whole.register_hook(
        [group = layer.group()](const torch::Tensor& part) { return group->summed(part); });
  }

  torch::Tensor update(const torch::Tensor& x) const override {
    const int64_t rows = x.numel() / in_features_;
    FlopCounter::record_multiply_adds(rows * a_.size(0) * (in_features_ + out_features_));
    return torch::nn::functional::linear(torch::nn::functional::linear(x, a_), b_) * scaling_;
  }

 private:
  int64_t in_features_, out_features_;
  double scaling_;
  torch::Tensor a_, b_;
};

}  // namespace

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
    auto* linear = dynamic_cast<layers::AdaptedLinearImpl*>(child.get());
    if (linear == nullptr) continue;
    if (std::find(targets.begin(), targets.end(), linear->role()) == targets.end()) continue;
    linear->set_adapter(std::make_shared<LoraAdapter>(*linear, rank, alpha));
    ++adapted;
  }
  return adapted;
}

}  // namespace gpubench::tuning
