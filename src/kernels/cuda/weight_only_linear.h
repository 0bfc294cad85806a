// The CUDA forms of gpubench::fp8_weight_linear and gpubench::int8_weight_linear
// (kernels/fused_operators.h), registered with the other operators' in fused_operators.cu.
#pragma once

#include <ATen/ATen.h>

namespace gpubench::kernels {

at::Tensor fp8_weight_linear_cuda(const at::Tensor& x, const at::Tensor& codes,
                                  const at::Tensor& scale);
at::Tensor int8_weight_linear_cuda(const at::Tensor& x, const at::Tensor& codes,
                                   const at::Tensor& scales);

}  // namespace gpubench::kernels
