// int8 (w8a16), a weight-only integer format for inference (docs/inference.md#integer-weights),
// quantised as torchao and gpt-fast quantise for LibTorch's kernel (torch_support/compat.h): per
// output channel, symmetric: scale = amax / 127, code = round(w / scale). The activations stay in
// bf16; each product reads the codes and scales, never a bf16 copy. Registered as the weight
// format "int8" (modeling/weight_formats.h).
#pragma once

#include <torch/torch.h>

namespace gpubench::integer_weights {

struct Int8Weight {
  torch::Tensor codes;   // int8 [out, in]
  torch::Tensor scales;  // [out], the activations' dtype
};

// `weight` [out, in] in the format; `dtype` is the activations' (the scales are held in it).
Int8Weight quantize_int8(const torch::Tensor& weight, torch::ScalarType dtype);

// y = x W^T for x [..., in]: [..., out] in x's dtype.
torch::Tensor linear(const torch::Tensor& input, const Int8Weight& weight);

}  // namespace gpubench::integer_weights
