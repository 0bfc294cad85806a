#include "modeling/linear_compute.h"

#include "modeling/flop_counter.h"

namespace gpubench::layers {

torch::Tensor LinearCompute::forward(const torch::Tensor& input, const torch::Tensor& weight,
                                     const torch::Tensor& bias) {
  const bool frozen = !weight.requires_grad();
  if (quantized_) {
    const int64_t rows = input.numel() / in_features_;
    FlopCounter::record_multiply_adds(rows * in_features_ * out_features_, frozen, true);
    FlopCounter::record_weight_read(quantized_->data.nbytes() + quantized_->scale.nbytes());
    const torch::Tensor output = fp8::quantized_linear(input, *quantized_, recipe_);
    return bias.defined() ? output + bias.to(output.scalar_type()) : output;
  }
  const int64_t in_features = weight.size(1), out_features = weight.size(0);
  const int64_t rows = input.numel() / in_features;
  const std::optional<fp8::Recipe> recipe = fp8::TrainingScope::active();
  const bool weight_gradient = torch::GradMode::is_enabled() && !frozen;
  const bool fp8 = recipe && fp8::aligned(rows, in_features, out_features, weight_gradient);
  FlopCounter::record_multiply_adds(rows * in_features * out_features, frozen, fp8);
  FlopCounter::record_weight_read(weight.nbytes());
  if (!fp8) return torch::nn::functional::linear(input, weight, bias);
  const torch::Tensor output = fp8::scaled_linear(input, weight, *recipe, &frozen_);
  return bias.defined() ? output + bias.to(output.scalar_type()) : output;
}

bool LinearCompute::quantize(torch::nn::Module& layer, torch::Tensor& weight, fp8::Recipe recipe) {
  out_features_ = weight.size(0);
  in_features_ = weight.size(1);
  if (!fp8::aligned(0, in_features_, out_features_, false)) return false;
  torch::NoGradGuard no_grad;
  fp8::ScaledTensor quantized = fp8::quantize_operand(weight, recipe);
  quantized.data = layer.register_buffer("weight_fp8", quantized.data);
  quantized.scale = layer.register_buffer("weight_scale", quantized.scale);
  weight.set_data(torch::empty({0}, weight.options()));
  quantized_ = std::move(quantized);
  recipe_ = recipe;
  return true;
}

QuantizedLayers quantize_linear_layers(torch::nn::Module& model, fp8::Recipe recipe) {
  QuantizedLayers counts;
  for (const auto& child : model.modules(/*include_self=*/true)) {
    auto* linear = dynamic_cast<QuantizableLinear*>(child.get());
    if (linear == nullptr) continue;
    (linear->quantize_for_inference(recipe) ? counts.quantized : counts.kept) += 1;
  }
  return counts;
}

}  // namespace gpubench::layers
