// Inception V3 as torchvision's inception_v3 builds it for training from scratch: 299x299,
// 1000 classes, the auxiliary classifier on in training mode (loss weight 0.4, as in PyTorch's
// fine-tuning tutorial and the Inception V3 recipe), transform_input off.
#include <torch/torch.h>

#include "modeling/basic_conv.h"
#include "modeling/image_classifier.h"
#include "modeling/layers.h"

namespace gpubench::models {
namespace {

torch::Tensor avg_pool_3x3(const torch::Tensor& x) {
  return torch::avg_pool2d(x, 3, 1, 1);
}
torch::Tensor max_pool_3x3_s2(const torch::Tensor& x) {
  return torch::max_pool2d(x, 3, 2);
}

class InceptionAImpl : public torch::nn::Module {
 public:
  InceptionAImpl(int64_t in, int64_t pool_features)
      : GPUBENCH_CONV(branch1x1, in, 64, 1),
        GPUBENCH_CONV(branch5x5_1, in, 48, 1),
        GPUBENCH_CONV(branch5x5_2, 48, 64, 5, 1, 2),
        GPUBENCH_CONV(branch3x3dbl_1, in, 64, 1),
        GPUBENCH_CONV(branch3x3dbl_2, 64, 96, 3, 1, 1),
        GPUBENCH_CONV(branch3x3dbl_3, 96, 96, 3, 1, 1),
        GPUBENCH_CONV(branch_pool, in, pool_features, 1) {}

  torch::Tensor forward(const torch::Tensor& x) {
    return torch::cat(
        {branch1x1(x), branch5x5_2(branch5x5_1(x)),
         branch3x3dbl_3(branch3x3dbl_2(branch3x3dbl_1(x))), branch_pool(avg_pool_3x3(x))},
        1);
  }

  BasicConv2d branch1x1, branch5x5_1, branch5x5_2, branch3x3dbl_1, branch3x3dbl_2, branch3x3dbl_3,
      branch_pool;
};
TORCH_MODULE(InceptionA);

class InceptionBImpl : public torch::nn::Module {
 public:
  explicit InceptionBImpl(int64_t in)
      : GPUBENCH_CONV(branch3x3, in, 384, 3, 2),
        GPUBENCH_CONV(branch3x3dbl_1, in, 64, 1),
        GPUBENCH_CONV(branch3x3dbl_2, 64, 96, 3, 1, 1),
        GPUBENCH_CONV(branch3x3dbl_3, 96, 96, 3, 2) {}

  torch::Tensor forward(const torch::Tensor& x) {
    return torch::cat(
        {branch3x3(x), branch3x3dbl_3(branch3x3dbl_2(branch3x3dbl_1(x))), max_pool_3x3_s2(x)}, 1);
  }

  BasicConv2d branch3x3, branch3x3dbl_1, branch3x3dbl_2, branch3x3dbl_3;
};
TORCH_MODULE(InceptionB);

class InceptionCImpl : public torch::nn::Module {
 public:
  InceptionCImpl(int64_t in, int64_t c7)
      : GPUBENCH_CONV(branch1x1, in, 192, 1),
        GPUBENCH_CONV(branch7x7_1, in, c7, 1),
        GPUBENCH_CONV(branch7x7_2, c7, c7, {1, 7}, 1, {0, 3}),
        GPUBENCH_CONV(branch7x7_3, c7, 192, {7, 1}, 1, {3, 0}),
        GPUBENCH_CONV(branch7x7dbl_1, in, c7, 1),
        GPUBENCH_CONV(branch7x7dbl_2, c7, c7, {7, 1}, 1, {3, 0}),
        GPUBENCH_CONV(branch7x7dbl_3, c7, c7, {1, 7}, 1, {0, 3}),
        GPUBENCH_CONV(branch7x7dbl_4, c7, c7, {7, 1}, 1, {3, 0}),
        GPUBENCH_CONV(branch7x7dbl_5, c7, 192, {1, 7}, 1, {0, 3}),
        GPUBENCH_CONV(branch_pool, in, 192, 1) {}

