// A model of your own: a small convolutional network registered by name as "example-net". Linked
// into both executables of this example (custom_bench, run_from_code), it is one of their models
// as the zoo's are.
#include <torch/torch.h>

#include "gpubench/image_classifier.h"

namespace {

// gpubench::layers' Conv2d and Linear are torch::nn's, counting their FLOPs for the result.
class ExampleNetImpl : public torch::nn::Module {
 public:
  explicit ExampleNetImpl(int64_t classes)
      : conv_(register_module(
            "conv", gpubench::layers::Conv2d(torch::nn::Conv2dOptions(3, 16, 3).padding(1)))),
        norm_(register_module("norm", torch::nn::BatchNorm2d(16))),
        fc_(register_module("fc", gpubench::layers::Linear(16, classes))) {}

  // An image classifier's forward pass returns its logits (and no auxiliary heads).
  gpubench::ClassifierOutput forward(torch::Tensor images) {
    torch::Tensor x = torch::relu(norm_(conv_(images)));
    x = torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1);
    return {fc_(x), {}};
  }

 private:
  gpubench::layers::Conv2d conv_;
  torch::nn::BatchNorm2d norm_;
  gpubench::layers::Linear fc_;
};
TORCH_MODULE(ExampleNet);

// Name, aliases, image size, default batch, reference, and how to build it.
GPUBENCH_REGISTER_MODEL(gpubench::image_classifier<ExampleNet>(
    "example-net", {}, 32, 8, "examples/custom_model: one convolution and a classifier",
    [](int64_t classes) { return ExampleNet(classes); }));

}  // namespace
