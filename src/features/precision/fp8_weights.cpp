// The weight format "fp8" (docs/fp8.md): infer at precision fp8 holds each aligned linear
// weight quantised once, as e4m3 codes with a scale for the tensor or per row (the recipe), and
// runs its products in FP8 (features/precision/fp8_linear.h).
#include "features/precision/fp8_linear.h"
#include "modeling/weight_formats.h"

namespace gpubench::fp8 {
namespace {

class HeldFp8Weight : public layers::HeldWeight {
 public:
  HeldFp8Weight(ScaledTensor weight, Recipe recipe) : weight_(std::move(weight)), recipe_(recipe) {}
  torch::Tensor linear(const torch::Tensor& input) const override {
    return quantized_linear(input, weight_, recipe_);
  }
  int64_t bytes() const override { return weight_.data.nbytes() + weight_.scale.nbytes(); }
  bool fp8_products() const override { return true; }

 private:
  ScaledTensor weight_;
  Recipe recipe_;
};

class Fp8Format : public layers::WeightFormat {
 public:
  explicit Fp8Format(Recipe recipe) : recipe_(recipe) {}
  std::string name() const override { return "fp8"; }
  bool quantizes_rows_apart() const override { return recipe_ == Recipe::kRowwise; }
  std::unique_ptr<layers::HeldWeight> hold(torch::nn::Module& layer,
                                           const torch::Tensor& weight) const override {
    if (!aligned(0, weight.size(1), weight.size(0), false)) return nullptr;
    ScaledTensor quantized = quantize_operand(weight, recipe_);
    quantized.data = layer.register_buffer("weight_fp8", quantized.data);
    quantized.scale = layer.register_buffer("weight_scale", quantized.scale);
    return std::make_unique<HeldFp8Weight>(std::move(quantized), recipe_);
  }
  // e4m3 codes and a float32 scale: one for the tensor, or one per row.
  std::optional<int64_t> bytes_in(int64_t out_features, int64_t in_features) const override {
    if (!aligned(0, in_features, out_features, false)) return std::nullopt;
    const int64_t scales = recipe_ == Recipe::kRowwise ? out_features : 1;
    return out_features * in_features + scales * 4;
  }

 private:
  Recipe recipe_;
};

const layers::WeightFormatRegistration kFp8Format{
    {"fp8", /*integer_codes=*/false, [](const layers::WeightFormatOptions& options) {
       return std::make_shared<const Fp8Format>(parse_recipe(options.fp8_recipe));
     }}};

}  // namespace
}  // namespace gpubench::fp8
