// VGG16 as torchvision's vgg16 builds it: configuration D, no batch norm, 224x224, 1000 classes,
// adaptive 7x7 average pool, dropout 0.5 in the classifier, torchvision's initialisation.
#include <torch/torch.h>

#include "modeling/basic_conv.h"
#include "modeling/image_classifier.h"
#include "modeling/layers.h"

namespace gpubench::models {
namespace {

constexpr int64_t kMaxPool = 0;

class VggImpl : public torch::nn::Module {
 public:
  VggImpl(const std::vector<int64_t>& configuration, int64_t classes) {
    int64_t channels = 3;
    for (int64_t width : configuration) {
      if (width == kMaxPool) {
        features->push_back(torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(2).stride(2)));
        continue;
      }
      features->push_back(layers::Conv2d(torch::nn::Conv2dOptions(channels, width, 3).padding(1)));
      features->push_back(torch::nn::ReLU(torch::nn::ReLUOptions(true)));
      channels = width;
    }
    classifier->push_back(layers::Linear(512 * 7 * 7, 4096));
    classifier->push_back(torch::nn::ReLU(torch::nn::ReLUOptions(true)));
    classifier->push_back(torch::nn::Dropout(0.5));
    classifier->push_back(layers::Linear(4096, 4096));
    classifier->push_back(torch::nn::ReLU(torch::nn::ReLUOptions(true)));
    classifier->push_back(torch::nn::Dropout(0.5));
    classifier->push_back(layers::Linear(4096, classes));
    register_module("features", features);
    register_module("classifier", classifier);
    torch::NoGradGuard no_grad;
    for (auto& module : modules(/*include_self=*/false)) {
      if (auto* conv = module->as<torch::nn::Conv2d>()) {
        torch::nn::init::kaiming_normal_(conv->weight, 0.0, torch::kFanOut, torch::kReLU);
        torch::nn::init::zeros_(conv->bias);
      } else if (auto* linear = module->as<torch::nn::Linear>()) {
        torch::nn::init::normal_(linear->weight, 0.0, 0.01);
        torch::nn::init::zeros_(linear->bias);
      }
    }
  }

  ClassifierOutput forward(const torch::Tensor& x) {
    torch::Tensor out = torch::adaptive_avg_pool2d(features->forward(x), {7, 7}).flatten(1);
    return {classifier->forward(out), {}};
  }

  torch::nn::Sequential features, classifier;
};
TORCH_MODULE(Vgg);

const std::vector<int64_t> kVgg16{64,  64,       kMaxPool, 128,      128, kMaxPool,
                                  256, 256,      256,      kMaxPool, 512, 512,
                                  512, kMaxPool, 512,      512,      512, kMaxPool};

const ModelRegistration kVgg16Registration{with_default_counts(
    image_classifier_info<Vgg>("vgg16", {}, 224, 64,
                               "torchvision models.vgg16 (configuration D, no batch norm)",
                               [](int64_t classes) { return Vgg(kVgg16, classes); }),
    138357544, 138357544, 30940528640)};

}  // namespace
}  // namespace gpubench::models
