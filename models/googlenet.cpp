// GoogLeNet as torchvision's googlenet builds it for training from scratch: 224x224, 1000
// classes, both auxiliary classifiers on in training mode (loss weight 0.3 each, as in Szegedy
// et al. 2015), transform_input off. Like torchvision, the "5x5" branch uses a 3x3 convolution.
#include <torch/torch.h>

#include "modeling/basic_conv.h"
#include "modeling/image_classifier.h"
#include "modeling/layers.h"

namespace gpubench::models {
namespace {

torch::Tensor max_pool_ceil(const torch::Tensor& x, int64_t kernel, int64_t stride) {
  return torch::max_pool2d(x, kernel, stride, /*padding=*/0, /*dilation=*/1, /*ceil_mode=*/true);
}

class InceptionImpl : public torch::nn::Module {
 public:
  InceptionImpl(int64_t in, int64_t ch1x1, int64_t ch3x3red, int64_t ch3x3, int64_t ch5x5red,
                int64_t ch5x5, int64_t pool_proj)
      : branch1(register_module("branch1", basic_conv(in, ch1x1, 1))),
        branch2(register_module(
            "branch2", chain({basic_conv(in, ch3x3red, 1), basic_conv(ch3x3red, ch3x3, 3, 1, 1)}))),
        branch3(register_module(
            "branch3", chain({basic_conv(in, ch5x5red, 1), basic_conv(ch5x5red, ch5x5, 3, 1, 1)}))),
        branch4(register_module(
            "branch4", torch::nn::Sequential(
                           torch::nn::MaxPool2d(
                               torch::nn::MaxPool2dOptions(3).stride(1).padding(1).ceil_mode(true)),
                           basic_conv(in, pool_proj, 1)))) {}

  torch::Tensor forward(const torch::Tensor& x) {
    return torch::cat({branch1(x), branch2->forward(x), branch3->forward(x), branch4->forward(x)},
                      1);
  }

  BasicConv2d branch1;
  torch::nn::Sequential branch2, branch3, branch4;
};
TORCH_MODULE(Inception);

class AuxHeadImpl : public torch::nn::Module {
 public:
  AuxHeadImpl(int64_t in, int64_t classes)
      : conv(register_module("conv", basic_conv(in, 128, 1))),
        fc1(register_module("fc1", layers::Linear(2048, 1024))),
        fc2(register_module("fc2", layers::Linear(1024, classes))) {}

  torch::Tensor forward(const torch::Tensor& x) {
    torch::Tensor out = conv(torch::adaptive_avg_pool2d(x, {4, 4})).flatten(1);
    out = torch::dropout(fc1(out).relu_(), 0.7, is_training());
    return fc2(out);
  }

  BasicConv2d conv;
  layers::Linear fc1, fc2;
};
TORCH_MODULE(AuxHead);

class GoogLeNetImpl : public torch::nn::Module {
 public:
  explicit GoogLeNetImpl(int64_t classes)
      : conv1(register_module("conv1", basic_conv(3, 64, 7, 2, 3))),
        conv2(register_module("conv2", basic_conv(64, 64, 1))),
        conv3(register_module("conv3", basic_conv(64, 192, 3, 1, 1))),
        inception3a(register_module("inception3a", Inception(192, 64, 96, 128, 16, 32, 32))),
        inception3b(register_module("inception3b", Inception(256, 128, 128, 192, 32, 96, 64))),
        inception4a(register_module("inception4a", Inception(480, 192, 96, 208, 16, 48, 64))),
        inception4b(register_module("inception4b", Inception(512, 160, 112, 224, 24, 64, 64))),
        inception4c(register_module("inception4c", Inception(512, 128, 128, 256, 24, 64, 64))),
        inception4d(register_module("inception4d", Inception(512, 112, 144, 288, 32, 64, 64))),
        inception4e(register_module("inception4e", Inception(528, 256, 160, 320, 32, 128, 128))),
        inception5a(register_module("inception5a", Inception(832, 256, 160, 320, 32, 128, 128))),
        inception5b(register_module("inception5b", Inception(832, 384, 192, 384, 48, 128, 128))),
        aux1(register_module("aux1", AuxHead(512, classes))),
        aux2(register_module("aux2", AuxHead(528, classes))),
        fc(register_module("fc", layers::Linear(1024, classes))) {
    initialize(*this, [](torch::Tensor& w) { truncated_normal_(w, 0.01); });
  }

  ClassifierOutput forward(const torch::Tensor& x) {
    torch::Tensor out = max_pool_ceil(conv1(x), 3, 2);
    out = max_pool_ceil(conv3(conv2(out)), 3, 2);
    out = max_pool_ceil(inception3b(inception3a(out)), 3, 2);
    out = inception4a(out);
    ClassifierOutput result;
    if (is_training()) result.aux_logits.push_back(aux1(out));
    out = inception4d(inception4c(inception4b(out)));
    if (is_training()) result.aux_logits.push_back(aux2(out));
    out = max_pool_ceil(inception4e(out), 2, 2);
    out = inception5b(inception5a(out));
    out = torch::dropout(torch::adaptive_avg_pool2d(out, {1, 1}).flatten(1), 0.2, is_training());
    result.logits = fc(out);
    return result;
  }

  BasicConv2d conv1, conv2, conv3;
  Inception inception3a, inception3b, inception4a, inception4b, inception4c, inception4d,
      inception4e, inception5a, inception5b;
  AuxHead aux1, aux2;
  layers::Linear fc;
};
TORCH_MODULE(GoogLeNet);

const ModelRegistration kGoogLeNet{
    with_default_counts(image_classifier_info<GoogLeNet>(
                            "googlenet", {"inception_v1"}, 224, 32,
                            "torchvision models.googlenet (aux_logits=True, transform_input=False)",
                            [](int64_t classes) { return GoogLeNet(classes); }, {0.3, 0.3}),
                        13004888, 13004888, 2996752384)};

}  // namespace
}  // namespace gpubench::models
