// Every registered image model against its reference implementation.
#include <gtest/gtest.h>

#include <algorithm>

#include "common/errors.h"
#include "modeling/model_registry.h"

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
  // The training check's image side: 64 where the network allows it (ResNet and VGG end in a
  // pool to a fixed size, GoogLeNet's auxiliary heads too); Inception V4's stem needs about 150;
  // Inception V3's auxiliary head needs its 17x17 map, so the full 299.
  int64_t training_image_size;
};

std::ostream& operator<<(std::ostream& out, const Reference& reference) {
  return out << reference.name;
}

const Reference kReferences[] = {
    {"resnet50", 25557032, 4.09, 224, 0, 64},     {"resnet101", 44549160, 7.80, 224, 0, 64},
    {"resnet152", 60192808, 11.51, 224, 0, 64},   {"vgg16", 138357544, 15.47, 224, 0, 64},
    {"googlenet", 13004888, 1.50, 224, 2, 64},    {"inception3", 27161264, 5.71, 299, 1, 299},
    {"inception4", 42679816, 12.28, 299, 0, 150},
};

class ModelReference : public ::testing::TestWithParam<Reference> {};

bool is_auxiliary(const std::string& parameter_name) {
  return parameter_name.rfind("aux", 0) == 0 || parameter_name.rfind("AuxLogits", 0) == 0;
}

// One build of each model (VGG16 alone draws 138 million weights) for its three checks.
TEST_P(ModelReference, CountsTrainingAndEvaluationMatchTheReference) {
  const Reference& reference = GetParam();
  const ModelInfo& info = ModelRegistry::instance().get(reference.name);
  EXPECT_EQ(info.input_shape,
            (std::vector<int64_t>{3, reference.image_size, reference.image_size}));
  torch::manual_seed(0);
  auto model = info.instantiate();

  // The parameter count is exact; FLOPs within 0.3 % of the published figure (inception4:
  // 12.254 counted, timm's card 12.28).
  const ModelStats stats = measure_instance(*model);
  EXPECT_EQ(stats.params, reference.params);
  const double gmacs = static_cast<double>(stats.forward_flops) / 2e9;
  EXPECT_NEAR(gmacs / reference.gmacs, 1.0, 0.003) << gmacs << " GMACs";

  // Training: forward and backward reach every parameter, auxiliary heads included, with
  // finite gradients. Batch 2: batch norm needs more than one value per channel. Images of
  // training_image_size: which parameters a pass reaches does not depend on it.
  model->module().train();
  SyntheticBatch batch = model->synthetic_batch(2, torch::kCPU, false);
  EXPECT_EQ(batch.inputs.sizes(),
            (std::vector<int64_t>{2, 3, reference.image_size, reference.image_size}));
  const int64_t side = reference.training_image_size;
  batch.inputs = torch::randn({2, 3, side, side});
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
    if (is_auxiliary(item.key())) {
      ++aux_parameters;
      EXPECT_GT(grad.abs().sum().item<float>(), 0.0f) << item.key() << " gets no gradient";
    }
  }
  EXPECT_EQ(aux_parameters > 0, reference.aux_heads > 0);

  // Evaluation leaves the auxiliary heads out: they get no gradient, everything else does.
  for (auto& parameter : model->module().parameters()) parameter.mutable_grad() = torch::Tensor();
  model->module().eval();
  SyntheticBatch one = model->synthetic_batch(1, torch::kCPU, false);
  one.inputs = torch::randn({1, 3, side, side});
  const torch::Tensor eval_loss = model->training_loss(one);
  EXPECT_TRUE(std::isfinite(eval_loss.item<float>()));
  eval_loss.backward();
  for (const auto& item : model->module().named_parameters()) {
    EXPECT_EQ(item.value().grad().defined(), !is_auxiliary(item.key())) << item.key();
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
}

