#include "modeling/mxfp4_weights.h"

#include <cmath>
#include <vector>

namespace gpubench::mxfp4 {
namespace {

constexpr float kCodeValues[16] = {0.0f,  0.5f,  1.0f,  1.5f,  2.0f,  3.0f,  4.0f,  6.0f,
                                   -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};
constexpr float kLargestValue = 6.0f;
constexpr int64_t kScaleBias = 127;

torch::Tensor table(const float* values, int64_t n, const torch::Device& device) {
  return torch::from_blob(const_cast<float*>(values), {n}, torch::kFloat).to(device, false, true);
}

// The magnitude codes 0-7 of |scaled| <= 6, rounded to the nearest value, ties to the even code.
torch::Tensor magnitude_codes(const torch::Tensor& magnitude) {
  static constexpr float kMidpoints[7] = {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f};
  const torch::Tensor midpoints = table(kMidpoints, 7, magnitude.device());
  // A magnitude on a midpoint falls to the code below it; odd codes step up to the even one.
  torch::Tensor codes =
      torch::bucketize(magnitude, midpoints, /*out_int32=*/false, /*right=*/false);
  const torch::Tensor on_midpoint = magnitude == midpoints.take(codes.clamp_max(6));
  return codes + (on_midpoint & (codes.remainder(2) == 1)).to(torch::kLong);
}

}  // namespace

const float* code_values() {
  return kCodeValues;
}

std::string why_not(int64_t in_features) {
  if (in_features % kBlock == 0) return {};
  return std::to_string(in_features) + " input features are not whole blocks of " +
         std::to_string(kBlock);
}

Mxfp4Weight quantize(const torch::Tensor& weight) {
  torch::NoGradGuard no_grad;
  const int64_t in = weight.size(-1);
  if (!why_not(in).empty()) throw std::logic_error("MXFP4 weights: " + why_not(in));
  std::vector<int64_t> grouped_shape(weight.sizes().begin(), weight.sizes().end() - 1);
  grouped_shape.insert(grouped_shape.end(), {in / kBlock, kBlock});
  const torch::Tensor grouped = weight.to(torch::kFloat).reshape(grouped_shape);
  const torch::Tensor amax = grouped.abs().amax(-1);
  // 2^exponent >= amax / 6; log2's rounding can leave it one short, which the step up repairs.
  torch::Tensor exponent = torch::where(amax > 0, torch::ceil(torch::log2(amax / kLargestValue)),
                                        torch::full_like(amax, -static_cast<double>(kScaleBias)));
  exponent += (amax / torch::exp2(exponent) > kLargestValue).to(torch::kFloat);
  exponent.clamp_(-kScaleBias, kScaleBias);
  const torch::Tensor scaled = grouped / torch::exp2(exponent).unsqueeze(-1);
  const torch::Tensor codes = magnitude_codes(scaled.abs().clamp_max(kLargestValue)) +
                              8 * torch::signbit(scaled).to(torch::kLong);
  std::vector<int64_t> pair_shape = grouped_shape;
  pair_shape.back() = kBlock / 2;
  pair_shape.push_back(2);
  const torch::Tensor pairs = codes.to(torch::kUInt8).reshape(pair_shape);
  const torch::Tensor blocks = pairs.select(-1, 0).bitwise_or(pairs.select(-1, 1) * 16);
  return {blocks.contiguous(), (exponent + kScaleBias).to(torch::kUInt8)};
}

torch::Tensor dequantize(const Mxfp4Weight& weight, torch::ScalarType dtype) {
  // Both values of a byte in one lookup (the low nibble first), indexed by 32-bit positions: an
  // expert is dequantised on every forward that routes to it, and splitting the nibbles and
  // indexing with int64 codes (8 bytes a weight) took most of gpt-oss's probe time (one expert
  // of gpt-oss-20b: 210 ms, 75 ms this way in bf16, 112 ms in float32; the same bits).
  static const std::vector<float> kPairValues = [] {
    std::vector<float> pairs(512);
    for (int byte = 0; byte < 256; ++byte) {
      pairs[2 * byte] = kCodeValues[byte & 15];
      pairs[2 * byte + 1] = kCodeValues[byte >> 4];
    }
    return pairs;
  }();
  const torch::Device device = weight.blocks.device();
  const torch::Tensor positions = weight.blocks.reshape({-1}).to(torch::kInt);
  const torch::Tensor pairs = table(kPairValues.data(), 512, device).view({256, 2});
  // A code's value times a power of two has at most three significant bits, and bf16 has
  // float32's exponents: the product is exact in bf16, so bf16 multiplies there, each pair
  // gathered as one 32-bit word. fp16's exponents are narrower: float32, then the cast.
  const bool in_bf16 = dtype == torch::kBFloat16;
  const torch::Tensor values = in_bf16 ? pairs.to(torch::kBFloat16)
                                             .view(torch::kInt)
                                             .reshape({256})
                                             .index_select(0, positions)
                                             .view(torch::kBFloat16)
                                       : pairs.index_select(0, positions);
  std::vector<int64_t> shape(weight.blocks.sizes().begin(), weight.blocks.sizes().end());
  shape.back() *= 2;  // [..., out, groups, 16] -> [..., out, groups, 32]
  const torch::Tensor scale =
      torch::exp2(weight.scales.to(torch::kFloat) - kScaleBias).to(values.scalar_type());
  return (values.view(shape) * scale.unsqueeze(-1)).flatten(-2).to(dtype);
}

double largest_rounding_at(double scaled_magnitude) {
  if (scaled_magnitude <= 2) return 0.25;
  if (scaled_magnitude <= 4) return 0.5;
  return 1.0;
}

}  // namespace gpubench::mxfp4
