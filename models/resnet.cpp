// ResNet-50/101/152 as torchvision builds them (v1.5: the stride sits in the 3x3 convolution of
// each bottleneck), 1000 classes, torchvision's initialisation and module names.
#include <cmath>

#include <torch/torch.h>

#include "modeling/image_classifier.h"
#include "modeling/layers.h"
#include "modeling/model_registry.h"

namespace gpubench {
namespace {

using layers::Conv2d;
using torch::nn::BatchNorm2d;

Conv2d conv(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t padding) {
  return Conv2d(
      torch::nn::Conv2dOptions(in, out, kernel).stride(stride).padding(padding).bias(false));
}

class BottleneckImpl : public torch::nn::Module {
 public:
  static constexpr int64_t kExpansion = 4;

  BottleneckImpl(int64_t in_planes, int64_t planes, int64_t stride)
      : conv1(register_module("conv1", conv(in_planes, planes, 1, 1, 0))),
        bn1(register_module("bn1", BatchNorm2d(planes))),
        conv2(register_module("conv2", conv(planes, planes, 3, stride, 1))),
        bn2(register_module("bn2", BatchNorm2d(planes))),
        conv3(register_module("conv3", conv(planes, planes * kExpansion, 1, 1, 0))),
        bn3(register_module("bn3", BatchNorm2d(planes * kExpansion))) {
    if (stride != 1 || in_planes != planes * kExpansion) {
      downsample = register_module(
          "downsample", torch::nn::Sequential(conv(in_planes, planes * kExpansion, 1, stride, 0),
                                              BatchNorm2d(planes * kExpansion)));
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

  Conv2d conv1;
  BatchNorm2d bn1;
  Conv2d conv2;
  BatchNorm2d bn2;
  Conv2d conv3;
  BatchNorm2d bn3;
  torch::nn::Sequential downsample{nullptr};
};
TORCH_MODULE(Bottleneck);

class ResNetImpl : public torch::nn::Module {
 public:
  ResNetImpl(const std::vector<int64_t>& blocks, int64_t num_classes)
      : in_planes_(64),
        conv1(register_module("conv1", conv(3, 64, 7, 2, 3))),
        bn1(register_module("bn1", BatchNorm2d(64))),
        layer1(register_module("layer1", make_layer(64, blocks[0], 1))),
        layer2(register_module("layer2", make_layer(128, blocks[1], 2))),
        layer3(register_module("layer3", make_layer(256, blocks[2], 2))),
        layer4(register_module("layer4", make_layer(512, blocks[3], 2))),
        fc(register_module("fc", layers::Linear(512 * BottleneckImpl::kExpansion, num_classes))) {
    for (auto& module : modules(/*include_self=*/false)) {
      if (auto* c = module->as<torch::nn::Conv2d>()) {
        torch::nn::init::kaiming_normal_(c->weight, 0.0, torch::kFanOut, torch::kReLU);
      } else if (auto* bn = module->as<torch::nn::BatchNorm2d>()) {
        torch::nn::init::ones_(bn->weight);
        torch::nn::init::zeros_(bn->bias);
      }
    }
  }

  ClassifierOutput forward(const torch::Tensor& x) {
    torch::Tensor out = bn1(conv1(x)).relu_();
    out = torch::max_pool2d(out, 3, 2, 1);
    out = layer4->forward(layer3->forward(layer2->forward(layer1->forward(out))));
    out = torch::adaptive_avg_pool2d(out, {1, 1}).flatten(1);
    return {fc(out), {}};
  }

 private:
  int64_t in_planes_;  // input channels of the next block; make_layer advances it

 public:
  Conv2d conv1;
  BatchNorm2d bn1;
  torch::nn::Sequential layer1, layer2, layer3, layer4;
  layers::Linear fc;

 private:
  torch::nn::Sequential make_layer(int64_t planes, int64_t count, int64_t stride) {
    torch::nn::Sequential layer;
    layer->push_back(Bottleneck(in_planes_, planes, stride));
    in_planes_ = planes * BottleneckImpl::kExpansion;
    for (int64_t i = 1; i < count; ++i) layer->push_back(Bottleneck(in_planes_, planes, 1));
    return layer;
  }
};
TORCH_MODULE(ResNet);

ModelInfo resnet_info(const std::string& name, std::vector<int64_t> blocks, int64_t batch) {
  return image_classifier_info<ResNet>(
      name, {}, 224, batch, "torchvision models." + name + " (ResNet v1.5)",
      [blocks](int64_t classes) { return ResNet(blocks, classes); });
}

// Per-device batch sizes are tf_cnn_benchmarks' defaults.
const ModelRegistration kResNet50{resnet_info("resnet50", {3, 4, 6, 3}, 64)};
const ModelRegistration kResNet101{resnet_info("resnet101", {3, 4, 23, 3}, 64)};
const ModelRegistration kResNet152{resnet_info("resnet152", {3, 8, 36, 3}, 32)};

}  // namespace
}  // namespace gpubench
