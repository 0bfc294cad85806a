#include <gtest/gtest.h>

#include "gpubench/model_registry.h"

namespace gpubench {
namespace {

// Parameter counts: sum(p.numel() for p in torchvision.models.<name>().parameters()).
// GFLOPS: torchvision's model cards (ResNet50_Weights.IMAGENET1K_V1 etc.), which count
// multiply-adds of one 224x224 image; gpubench counts FLOPs as 2 x multiply-adds.
struct Reference {
  const char* name;
  int64_t params;
  double torchvision_gmacs;
};

std::ostream& operator<<(std::ostream& out, const Reference& reference) {
  return out << reference.name;
}

class ResNetReference : public ::testing::TestWithParam<Reference> {};

TEST_P(ResNetReference, ParameterCountIsExactAndFlopsMatchTorchvision) {
  const Reference& reference = GetParam();
  const ModelStats stats = measure_model(ModelRegistry::instance().get(reference.name));
  EXPECT_EQ(stats.params, reference.params);
  const double gmacs = static_cast<double>(stats.forward_flops) / 2e9;
  EXPECT_NEAR(gmacs / reference.torchvision_gmacs, 1.0, 0.02) << gmacs;
}

INSTANTIATE_TEST_SUITE_P(Torchvision, ResNetReference,
                         ::testing::Values(Reference{"resnet50", 25557032, 4.09},
                                           Reference{"resnet101", 44549160, 7.80},
                                           Reference{"resnet152", 60192808, 11.51}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(ResNet, ForwardAndBackwardGiveLogitsAndFiniteGradients) {
  auto model = ModelRegistry::instance().get("resnet50").create();
  model->module().train();
  SyntheticBatch batch = model->synthetic_batch(2, torch::kCPU, false);
  EXPECT_EQ(batch.inputs.sizes(), (std::vector<int64_t>{2, 3, 224, 224}));
  torch::Tensor loss = model->training_loss(batch);
  EXPECT_EQ(loss.dim(), 0);
  EXPECT_EQ(loss.scalar_type(), torch::kFloat);
  loss.backward();
  for (const auto& item : model->module().named_parameters()) {
    ASSERT_TRUE(item.value().grad().defined()) << item.key();
    EXPECT_TRUE(item.value().grad().isfinite().all().item<bool>()) << item.key();
  }
}

TEST(ModelRegistry, UnknownNameListsTheKnownOnes) {
  try {
    ModelRegistry::instance().get("resnet5");
    FAIL();
  } catch (const std::exception& error) {
    EXPECT_NE(std::string(error.what()).find("unknown model 'resnet5'; known: "),
              std::string::npos);
    EXPECT_NE(std::string(error.what()).find("resnet50"), std::string::npos);
  }
}

}  // namespace
}  // namespace gpubench
