// Hidden models for the tests: the image-classifier path (convolutions, batch norm, channels-
// last, FLOP counting, every precision) at a size a 2-core CPU trains in milliseconds. Found by
// name, never listed.
#include <torch/torch.h>

#include "modeling/image_classifier.h"
#include "modeling/layers.h"

namespace gpubench::models {
namespace {

class TinyCnnImpl : public torch::nn::Module {
 public:
  explicit TinyCnnImpl(int64_t num_classes)
      : conv1_(register_module(
            "conv1", layers::Conv2d(torch::nn::Conv2dOptions(3, 8, 3).padding(1).bias(false)))),
        bn1_(register_module("bn1", torch::nn::BatchNorm2d(8))),
        conv2_(register_module(
            "conv2", layers::Conv2d(torch::nn::Conv2dOptions(8, 16, 3).stride(2).padding(1)))),
        fc_(register_module("fc", layers::Linear(16, num_classes))) {}

  ClassifierOutput forward(torch::Tensor x) {
    x = torch::relu(bn1_(conv1_(x)));
    x = torch::relu(conv2_(x));
    x = torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1);
    return {fc_(x), {}};
  }

 private:
  layers::Conv2d conv1_;
  torch::nn::BatchNorm2d bn1_;
  layers::Conv2d conv2_;
  layers::Linear fc_;
};
TORCH_MODULE(TinyCnn);

ModelInfo tiny_cnn_info() {
  ModelInfo info = image_classifier_info<TinyCnn>("test-tiny-cnn", {}, 16, 4,
                                                  "a test model: two convolutions, 16x16 images",
                                                  [](int64_t classes) { return TinyCnn(classes); });
  info.hidden = true;
  return info;
}

const ModelRegistration kTinyCnn{tiny_cnn_info()};

}  // namespace
}  // namespace gpubench::models
