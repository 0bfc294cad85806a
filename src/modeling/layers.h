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
  bool quantize_for_inference(const InferenceWeights& format) override {
    return compute_.quantize(*this, weight, format);
  }
  int64_t bytes_change_in(const InferenceWeights& format) const override {
    return weight_bytes_change(weight, format);
  }

 private:
  LinearCompute compute_;
};
TORCH_MODULE(Linear);

}  // namespace gpubench::layers
