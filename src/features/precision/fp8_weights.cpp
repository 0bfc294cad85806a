// The weight format "fp8" (docs/fp8.md): infer at precision fp8 holds each aligned linear
// weight quantised once, as e4m3 codes with a scale for the tensor or per row (the recipe). A
// prefill's products run in FP8 (features/precision/fp8_linear.h), its activations quantised
// once for the projections that share them; a decode step's few rows read the codes as they are,
// the activations unquantised (kernels::fp8_weight_linear: one kernel a product on CUDA).
#include <string>

#include "features/precision/fp8_linear.h"
#include "kernels/fused_operators.h"
#include "modeling/weight_formats.h"

namespace gpubench::fp8 {
namespace {

class HeldFp8Weight : public layers::HeldWeight {
 public:
  // `codes` [out, in] of parts of `part_rows` rows each (one, or a stack's), each with its
  // prefill scale ([] tensorwise, [rows, 1] rowwise); `row_scales` what the weight-only product
  // multiplies each output by ([] for one tensorwise scale, else [out, 1] or [out]). The
  // registered buffers themselves, so that a move of the module moves what is held.
  HeldFp8Weight(torch::Tensor codes, std::vector<int64_t> part_rows,
                std::vector<torch::Tensor> part_scales, torch::Tensor row_scales, Recipe recipe)
      : codes_(std::move(codes)),
        part_rows_(std::move(part_rows)),
        part_scales_(std::move(part_scales)),
        row_scales_(std::move(row_scales)),
        recipe_(recipe) {}
  torch::Tensor linear(const torch::Tensor& input) const override {
    if (input.numel() <= kernels::kMatrixVectorRows * codes_.size(1)) {
      return kernels::fp8_weight_linear(input, codes_, row_scales_);
    }
    std::vector<ScaledTensor> parts;
    int64_t first = 0;
    for (size_t i = 0; i < part_rows_.size(); ++i) {
      parts.push_back({codes_.narrow(0, first, part_rows_[i]), part_scales_[i]});
      first += part_rows_[i];
    }
    return quantized_linear(input, parts, recipe_);
  }
  int64_t bytes() const override { return codes_.nbytes() + row_scales_.nbytes(); }
  bool fp8_products() const override { return true; }

 private:
  torch::Tensor codes_;
  std::vector<int64_t> part_rows_;
  std::vector<torch::Tensor> part_scales_;
  torch::Tensor row_scales_;
  Recipe recipe_;
};

class Fp8Format : public layers::WeightFormat {
 public:
  explicit Fp8Format(Recipe recipe) : recipe_(recipe) {}
  std::string name() const override { return "fp8"; }
  std::unique_ptr<layers::HeldWeight> hold(torch::nn::Module& layer,
                                           const torch::Tensor& weight) const override {
    if (!aligned(0, weight.size(1), weight.size(0), false)) return nullptr;
    ScaledTensor quantized = quantize_operand(weight, recipe_);
    quantized.data = layer.register_buffer("weight_fp8", quantized.data);
    quantized.scale = layer.register_buffer("weight_scale", quantized.scale);
    return std::make_unique<HeldFp8Weight>(quantized.data, std::vector<int64_t>{weight.size(0)},
                                           std::vector<torch::Tensor>{quantized.scale},
                                           quantized.scale, recipe_);
  }
  // Rowwise holds the stack as one weight. Tensorwise quantises each part with its own scale,
  // the codes side by side, and keeps each row's scale for the weight-only product.
  std::unique_ptr<layers::HeldWeight> hold_stack(torch::nn::Module& layer,
                                                 const torch::Tensor& stacked,
                                                 const std::vector<int64_t>& parts) const override {
    if (recipe_ == Recipe::kRowwise) return hold(layer, stacked);
    for (const int64_t rows : parts) {
      if (!aligned(0, stacked.size(1), rows, false)) return nullptr;
    }
    std::vector<torch::Tensor> codes, row_scales, part_scales;
    int64_t first = 0;
    for (size_t i = 0; i < parts.size(); ++i) {
      const ScaledTensor part = quantize_operand(stacked.narrow(0, first, parts[i]), recipe_);
      codes.push_back(part.data);
      row_scales.push_back(part.scale.expand({parts[i]}));
      part_scales.push_back(layer.register_buffer("weight_scale_" + std::to_string(i), part.scale));
      first += parts[i];
    }
    const torch::Tensor held_codes = layer.register_buffer("weight_fp8", torch::cat(codes, 0));
    const torch::Tensor held_scales =
        layer.register_buffer("weight_scale", torch::cat(row_scales, 0));
    return std::make_unique<HeldFp8Weight>(held_codes, parts, std::move(part_scales), held_scales,
                                           recipe_);
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
