// What a model declares in its registration is what resolve, the precision policy and graph
// mode's rules read. A model registered from this file alone, with a set of capabilities no zoo
// model has (images through linear layers only, so FP8-eligible; no graph capture; weights held
// in fp32, bf16 or fp8 but not fp16), trains and infers with no other file touched.
#include <gtest/gtest.h>

#include <tuple>

#include "common/errors.h"
#include "cpu_benchmark.h"
#include "features/graph_mode/graph_mode.h"
#include "modeling/image_classifier.h"
#include "modeling/layers.h"
#include "run/run_benchmark.h"

namespace gpubench {
namespace {

class LinearImageNetImpl : public torch::nn::Module {
 public:
  explicit LinearImageNetImpl(int64_t classes)
      : hidden_(register_module("hidden", layers::Linear(3 * 8 * 8, 32))),
        out_(register_module("out", layers::Linear(32, classes))) {}

  ClassifierOutput forward(torch::Tensor images) {
    return {out_(torch::relu(hidden_(images.flatten(1)))), {}};
  }

 private:
  layers::Linear hidden_;
  layers::Linear out_;
};
TORCH_MODULE(LinearImageNet);

ModelInfo linear_image_net_info() {
  ModelInfo info = image_classifier_info<LinearImageNet>(
      "test-capabilities-linear-images", {}, 8, 4,
      "a test model from a test file: two linear layers over 8x8 images",
      [](int64_t classes) { return LinearImageNet(classes); });
  info.hidden = true;
  ModelCapabilities& can = info.capabilities;
  can.graph_training = false;
  can.graph_inference = false;
  can.products_in_linear_layers = true;
  can.weight_formats = {"fp32", "bf16", "fp8"};
  return info;
}

const ModelRegistration kLinearImageNet{linear_image_net_info()};
constexpr const char* kCapabilityModel = "test-capabilities-linear-images";

// The same network declared for inference only: train is refused from its declaration.
ModelInfo inference_only_info() {
  ModelInfo info = linear_image_net_info();
  info.name = "test-capabilities-inference-only";
  info.capabilities.trains = false;
  return info;
}

const ModelRegistration kInferenceOnly{inference_only_info()};

auto capability_set(const ModelCapabilities& can) {
  return std::make_tuple(can.input, can.trains, can.infers, can.generates, can.graph_training,
                         can.graph_inference, can.activation_checkpointing, can.products_in_linear_layers,
                         can.lora_roles, can.blocks, can.weight_formats);
}

std::string capability_refusal(const BenchmarkRequest& request, const MachineFacts& machine) {
  try {
    resolve(request, machine);
  } catch (const UsageError& error) {
    return error.what();
  }
  return "";
}

MachineFacts capability_gpu() {
  MachineFacts machine;
  machine.cuda_available = true;
  machine.cuda_device_count = 1;
  machine.cuda_compute_capability = 90;
  machine.cpu_cores = 2;
  return machine;
}

TEST(ModelCapabilities, TheTestModelsSetIsNoZooModels) {
  const ModelInfo& test_model = ModelRegistry::instance().get(kCapabilityModel);
  ASSERT_FALSE(ModelRegistry::instance().all().empty());
  for (const ModelInfo* zoo : ModelRegistry::instance().all()) {
    EXPECT_NE(capability_set(zoo->capabilities), capability_set(test_model.capabilities))
        << zoo->name;
  }
}

TEST(ModelCapabilities, ResolveReadsWhatTheModelDeclares) {
  BenchmarkRequest request;
  request.model = kCapabilityModel;
  request.mode = Mode::kGraph;
  EXPECT_NE(capability_refusal(request, capability_gpu())
                .find("graph mode cannot capture " + std::string(kCapabilityModel) +
                      "'s training step: the model declares no graph-mode support"),
            std::string::npos);
  request.mode = Mode::kEager;
  request.task = Task::kInfer;
  request.precision = Precision::kFp16;
  EXPECT_EQ(capability_refusal(request, capability_gpu()),
            "infer with precision 'fp16' holds " + std::string(kCapabilityModel) +
                "'s weights in fp16, which it does not declare; it holds fp32, bf16, fp8");
  request.precision = Precision::kBf16;
  EXPECT_EQ(resolve(request, capability_gpu()).precision, Precision::kBf16);
  // FP8 is refused by the machine's LibTorch or not at all: never for the model's layers.
  request.precision = Precision::kFp8;
  EXPECT_EQ(capability_refusal(request, capability_gpu()).find("declares no FP8-eligible layers"),
            std::string::npos);
  request.tuning = Tuning::kLora;
  request.precision = Precision::kFp32;
  request.task = Task::kTrain;
  EXPECT_NE(capability_refusal(request, capability_gpu())
                .find("'" + std::string(kCapabilityModel) + "' trains in full only"),
            std::string::npos);
}

TEST(ModelCapabilities, ATaskTheModelDoesNotDeclareIsRefused) {
  BenchmarkRequest request;
  request.model = "test-capabilities-inference-only";
  const std::string refused = capability_refusal(request, capability_gpu());
  EXPECT_EQ(refused.rfind("'test-capabilities-inference-only' has no training path in gpubench; "
                          "train runs ",
                          0),
            0u)
      << refused;
  request.task = Task::kInfer;
  EXPECT_EQ(resolve(request, capability_gpu()).task, Task::kInfer);
}

TEST(ModelCapabilities, ATestFilesModelTrainsAndInfers) {
  ResolvedBenchmark benchmark = testing::cpu_benchmark(kCapabilityModel, 4);
  const Result trained = run_benchmark(benchmark);
  ASSERT_EQ(trained.status, RunStatus::kOk) << trained.error;
  EXPECT_GT(trained.metrics.throughput, 0);
  EXPECT_EQ(trained.params, (3 * 8 * 8 * 32 + 32) + (32 * 1000 + 1000));
  benchmark.task = Task::kInfer;
  const Result inferred = run_benchmark(benchmark);
  ASSERT_EQ(inferred.status, RunStatus::kOk) << inferred.error;
  EXPECT_GT(inferred.metrics.throughput, 0);
  EXPECT_EQ(inferred.metrics.throughput_unit, "images/sec");
  EXPECT_TRUE(inferred.metrics.inference.present);
}

}  // namespace
}  // namespace gpubench
