// Inception V4 as timm's inception_v4 builds it (Szegedy et al. 2016): 299x299, 1000 classes,
// no auxiliary classifier, timm's module names (features.N..., last_linear).
#include <torch/torch.h>

#include "modeling/basic_conv.h"
#include "modeling/image_classifier.h"
#include "modeling/layers.h"

namespace gpubench::models {
namespace {

using torch::nn::Sequential;

torch::nn::AvgPool2d avg_pool_3x3() {
  return torch::nn::AvgPool2d(
      torch::nn::AvgPool2dOptions(3).stride(1).padding(1).count_include_pad(false));
}
torch::nn::MaxPool2d max_pool_3x3_s2() {
  return torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(3).stride(2));
}

// One parallel branch of a block: a registered module and how to run it.
struct Branch {
  std::string name;
  std::shared_ptr<torch::nn::Module> module;
  std::function<torch::Tensor(const torch::Tensor&)> forward;
};

template <typename Holder>
Branch branch(std::string name, Holder holder) {
  return {std::move(name), holder.ptr(),
          [holder](const torch::Tensor& x) mutable { return holder->forward(x); }};
}

// Runs every branch on the input and concatenates them along channels.
class BranchesImpl : public torch::nn::Module {
 public:
  explicit BranchesImpl(std::vector<Branch> branches) : branches_(std::move(branches)) {
    for (const Branch& b : branches_) register_module(b.name, b.module);
  }
  torch::Tensor forward(const torch::Tensor& x) {
    std::vector<torch::Tensor> outputs;
    for (const Branch& b : branches_) outputs.push_back(b.forward(x));
    return torch::cat(outputs, 1);
  }

 private:
  std::vector<Branch> branches_;
};
TORCH_MODULE(Branches);

Branches branches(std::vector<Branch> list) {
  return Branches(std::make_shared<BranchesImpl>(std::move(list)));
}

Branches mixed_3a() {
  return branches({branch("maxpool", max_pool_3x3_s2()), branch("conv", basic_conv(64, 96, 3, 2))});
}

Branches mixed_4a() {
  return branches(
      {branch("branch0", Sequential(basic_conv(160, 64, 1), basic_conv(64, 96, 3))),
       branch("branch1",
              Sequential(basic_conv(160, 64, 1), basic_conv(64, 64, {1, 7}, 1, {0, 3}),
                         basic_conv(64, 64, {7, 1}, 1, {3, 0}), basic_conv(64, 96, 3)))});
}

Branches mixed_5a() {
  return branches(
      {branch("conv", basic_conv(192, 192, 3, 2)), branch("maxpool", max_pool_3x3_s2())});
}

Branches inception_a() {
  return branches(
      {branch("branch0", basic_conv(384, 96, 1)),
       branch("branch1", Sequential(basic_conv(384, 64, 1), basic_conv(64, 96, 3, 1, 1))),
       branch("branch2", Sequential(basic_conv(384, 64, 1), basic_conv(64, 96, 3, 1, 1),
                                    basic_conv(96, 96, 3, 1, 1))),
       branch("branch3", Sequential(avg_pool_3x3(), basic_conv(384, 96, 1)))});
}

Branches reduction_a() {
  return branches(
      {branch("branch0", basic_conv(384, 384, 3, 2)),
       branch("branch1", Sequential(basic_conv(384, 192, 1), basic_conv(192, 224, 3, 1, 1),
                                    basic_conv(224, 256, 3, 2))),
       branch("branch2", max_pool_3x3_s2())});
}

Branches inception_b() {
  return branches({branch("branch0", basic_conv(1024, 384, 1)),
                   branch("branch1", Sequential(basic_conv(1024, 192, 1),
                                                basic_conv(192, 224, {1, 7}, 1, {0, 3}),
                                                basic_conv(224, 256, {7, 1}, 1, {3, 0}))),
                   branch("branch2", Sequential(basic_conv(1024, 192, 1),
                                                basic_conv(192, 192, {7, 1}, 1, {3, 0}),
                                                basic_conv(192, 224, {1, 7}, 1, {0, 3}),
                                                basic_conv(224, 224, {7, 1}, 1, {3, 0}),
                                                basic_conv(224, 256, {1, 7}, 1, {0, 3}))),
                   branch("branch3", Sequential(avg_pool_3x3(), basic_conv(1024, 128, 1)))});
}

Branches reduction_b() {
  return branches(
      {branch("branch0", Sequential(basic_conv(1024, 192, 1), basic_conv(192, 192, 3, 2))),
       branch("branch1",
              Sequential(basic_conv(1024, 256, 1), basic_conv(256, 256, {1, 7}, 1, {0, 3}),
                         basic_conv(256, 320, {7, 1}, 1, {3, 0}), basic_conv(320, 320, 3, 2))),
       branch("branch2", max_pool_3x3_s2())});
}

// The one block whose branches fork twice, so it is written out.
class InceptionV4CImpl : public torch::nn::Module {
 public:
  InceptionV4CImpl()
      : GPUBENCH_CONV(branch0, 1536, 256, 1),
        GPUBENCH_CONV(branch1_0, 1536, 384, 1),
        GPUBENCH_CONV(branch1_1a, 384, 256, {1, 3}, 1, {0, 1}),
        GPUBENCH_CONV(branch1_1b, 384, 256, {3, 1}, 1, {1, 0}),
        GPUBENCH_CONV(branch2_0, 1536, 384, 1),
        GPUBENCH_CONV(branch2_1, 384, 448, {3, 1}, 1, {1, 0}),
        GPUBENCH_CONV(branch2_2, 448, 512, {1, 3}, 1, {0, 1}),
        GPUBENCH_CONV(branch2_3a, 512, 256, {1, 3}, 1, {0, 1}),
        GPUBENCH_CONV(branch2_3b, 512, 256, {3, 1}, 1, {1, 0}),
        branch3(register_module("branch3", Sequential(avg_pool_3x3(), basic_conv(1536, 256, 1)))) {}

