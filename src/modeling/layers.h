// Convolution and linear layers that report their multiply-adds to an active FlopCounter.
// Same parameters, names and maths as torch::nn's; the count costs one branch per call.
#pragma once

#include <torch/torch.h>

#include "modeling/flop_counter.h"
#include "modeling/linear_compute.h"

namespace gpubench::layers {

class Conv2dImpl : public torch::nn::Conv2dImpl {
 public:
  using torch::nn::Conv2dImpl::Conv2dImpl;
  torch::Tensor forward(const torch::Tensor& input) {
    torch::Tensor output = torch::nn::Conv2dImpl::forward(input);
    const auto& kernel = options.kernel_size();
    FlopCounter::record_multiply_adds(
        output.numel() * (options.in_channels() / options.groups()) * kernel->at(0) * kernel->at(1),
        !weight.requires_grad());
    return output;
  }
};
TORCH_MODULE(Conv2d);

// Its product through LinearCompute: FP8 where the run says so.
class LinearImpl : public torch::nn::LinearImpl, public QuantizableLinear {
 public:
  using torch::nn::LinearImpl::LinearImpl;
  torch::Tensor forward(const torch::Tensor& input) {
    return compute_.forward(input, weight, bias);
  }
  bool hold_weight_in(const WeightFormat& format) override {
    return compute_.quantize(*this, weight, format);
  }
  int64_t bytes_change_in(const WeightFormat& format) const override {
    return weight_bytes_change(weight, format);
  }

 private:
  LinearCompute compute_;
};
TORCH_MODULE(Linear);

// A layer norm in its weight's dtype: float32 when the model trains in full, as CUDA autocast
// runs layer norm (the CPU's autocast passes a 16-bit input through, which LibTorch 1.13's CPU
// kernel refuses beside a float32 weight); the compute dtype for LoRA's frozen base in bf16/fp16.
inline torch::Tensor normed(torch::nn::LayerNorm& norm, const torch::Tensor& x) {
  return norm(x.to(norm->weight.scalar_type()));
}

}  // namespace gpubench::layers
