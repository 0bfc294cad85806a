// The ATen compositions that gpubench's own operators replace (kernels/fused_operators.h): the
// operators' CPU forms, what runs where autograd records, and the CUDA kernels' fallback for the
// dtypes they do not take.
#pragma once

#include <ATen/ATen.h>

#include <tuple>

namespace gpubench::kernels::composition {

at::Tensor rms_norm_composition(const at::Tensor& x, const at::Tensor& weight, double eps,
                                bool weight_before_rounding);
std::tuple<at::Tensor, at::Tensor> add_rms_norm_composition(const at::Tensor& x,
                                                            const at::Tensor& addend,
                                                            const at::Tensor& weight, double eps,
                                                            bool weight_before_rounding);
at::Tensor silu_mul_composition(const at::Tensor& gate, const at::Tensor& up);

}  // namespace gpubench::kernels::composition
