// The bytes a run needs before its first activation, and when a run is refused for them.
#include "features/memory_plan.h"

#include <gtest/gtest.h>

#include "features/memory_terms.h"
#include "features/model_options.h"
#include "modeling/model_registry.h"
#include "run/resolve_benchmark.h"

namespace gpubench {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

struct Planned {
  ResolvedBenchmark benchmark;
  MemoryPlan plan;
};

Planned plan_for(const std::string& model, Tuning tuning, Precision precision, DeviceKind device,
                 bool checkpointing = false) {
  BenchmarkRequest request;
  request.model = model;
  request.tuning = tuning;
  request.precision = precision;
  request.device = device;
  request.activation_checkpointing = checkpointing;
  MachineFacts machine;
  machine.cuda_available = true;
  machine.cuda_device_count = 1;
  machine.cpu_cores = 2;
  Planned planned;
  planned.benchmark = resolve(request, machine);
  const ModelInfo& info = ModelRegistry::instance().get(model);
  const ModelOptions options = model_options_for(planned.benchmark);
  planned.plan = plan_memory(measure_model(info, options), planned.benchmark, info, options);
  return planned;
}

TEST(MemoryPlan, WeightsGradientsAndAdamWStateByRecipe) {
  // Full fine-tune: float32 weights, gradients and two moments, 16 bytes per parameter.
  const Planned full = plan_for("llama-3-8b", Tuning::kFull, Precision::kBf16, DeviceKind::kCuda);
  const int64_t params = 8030261248;
  EXPECT_EQ(full.plan.weights, 4 * params);
  EXPECT_EQ(full.plan.gradients, 4 * params);
  EXPECT_EQ(full.plan.optimizer_state, 8 * params);
  // LoRA in bf16: the frozen base in 2 bytes, the 13.6M adapter parameters in float32.
  const Planned lora = plan_for("llama-3-8b", Tuning::kLora, Precision::kBf16, DeviceKind::kCuda);
  const int64_t adapters = 13631488;
  EXPECT_EQ(lora.plan.weights, 2 * params + 4 * adapters);
  EXPECT_EQ(lora.plan.gradients, 4 * adapters);
  EXPECT_EQ(lora.plan.optimizer_state, 8 * adapters);
  EXPECT_EQ(lora.plan.host_build, lora.plan.weights);
  // In fp32 the base stays float32.
  const Planned lora32 = plan_for("llama-3-8b", Tuning::kLora, Precision::kFp32, DeviceKind::kCpu);
  EXPECT_EQ(lora32.plan.weights, 4 * (params + adapters));
  // SGD keeps one momentum buffer.
  const Planned resnet = plan_for("resnet50", Tuning::kFull, Precision::kFp32, DeviceKind::kCpu);
  EXPECT_EQ(resnet.plan.optimizer_state, 4 * 25557032);
  EXPECT_EQ(resnet.plan.activations, 0);  // not estimated for convnets
}

// --shard over 8 ranks: each holds an eighth of the weights, gradients and states (the units it
// gathers are left out), after building the whole model.
TEST(MemoryPlan, AShardedRankHoldsItsShareOfTheState) {
  const Planned whole = plan_for("llama-3-8b", Tuning::kFull, Precision::kBf16, DeviceKind::kCuda);
  Planned sharded = whole;
  sharded.benchmark.gpus = 8;
  sharded.benchmark.shard = "full";
  const ModelInfo& info = ModelRegistry::instance().get("llama-3-8b");
  const ModelOptions options = model_options_for(sharded.benchmark);
  const MemoryPlan plan =
      plan_memory(measure_model(info, options), sharded.benchmark, info, options);
  EXPECT_EQ(plan.weights, whole.plan.weights / 8);
  EXPECT_EQ(plan.gradients, whole.plan.gradients / 8);
  EXPECT_EQ(plan.optimizer_state, whole.plan.optimizer_state / 8);
  EXPECT_EQ(plan.host_build, whole.plan.weights);
}

TEST(MemoryPlan, ActivationsAreEstimatedAndCheckpointingCutsThem) {
  const Planned plain = plan_for("llama-3-8b", Tuning::kLora, Precision::kBf16, DeviceKind::kCpu);
  const Planned checkpointed =
      plan_for("llama-3-8b", Tuning::kLora, Precision::kBf16, DeviceKind::kCpu, true);
  // s b h (34 + 5 a s / h) bytes per block, 32 blocks, plus logits b s V (2 + 8) bytes.
  const double sbh = 2048.0 * 4096;
  const double expected = 32 * sbh * (34 + 5 * 32 * 2048.0 / 4096) + 2048.0 * 128256 * 10;
  EXPECT_NEAR(static_cast<double>(plain.plan.activations), expected, 1);
  EXPECT_LT(checkpointed.plan.activations, plain.plan.activations / 5);
}

TEST(MemoryPlan, WhatDoesNotFitAndWhatIsLeftToTheRun) {
  const Planned full = plan_for("llama-3-8b", Tuning::kFull, Precision::kBf16, DeviceKind::kCuda);
  EXPECT_EQ(memory_shortfall(full.plan, full.benchmark, 256 * kGiB, 80 * kGiB),
            "out of memory before the run: llama-3-8b (full, bf16) needs 119.7 GiB for weights "
            "(29.9 GiB), gradients (29.9 GiB) and optimiser state (59.8 GiB) before any "
            "activation, and the GPU has 80.0 GiB");
  // On a GPU the activation estimate does not refuse a run (running out there is recorded).
  const Planned lora = plan_for("llama-3-8b", Tuning::kLora, Precision::kBf16, DeviceKind::kCuda);
  EXPECT_EQ(memory_shortfall(lora.plan, lora.benchmark, 256 * kGiB, 16 * kGiB), "");
  EXPECT_NE(memory_shortfall(lora.plan, lora.benchmark, 256 * kGiB, 15 * kGiB), "");
  EXPECT_NE(memory_shortfall(lora.plan, lora.benchmark, 12 * kGiB, 80 * kGiB)
                .find("is built on the host, 15.0 GiB of weights, and the host has 12.0 GiB"),
            std::string::npos);
}

}  // namespace
}  // namespace gpubench
