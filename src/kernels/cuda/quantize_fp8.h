// The CUDA form of gpubench::quantize_fp8 (kernels/fused_operators.h), registered with the other
// operators' in fused_operators.cu.
#pragma once

#include <ATen/ATen.h>

#include <tuple>

namespace gpubench::kernels {

std::tuple<at::Tensor, at::Tensor> quantize_fp8_cuda(const at::Tensor& x, at::ScalarType format,
                                                     at::IntArrayRef along, double largest);

}  // namespace gpubench::kernels
