// MXFP4 (OCP Microscaling Formats v1.0), as the released gpt-oss checkpoints store their experts'
// weights: each block of 32 consecutive inputs of an output row shares one e8m0 scale (a byte,
// 2^(byte - 127)), each weight is an e2m1 code (a sign, 2 exponent bits, 1 mantissa bit: 0, 0.5,
// 1, 1.5, 2, 3, 4, 6), two codes a byte with the lower-indexed one in the low nibble (Hugging
// Face's convert_moe_packed_tensors reads them so). 4.25 bits a weight.
//
// Quantising picks the smallest scale that holds the block's largest magnitude (2^ceil(log2(amax
// / 6))), so no code saturates, and rounds to the nearest code, ties to the even one.
//
// Products: below compute capability 10 (Blackwell) no tensor core multiplies FP4, so inference
// engines dequantise each expert's weight to the activations' dtype for its product; so does
// gpubench, one expert at a time.
#pragma once

#include <cstdint>
#include <string>

#include <torch/torch.h>

namespace gpubench::mxfp4 {

inline constexpr int64_t kBlock = 32;

// The 16 e2m1 values in code order (codes 8-15 are 0-7 negated).
const float* code_values();

struct Mxfp4Weight {
  torch::Tensor blocks;  // uint8 [..., out, in / 32, 16]: the codes, two a byte
  torch::Tensor scales;  // uint8 [..., out, in / 32]: e8m0 exponents, biased by 127
  int64_t bytes() const { return blocks.nbytes() + scales.nbytes(); }
  // The weight of one leading index (one expert's): blocks and scales selected along dimension 0.
  Mxfp4Weight select(int64_t index) const { return {blocks[index], scales[index]}; }
};

// Why a weight with `in_features` inputs cannot be held in MXFP4 (not whole blocks), or empty.
std::string why_not(int64_t in_features);

// `weight` [..., out, in], any floating dtype.
Mxfp4Weight quantize(const torch::Tensor& weight);
// [..., out, in] in `dtype`: every value exact (a code times a power of two) in float32 and bf16.
torch::Tensor dequantize(const Mxfp4Weight& weight, torch::ScalarType dtype);

// Half the gap around a scaled magnitude (|weight| / 2^scale, at most 6): the most a weight moves
// when rounded, in units of its block's scale.
double largest_rounding_at(double scaled_magnitude);

}  // namespace gpubench::mxfp4
