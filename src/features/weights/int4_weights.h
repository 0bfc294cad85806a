// int4 (w4a16), a weight-only integer format for inference (docs/inference.md#integer-weights),
// quantised as torchao and gpt-fast quantise for LibTorch's kernels (torch_support/compat.h): per
// group of `group` inputs of each output, asymmetric: scale = (max - min) / 15 and
// zero = min + 8 * scale, code = round((w - min) / scale) in 0..15, so that w is about
// (code - 8) * scale + zero. The activations stay in bf16; each product reads the codes, scales
// and zeros, never a bf16 copy. Registered as the weight format "int4" (modeling/weight_formats.h).
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>

#include <torch/torch.h>

#include "settings/setting_values.h"

namespace gpubench::integer_weights {

inline constexpr int64_t kInt4Groups[] = {32, 64, 128};

inline bool is_int4_group(int64_t group) {
  return std::find(std::begin(kInt4Groups), std::end(kInt4Groups), group) != std::end(kInt4Groups);
}

struct Int4Weight {
  torch::Tensor packed;            // the kernel's layout for the weight's device
  torch::Tensor scales_and_zeros;  // [in / group, out, 2], the activations' dtype
  int64_t group = 0;
};

// Why a weight [out, in] cannot be held in int4 with `group` on `device` (the kernels' rules: the
// group divides the inputs, which are a multiple of 32; the outputs a multiple of 8 for CUDA's
// _convert_weight_to_int4pack, of 16 for the CPU's _convert_weight_to_int4pack_for_cpu); empty
// when it can.
std::string why_not_int4(int64_t out_features, int64_t in_features, int64_t group,
                         DeviceKind device);

// The codes and their scales (and zeros) before packing, for the tests' round trip.
struct Int4Codes {
  torch::Tensor codes;   // int32 [out, in], 0..15
  torch::Tensor scales;  // float32 [out, in / group]
  torch::Tensor zeros;   // float32 [out, in / group]
};
Int4Codes int4_codes(const torch::Tensor& weight, int64_t group);
torch::Tensor dequantize(const Int4Codes& codes, int64_t group);  // float32 [out, in]

// `weight` [out, in] in the format; `dtype` is the activations' (the scales are held in it).
Int4Weight quantize_int4(const torch::Tensor& weight, int64_t group, torch::ScalarType dtype);

// y = x W^T for x [..., in]: [..., out] in x's dtype.
torch::Tensor linear(const torch::Tensor& input, const Int4Weight& weight);

}  // namespace gpubench::integer_weights
