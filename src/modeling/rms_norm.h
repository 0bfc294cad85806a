// RMSNorm as Hugging Face's decoders compute it: normalised in float32, then scaled by the weight
// either after the cast back to the input's dtype (LlamaRMSNorm) or before it (Olmo2RMSNorm,
// which gpt-oss uses).
#pragma once

#include <torch/torch.h>

#include <utility>

#include "kernels/fused_operators.h"

namespace gpubench::layers {

enum class RmsScale { kInInputDtype, kInFloat32 };

class RmsNormImpl : public torch::nn::Module {
 public:
  RmsNormImpl(int64_t size, double eps, RmsScale scale = RmsScale::kInInputDtype)
      : eps_(eps),
        order_(scale == RmsScale::kInInputDtype ? kernels::RmsWeight::kAfterRounding
                                                : kernels::RmsWeight::kBeforeRounding) {
    weight = register_parameter("weight", torch::ones({size}));
  }
  // One operator (kernels/fused_operators.h): the composition on the CPU, one kernel on CUDA.
  torch::Tensor forward(const torch::Tensor& x) {
    return kernels::rms_norm(x, weight, eps_, order_);
  }
  // {x + addend, forward(x + addend)}: a residual sum and the norm that reads it, in one operator.
  std::pair<torch::Tensor, torch::Tensor> add_and_normalize(const torch::Tensor& x,
                                                            const torch::Tensor& addend) {
    return kernels::add_rms_norm(x, addend, weight, eps_, order_);
  }
  torch::Tensor weight;

 private:
  double eps_;
  kernels::RmsWeight order_;
};
TORCH_MODULE(RmsNorm);

}  // namespace gpubench::layers