// Every listed model, whatever their number: every convnet has a reference row above, and every
// model declares what it can do consistently.
TEST(ModelRegistry, EveryListedModelIsCheckedAndDeclaresConsistentCapabilities) {
  for (const ModelInfo* info : ModelRegistry::instance().all()) {
    const ModelCapabilities& can = info->capabilities;
    if (can.input == SyntheticInput::kImages) {
      const bool referenced = std::any_of(std::begin(kReferences), std::end(kReferences),
                                          [&](const Reference& r) { return info->name == r.name; });
      EXPECT_TRUE(referenced) << info->name << " has no reference row";
    }
    EXPECT_TRUE(can.trains || can.infers) << info->name;
    EXPECT_TRUE(!can.generates || can.infers) << info->name << " generates without inferring";
    EXPECT_TRUE(!can.graph_inference || can.infers) << info->name;
    EXPECT_EQ(can.input == SyntheticInput::kTokenSequences, info->default_seq_len > 0)
        << info->name;
    EXPECT_EQ(can.input == SyntheticInput::kTokenSegments, info->default_tgt_len > 0) << info->name;
    // Detection models are checked against their references in their own tests (ssd300_test).
    EXPECT_EQ(can.input == SyntheticInput::kDetectionImages, info->default_objects_per_image > 0)
        << info->name;
    EXPECT_GE(info->min_training_batch, 1) << info->name;
    EXPECT_EQ(info->min_training_batch > 1, !info->min_training_batch_why.empty()) << info->name;
    EXPECT_TRUE(can.lora_roles.empty() || can.input != SyntheticInput::kImages) << info->name;
    for (const auto& [role, limit] : can.lora_rank_limits) {
      EXPECT_NE(std::find(can.lora_roles.begin(), can.lora_roles.end(), role), can.lora_roles.end())
          << info->name << ": a rank limit for '" << role << "', no such role";
      EXPECT_GT(limit, 0) << info->name;
    }
    // Weight formats are infer's: fp32 always, fp8 where the linear layers run in FP8.
    if (can.infers) {
      EXPECT_TRUE(can.holds_weights_in("fp32")) << info->name;
      EXPECT_EQ(can.holds_weights_in("fp8"), can.products_in_linear_layers) << info->name;
    } else {
      EXPECT_TRUE(can.weight_formats.empty()) << info->name;
    }
    EXPECT_FALSE(info->throughput_unit(Task::kTrain).empty()) << info->name;
  }
}

TEST(ModelRegistry, UnknownNameListsTheKnownOnes) {
  try {
    ModelRegistry::instance().get("resnet5");
    FAIL();
  } catch (const UsageError& error) {
    EXPECT_EQ(std::string(error.what()),
              "unknown model 'resnet5'; did you mean 'resnet50'? known: " +
                  join(ModelRegistry::instance().names()));
  }
}

// What `models` lists without building a model (ModelInfo::default_counts) is what an instance of
// it counts; every listed model is counted by a rule or declares its counts, so that `models`
// answers in a second.
TEST(ModelRegistry, DeclaredCountsAreWhatAnInstanceCounts) {
  for (const ModelInfo* info : ModelRegistry::instance().all()) {
    EXPECT_TRUE(info->count || info->default_counts) << info->name << " is built to be listed";
    if (info->count || !info->default_counts) continue;
    ModelInfo undeclared = *info;
    undeclared.default_counts.reset();
    const ModelStats counted = measure_model(undeclared);
    const ModelStats& declared = *info->default_counts;
    EXPECT_EQ(declared.params, counted.params) << info->name;
    EXPECT_EQ(declared.trainable_params, counted.trainable_params) << info->name;
    // Mask R-CNN's detections in evaluation keep the boxes whose scores pass a threshold, and
    // another CPU's kernels round those scores otherwise: within 1 %, exact here.
    const auto near = [](int64_t a, int64_t b) {
      return std::abs(static_cast<double>(a - b)) <= 0.01 * static_cast<double>(std::max(a, b));
    };
    EXPECT_TRUE(near(declared.forward_flops, counted.forward_flops))
        << info->name << ": declared " << declared.forward_flops << ", counted "
        << counted.forward_flops;
    EXPECT_TRUE(near(declared.frozen_weight_flops, counted.frozen_weight_flops))
        << info->name << ": declared " << declared.frozen_weight_flops << ", counted "
        << counted.frozen_weight_flops;
    EXPECT_EQ(declared.active_params, counted.active_params) << info->name;
    EXPECT_EQ(declared.nf4_params, counted.nf4_params) << info->name;
    EXPECT_EQ(declared.expert_weight_params, counted.expert_weight_params) << info->name;
  }
}

}  // namespace
}  // namespace gpubench
