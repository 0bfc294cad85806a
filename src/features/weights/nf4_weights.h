// QLoRA's frozen base in 4-bit NormalFloat (Dettmers et al. 2023, arXiv 2305.14314; bitsandbytes'
// quant_type "nf4"): each block of 64 consecutive weights (row-major) scaled by its absolute
// maximum onto [-1, 1] and rounded to the nearest of 16 values, the quantiles of a normal
// distribution, two codes a byte (the first in the high nibble), the block's absmax in float32
// (0.5 + 4 / 64 = 0.5625 bytes a weight; double quantisation of the absmaxes, 8 bits each with a
// float32 scale per 256, is not built). Each product dequantises the weight to the compute dtype
// and multiplies, and backward dequantises it again for the input's gradient, as bitsandbytes'
// MatMul4Bit does: no full-precision copy outlives a product.
#pragma once

#include <cstdint>

#include <torch/torch.h>

namespace gpubench::nf4 {

inline constexpr int64_t kBlock = 64;

// The 16 values, ascending (bitsandbytes' NF4 table).
const float* codebook();
// The largest distance from a value in [-1, 1] to its nearest code: half the widest gap
// (between -1 and the next); a weight comes back within this times its block's absmax.
double largest_rounding();

struct Nf4Weight {
  torch::Tensor packed;  // uint8 [numel / 2]
  torch::Tensor absmax;  // float32 [numel / 64]
  int64_t out_features = 0, in_features = 0;
  int64_t bytes() const { return packed.nbytes() + absmax.nbytes(); }
};

// Why a weight of `numel` elements cannot be held in NF4 (not a whole number of blocks), or empty.
std::string why_not(int64_t numel);

Nf4Weight quantize(const torch::Tensor& weight);  // [out, in], any floating dtype
torch::Tensor dequantize(const Nf4Weight& weight, torch::ScalarType dtype);  // [out, in]
// What dequantising holds at its most, a weight: the codes' index (4 bytes a pair) beside the
// float32 values, then the values beside the result in a 16-bit dtype.
inline constexpr int64_t kDequantisingBytesPerWeight = 6;

// y = x W^T in x's dtype (autocast's where it is on); the input's gradient through W dequantised
// again; the weight itself takes no gradient.
torch::Tensor linear(const torch::Tensor& input, const Nf4Weight& weight);

}  // namespace gpubench::nf4
