// Convolution without bias, batch norm (eps 0.001), ReLU: the building block that torchvision's
// GoogLeNet and Inception V3 and timm's Inception V4 call BasicConv2d (submodules conv, bn).
#pragma once

#include <torch/torch.h>

#include "modeling/layers.h"

namespace gpubench::models {

class BasicConv2dImpl : public torch::nn::Module {
 public:
  BasicConv2dImpl(int64_t in, int64_t out, torch::ExpandingArray<2> kernel,
                  torch::ExpandingArray<2> stride = 1, torch::ExpandingArray<2> padding = 0)
      : conv(register_module("conv", layers::Conv2d(torch::nn::Conv2dOptions(in, out, kernel)
                                                        .stride(stride)
                                                        .padding(padding)
                                                        .bias(false)))),
        bn(register_module(
            "bn", torch::nn::BatchNorm2d(torch::nn::BatchNorm2dOptions(out).eps(0.001)))) {}

  // ReLU in place, as torchvision's F.relu(x, inplace=True) and timm's activation.
  torch::Tensor forward(const torch::Tensor& x) { return bn(conv(x)).relu_(); }

  layers::Conv2d conv;
  torch::nn::BatchNorm2d bn;
};
TORCH_MODULE(BasicConv2d);

// Builds a BasicConv2d; unlike the holder's forwarding constructor it takes braced {h, w} pairs.
inline BasicConv2d basic_conv(int64_t in, int64_t out, torch::ExpandingArray<2> kernel,
                              torch::ExpandingArray<2> stride = 1,
                              torch::ExpandingArray<2> padding = 0) {
  return BasicConv2d(std::make_shared<BasicConv2dImpl>(in, out, kernel, stride, padding));
}

// In a constructor's initialiser list: registers a BasicConv2d under the member's own name.
#define GPUBENCH_CONV(name, ...) name(register_module(#name, basic_conv(__VA_ARGS__)))

// Several modules applied one after the other (torch::nn::Sequential with a shorter name).
inline torch::nn::Sequential chain(std::initializer_list<BasicConv2d> convs) {
  torch::nn::Sequential sequence;
  for (const auto& conv : convs) sequence->push_back(conv);
  return sequence;
}

// torchvision initialises GoogLeNet and Inception V3 from N(0, std²) truncated at ±2 std; this
// clamps instead of resampling (LibTorch 1.13 has no trunc_normal_), which changes no timing.
inline void truncated_normal_(torch::Tensor& weight, double std) {
  torch::nn::init::normal_(weight, 0.0, std);
  weight.clamp_(-2 * std, 2 * std);
}

// Batch norm weights 1 and biases 0; convolution and linear weights from `init_weight`.
template <typename InitWeight>
void initialize(torch::nn::Module& root, InitWeight init_weight) {
  torch::NoGradGuard no_grad;
  for (auto& module : root.modules(/*include_self=*/false)) {
    if (auto* conv = module->as<torch::nn::Conv2d>()) {
      init_weight(conv->weight);
      if (conv->bias.defined()) torch::nn::init::zeros_(conv->bias);
    } else if (auto* linear = module->as<torch::nn::Linear>()) {
      init_weight(linear->weight);
      if (linear->bias.defined()) torch::nn::init::zeros_(linear->bias);
    } else if (auto* bn = module->as<torch::nn::BatchNorm2d>()) {
      torch::nn::init::ones_(bn->weight);
      torch::nn::init::zeros_(bn->bias);
    }
  }
}

}  // namespace gpubench::models