  torch::Tensor forward(const torch::Tensor& x) {
    torch::Tensor b7 = branch7x7_3(branch7x7_2(branch7x7_1(x)));
    torch::Tensor b7dbl =
        branch7x7dbl_5(branch7x7dbl_4(branch7x7dbl_3(branch7x7dbl_2(branch7x7dbl_1(x)))));
    return torch::cat({branch1x1(x), b7, b7dbl, branch_pool(avg_pool_3x3(x))}, 1);
  }

  BasicConv2d branch1x1, branch7x7_1, branch7x7_2, branch7x7_3, branch7x7dbl_1, branch7x7dbl_2,
      branch7x7dbl_3, branch7x7dbl_4, branch7x7dbl_5, branch_pool;
};
TORCH_MODULE(InceptionC);

class InceptionDImpl : public torch::nn::Module {
 public:
  explicit InceptionDImpl(int64_t in)
      : GPUBENCH_CONV(branch3x3_1, in, 192, 1),
        GPUBENCH_CONV(branch3x3_2, 192, 320, 3, 2),
        GPUBENCH_CONV(branch7x7x3_1, in, 192, 1),
        GPUBENCH_CONV(branch7x7x3_2, 192, 192, {1, 7}, 1, {0, 3}),
        GPUBENCH_CONV(branch7x7x3_3, 192, 192, {7, 1}, 1, {3, 0}),
        GPUBENCH_CONV(branch7x7x3_4, 192, 192, 3, 2) {}

  torch::Tensor forward(const torch::Tensor& x) {
    return torch::cat(
        {branch3x3_2(branch3x3_1(x)), branch7x7x3_4(branch7x7x3_3(branch7x7x3_2(branch7x7x3_1(x)))),
         max_pool_3x3_s2(x)},
        1);
  }

  BasicConv2d branch3x3_1, branch3x3_2, branch7x7x3_1, branch7x7x3_2, branch7x7x3_3, branch7x7x3_4;
};
TORCH_MODULE(InceptionD);

class InceptionEImpl : public torch::nn::Module {
 public:
  explicit InceptionEImpl(int64_t in)
      : GPUBENCH_CONV(branch1x1, in, 320, 1),
        GPUBENCH_CONV(branch3x3_1, in, 384, 1),
        GPUBENCH_CONV(branch3x3_2a, 384, 384, {1, 3}, 1, {0, 1}),
        GPUBENCH_CONV(branch3x3_2b, 384, 384, {3, 1}, 1, {1, 0}),
        GPUBENCH_CONV(branch3x3dbl_1, in, 448, 1),
        GPUBENCH_CONV(branch3x3dbl_2, 448, 384, 3, 1, 1),
        GPUBENCH_CONV(branch3x3dbl_3a, 384, 384, {1, 3}, 1, {0, 1}),
        GPUBENCH_CONV(branch3x3dbl_3b, 384, 384, {3, 1}, 1, {1, 0}),
        GPUBENCH_CONV(branch_pool, in, 192, 1) {}

  torch::Tensor forward(const torch::Tensor& x) {
    torch::Tensor b3 = branch3x3_1(x);
    torch::Tensor b3dbl = branch3x3dbl_2(branch3x3dbl_1(x));
    return torch::cat({branch1x1(x), branch3x3_2a(b3), branch3x3_2b(b3), branch3x3dbl_3a(b3dbl),
                       branch3x3dbl_3b(b3dbl), branch_pool(avg_pool_3x3(x))},
                      1);
  }

  BasicConv2d branch1x1, branch3x3_1, branch3x3_2a, branch3x3_2b, branch3x3dbl_1, branch3x3dbl_2,
      branch3x3dbl_3a, branch3x3dbl_3b, branch_pool;
};
TORCH_MODULE(InceptionE);

class InceptionAuxImpl : public torch::nn::Module {
 public:
  InceptionAuxImpl(int64_t in, int64_t classes)
      : GPUBENCH_CONV(conv0, in, 128, 1),
        GPUBENCH_CONV(conv1, 128, 768, 5),
        fc(register_module("fc", layers::Linear(768, classes))) {}

  torch::Tensor forward(const torch::Tensor& x) {
    torch::Tensor out = conv1(conv0(torch::avg_pool2d(x, 5, 3)));
    return fc(torch::adaptive_avg_pool2d(out, {1, 1}).flatten(1));
  }

