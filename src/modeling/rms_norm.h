// RMSNorm as Hugging Face's decoders compute it: normalised in float32, then scaled by the weight
// either after the cast back to the input's dtype (LlamaRMSNorm) or before it (Olmo2RMSNorm,
// which gpt-oss uses).
#pragma once

#include <torch/torch.h>

#include "torch_support/compat.h"

namespace gpubench::layers {

enum class RmsScale { kInInputDtype, kInFloat32 };

class RmsNormImpl : public torch::nn::Module {
 public:
  RmsNormImpl(int64_t size, double eps, RmsScale scale = RmsScale::kInInputDtype)
      : eps_(eps), scale_(scale) {
    weight = register_parameter("weight", torch::ones({size}));
  }
  // The normalisation in one operator where LibTorch has it (compat::rms_norm), with the weight
  // inside it where it is applied before the rounding and has x's dtype.
  torch::Tensor forward(const torch::Tensor& x) {
    if (scale_ == RmsScale::kInInputDtype) return weight * compat::rms_norm(x, eps_);
    if (weight.scalar_type() == x.scalar_type()) return compat::rms_norm(x, eps_, weight);
    return (weight * compat::rms_norm(x.to(torch::kFloat), eps_)).to(x.scalar_type());
  }
  torch::Tensor weight;

 private:
  double eps_;
  RmsScale scale_;
};
TORCH_MODULE(RmsNorm);

}  // namespace gpubench::layers
