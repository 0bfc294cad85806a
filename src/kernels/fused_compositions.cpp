#include "kernels/fused_compositions.h"

#include "torch_support/compat.h"

namespace gpubench::kernels::composition {

at::Tensor rms_norm_composition(const at::Tensor& x, const at::Tensor& weight, double eps,
                                bool weight_before_rounding) {
  if (!weight_before_rounding) return weight * compat::rms_norm(x, eps);
  if (weight.scalar_type() == x.scalar_type()) return compat::rms_norm(x, eps, weight);
  return (weight * compat::rms_norm(x.to(at::kFloat), eps)).to(x.scalar_type());
}

std::tuple<at::Tensor, at::Tensor> add_rms_norm_composition(const at::Tensor& x,
                                                            const at::Tensor& addend,
                                                            const at::Tensor& weight, double eps,
                                                            bool weight_before_rounding) {
  at::Tensor sum = x + addend;
  at::Tensor normed = rms_norm_composition(sum, weight, eps, weight_before_rounding);
  return {std::move(sum), std::move(normed)};
}

at::Tensor silu_mul_composition(const at::Tensor& gate, const at::Tensor& up) {
  return at::silu(gate) * up;
}

}  // namespace gpubench::kernels::composition
