// gpubench infer in process: greedy generation with the key/value cache against recomputing the
// whole sequence, the cache never reallocated, request timing on a fake clock, a whole run's
// figures.
#include <gtest/gtest.h>

#include "cpu_benchmark.h"
#include "infer/greedy_generation.h"
#include "infer/request_timing.h"
#include "modeling/model_registry.h"
#include "models/llama.h"
#include "run/run_benchmark.h"
#include "torch_support/compat.h"

namespace gpubench {
namespace {

using testing::cpu_benchmark;

std::unique_ptr<TrainableModel> tiny_llama() {
  torch::manual_seed(7);
  ModelOptions options;
  options.seq_len = 32;
  auto model = ModelRegistry::instance().get("test-tiny-llama").instantiate(options);
  model->module().eval();
  return model;
}

TEST(GreedyGeneration, WithTheCacheGivesTheTokensOfRecomputingEverySequence) {
  const auto model = tiny_llama();
  TextGenerator& generator = *model->text_generator();
  const c10::InferenceMode inference_mode;
  const torch::Tensor prompt = torch::randint(generator.vocab_size(), {3, 9}, torch::kLong);
  KvCache cache = generator.allocate_cache(3, 9 + 12, torch::kCPU, torch::kFloat);
  const Generation cached = generate_greedy(generator, cache, prompt, 12, torch::kCPU);
  const torch::Tensor recomputed = generate_greedy_without_cache(generator, prompt, 12);
  ASSERT_EQ(cached.tokens.sizes(), recomputed.sizes());
  EXPECT_TRUE(torch::equal(cached.tokens, recomputed)) << cached.tokens << "\n" << recomputed;
  // Not a constant sequence: the test would pass for a model that ignores its input.
  EXPECT_NE(cached.tokens.min().item<int64_t>(), cached.tokens.max().item<int64_t>());
  EXPECT_EQ(cached.decode_step_ms.size(), 11u);
  EXPECT_EQ(cache.length, 9 + 11);  // the last token is generated, never fed back
}

// Graph mode's decode step (shapes independent of the position, run eagerly here) gives the
// tokens of the step at the cache's length.
TEST(GreedyGeneration, TheStaticDecodeStepGivesTheSameTokens) {
  const auto model = tiny_llama();
  TextGenerator& generator = *model->text_generator();
  const c10::InferenceMode inference_mode;
  const torch::Tensor prompt = torch::randint(generator.vocab_size(), {2, 7}, torch::kLong);
  KvCache cache = generator.allocate_cache(2, 7 + 10, torch::kCPU, torch::kFloat);
  const Generation dynamic = generate_greedy(generator, cache, prompt, 10, torch::kCPU);
  StaticDecode decode(generator, cache, 2, torch::kCPU, /*capture=*/false);
  const Generation fixed = generate_greedy(generator, cache, prompt, 10, torch::kCPU, &decode);
  EXPECT_TRUE(torch::equal(dynamic.tokens, fixed.tokens)) << dynamic.tokens << "\n" << fixed.tokens;
  EXPECT_FALSE(fixed.cache_reallocated);
  EXPECT_EQ(cache.length, 7 + 9);
  // Capturing needs CUDA.
  EXPECT_THROW(StaticDecode(generator, cache, 2, torch::kCPU, /*capture=*/true),
               std::runtime_error);
}

// An FP8 cache (--kv-cache fp8) through the same static step: index_copy has no Float8 kernel,
// on the CPU or on CUDA, so the step writes the cache's bytes; the tokens are the dynamic
// step's, which writes the same FP8 values with copy_.
TEST(GreedyGeneration, TheStaticDecodeStepWritesAnFp8Cache) {
  if (!compat::kHasFp8) GTEST_SKIP() << "LibTorch " << compat::libtorch_version() << " has no FP8";
  const auto model = tiny_llama();
  TextGenerator& generator = *model->text_generator();
  const c10::InferenceMode inference_mode;
  const torch::Tensor prompt = torch::randint(generator.vocab_size(), {2, 7}, torch::kLong);
  KvCache cache = generator.allocate_cache(2, 7 + 10, torch::kCPU, compat::float8_e4m3());
  const Generation dynamic = generate_greedy(generator, cache, prompt, 10, torch::kCPU);
  StaticDecode decode(generator, cache, 2, torch::kCPU, /*capture=*/false);
  const Generation fixed = generate_greedy(generator, cache, prompt, 10, torch::kCPU, &decode);
  EXPECT_TRUE(torch::equal(dynamic.tokens, fixed.tokens)) << dynamic.tokens << "\n" << fixed.tokens;
  EXPECT_EQ(cache.keys.front().scalar_type(), compat::float8_e4m3());
}

TEST(GreedyGeneration, TheCacheIsAllocatedOnceAndWrittenInPlace) {
  const auto model = tiny_llama();
  TextGenerator& generator = *model->text_generator();
  const c10::InferenceMode inference_mode;
  KvCache cache = generator.allocate_cache(2, 24, torch::kCPU, torch::kFloat);
  std::vector<const void*> before;
  for (const auto& t : cache.keys) before.push_back(t.data_ptr());
  const torch::Tensor prompt = torch::randint(generator.vocab_size(), {2, 8}, torch::kLong);
  const Generation first = generate_greedy(generator, cache, prompt, 16, torch::kCPU);
  const Generation second = generate_greedy(generator, cache, prompt, 16, torch::kCPU);
  EXPECT_FALSE(first.cache_reallocated);
  EXPECT_FALSE(second.cache_reallocated);
  for (size_t i = 0; i < cache.keys.size(); ++i) EXPECT_EQ(cache.keys[i].data_ptr(), before[i]);
  // The same prompt from an emptied cache gives the same tokens.
  EXPECT_TRUE(torch::equal(first.tokens, second.tokens));
  // Layers x (keys, values) x batch x kv heads x positions x head dim, float32.
  EXPECT_EQ(cache.bytes(), 2 * 2 * 2 * 2 * 24 * 8 * 4);
  EXPECT_EQ(cache.bytes_per_token(), 2 * 2 * 2 * 8 * 4);
  // A cache too short for the generation is an error, not a reallocation.
  KvCache short_cache = generator.allocate_cache(2, 10, torch::kCPU, torch::kFloat);
  EXPECT_THROW(generate_greedy(generator, short_cache, prompt, 16, torch::kCPU), std::exception);
}

// Each request its own synchronised window.
class ScriptedTimer : public StepTimer {
 public:
  explicit ScriptedTimer(std::vector<double> seconds) : seconds_(std::move(seconds)) {}
  void start_window() override { ++windows; }
  void mark_step() override { ++marks; }
  WindowTiming stop_window() override { return {seconds_.at(next_++), {}}; }
  double elapsed_seconds() const override { return 0; }
  int windows = 0, marks = 0;

