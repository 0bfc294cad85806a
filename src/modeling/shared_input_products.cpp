#include "modeling/shared_input_products.h"

#include <algorithm>
#include <array>
#include <string>

namespace gpubench::layers {
namespace {

// The roles that read one input, as models name them (tensor parallelism's column-parallel ones).
const std::array<std::vector<std::string>, 2> kSharedInputRoles = {
    std::vector<std::string>{"q", "k", "v"}, std::vector<std::string>{"gate", "up"}};

bool can_share(const std::vector<AdaptedLinearImpl*>& layers) {
  const AdaptedLinearImpl& first = *layers.front();
  for (const AdaptedLinearImpl* layer : layers) {
    const torch::Tensor& w = layer->weight;
    if (layer->adapted() || layer->weight_held() || layer->shared_product() || w.dim() != 2 ||
        w.numel() == 0 || w.size(1) != first.weight.size(1) ||
        w.scalar_type() != first.weight.scalar_type() || w.device() != first.weight.device() ||
        layer->split() == Split::kRows || layer->split() != first.split() ||
        layer->group() != first.group() || layer->bias.defined() != first.bias.defined()) {
      return false;
    }
  }
  return true;
}

// The children of `module` with each of `roles`, in that order; empty unless all are there.
std::vector<AdaptedLinearImpl*> children_with_roles(torch::nn::Module& module,
                                                    const std::vector<std::string>& roles) {
  std::vector<AdaptedLinearImpl*> found;
  for (const std::string& role : roles) {
    AdaptedLinearImpl* match = nullptr;
    for (const auto& child : module.children()) {
      auto* layer = dynamic_cast<AdaptedLinearImpl*>(child.get());
      if (layer != nullptr && layer->role() == role) {
        match = layer;
        break;
      }
    }
    if (match == nullptr) return {};
    found.push_back(match);
  }
  return found;
}

}  // namespace

SharedInputProduct::SharedInputProduct(const std::vector<AdaptedLinearImpl*>& layers)
    : layers_(layers) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> weights, biases;
  for (const AdaptedLinearImpl* layer : layers_) {
    weights.push_back(layer->weight);
    widths_.push_back(layer->weight.size(0));
    if (layer->bias.defined()) biases.push_back(layer->bias);
  }
  weight_ = torch::cat(weights, 0).requires_grad_(layers_.front()->weight.requires_grad());
  if (!biases.empty()) bias_ = torch::cat(biases, 0);
  int64_t row = 0;
  for (size_t i = 0; i < layers_.size(); ++i) {
    layers_[i]->weight.set_data(weight_.narrow(0, row, widths_[i]));
    if (bias_.defined()) layers_[i]->bias.set_data(bias_.narrow(0, row, widths_[i]));
    row += widths_[i];
  }
}

std::vector<torch::Tensor> SharedInputProduct::forward(const torch::Tensor& input) {
  const AdaptedLinearImpl& first = *layers_.front();
  const torch::Tensor x =
      first.split() == Split::kColumns ? first.group()->copy_to_group(input) : input;
  const torch::Tensor output = compute_.forward(x, weight_, bias_);
  std::vector<torch::Tensor> parts;
  int64_t column = 0;
  for (const int64_t width : widths_) {
    parts.push_back(output.narrow(-1, column, width));
    column += width;
  }
  return parts;
}

bool SharedInputProduct::hold_weight_in(const WeightFormat& format) {
  if (!compute_.quantize_stack(*layers_.front(), weight_, widths_, format)) {
    dissolve();
    return false;
  }
  // The layers' views kept the stack's storage alive: the held copy replaces it.
  for (AdaptedLinearImpl* layer : layers_) {
    layer->weight.set_data(torch::empty({0}, layer->weight.options()));
  }
  return true;
}

size_t SharedInputProduct::index_of(const AdaptedLinearImpl* layer) const {
  return static_cast<size_t>(std::find(layers_.begin(), layers_.end(), layer) - layers_.begin());
}

void SharedInputProduct::dissolve() {
  torch::NoGradGuard no_grad;
  for (AdaptedLinearImpl* layer : layers_) {
    layer->weight.set_data(layer->weight.clone());
    if (layer->bias.defined()) layer->bias.set_data(layer->bias.clone());
    layer->set_shared_product(nullptr);  // the caller keeps this product alive until it returns
  }
  weight_ = torch::Tensor();
  bias_ = torch::Tensor();
}

int fuse_shared_input_products(torch::nn::Module& model) {
  // The model itself and every module under it (modules(true) needs a model held by shared_ptr).
  std::vector<torch::nn::Module*> modules = {&model};
  for (const auto& module : model.modules(/*include_self=*/false)) modules.push_back(module.get());
  int fused = 0;
  for (torch::nn::Module* module : modules) {
    for (const std::vector<std::string>& roles : kSharedInputRoles) {
      const std::vector<AdaptedLinearImpl*> layers = children_with_roles(*module, roles);
      if (layers.empty() || !can_share(layers)) continue;
      const auto product = std::make_shared<SharedInputProduct>(layers);
      for (AdaptedLinearImpl* layer : layers) layer->set_shared_product(product);
      ++fused;
    }
  }
  return fused;
}

std::vector<torch::Tensor> project_together(const torch::Tensor& input,
                                            const std::vector<AdaptedLinear>& layers) {
  const std::shared_ptr<SharedInputProduct>& product = layers.front()->shared_product();
  bool together =
      product != nullptr && !(torch::GradMode::is_enabled() &&
                              layers.front()->weight.requires_grad() && !product->quantized());
  for (size_t i = 0; together && i < layers.size(); ++i) {
    together = layers[i]->shared_product() == product && product->index_of(layers[i].get()) == i;
  }
  if (together) return product->forward(input);
  std::vector<torch::Tensor> outputs;
  for (AdaptedLinear layer : layers) outputs.push_back(layer->forward(input));
  return outputs;
}

}  // namespace gpubench::layers
