// Convolution and linear layers that count their multiply-adds for the result's FLOPs
// (docs/api.md). The same parameters, names and maths as torch::nn's.
#pragma once

#include <cstdint>
#include <memory>

#include <torch/torch.h>

namespace gpubench::layers {

// Reports `multiply_adds` to the FLOP count of the model being counted, if one is; `frozen_weight`:
// one operand is a weight that does not train. A no-op otherwise: one branch per call.
void count_multiply_adds(int64_t multiply_adds, bool frozen_weight = false);

class Conv2dImpl : public torch::nn::Conv2dImpl {
 public:
  using torch::nn::Conv2dImpl::Conv2dImpl;
  torch::Tensor forward(const torch::Tensor& input) {
    torch::Tensor output = torch::nn::Conv2dImpl::forward(input);
    const auto& kernel = options.kernel_size();
    count_multiply_adds(
        output.numel() * (options.in_channels() / options.groups()) * kernel->at(0) * kernel->at(1),
        !weight.requires_grad());
    return output;
  }
};
TORCH_MODULE(Conv2d);

class WeightFormat;   // how inference holds a weight (int8, int4, FP8): gpubench's own
class LinearCompute;  // how a linear layer computes its product: gpubench's own

// A linear layer whose weight inference can hold in a WeightFormat (infer --weights).
class QuantizableLinear {
 public:
  virtual ~QuantizableLinear() = default;
  virtual bool hold_weight_in(const WeightFormat& format) = 0;
  // What hold_weight_in(format) would change its bytes by (the format's bytes less the weight's
  // own); 0 where it would keep them.
  virtual int64_t bytes_change_in(const WeightFormat& format) const = 0;
};

std::shared_ptr<LinearCompute> new_linear_compute();

// torch::nn::Linear whose product runs as the run applies it: in FP8 under --precision fp8 (in a
// model that declares products_in_linear_layers: docs/fp8.md), from a weight held in a format
// under infer --weights.
class LinearImpl : public torch::nn::LinearImpl, public QuantizableLinear {
 public:
  using torch::nn::LinearImpl::LinearImpl;
  torch::Tensor forward(const torch::Tensor& input);
  bool hold_weight_in(const WeightFormat& format) override;
  int64_t bytes_change_in(const WeightFormat& format) const override;

 private:
  std::shared_ptr<LinearCompute> compute_ = new_linear_compute();
};
TORCH_MODULE(Linear);

}  // namespace gpubench::layers
