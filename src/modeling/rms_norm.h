// RMSNorm as Hugging Face's decoders compute it: normalised in float32, then scaled by the weight
// either after the cast back to the input's dtype (LlamaRMSNorm) or before it (Olmo2RMSNorm,
// which gpt-oss uses).
#pragma once

#include <torch/torch.h>

namespace gpubench::layers {

enum class RmsScale { kInInputDtype, kInFloat32 };

class RmsNormImpl : public torch::nn::Module {
 public:
  RmsNormImpl(int64_t size, double eps, RmsScale scale = RmsScale::kInInputDtype)
      : eps_(eps), scale_(scale) {
    weight = register_parameter("weight", torch::ones({size}));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    const torch::Tensor x32 = x.to(torch::kFloat);
    const torch::Tensor normed = x32 * torch::rsqrt(x32.pow(2).mean(-1, /*keepdim=*/true) + eps_);
    if (scale_ == RmsScale::kInFloat32) return (weight * normed).to(x.scalar_type());
    return weight * normed.to(x.scalar_type());
  }
  torch::Tensor weight;

 private:
  double eps_;
  RmsScale scale_;
};
TORCH_MODULE(RmsNorm);

}  // namespace gpubench::layers
