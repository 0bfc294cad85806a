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

// Per layer: 7 GEMMs (4 once stacked, below) and attention's 2 batched products; RMSNorm twice
// (where LibTorch has its fused operator, 2.11: it and the weight's product; without it, Hugging
// Face's 8 operators); the rotary embedding of q and k joined (5); the cache's 2 writes; the scale,
// the mask and the softmax; 2 residual sums; SiLU and its product. 48 before the rotary tables were
// cast once a step, rotate_half's negation moved into them, q and k rotated together, and the
// softmax computed in the scores' dtype. q, k and v are one product, and gate and up another
// (modeling/shared_input_products.h): 4 GEMMs a layer, 3 fewer. With gpubench's own CUDA kernels
// (kernels/fused_operators.h) each RMSNorm is one launch with its weight, the first residual sum
// goes into the second norm, SiLU and its product are one, and so are the rotary embedding of q
// and k and the cache's two writes: 14.
TEST(DecodeStep, LaunchesAtMostItsBudgetPerLayer) {
  const testing::RecordedOperators one = decode_step(1), two = decode_step(2);
  const bool fused_norm = two.called.count("aten::_fused_rms_norm") > 0;
  const bool own_kernels = kernels::has_cuda_kernels();
  const int budget = own_kernels ? 14 : fused_norm ? 24 : 36;
  LayerLaunches layer = layer_launches(one, two);
  std::cout << "decode step: " << layer.total << " launches a layer (fused RMSNorm: " << fused_norm
            << ", own CUDA kernels: " << own_kernels << "), "
            << 2 * one.launches.size() - two.launches.size() << " outside the layers\n";
  EXPECT_LE(layer.total, budget) << layer.listing;
  // The census sees the step: its GEMMs, and no float32 copy of the scores.
  EXPECT_EQ(layer.by_name["aten::mm in aten::matmul"] + layer.by_name["aten::mm in aten::linear"] +
                layer.by_name["aten::addmm in aten::linear"],
            4)
      << layer.listing;
  EXPECT_EQ(layer.by_name["aten::_softmax in aten::softmax"], 1) << layer.listing;
  EXPECT_EQ(layer.by_name["aten::neg"], 0) << layer.listing;
}

// Integer weights change the products' kernels, not their number: each product is one int4
// matmul (the CPU's or CUDA's tinygemm), with no cast or copy of its input or output; q, k and v
// held as one stack, and gate and up another.
TEST(DecodeStep, Int4WeightsLaunchOneKernelPerProduct) {
  if (!compat::kHasIntWeights) {
    GTEST_SKIP() << "LibTorch " << compat::libtorch_version() << " has no int4 kernels";
  }
  layers::WeightFormatOptions groups_of_32;
  groups_of_32.group = 32;
  const auto int4 = layers::make_weight_format("int4", groups_of_32);
  const LayerLaunches bf16 = layer_launches(decode_step(1), decode_step(2));
  const LayerLaunches quantized = layer_launches(decode_step(1, int4), decode_step(2, int4));
  int int4_products = 0;
  for (const auto& [name, count] : quantized.by_name) {
    if (name.find("int4pack_mm") != std::string::npos) int4_products += count;
  }
  EXPECT_EQ(int4_products, 4) << quantized.listing;
  EXPECT_EQ(quantized.total, bf16.total) << quantized.listing;
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
