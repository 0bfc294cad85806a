#include "modeling/linear_compute.h"

#include "modeling/flop_counter.h"

namespace gpubench::layers {
namespace {

template <typename... Formats>
struct Overloaded : Formats... {
  using Formats::operator()...;
};
template <typename... Formats>
Overloaded(Formats...) -> Overloaded<Formats...>;

}  // namespace

torch::Tensor LinearCompute::forward(const torch::Tensor& input, const torch::Tensor& weight,
                                     const torch::Tensor& bias) {
  const bool frozen = !weight.requires_grad();
  if (quantized()) {
    const torch::Tensor output = quantized_forward(input, frozen);
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

// The products of a weight held quantised: what it reads is its codes and scales.
torch::Tensor LinearCompute::quantized_forward(const torch::Tensor& input, bool frozen) {
  const int64_t rows = input.numel() / in_features_;
  const bool fp8 = std::holds_alternative<fp8::ScaledTensor>(quantized_);
  FlopCounter::record_multiply_adds(rows * in_features_ * out_features_, frozen, fp8);
  return std::visit(
      Overloaded{[](const std::monostate&) -> torch::Tensor {
                   throw std::logic_error("LinearCompute: no quantised weight");
                 },
                 [&](const fp8::ScaledTensor& weight) {
                   FlopCounter::record_weight_read(weight.data.nbytes() + weight.scale.nbytes());
                   return fp8::quantized_linear(input, weight, recipe_);
                 },
                 [&](const integer_weights::Int8Weight& weight) {
                   FlopCounter::record_weight_read(weight.codes.nbytes() + weight.scales.nbytes());
                   return integer_weights::linear(input, weight);
                 },
                 [&](const integer_weights::Int4Weight& weight) {
                   FlopCounter::record_weight_read(weight.packed.nbytes() +
                                                   weight.scales_and_zeros.nbytes());
                   return integer_weights::linear(input, weight);
                 }},
      quantized_);
}

bool LinearCompute::quantize(torch::nn::Module& layer, torch::Tensor& weight,
                             const InferenceWeights& format) {
  out_features_ = weight.size(0);
  in_features_ = weight.size(1);
  torch::NoGradGuard no_grad;
  switch (format.format) {
    case InferenceWeights::Format::kFp8: {
      if (!fp8::aligned(0, in_features_, out_features_, false)) return false;
      fp8::ScaledTensor quantized = fp8::quantize_operand(weight, format.recipe);
      quantized.data = layer.register_buffer("weight_fp8", quantized.data);
      quantized.scale = layer.register_buffer("weight_scale", quantized.scale);
      quantized_ = std::move(quantized);
      recipe_ = format.recipe;
      break;
    }
    case InferenceWeights::Format::kInt8: {
      integer_weights::Int8Weight quantized =
          integer_weights::quantize_int8(weight, format.activations);
      quantized.codes = layer.register_buffer("weight_int8", quantized.codes);
      quantized.scales = layer.register_buffer("weight_scales", quantized.scales);
      quantized_ = std::move(quantized);
      break;
    }
    case InferenceWeights::Format::kInt4: {
      integer_weights::Int4Weight quantized =
          integer_weights::quantize_int4(weight, format.group, format.activations);
      quantized.packed = layer.register_buffer("weight_int4", quantized.packed);
      quantized.scales_and_zeros =
          layer.register_buffer("weight_scales", quantized.scales_and_zeros);
      quantized_ = std::move(quantized);
      break;
    }
    case InferenceWeights::Format::kMxfp4:
      return false;
  }
  weight.set_data(torch::empty({0}, weight.options()));
  return true;
}

std::optional<int64_t> LinearCompute::bytes_in(int64_t out_features, int64_t in_features,
                                               const InferenceWeights& format) {
  const int64_t weights = out_features * in_features;
  const int64_t scale_bytes = c10::elementSize(format.activations);
  switch (format.format) {
    case InferenceWeights::Format::kFp8: {
      if (!fp8::aligned(0, in_features, out_features, false)) return std::nullopt;
      // e4m3 codes and a float32 scale: one for the tensor, or one per row.
      const int64_t scales = format.recipe == fp8::Recipe::kRowwise ? out_features : 1;
      return weights + scales * 4;
    }
    case InferenceWeights::Format::kInt8:
      return weights + out_features * scale_bytes;
    case InferenceWeights::Format::kInt4:
      // Two codes a byte in either kernel's packing; a scale and a zero per group and output.
      return weights / 2 + in_features / format.group * out_features * 2 * scale_bytes;
    case InferenceWeights::Format::kMxfp4:
      return std::nullopt;
  }
  return std::nullopt;
}

int64_t weight_bytes_change(const torch::Tensor& weight, const InferenceWeights& format) {
  const auto held = LinearCompute::bytes_in(weight.size(0), weight.size(1), format);
  return held ? *held - weight.numel() * weight.element_size() : 0;
}

int64_t counted_bytes_change(torch::nn::Module& model, const InferenceWeights& format) {
  int64_t change = 0;
  for (const auto& child : model.modules(/*include_self=*/true)) {
    if (auto* linear = dynamic_cast<QuantizableLinear*>(child.get())) {
      change += linear->bytes_change_in(format);
    }
  }
  return change;
}

QuantizedLayers quantize_linear_layers(torch::nn::Module& model, const InferenceWeights& format) {
  QuantizedLayers counts;
  for (const auto& child : model.modules(/*include_self=*/true)) {
    auto* linear = dynamic_cast<QuantizableLinear*>(child.get());
    if (linear == nullptr) continue;
    (linear->quantize_for_inference(format) ? counts.quantized : counts.kept) += 1;
  }
  return counts;
}

}  // namespace gpubench::layers
