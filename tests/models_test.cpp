// Every registered image model against its reference implementation.
#include <gtest/gtest.h>

#include "common/errors.h"
#include "models/model_registry.h"

namespace gpubench {
namespace {

// params: sum(p.numel() for p in model.parameters()) of the reference built for training from
// scratch (auxiliary heads included where the reference has them):
//   torchvision.models.<name>(), i.e. googlenet(aux_logits=True), inception_v3(aux_logits=True);
//   timm.create_model("inception_v4").
// gmacs: the published multiply-adds of one image at the model's input size, auxiliary heads
// off: torchvision's model cards ("GFLOPS", which count multiply-adds) and timm's card
// ("GMACs 12.3" for inception_v4). gpubench reports FLOPs = 2 x multiply-adds.
struct Reference {
  const char* name;
  int64_t params;
  double gmacs;
  int64_t image_size;
  int aux_heads;
};

std::ostream& operator<<(std::ostream& out, const Reference& reference) {
  return out << reference.name;
}

const Reference kReferences[] = {
    {"resnet50", 25557032, 4.09, 224, 0},    {"resnet101", 44549160, 7.80, 224, 0},
    {"resnet152", 60192808, 11.51, 224, 0},  {"vgg16", 138357544, 15.47, 224, 0},
    {"googlenet", 13004888, 1.50, 224, 2},   {"inception3", 27161264, 5.71, 299, 1},
    {"inception4", 42679816, 12.28, 299, 0},
};

class ModelReference : public ::testing::TestWithParam<Reference> {};

TEST_P(ModelReference, ParameterCountIsExactAndFlopsMatchThePublishedFigure) {
  const Reference& reference = GetParam();
  const ModelInfo& info = ModelRegistry::instance().get(reference.name);
  EXPECT_EQ(info.input_shape,
            (std::vector<int64_t>{3, reference.image_size, reference.image_size}));
  const ModelStats stats = measure_model(info);
  EXPECT_EQ(stats.params, reference.params);
  // Within 0.3 % of the published figure (inception4: 12.254 counted, timm's card 12.28).
  const double gmacs = static_cast<double>(stats.forward_flops) / 2e9;
  EXPECT_NEAR(gmacs / reference.gmacs, 1.0, 0.003) << gmacs << " GMACs";
}

TEST_P(ModelReference, ForwardAndBackwardReachEveryParameterWithFiniteGradients) {
  const Reference& reference = GetParam();
  torch::manual_seed(0);
  auto model = ModelRegistry::instance().get(reference.name).instantiate();
  model->module().train();
  // Batch 2: batch norm needs more than one value per channel in training mode.
  const SyntheticBatch batch = model->synthetic_batch(2, torch::kCPU, false);
  EXPECT_EQ(batch.inputs.sizes(),
            (std::vector<int64_t>{2, 3, reference.image_size, reference.image_size}));
  const torch::Tensor loss = model->training_loss(batch);
  EXPECT_EQ(loss.dim(), 0);
  EXPECT_EQ(loss.scalar_type(), torch::kFloat);
  EXPECT_TRUE(std::isfinite(loss.item<float>()));
  loss.backward();
  int aux_parameters = 0;
  for (const auto& item : model->module().named_parameters()) {
    const torch::Tensor& grad = item.value().grad();
    ASSERT_TRUE(grad.defined()) << item.key() << " is not reached by the loss";
    EXPECT_TRUE(grad.isfinite().all().item<bool>()) << item.key();
    const bool aux = item.key().rfind("aux", 0) == 0 || item.key().rfind("AuxLogits", 0) == 0;
    if (aux) {
      ++aux_parameters;
      EXPECT_GT(grad.abs().sum().item<float>(), 0.0f) << item.key() << " gets no gradient";
    }
  }
  EXPECT_EQ(aux_parameters > 0, reference.aux_heads > 0);
}

TEST_P(ModelReference, EvaluationModeLeavesTheAuxiliaryHeadsOut) {
  const Reference& reference = GetParam();
  auto model = ModelRegistry::instance().get(reference.name).instantiate();
  model->module().eval();
  const SyntheticBatch batch = model->synthetic_batch(1, torch::kCPU, false);
  const torch::Tensor loss = model->training_loss(batch);
  EXPECT_TRUE(std::isfinite(loss.item<float>()));
  loss.backward();
  for (const auto& item : model->module().named_parameters()) {
    const bool aux = item.key().rfind("aux", 0) == 0 || item.key().rfind("AuxLogits", 0) == 0;
    EXPECT_EQ(item.value().grad().defined(), !aux) << item.key();
  }
}

INSTANTIATE_TEST_SUITE_P(Zoo, ModelReference, ::testing::ValuesIn(kReferences),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(ModelRegistry, TfCnnBenchmarksNamesAndAliases) {
  const auto& registry = ModelRegistry::instance();
  EXPECT_EQ(registry.get("inception_v3").name, "inception3");
  EXPECT_EQ(registry.get("inception_v4").name, "inception4");
  const std::vector<std::pair<std::string, int64_t>> default_batches = {
      {"resnet50", 64},   {"resnet101", 64}, {"resnet152", 32}, {"inception3", 32},
      {"inception4", 32}, {"vgg16", 64},     {"googlenet", 32}};
  for (const auto& [name, batch] : default_batches) {
    EXPECT_EQ(registry.get(name).default_batch_size, batch) << name;
  }
}

TEST(ModelRegistry, TestModelsAreFoundByNameButNeverListed) {
  const auto& registry = ModelRegistry::instance();
  EXPECT_TRUE(registry.get("test-tiny-cnn").hidden);
  EXPECT_TRUE(registry.get("test-tiny-transformerxl").hidden);
  EXPECT_TRUE(registry.get("test-tiny-llama").hidden);
  EXPECT_TRUE(registry.get("test-tiny-bert").hidden);
  for (const ModelInfo* info : registry.all()) {
    EXPECT_FALSE(info->hidden) << info->name;
    EXPECT_EQ(info->name.rfind("test-", 0), std::string::npos) << info->name;
  }
  // The seven convnets, two Transformer-XLs, BERT-large and three Llamas.
  EXPECT_EQ(registry.all().size(), 13u);
}

TEST(ModelRegistry, UnknownNameListsTheKnownOnes) {
  try {
    ModelRegistry::instance().get("resnet5");
    FAIL();
  } catch (const UsageError& error) {
    EXPECT_NE(
        std::string(error.what()).find("unknown model 'resnet5'; known: bert-large, googlenet"),
        std::string::npos)
        << error.what();
  }
}

}  // namespace
}  // namespace gpubench
