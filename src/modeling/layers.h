// The counted layers (include/gpubench/layers.h: Conv2d, Linear), and a layer norm in its
// weight's dtype.
#pragma once

#include <torch/torch.h>

#include "gpubench/layers.h"

namespace gpubench::layers {

// A layer norm in its weight's dtype: float32 when the model trains in full, as CUDA autocast
// runs layer norm (the CPU's autocast passes a 16-bit input through, which LibTorch 1.13's CPU
// kernel refuses beside a float32 weight); the compute dtype for LoRA's frozen base in bf16/fp16.
inline torch::Tensor normed(torch::nn::LayerNorm& norm, const torch::Tensor& x) {
  return norm(x.to(norm->weight.scalar_type()));
}

}  // namespace gpubench::layers