  BasicConv2d conv0, conv1;
  layers::Linear fc;
};
TORCH_MODULE(InceptionAux);

class Inception3Impl : public torch::nn::Module {
 public:
  explicit Inception3Impl(int64_t classes)
      : GPUBENCH_CONV(Conv2d_1a_3x3, 3, 32, 3, 2),
        GPUBENCH_CONV(Conv2d_2a_3x3, 32, 32, 3),
        GPUBENCH_CONV(Conv2d_2b_3x3, 32, 64, 3, 1, 1),
        GPUBENCH_CONV(Conv2d_3b_1x1, 64, 80, 1),
        GPUBENCH_CONV(Conv2d_4a_3x3, 80, 192, 3),
        Mixed_5b(register_module("Mixed_5b", InceptionA(192, 32))),
        Mixed_5c(register_module("Mixed_5c", InceptionA(256, 64))),
        Mixed_5d(register_module("Mixed_5d", InceptionA(288, 64))),
        Mixed_6a(register_module("Mixed_6a", InceptionB(288))),
        Mixed_6b(register_module("Mixed_6b", InceptionC(768, 128))),
        Mixed_6c(register_module("Mixed_6c", InceptionC(768, 160))),
        Mixed_6d(register_module("Mixed_6d", InceptionC(768, 160))),
        Mixed_6e(register_module("Mixed_6e", InceptionC(768, 192))),
        AuxLogits(register_module("AuxLogits", InceptionAux(768, classes))),
        Mixed_7a(register_module("Mixed_7a", InceptionD(768))),
        Mixed_7b(register_module("Mixed_7b", InceptionE(1280))),
        Mixed_7c(register_module("Mixed_7c", InceptionE(2048))),
        fc(register_module("fc", layers::Linear(2048, classes))) {
    initialize(*this, [](torch::Tensor& w) { truncated_normal_(w, 0.1); });
  }

  ClassifierOutput forward(const torch::Tensor& x) {
    torch::Tensor out = Conv2d_2b_3x3(Conv2d_2a_3x3(Conv2d_1a_3x3(x)));
    out = max_pool_3x3_s2(out);
    out = max_pool_3x3_s2(Conv2d_4a_3x3(Conv2d_3b_1x1(out)));
    out = Mixed_5d(Mixed_5c(Mixed_5b(out)));
    out = Mixed_6e(Mixed_6d(Mixed_6c(Mixed_6b(Mixed_6a(out)))));
    ClassifierOutput result;
    if (is_training()) result.aux_logits.push_back(AuxLogits(out));
    out = Mixed_7c(Mixed_7b(Mixed_7a(out)));
    out = torch::dropout(torch::adaptive_avg_pool2d(out, {1, 1}).flatten(1), 0.5, is_training());
    result.logits = fc(out);
    return result;
  }

  BasicConv2d Conv2d_1a_3x3, Conv2d_2a_3x3, Conv2d_2b_3x3, Conv2d_3b_1x1, Conv2d_4a_3x3;
  InceptionA Mixed_5b, Mixed_5c, Mixed_5d;
  InceptionB Mixed_6a;
  InceptionC Mixed_6b, Mixed_6c, Mixed_6d, Mixed_6e;
  InceptionAux AuxLogits;
  InceptionD Mixed_7a;
  InceptionE Mixed_7b, Mixed_7c;
  layers::Linear fc;
};
TORCH_MODULE(Inception3);

ModelInfo inception3_info() {
  ModelInfo info = image_classifier_info<Inception3>(
      "inception3", {"inception_v3"}, 299, 32,
      "torchvision models.inception_v3 (aux_logits=True, transform_input=False)",
      [](int64_t classes) { return Inception3(classes); }, {0.4});
  info.min_training_batch = 2;
  info.min_training_batch_why =
      "the auxiliary classifier's batch norm in training needs two values a channel, and its "
      "feature map there is 1x1";
  return info;
}

const ModelRegistration kInception3{
    with_default_counts(inception3_info(), 27161264, 27161264, 11426432192)};

}  // namespace
}  // namespace gpubench::models
