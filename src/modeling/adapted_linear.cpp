#include "modeling/adapted_linear.h"

#include <set>

#include "modeling/shared_input_products.h"

namespace gpubench::layers {

AdaptedLinearImpl::AdaptedLinearImpl(int64_t in_features, int64_t out_features, bool with_bias,
                                     std::string role, Split split, TensorParallelGroup* group)
    : in_features_(group && split == Split::kRows
                       ? local_count(in_features, group->size(), "input features")
                       : in_features),
      out_features_(group && split == Split::kColumns
                        ? local_count(out_features, group->size(), "output features")
                        : out_features),
      role_(std::move(role)),
      split_(group ? split : Split::kNone),
      group_(group) {
  // Uninitialised: the models draw their weights themselves (fine_tuning_model.h).
  weight = register_parameter("weight", torch::empty({out_features_, in_features_}));
  if (with_bias) bias = register_parameter("bias", torch::zeros({out_features_}));
}

torch::Tensor AdaptedLinearImpl::forward(const torch::Tensor& input) {
  // Its weight held in the shared product's format: its part of that product.
  if (shared_ && shared_->quantized()) return shared_->forward(input)[shared_->index_of(this)];
  const torch::Tensor x = split_ == Split::kColumns ? group_->copy_to_group(input) : input;
  const torch::Tensor own_bias = split_ == Split::kRows ? torch::Tensor() : bias;
  torch::Tensor output = compute_.forward(x, weight, own_bias);
  if (adapter_) output = output + adapter_->update(x);
  if (split_ != Split::kRows) return output;
  const torch::Tensor sum = group_->reduce_from_group(output);
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

torch::Tensor& AdaptedLinearImpl::register_adapter_parameter(const std::string& name,
                                                             torch::Tensor tensor) {
  adapter_parameters_.push_back(name);
  return register_parameter(name, std::move(tensor));
}

std::vector<std::pair<std::string, torch::Tensor>> own_parameters(const torch::nn::Module& model) {
  std::set<std::string> added;
  const auto add = [&](const torch::nn::Module& module, const std::string& prefix) {
    const auto* layer = dynamic_cast<const AdaptedLinearImpl*>(&module);
    if (layer == nullptr) return;
    for (const std::string& name : layer->adapter_parameter_names()) added.insert(prefix + name);
  };
  // Not include_self: a model initialises itself in its constructor, before a shared_ptr holds it.
  add(model, "");
  for (const auto& item : model.named_modules("", /*include_self=*/false)) {
    add(*item.value(), item.key() + ".");
  }
  std::vector<std::pair<std::string, torch::Tensor>> own;
  for (const auto& item : model.named_parameters()) {
    if (added.count(item.key()) == 0) own.emplace_back(item.key(), item.value());
  }
  return own;
}

}  // namespace gpubench::layers
