// torchvision's ResNet bottleneck (v1.5: the stride sits in the 3x3 convolution) and its stages,
// with torchvision's module names and initialisation: the ResNets and the detectors' backbones
// (SSD300's) are built from them.
#pragma once

#include <torch/torch.h>

#include "modeling/layers.h"

namespace gpubench::models {

inline layers::Conv2d resnet_conv(int64_t in, int64_t out, int64_t kernel, int64_t stride,
                                  int64_t padding) {
  return layers::Conv2d(
      torch::nn::Conv2dOptions(in, out, kernel).stride(stride).padding(padding).bias(false));
}

// torchvision.ops.FrozenBatchNorm2d: batch norm whose statistics and affine terms are buffers
// that never train (the detectors' backbones, as their ImageNet-initialised recipes hold them).
class FrozenBatchNorm2dImpl : public torch::nn::Module {
 public:
  explicit FrozenBatchNorm2dImpl(int64_t channels)
      : weight(register_buffer("weight", torch::ones({channels}))),
        bias(register_buffer("bias", torch::zeros({channels}))),
        running_mean(register_buffer("running_mean", torch::zeros({channels}))),
        running_var(register_buffer("running_var", torch::ones({channels}))) {}

  torch::Tensor forward(const torch::Tensor& x) {
    const auto shaped = [](const torch::Tensor& t) { return t.reshape({1, -1, 1, 1}); };
    const torch::Tensor scale = shaped(weight) * (shaped(running_var) + kEps).rsqrt();
    const torch::Tensor shift = shaped(bias) - shaped(running_mean) * scale;
    return x * scale + shift;
  }

  static constexpr double kEps = 1e-5;
  torch::Tensor weight, bias, running_mean, running_var;
};
TORCH_MODULE(FrozenBatchNorm2d);

// Norm: torch::nn::BatchNorm2d, or FrozenBatchNorm2d (the detectors' backbones).
template <typename Norm>
class BottleneckOfImpl : public torch::nn::Module {
 public:
  static constexpr int64_t kExpansion = 4;

  BottleneckOfImpl(int64_t in_planes, int64_t planes, int64_t stride)
      : conv1(register_module("conv1", resnet_conv(in_planes, planes, 1, 1, 0))),
        bn1(register_module("bn1", Norm(planes))),
        conv2(register_module("conv2", resnet_conv(planes, planes, 3, stride, 1))),
        bn2(register_module("bn2", Norm(planes))),
        conv3(register_module("conv3", resnet_conv(planes, planes * kExpansion, 1, 1, 0))),
        bn3(register_module("bn3", Norm(planes * kExpansion))) {
    if (stride != 1 || in_planes != planes * kExpansion) {
      downsample = register_module(
          "downsample",
          torch::nn::Sequential(resnet_conv(in_planes, planes * kExpansion, 1, stride, 0),
                                Norm(planes * kExpansion)));
    }
  }

  torch::Tensor forward(const torch::Tensor& x) {
    // In place, as torchvision's ReLU(inplace=True) and `out += identity`: batch norm's
    // backward reads its input, not its output, so nothing autograd saved is overwritten.
    torch::Tensor out = bn1(conv1(x)).relu_();
    out = bn2(conv2(out)).relu_();
    out = bn3(conv3(out));
    out += downsample.is_empty() ? x : downsample->forward(x);
    return out.relu_();
  }

  layers::Conv2d conv1;
  Norm bn1;
  layers::Conv2d conv2;
  Norm bn2;
  layers::Conv2d conv3;
  Norm bn3;
  torch::nn::Sequential downsample{nullptr};
};

template <typename Norm>
using BottleneckOf = torch::nn::ModuleHolder<BottleneckOfImpl<Norm>>;
using BottleneckImpl = BottleneckOfImpl<torch::nn::BatchNorm2d>;
using Bottleneck = BottleneckOf<torch::nn::BatchNorm2d>;

// A stage's bottlenecks in order: a Sequential whose forward is a plain function, so that a stage
// can sit inside another Sequential (SSD300's backbone, as the reference's nn.Sequential).
class ResNetStageImpl : public torch::nn::SequentialImpl {
 public:
  using SequentialImpl::SequentialImpl;
  torch::Tensor forward(const torch::Tensor& x) { return SequentialImpl::forward(x); }
};
TORCH_MODULE(ResNetStage);

// One stage of `count` bottlenecks, the first with `stride`; `in_planes` is the stage's input
// channels, advanced to its output's.
template <typename Norm = torch::nn::BatchNorm2d>
ResNetStage resnet_stage(int64_t& in_planes, int64_t planes, int64_t count, int64_t stride) {
  ResNetStage stage;
  stage->push_back(BottleneckOf<Norm>(in_planes, planes, stride));
  in_planes = planes * BottleneckImpl::kExpansion;
  for (int64_t i = 1; i < count; ++i) stage->push_back(BottleneckOf<Norm>(in_planes, planes, 1));
  return stage;
}

// torchvision's ResNet initialisation of every module under `root`: convolutions from Kaiming's
// normal (fan out), batch norm weights 1 and biases 0.
inline void initialize_resnet(torch::nn::Module& root) {
  torch::NoGradGuard no_grad;
  for (auto& module : root.modules(/*include_self=*/false)) {
    if (auto* c = module->as<torch::nn::Conv2d>()) {
      torch::nn::init::kaiming_normal_(c->weight, 0.0, torch::kFanOut, torch::kReLU);
    } else if (auto* bn = module->as<torch::nn::BatchNorm2d>()) {
      torch::nn::init::ones_(bn->weight);
      torch::nn::init::zeros_(bn->bias);
    }
  }
}

}  // namespace gpubench::models