  torch::Tensor forward(const torch::Tensor& x) {
    torch::Tensor b1 = branch1_0(x);
    torch::Tensor b2 = branch2_2(branch2_1(branch2_0(x)));
    return torch::cat({branch0(x), branch1_1a(b1), branch1_1b(b1), branch2_3a(b2), branch2_3b(b2),
                       branch3->forward(x)},
                      1);
  }

  BasicConv2d branch0, branch1_0, branch1_1a, branch1_1b, branch2_0, branch2_1, branch2_2,
      branch2_3a, branch2_3b;
  Sequential branch3;
};
TORCH_MODULE(InceptionV4C);

class InceptionV4Impl : public torch::nn::Module {
 public:
  explicit InceptionV4Impl(int64_t classes) {
    features->push_back(basic_conv(3, 32, 3, 2));
    features->push_back(basic_conv(32, 32, 3));
    features->push_back(basic_conv(32, 64, 3, 1, 1));
    features->push_back(mixed_3a());
    features->push_back(mixed_4a());
    features->push_back(mixed_5a());
    for (int i = 0; i < 4; ++i) features->push_back(inception_a());
    features->push_back(reduction_a());
    for (int i = 0; i < 7; ++i) features->push_back(inception_b());
    features->push_back(reduction_b());
    for (int i = 0; i < 3; ++i) features->push_back(InceptionV4C());
    register_module("features", features);
    last_linear = register_module("last_linear", layers::Linear(1536, classes));
  }

  ClassifierOutput forward(const torch::Tensor& x) {
    torch::Tensor out = torch::adaptive_avg_pool2d(features->forward(x), {1, 1}).flatten(1);
    return {last_linear(out), {}};
  }

  Sequential features;
  layers::Linear last_linear{nullptr};
};
TORCH_MODULE(InceptionV4);

const ModelRegistration kInception4{with_default_counts(
    image_classifier_info<InceptionV4>("inception4", {"inception_v4"}, 299, 32, "timm inception_v4",
                                       [](int64_t classes) { return InceptionV4(classes); }),
    42679816, 42679816, 24507949248)};

}  // namespace
}  // namespace gpubench::models
