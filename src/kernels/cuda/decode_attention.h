// The CUDA form of gpubench::decode_attention (kernels/fused_operators.h), registered with the
// other operators' in fused_operators.cu.
#pragma once

#include <ATen/ATen.h>

namespace gpubench::kernels {

at::Tensor decode_attention_cuda(const at::Tensor& q, const at::Tensor& keys,
                                 const at::Tensor& values, const at::Tensor& position, double scale,
                                 const c10::optional<at::Tensor>& sinks);

}  // namespace gpubench::kernels
