// QLoRA's NF4 base (features/weights/nf4_weights.h, docs/fine-tuning.md#qlora): the round trip
// within its bound, the packing, the product's input gradient, a tiny Llama that learns its batch
// over an NF4 base, and the base's bytes as counted, planned and measured.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "cpu_benchmark.h"
#include "features/memory_terms.h"
#include "features/model_options.h"
#include "features/precision/precision_policy.h"
#include "features/tuning/qlora.h"
#include "features/weights/nf4_weights.h"
#include "modeling/adapted_linear.h"
#include "modeling/model_registry.h"
#include "results/result.h"
#include "run/run_benchmark.h"
#include "train/training_step.h"

namespace gpubench {
namespace nf4_tests {
namespace {

TEST(Nf4, EveryWeightComesBackWithinHalfTheWidestGapOfItsBlocksAbsmax) {
  torch::manual_seed(7);
  const torch::Tensor weight = torch::randn({96, 128}) * 0.02;
  weight[5][17] = 0.4;  // an outlier: its block's scale, not the others'
  const nf4::Nf4Weight held = nf4::quantize(weight);
  EXPECT_EQ(held.packed.numel(), 96 * 128 / 2);
  EXPECT_EQ(held.absmax.numel(), 96 * 128 / 64);
  EXPECT_EQ(held.bytes(), 96 * 128 / 2 + 96 * 128 / 64 * 4);  // 0.5625 bytes a weight
  const torch::Tensor back = nf4::dequantize(held, torch::kFloat);
  const torch::Tensor error = (back - weight).abs().reshape({-1, nf4::kBlock});
  const torch::Tensor bound = held.absmax.unsqueeze(1) * nf4::largest_rounding() + 1e-7;
  EXPECT_TRUE((error <= bound).all().item<bool>())
      << "worst " << (error / held.absmax.unsqueeze(1)).max().item<double>() << " of absmax";
  EXPECT_NEAR(nf4::largest_rounding(), (1.0 - 0.6961928009986877) / 2, 1e-7);
  // The mean error is far under the bound on normal weights (their quantiles are the codes).
  EXPECT_LT((error / held.absmax.unsqueeze(1)).mean().item<double>(), 0.05);
}

TEST(Nf4, TheCodesComeBackExactlyTwoAByteTheFirstHigh) {
  // One block of the 16 codes in order, four times: scaled by 2.
  const torch::Tensor codes = torch::from_blob(const_cast<float*>(nf4::codebook()), {16}).clone();
  const torch::Tensor weight = (codes * 2).repeat({4}).reshape({1, 64});
  const nf4::Nf4Weight held = nf4::quantize(weight);
  EXPECT_FLOAT_EQ(held.absmax.item<float>(), 2.0f);
  EXPECT_EQ(held.packed[0].item<uint8_t>(), 0x01);  // codes 0 and 1
  EXPECT_EQ(held.packed[7].item<uint8_t>(), 0xEF);  // codes 14 and 15
  EXPECT_TRUE(torch::equal(nf4::dequantize(held, torch::kFloat), weight));
  EXPECT_TRUE(
      torch::equal(nf4::quantize(nf4::dequantize(held, torch::kFloat)).packed, held.packed));
  EXPECT_FALSE(nf4::why_not(96).empty());
  EXPECT_TRUE(nf4::why_not(128).empty());
}

TEST(Nf4, TheProductAndItsInputGradientAreThoseOfTheDequantisedWeight) {
  torch::manual_seed(8);
  const nf4::Nf4Weight held = nf4::quantize(torch::randn({48, 64}));
  const torch::Tensor weight = nf4::dequantize(held, torch::kFloat);
  const torch::Tensor x = torch::randn({3, 5, 64}, torch::requires_grad());
  const torch::Tensor y = nf4::linear(x, held);
  const torch::Tensor reference_x = x.detach().clone().requires_grad_();
  const torch::Tensor reference = torch::matmul(reference_x, weight.t());
  EXPECT_TRUE(torch::allclose(y, reference, 1e-5, 1e-5));
  const torch::Tensor upstream = torch::randn_like(reference);
  y.backward(upstream);
  reference.backward(upstream);
  EXPECT_TRUE(torch::allclose(x.grad(), reference_x.grad(), 1e-5, 1e-5));
  EXPECT_FALSE(held.packed.requires_grad());
}

ModelOptions qlora_options() {
  ModelOptions options;
  options.seq_len = 16;
  options.tuning = Tuning::kQlora;
  options.lora.rank = 8;
  options.lora.alpha = 16;
  options.lora.targets = {"q", "k", "v", "o"};
  return options;
}

// Ten steps on one fixed batch over an NF4 base: the loss falls, only the adapters train, and
// the base is half a byte a weight and an absmax a block.
TEST(Nf4, ATinyLlamaLearnsItsBatchOverAnNf4Base) {
  torch::manual_seed(3);
  const ModelInfo& info = ModelRegistry::instance().get("test-tiny-llama");
  const ModelOptions options = qlora_options();
  auto model = info.instantiate(options);
  EXPECT_EQ(tuning::quantize_bases_nf4(model->module()), 2 * 7);  // 7 projections, 2 blocks
  int64_t nf4_bytes = 0;
  for (const auto& buffer : model->module().named_buffers()) {
    if (buffer.key().find("weight_nf4") != std::string::npos ||
        buffer.key().find("weight_absmax") != std::string::npos) {
      nf4_bytes += buffer.value().nbytes();
    }
  }
  const int64_t nf4_params = info.count(options).nf4_params;
  EXPECT_EQ(nf4_bytes, nf4_params / 2 + nf4_params / 64 * 4);
  const SyntheticBatch batch = model->synthetic_batch(4, torch::kCPU, false);
  OptimizerSettings settings = optimizer_settings_for("adamw", 4);
  settings.learning_rate = 1e-2;
  TrainingStep step(*model, PrecisionPolicy(Precision::kFp32, torch::kCPU), settings);
  std::vector<double> losses;
  for (int i = 0; i < 10; ++i) losses.push_back(step.run(batch).item<double>());
  EXPECT_LT(losses.back(), losses.front() - 0.05) << losses.front() << " -> " << losses.back();
  for (const auto& parameter : model->module().named_parameters()) {
    EXPECT_EQ(parameter.value().requires_grad(), parameter.key().find("lora_") != std::string::npos)
        << parameter.key();
  }
}

// A run's counted weights are what the plan says: the NF4 base, the rest of the frozen model in
// bf16, the adapters in float32.
TEST(Nf4, ARunHoldsTheWeightsItsPlanCounts) {
  const ResolvedBenchmark b =
      testing::cpu_benchmark("test-tiny-llama", 2, Tuning::kQlora, Precision::kBf16);
  const ModelInfo& info = ModelRegistry::instance().get(b.model);
  const ModelOptions options = model_options_for(b);
  const ModelStats stats = info.count(options);
  const MemoryPlan plan = plan_memory(stats, b, info, options);
  const Result run = run_benchmark(b);
  ASSERT_EQ(run.status, RunStatus::kOk) << run.error;
  EXPECT_EQ(run.metrics.memory.breakdown.weights, plan.weights);
  EXPECT_EQ(plan.weights, 4 * stats.trainable_params + stats.nf4_params / 2 +
                              stats.nf4_params / 64 * 4 +
                              2 * (stats.params - stats.trainable_params - stats.nf4_params));
  EXPECT_GT(run.metrics.final_loss, 0);
}

}  // namespace
}  // namespace nf4_tests
}  // namespace gpubench