 private:
  std::vector<double> seconds_;
  size_t next_ = 0;
};

// The rotary frequencies stay float32 through the cast to half precision: rounded to bf16, the
// angle at position 600 is off by about a radian and the generated tokens are wrong.
TEST(LlamaRotary, ABf16ModelsTablesAreTheFloat32OnesUpToItsLastPosition) {
  models::LlamaConfig config;
  config.vocab_size = 64;
  config.hidden_size = 256;  // head_dim 64, as every real Llama
  config.intermediate_size = 64;
  config.num_layers = 1;
  config.num_heads = 4;
  config.num_kv_heads = 2;
  config.rope_theta = 500000;  // Llama 3's
  config.max_positions = 8192;
  ModelOptions options;
  options.seq_len = 8;
  models::LlamaModel float32(config, options), bf16(config, options);
  bf16.cast_for_inference(torch::kBFloat16);
  const int64_t n = config.max_positions;
  const std::vector<torch::Tensor> wide = float32.rotary_tables(0, n);
  const std::vector<torch::Tensor> cast = bf16.rotary_tables(0, n);
  // The same float32 arithmetic on the same float32 frequencies.
  ASSERT_EQ(cast[0].scalar_type(), torch::kFloat);
  EXPECT_TRUE(torch::equal(cast[0], wide[0]));
  EXPECT_TRUE(torch::equal(cast[1], wide[1]));
  // Against float64: float32's angle at position 8191 is within 8191 x 2^-24 rad (5e-4); the
  // layers then round cos and sin to bf16 (2^-9 relative, 2^-8 absolute at most).
  const int64_t d = config.head_dim();
  const torch::Tensor inv_freq =
      1.0 / torch::pow(config.rope_theta, torch::arange(0, d, 2, torch::kDouble) / double(d));
  const torch::Tensor half = torch::outer(torch::arange(0, n, torch::kDouble), inv_freq);
  const torch::Tensor angles = torch::cat({half, half}, -1);
  for (const auto& [table, exact] :
       {std::pair{cast[0], angles.cos()}, std::pair{cast[1], angles.sin()}}) {
    EXPECT_LE((table.to(torch::kDouble) - exact).abs().max().item<double>(), 1e-3);
    const torch::Tensor rounded = table.to(torch::kBFloat16).to(torch::kDouble);
    EXPECT_LE((rounded - exact).abs().max().item<double>(), 1e-3 + 1.0 / 256);
  }
}

TEST(RequestTiming, EveryRequestIsItsOwnWindow) {
  ScriptedTimer timer({0.010, 0.012, 0.5});
  int requests = 0;
  const std::vector<double> ms = time_requests(timer, 3, [&] { ++requests; });
  EXPECT_EQ(requests, 3);
  EXPECT_EQ(timer.windows, 3);
  EXPECT_EQ(timer.marks, 3);
  ASSERT_EQ(ms.size(), 3u);
  EXPECT_DOUBLE_EQ(ms[0], 10);
  EXPECT_DOUBLE_EQ(ms[2], 500);
}

TEST(InferenceRun, ForwardPassesGiveThroughputAndLatency) {
  ResolvedBenchmark b = cpu_benchmark("test-tiny-cnn", 4);
  b.task = Task::kInfer;
  b.steps = 3;
  b.repeat = 2;
  const Result r = run_benchmark(b);
  ASSERT_EQ(r.status, RunStatus::kOk) << r.error;
  EXPECT_GT(r.metrics.throughput, 0);
  EXPECT_EQ(r.metrics.throughput_unit, "images/sec");
  EXPECT_EQ(r.metrics.trials.size(), 2u);
  const InferenceMetrics& m = r.metrics.inference;
  ASSERT_TRUE(m.present);
  EXPECT_EQ(m.request_latency_ms.count, 6);
  EXPECT_GT(m.request_latency_ms.p50, 0);
  EXPECT_LE(m.request_latency_ms.p50, m.request_latency_ms.p99);
  EXPECT_LE(m.request_latency_ms.p99, m.request_latency_ms.max);
  EXPECT_EQ(m.kv_cache_bytes, 0);
  EXPECT_EQ(r.metrics.memory.basis, kMemoryMeasured);
  EXPECT_GT(r.metrics.memory.breakdown.weights, 0);
  EXPECT_EQ(r.metrics.memory.breakdown.gradients, 0);  // no autograd in inference mode
  EXPECT_TRUE(r.optimizer.empty());
}

TEST(InferenceRun, GenerationGivesPrefillDecodeAndTheCache) {
  ResolvedBenchmark b = cpu_benchmark("test-tiny-llama", 2);
  b.task = Task::kInfer;
  b.seq_len = 0;
  b.prompt_len = 8;
  b.gen_len = 6;
  b.warmup_steps = 1;
  b.steps = 2;
  b.repeat = 2;
  const Result r = run_benchmark(b);
  ASSERT_EQ(r.status, RunStatus::kOk) << r.error;
  EXPECT_EQ(r.metrics.throughput_unit, "tokens/sec");
  const InferenceMetrics& m = r.metrics.inference;
  EXPECT_DOUBLE_EQ(r.metrics.throughput, m.decode_tokens_per_second);
  EXPECT_GT(m.prefill_tokens_per_second, 0);
  EXPECT_EQ(m.request_latency_ms.count, 4);  // steps x repeat generations
  EXPECT_EQ(m.time_to_first_token_ms.count, 4);
  EXPECT_EQ(m.time_per_output_token_ms.count, 4 * 5);  // gen_len - 1 decode steps each
  EXPECT_EQ(m.kv_cache_bytes, 2 * 2 * 2 * 2 * (8 + 6) * 8 * 4);
  EXPECT_EQ(m.kv_cache_bytes_per_token, 2 * 2 * 2 * 8 * 4);
  EXPECT_FALSE(m.kv_cache_reallocated);
  EXPECT_GE(r.metrics.memory.peak_bytes, r.metrics.memory.breakdown.weights + m.kv_cache_bytes);
}

}  // namespace
}  // namespace gpubench
