// Bounds for comparing two computations of the same thing (sharded against whole, tensor
// parallel against one rank, fused against unfused), derived from the arithmetic rather than
// tuned to one CPU's summation order: another vector width (AVX2, AVX-512, AMX) or BLAS kernel
// sums in another order and moves the last bits, so a bound must hold for any order.
#pragma once

#include <cmath>
#include <limits>

#include <torch/torch.h>

#include "optim/multi_tensor_adamw.h"
#include "train/training_step.h"

namespace gpubench::testing {

// Float32's unit in the last place at 1: 2^-23.
inline constexpr double kFloat32Epsilon = std::numeric_limits<float>::epsilon();

// `ulps` units in the last place of each of `values`' elements, in float32 (at least the
// smallest normal's, so that zeros get a bound too).
inline torch::Tensor float32_ulps(const torch::Tensor& values, double ulps) {
  return values.detach().to(torch::kDouble).abs().clamp_min(std::numeric_limits<float>::min()) *
         (ulps * kFloat32Epsilon);
}

// Two optimisers that apply the same rule to the same gradients differ only in how each rounds:
// per step, at most about an ulp of the weight (its subtraction) and a few of the update (its
// own arithmetic in another order). `largest_update` bounds one step's |update|.
inline torch::Tensor same_rule_steps_bound(const torch::Tensor& weights, int steps,
                                           double largest_update) {
  constexpr double kWeightUlps = 2, kUpdateUlps = 8;
  return steps *
         (float32_ulps(weights, kWeightUlps) + kUpdateUlps * kFloat32Epsilon * largest_update);
}

// AdamW's first step moves each weight by lr * g / (|g| + eps) (the bias corrections cancel) and
// decays it by lr * weight_decay * p. Two runs that start from the same weights with gradients
// g_a and g_b (the same sums in another order) may differ, per element, by
//   lr * |g_a / (|g_a| + eps) - g_b / (|g_b| + eps)|
// plus each side's rounding of its update: a few ulps of the weight and of lr. A gradient near
// eps turns a last-bit difference into a large share of lr, so no bound on the parameters alone
// holds on every CPU; this one follows the gradients each side actually had.
inline torch::Tensor adamw_first_step_bound(const torch::Tensor& start, const torch::Tensor& grad_a,
                                            const torch::Tensor& grad_b,
                                            const torch::optim::AdamWOptions& adamw) {
  const double eps = adamw.eps(), learning_rate = adamw.lr();
  auto direction = [eps](const torch::Tensor& grad) {
    const torch::Tensor g = grad.detach().to(torch::kDouble);
    return g / (g.abs() + eps);
  };
  constexpr double kRoundingUlps = 8;  // each side: the moments, the square root, the division
  return learning_rate * (direction(grad_a) - direction(grad_b)).abs() +
         float32_ulps(start, kRoundingUlps) + kRoundingUlps * kFloat32Epsilon * learning_rate;
}

// The AdamW options a training step's optimiser stepped with (its learning rate and eps).
inline const torch::optim::AdamWOptions& adamw_options_of(const TrainingStep& step) {
  return dynamic_cast<const MultiTensorAdamW&>(step.optimizer()).options();
}

// The largest of |a - b| / bound over the elements: at most 1 when every element is within its
// bound.
inline double worst_share_of_bound(const torch::Tensor& a, const torch::Tensor& b,
                                   const torch::Tensor& bound) {
  return ((a.detach().to(torch::kDouble) - b.detach().to(torch::kDouble)).abs() / bound)
      .max()
      .item<double>();
}

}  // namespace gpubench::testing
