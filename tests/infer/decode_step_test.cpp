// Llama's decode step as a CUDA graph replays it (next_token_logits_at: one token, the static
// cache), counted on the CPU: what it would launch on a GPU, a layer at a time
// (tests/recorded_operators.h). At batch 1 a decoded token reads every weight once, and every
// launch costs a few microseconds on top; 48 launches a layer were about 1,500 a token in
// Llama 3.1 8B, the size of the gap between its decode on the H200 (7.4 ms a token) and the
// bandwidth's floor (2.9 ms). The two rewrites whose values could differ (RMSNorm, softmax) are
// checked bit for bit against Hugging Face's arithmetic.
#include <gtest/gtest.h>

#include <iostream>
#include <map>
#include <optional>

#include "kernels/fused_operators.h"
#include "modeling/linear_compute.h"
#include "modeling/rms_norm.h"
#include "modeling/shared_input_products.h"
#include "models/llama.h"
#include "recorded_operators.h"
#include "torch_support/compat.h"

namespace gpubench {
namespace {

models::LlamaConfig tiny_config(int64_t layers) {
  models::LlamaConfig config;
  config.vocab_size = 64;
  config.hidden_size = 64;
  config.intermediate_size = 128;
  config.num_layers = layers;
  config.num_heads = 4;
  config.num_kv_heads = 2;
  config.max_positions = 64;
  return config;
}

// One static decode step of a bf16 model with `layers` layers (its products in `format` where
// given), after an 8-token prompt and the warm-up step that a capture makes.
testing::RecordedOperators decode_step(
    int64_t layers, std::shared_ptr<const layers::WeightFormat> format = nullptr) {
  torch::manual_seed(0);
  ModelOptions options;
  options.seq_len = 8;
  models::LlamaModel model(tiny_config(layers), options);
  model.cast_for_inference(torch::kBFloat16);
  layers::fuse_shared_input_products(model.module());
  if (format) layers::quantize_linear_layers(model.module(), *format);
  model.module().eval();
  const c10::InferenceMode inference_mode;
  KvCache cache = model.allocate_cache(1, 16, torch::kCPU, torch::kBFloat16);
  model.next_token_logits(torch::randint(64, {1, 8}, torch::kLong), cache);
  const torch::Tensor token = torch::randint(64, {1, 1}, torch::kLong);
  const torch::Tensor position = torch::full({1}, cache.length, torch::kLong);
  model.next_token_logits_at(token, position, cache);
  return testing::record_operators([&] { model.next_token_logits_at(token, position, cache); });
}

// What one layer launches: a two-layer step's launches less a one-layer step's, by name.
struct LayerLaunches {
  std::map<std::string, int> by_name;
  int total = 0;
  std::string listing;  // for a failure's message
};
LayerLaunches layer_launches(const testing::RecordedOperators& one,
                             const testing::RecordedOperators& two) {
  LayerLaunches layer;
  for (const auto& name : two.launches) ++layer.by_name[name];
  for (const auto& name : one.launches) --layer.by_name[name];
  for (const auto& [name, count] : layer.by_name) {
    layer.total += count;
    layer.listing += "\n  " + std::to_string(count) + " " + name;
  }
  return layer;
}

// Per layer: 4 GEMMs (q, k and v one stacked product, gate and up another:
// modeling/shared_input_products.h), two RMSNorms, each after a residual sum (the layer's output
// sum is left to the next layer's first norm, or the model's last), the rotary embedding of q and
// k with the cache's writes, attention over the cache, and SiLU with its product. With gpubench's
// own CUDA kernels (kernels/fused_operators.h) each sum and its norm are one launch, so are the
// rotary embedding and the cache writes, and SiLU and its product; attention is two (the cache's
// splits, and their join): 10. Without them, the compositions: each norm Hugging Face's 8
// operators and its sum (LibTorch 2.x's fused RMSNorm: 2 and its sum), the rotary embedding 5
// and the writes 2, attention 7 (its two batched products, the scale, the mask from the position
// (2) and its fill, the softmax), SiLU 2: 38, or 26 with the fused norm. 48 launches a layer
// before any of this; 27 before the own kernels.
TEST(DecodeStep, LaunchesAtMostItsBudgetPerLayer) {
  const testing::RecordedOperators one = decode_step(1), two = decode_step(2);
  const bool fused_norm = two.called.count("aten::_fused_rms_norm") > 0;
  const bool own_kernels = kernels::has_cuda_kernels();
  const int budget = own_kernels ? 10 : fused_norm ? 26 : 38;
  LayerLaunches layer = layer_launches(one, two);
  std::cout << "decode step: " << layer.total << " launches a layer (fused RMSNorm: " << fused_norm
            << ", own CUDA kernels: " << own_kernels << "), "
            << 2 * one.launches.size() - two.launches.size() << " outside the layers\n";
  EXPECT_LE(layer.total, budget) << layer.listing;
  // The census sees the step: its GEMMs, and attention as one operator.
  EXPECT_EQ(layer.by_name["aten::mm in aten::matmul"] + layer.by_name["aten::mm in aten::linear"] +
                layer.by_name["aten::addmm in aten::linear"],
            4)
      << layer.listing;
  if (own_kernels) {
    EXPECT_EQ(layer.by_name["gpubench::decode_attention"], 2) << layer.listing;
  } else {
    EXPECT_EQ(layer.by_name["aten::_softmax in gpubench::decode_attention"], 1) << layer.listing;
  }
  EXPECT_EQ(layer.by_name["aten::add"], 0) << layer.listing;
}

// Every weight format changes the products' kernels, not their number: each product is one
// kernel of the format's (int4's tinygemm, int8's weight-only matmul, FP8's weight-only product
// of the codes, tensorwise or rowwise), with no cast or copy of its input or output, and no
// quantisation of the activations; q, k and v held as one stack, and gate and up another.
TEST(DecodeStep, EveryWeightFormatLaunchesWhatBf16Launches) {
  const LayerLaunches bf16 = layer_launches(decode_step(1), decode_step(2));
  struct Format {
    std::string name, fp8_recipe, product;
  };
  std::vector<Format> formats;
  if (compat::kHasIntWeights) {
    formats.push_back({"int4", "", "int4pack_mm"});
    formats.push_back({"int8", "", "int8"});  // _weight_int8pack_mm, or gpubench's operator
  }
  if (compat::kHasFp8 && compat::scaled_mm_runs_on_cpu()) {
    formats.push_back({"fp8", "tensorwise", "fp8_weight_linear"});
    formats.push_back({"fp8", "rowwise", "fp8_weight_linear"});
  }
  if (formats.empty()) GTEST_SKIP() << "LibTorch " << compat::libtorch_version() << " has neither";
  for (const Format& format : formats) {
    layers::WeightFormatOptions options;
    options.group = 32;
    if (!format.fp8_recipe.empty()) options.fp8_recipe = format.fp8_recipe;
    const auto held = layers::make_weight_format(format.name, options);
    const LayerLaunches quantized = layer_launches(decode_step(1, held), decode_step(2, held));
    int products = 0;
    for (const auto& [launch, count] : quantized.by_name) {
      if (launch.find(format.product) != std::string::npos) products += count;
    }
    const std::string where = format.name + " " + format.fp8_recipe + ":" + quantized.listing;
    if (kernels::has_cuda_kernels() || format.name != "fp8") {
      EXPECT_EQ(products, 4) << where;
      EXPECT_EQ(quantized.total, bf16.total) << where;
    } else {
      // The composition: the codes cast to float32, the product, the scale, the rounding.
      EXPECT_GT(quantized.total, bf16.total) << where;
    }
  }
}

// An FP8 cache is converted for attention at every decode step where the composition runs (the
// CPU, a build without the kernels); gpubench's CUDA decode attention reads it as stored.
TEST(DecodeStep, AnFp8CacheIsConvertedOnlyWhereTheCompositionRuns) {
  if (!compat::kHasFp8) GTEST_SKIP() << "LibTorch " << compat::libtorch_version() << " has no FP8";
  ModelOptions options;
  models::LlamaConfig heads_of_64 = tiny_config(1);
  heads_of_64.hidden_size = 256;  // 4 heads of 64, as Llama 3.2 1B's
  models::LlamaModel model(heads_of_64, options);
  const auto fp8 = compat::float8_e4m3();
  const torch::Device cuda(torch::kCUDA, 0);
  EXPECT_TRUE(model.decode_converts_cache(torch::kCPU, fp8, torch::kBFloat16));
  EXPECT_FALSE(model.decode_converts_cache(torch::kCPU, torch::kBFloat16, torch::kBFloat16));
  EXPECT_EQ(model.decode_converts_cache(cuda, fp8, torch::kBFloat16), !kernels::has_cuda_kernels());
  // Heads of 16 (tiny_config's): the kernel does not take them, the composition runs.
  EXPECT_TRUE(models::LlamaModel(tiny_config(1), options)
                  .decode_converts_cache(cuda, fp8, torch::kBFloat16));
}

// LibTorch's bf16 softmax kernels (CUDA's and the CPU's) compute in float32 and round once on the
// way out, as softmax(dtype=float32).to(bf16) does in two kernels. (fp16 runs on CUDA only, where
// the same kernel template serves both dtypes; the CPU has no fp16 softmax in 1.13.)
TEST(DecodeStep, SoftmaxInTheScoresDtypeIsTheFloat32OneRounded) {
  torch::manual_seed(0);
  for (const int64_t positions : {7, 16, 33, 512, 1000}) {
    const torch::Tensor future = torch::rand({positions}) > 0.7;
    future[0] = false;
    const torch::Tensor scores = (4 * torch::randn({3, 4, 2, positions}))
                                     .to(torch::kBFloat16)
                                     .masked_fill(future, -INFINITY);
    EXPECT_TRUE(torch::equal(torch::softmax(scores, -1),
                             torch::softmax(scores, -1, torch::kFloat).to(torch::kBFloat16)))
        << "over " << positions << " positions";
  }
}

// compat::rms_norm (at::rms_norm where LibTorch has it) gives Hugging Face's values bit for bit:
// LlamaRMSNorm's weight after the rounding, Olmo2RMSNorm's (gpt-oss) before it.
TEST(DecodeStep, RmsNormIsHuggingFacesArithmetic) {
  torch::manual_seed(0);
  const double eps = 1e-5;
  for (const auto dtype : {torch::kBFloat16, torch::kHalf, torch::kFloat}) {
    const torch::Tensor x = (3 * torch::randn({4, 7, 2880})).to(dtype);
    const torch::Tensor x32 = x.to(torch::kFloat);
    const torch::Tensor normed = x32 * torch::rsqrt(x32.pow(2).mean(-1, true) + eps);
    for (const auto scale : {layers::RmsScale::kInInputDtype, layers::RmsScale::kInFloat32}) {
      layers::RmsNorm norm(2880, eps, scale);
      {
        torch::NoGradGuard no_grad;
        norm->weight.copy_(1 + 0.1 * torch::randn({2880}));
      }
      norm->to(dtype);
      const torch::Tensor w = norm->weight.detach();
      const torch::Tensor expected =
          scale == layers::RmsScale::kInInputDtype ? w * normed.to(dtype) : (w * normed).to(dtype);
      const torch::Tensor got = norm(x).detach();
      EXPECT_EQ(got.scalar_type(), dtype);
      EXPECT_TRUE(torch::equal(got, expected))
          << dtype << ", weight " << (scale == layers::RmsScale::kInFloat32 ? "before" : "after")
          << " the rounding: " << (got.to(torch::kFloat) - expected.to(torch::kFloat)).abs().max();
    }
  }
}

}  // namespace
}  // namespace gpubench
