#include "features/weights/int4_weights.h"

#include "features/weights/matmul_rows.h"
#include "modeling/weight_formats.h"
#include "torch_support/compat.h"

namespace gpubench::integer_weights {
namespace {

// tinygemm's k tiles per inner step: the most that divide the inputs (16 inputs a tile).
int64_t inner_k_tiles(int64_t in_features) {
  for (const int64_t tiles : {8, 4, 2}) {
    if (in_features % (16 * tiles) == 0) return tiles;
  }
  throw std::logic_error("int4 weights: " + std::to_string(in_features) +
                         " inputs are not a multiple of 32 (why_not_int4 refuses it first)");
}

class HeldInt4Weight : public layers::HeldWeight {
 public:
  explicit HeldInt4Weight(Int4Weight weight) : weight_(std::move(weight)) {}
  torch::Tensor linear(const torch::Tensor& input) const override {
    return integer_weights::linear(input, weight_);
  }
  int64_t bytes() const override {
    return weight_.packed.nbytes() + weight_.scales_and_zeros.nbytes();
  }

 private:
  Int4Weight weight_;
};

class Int4Format : public layers::WeightFormat {
 public:
  Int4Format(int64_t group, torch::ScalarType activations)
      : group_(group), activations_(activations) {}
  std::string name() const override { return "int4"; }
  // A scale for each row (and group of its inputs): a stack is held as one weight.
  std::unique_ptr<layers::HeldWeight> hold_stack(torch::nn::Module& layer,
                                                 const torch::Tensor& stacked,
                                                 const std::vector<int64_t>&) const override {
    return hold(layer, stacked);
  }
  std::unique_ptr<layers::HeldWeight> hold(torch::nn::Module& layer,
                                           const torch::Tensor& weight) const override {
    Int4Weight quantized = quantize_int4(weight, group_, activations_);
    quantized.packed = layer.register_buffer("weight_int4", quantized.packed);
    quantized.scales_and_zeros = layer.register_buffer("weight_scales", quantized.scales_and_zeros);
    return std::make_unique<HeldInt4Weight>(std::move(quantized));
  }
  // Two codes a byte in either kernel's packing; a scale and a zero per group and output.
  std::optional<int64_t> bytes_in(int64_t out_features, int64_t in_features) const override {
    return out_features * in_features / 2 +
           in_features / group_ * out_features * 2 * c10::elementSize(activations_);
  }

 private:
  int64_t group_;
  torch::ScalarType activations_;
};

const layers::WeightFormatRegistration kInt4Format{
    {"int4", /*integer_codes=*/true, [](const layers::WeightFormatOptions& options) {
       return std::make_shared<const Int4Format>(options.group, options.activations);
     }}};

}  // namespace

std::string why_not_int4(int64_t out_features, int64_t in_features, int64_t group,
                         DeviceKind device) {
  if (in_features % group != 0) {
    return "the group size " + std::to_string(group) + " does not divide its " +
           std::to_string(in_features) + " input features";
  }
  if (in_features % 32 != 0) {
    return "its " + std::to_string(in_features) + " input features are not a multiple of 32";
  }
  const int64_t outputs = device == DeviceKind::kCpu ? 16 : 8;
  if (out_features % outputs != 0) {
    return "its " + std::to_string(out_features) + " output features are not a multiple of " +
           std::to_string(outputs) + (device == DeviceKind::kCpu ? " (the CPU kernel's rule)" : "");
  }
  return {};
}

Int4Codes int4_codes(const torch::Tensor& weight, int64_t group) {
  torch::NoGradGuard no_grad;
  const int64_t out = weight.size(0), in = weight.size(1);
  const torch::Tensor grouped = weight.to(torch::kFloat).reshape({out, in / group, group});
  const torch::Tensor max = grouped.amax(-1, true), min = grouped.amin(-1, true);
  const torch::Tensor scales = (max - min).clamp_min(1e-6) / 15;
  const torch::Tensor codes = (grouped - min).div_(scales).round_().clamp_(0, 15);
  return {codes.to(torch::kInt).reshape({out, in}), scales.squeeze(-1),
          (min + scales * 8).squeeze(-1)};
}

torch::Tensor dequantize(const Int4Codes& codes, int64_t group) {
  const int64_t out = codes.codes.size(0), in = codes.codes.size(1);
  const torch::Tensor grouped = codes.codes.to(torch::kFloat).reshape({out, in / group, group});
  return ((grouped - 8) * codes.scales.unsqueeze(-1) + codes.zeros.unsqueeze(-1))
      .reshape({out, in});
}

Int4Weight quantize_int4(const torch::Tensor& weight, int64_t group, torch::ScalarType dtype) {
  torch::NoGradGuard no_grad;
  Int4Codes codes = int4_codes(weight, group);
  Int4Weight quantized;
  quantized.group = group;
  quantized.packed = compat::pack_int4_weight(codes.codes, inner_k_tiles(weight.size(1)));
  codes.codes = torch::Tensor();
  quantized.scales_and_zeros =
      torch::stack({codes.scales, codes.zeros}, -1).transpose(0, 1).contiguous().to(dtype);
  return quantized;
}

torch::Tensor linear(const torch::Tensor& input, const Int4Weight& weight) {
  const int64_t out = weight.scales_and_zeros.size(1);
  return compat::int4_weight_mm(rows_of(input), weight.packed, weight.group,
                                weight.scales_and_zeros)
      .reshape(shape_with_last(input, out));
}

}  // namespace gpubench::integer_weights
