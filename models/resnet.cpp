// ResNet-50/101/152 as torchvision builds them (v1.5: the stride sits in the 3x3 convolution of
// each bottleneck), 1000 classes, torchvision's initialisation and module names.
#include <cmath>

#include <torch/torch.h>

#include "modeling/image_classifier.h"
#include "modeling/layers.h"
#include "modeling/model_registry.h"
#include "models/resnet.h"

namespace gpubench {
namespace {

using layers::Conv2d;
using models::BottleneckImpl;
using torch::nn::BatchNorm2d;

class ResNetImpl : public torch::nn::Module {
 public:
  ResNetImpl(const std::vector<int64_t>& blocks, int64_t num_classes)
      : in_planes_(64),
        conv1(register_module("conv1", models::resnet_conv(3, 64, 7, 2, 3))),
        bn1(register_module("bn1", BatchNorm2d(64))),
        layer1(register_module("layer1", models::resnet_stage(in_planes_, 64, blocks[0], 1))),
        layer2(register_module("layer2", models::resnet_stage(in_planes_, 128, blocks[1], 2))),
        layer3(register_module("layer3", models::resnet_stage(in_planes_, 256, blocks[2], 2))),
        layer4(register_module("layer4", models::resnet_stage(in_planes_, 512, blocks[3], 2))),
        fc(register_module("fc", layers::Linear(512 * BottleneckImpl::kExpansion, num_classes))) {
    models::initialize_resnet(*this);
  }

  ClassifierOutput forward(const torch::Tensor& x) {
    torch::Tensor out = bn1(conv1(x)).relu_();
    out = torch::max_pool2d(out, 3, 2, 1);
    out = layer4->forward(layer3->forward(layer2->forward(layer1->forward(out))));
    out = torch::adaptive_avg_pool2d(out, {1, 1}).flatten(1);
    return {fc(out), {}};
  }

 private:
  int64_t in_planes_;  // input channels of the next block; resnet_stage advances it

 public:
  Conv2d conv1;
  BatchNorm2d bn1;
  models::ResNetStage layer1, layer2, layer3, layer4;
  layers::Linear fc;
};
TORCH_MODULE(ResNet);

ModelInfo resnet_info(const std::string& name, std::vector<int64_t> blocks, int64_t batch) {
  return image_classifier_info<ResNet>(
      name, {}, 224, batch, "torchvision models." + name + " (ResNet v1.5)",
      [blocks](int64_t classes) { return ResNet(blocks, classes); });
}

// Per-device batch sizes are tf_cnn_benchmarks' defaults.
const ModelRegistration kResNet50{
    with_default_counts(resnet_info("resnet50", {3, 4, 6, 3}, 64), 25557032, 25557032, 8178368512)};
const ModelRegistration kResNet101{with_default_counts(resnet_info("resnet101", {3, 4, 23, 3}, 64),
                                                       44549160, 44549160, 15602810880)};
const ModelRegistration kResNet152{with_default_counts(resnet_info("resnet152", {3, 8, 36, 3}, 32),
                                                       60192808, 60192808, 23027253248)};

}  // namespace
}  // namespace gpubench
