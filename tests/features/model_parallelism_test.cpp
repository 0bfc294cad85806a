// The model parallelisms' plug-ins (features/parallelism/model_parallelism.h): each is found by
// its setting and asked by its ranks, and what the run asks of it (its rule, its layers, fit's
// lone rank, its memory share, its result keys) is that parallelism's. That the split ranks
// compute what one rank does is the TensorParallel proofs'; that their results carry these keys,
// the CLI tests'.
#include "features/parallelism/model_parallelism.h"

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/errors.h"
#include "features/memory_terms.h"
#include "features/model_options.h"
#include "features/parallelism/split_layers.h"
#include "infer/inference_model.h"
#include "run/resolve_benchmark.h"
#include "settings/benchmark_fields.h"
#include "test_helpers.h"

namespace gpubench {
namespace {

using parallelism::ModelParallelism;

// Two ranks that never communicate: enough to build layers over.
class TwoSilentRanks : public LayerCollectives {
 public:
  int rank() const override { return 0; }
  int size() const override { return 2; }
  void allreduce_sum(torch::Tensor&) override {}
  void allreduce_max(torch::Tensor&) override {}
  torch::Tensor allgather_last_dim(const torch::Tensor& tensor) override { return tensor; }
  torch::Tensor all_to_all(const torch::Tensor& rows, const std::vector<int64_t>&,
                           const std::vector<int64_t>&) override {
    return rows;
  }
};

ResolvedBenchmark asking(const std::string& model, int tensor_parallel, int expert_parallel) {
  ResolvedBenchmark benchmark;
  benchmark.model = model;
  benchmark.gpus = 2;
  benchmark.tensor_parallel = tensor_parallel;
  benchmark.expert_parallel = expert_parallel;
  return benchmark;
}

TEST(ModelParallelism, EachIsASettingFoundByItsKeyAndAskedByItsRanks) {
  std::set<std::string> settings;
  for (const ModelParallelism* kind : parallelism::model_parallelisms()) {
    EXPECT_NE(find_benchmark_field(kind->setting()), nullptr) << kind->setting();
    EXPECT_TRUE(settings.insert(kind->setting()).second) << kind->setting();
    EXPECT_EQ(&parallelism::model_parallelism(kind->setting()), kind);
  }
  EXPECT_EQ(settings, (std::set<std::string>{"tensor_parallel", "expert_parallel"}));
  EXPECT_THROW(parallelism::model_parallelism("pipeline_parallel"), std::logic_error);

  const auto& tensor = parallelism::model_parallelism("tensor_parallel");
  const auto& expert = parallelism::model_parallelism("expert_parallel");
  EXPECT_EQ(parallelism::asked_model_parallelism(asking("test-tp-llama", 1, 1)), nullptr);
  EXPECT_EQ(parallelism::asked_model_parallelism(asking("test-tp-llama", 2, 1)), &tensor);
  EXPECT_EQ(parallelism::asked_model_parallelism(asking("test-tiny-gpt-oss", 1, 2)), &expert);
  EXPECT_EQ(tensor.ranks(asking("test-tp-llama", 2, 1)), 2);
  EXPECT_EQ(expert.ranks(asking("test-tp-llama", 2, 1)), 1);
}

TEST(ModelParallelism, ResolveRunsEveryPlugInsRule) {
  const ModelInfo& resnet = ModelRegistry::instance().get("resnet50");
  const BenchmarkRequest request;
  const MachineFacts machine;
  const ResolveInputs inputs{request, resnet, machine};
  for (const auto& [tensor, expert, refusal] : std::vector<std::tuple<int, int, std::string>>{
           {2, 1, "tensor_parallel 2: resnet50 does not shard"},
           {1, 2, "expert_parallel 2: resnet50 has no experts"}}) {
    ResolvedBenchmark benchmark = asking("resnet50", tensor, expert);
    EXPECT_NE(testing::usage_error_of([&] {
                parallelism::resolve_model_parallelism(inputs, benchmark);
              }).find(refusal),
              std::string::npos)
        << refusal;
  }
  ResolvedBenchmark neither = asking("resnet50", 1, 1);
  EXPECT_NO_THROW(parallelism::resolve_model_parallelism(inputs, neither));
}

TEST(ModelParallelism, EachPlacesItsOwnLayersOverItsGroup) {
  TwoSilentRanks ranks;
  const parallelism::SplitLayers tensor(&parallelism::model_parallelism("tensor_parallel"), &ranks);
  ASSERT_NE(tensor.placement().tensor_parallel, nullptr);
  EXPECT_EQ(tensor.placement().tensor_parallel->size(), 2);
  EXPECT_EQ(tensor.placement().expert_parallel, nullptr);
  const parallelism::SplitLayers expert(&parallelism::model_parallelism("expert_parallel"), &ranks);
  EXPECT_EQ(expert.placement().tensor_parallel, nullptr);
  ASSERT_NE(expert.placement().expert_parallel, nullptr);
  EXPECT_EQ(expert.placement().expert_parallel->size(), 2);
  const parallelism::SplitLayers whole(nullptr, &ranks);
  EXPECT_EQ(whole.placement().tensor_parallel, nullptr);
  EXPECT_EQ(whole.placement().expert_parallel, nullptr);
}

// fit's lone rank: tensor parallelism's slice of the layers, expert parallelism's share of the
// experts; and the slice the fit's method names.
TEST(ModelParallelism, FitProbesOneRankAsItsParallelismPlacesIt) {
  const ResolvedBenchmark tensor = asking("test-tp-llama", 2, 1);
  const ModelOptions sliced = probed_model_options(tensor);
  ASSERT_NE(sliced.placement.tensor_parallel, nullptr);
  EXPECT_EQ(sliced.placement.tensor_parallel->size(), 2);
  EXPECT_EQ(sliced.placement.expert_parallel, nullptr);
  EXPECT_EQ(sliced.experts, 0);

  const ResolvedBenchmark expert = asking("test-tiny-gpt-oss", 1, 2);
  const ModelInfo& gpt_oss = ModelRegistry::instance().get("test-tiny-gpt-oss");
  const ModelOptions shared = probed_model_options(expert);
  EXPECT_EQ(shared.placement.tensor_parallel, nullptr);
  EXPECT_EQ(shared.experts, gpt_oss.capabilities.experts / 2);
  EXPECT_EQ(parallelism::model_parallelism("expert_parallel").probed_slice(expert, gpt_oss),
            ", one expert-parallel rank's " + std::to_string(gpt_oss.capabilities.experts / 2) +
                " of " + std::to_string(gpt_oss.capabilities.experts) +
                " experts a layer, routed as many tokens as its own (the exchanges' buffers left "
                "out)");
  EXPECT_EQ(probed_model_options(asking("test-tp-llama", 1, 1)).placement.tensor_parallel, nullptr);
}

// Resolved on a machine with 8 GPUs, as a GPU node would: full fine-tune, AdamW.
ResolvedBenchmark resolved_on_eight_gpus(const std::string& model, int tensor_parallel,
                                         int expert_parallel, Task task = Task::kTrain) {
  BenchmarkRequest request;
  request.model = model;
  request.task = task;
  request.device = DeviceKind::kCuda;
  request.precision = Precision::kBf16;
  request.gpus = 8;
  request.batch_size = 1;
  request.tensor_parallel = tensor_parallel;
  request.expert_parallel = expert_parallel;
  MachineFacts machine;
  machine.cuda_available = true;
  machine.cuda_device_count = 8;
  machine.cpu_cores = 2;
  return resolve(request, machine);
}

MemoryPlan planned(const ResolvedBenchmark& benchmark) {
  const ModelInfo& info = ModelRegistry::instance().get(benchmark.model);
  const ModelOptions options = model_options_for(benchmark);
  return plan_memory(info.count(options), benchmark, info, options);
}

// A tensor-parallel rank holds a slice of every weight; an expert-parallel one its share of the
// experts (gpt-oss-20b over 8 ranks: 4 of each layer's 32) and every other weight whole, in
// float32 with its gradient and AdamW's two moments.
TEST(ModelParallelism, ARankPlansTheShareItHolds) {
  const MemoryPlan whole = planned(resolved_on_eight_gpus("llama-3-8b", 1, 1));
  const MemoryPlan sliced = planned(resolved_on_eight_gpus("llama-3-8b", 8, 1));
  EXPECT_EQ(sliced.weights, whole.weights / 8);
  EXPECT_EQ(sliced.optimizer_state, whole.optimizer_state / 8);

  const ResolvedBenchmark experts = resolved_on_eight_gpus("gpt-oss-20b", 1, 8);
  const ModelInfo& gpt_oss = ModelRegistry::instance().get("gpt-oss-20b");
  ModelOptions four = model_options_for(experts);
  four.experts = 4;
  const ModelStats held = gpt_oss.count(four);
  const MemoryPlan shared = planned(experts);
  EXPECT_EQ(shared.weights, 4 * held.params);
  EXPECT_EQ(shared.gradients, 4 * held.trainable_params);
  EXPECT_EQ(shared.optimizer_state, 8 * held.trainable_params);
  EXPECT_EQ(shared.host_build, shared.weights);
  // About a fifth of the whole model's 21 billion parameters: 1.8 billion outside the experts.
  const MemoryPlan all = planned(resolved_on_eight_gpus("gpt-oss-20b", 1, 1));
  EXPECT_LT(shared.weights, all.weights / 4);
  // A fit's probe model names its experts (8: twice a rank's): its plan is its own.
  ModelOptions eight = model_options_for(experts);
  eight.experts = 8;
  const ModelStats probed = gpt_oss.count(eight);
  EXPECT_EQ(plan_memory(probed, experts, gpt_oss, eight).weights, 4 * probed.params);
}

// infer's planned weights, one rank's: Llama 3 8B's slice over 8 tensor-parallel ranks, and
// gpt-oss-120b's 16 of 128 experts a layer in MXFP4 over 8 expert-parallel ranks, every other
// weight whole in bf16 (11.9 GB of its 65.2). Each rank used to plan the whole model, so that
// Llama 3.1 70B over 8 tensor-parallel ranks planned 141 GB and was refused on an 80 GB GPU.
TEST(ModelParallelism, InferPlansOneRanksWeights) {
  const auto planned_weights = [](const ResolvedBenchmark& b) {
    const ModelInfo& info = ModelRegistry::instance().get(b.model);
    return parallelism::rank_bytes(b, info, model_options_for(b), [&](const ModelOptions& o) {
      return planned_weight_bytes(info, o, b);
    });
  };
  const ResolvedBenchmark dense = resolved_on_eight_gpus("llama-3-8b", 1, 1, Task::kInfer);
  const ResolvedBenchmark sliced = resolved_on_eight_gpus("llama-3-8b", 8, 1, Task::kInfer);
  EXPECT_EQ(planned_weights(dense), 2 * int64_t{8030261248});
  EXPECT_EQ(planned_weights(sliced), planned_weights(dense) / 8);

  const ResolvedBenchmark experts = resolved_on_eight_gpus("gpt-oss-120b", 1, 8, Task::kInfer);
  ASSERT_EQ(experts.weights, "mxfp4");
  const ModelInfo& gpt_oss = ModelRegistry::instance().get("gpt-oss-120b");
  ModelOptions sixteen = model_options_for(experts);
  sixteen.experts = 16;
  EXPECT_EQ(planned_weights(experts), planned_weight_bytes(gpt_oss, sixteen, experts));
  EXPECT_LT(planned_weights(experts),
            planned_weights(resolved_on_eight_gpus("gpt-oss-120b", 1, 1, Task::kInfer)) / 4);
}

TEST(ModelParallelism, ItsWaitGoesUnderItsKeys) {
  const parallelism::GroupWait wait{1.5, 2.5, 7};
  DistributedInfo tensor, expert;
  parallelism::model_parallelism("tensor_parallel").record_wait(wait, tensor);
  parallelism::model_parallelism("expert_parallel").record_wait(wait, expert);
  EXPECT_EQ(tensor.tensor_parallel_exposed_ms, 1.5);
  EXPECT_EQ(tensor.tensor_parallel_prefill_exposed_ms, 2.5);
  EXPECT_EQ(tensor.tensor_parallel_collectives, 7);
  EXPECT_EQ(tensor.expert_parallel_collectives, 0);
  EXPECT_EQ(expert.expert_parallel_exposed_ms, 1.5);
  EXPECT_EQ(expert.expert_parallel_prefill_exposed_ms, 2.5);
  EXPECT_EQ(expert.expert_parallel_collectives, 7);
  EXPECT_EQ(expert.tensor_parallel_collectives, 0);
}

}  // namespace
}  // namespace gpubench
