// gpt-oss (models/gpt_oss.cpp): the published configurations' counts, the counting rule against a
// built model, Hugging Face's logits at a tiny configuration, generation with the cache and the
// sliding window, and the experts in MXFP4 against bf16.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "features/parallelism/tensor_parallel.h"
#include "modeling/adapted_linear.h"
#include "modeling/flop_counter.h"
#include "modeling/layers.h"
#include "modeling/linear_compute.h"
#include "modeling/mixture_of_experts.h"
#include "modeling/model_registry.h"
#include "modeling/mxfp4_weights.h"
#include "models/gpt_oss.h"
#include "recorded_operators.h"

namespace gpubench {
namespace gpt_oss_tests {
namespace {

using models::GptOssConfig;
using models::GptOssModel;

// Hugging Face's num_parameters(), and OpenAI's model card's active parameters (20.91B and 3.61B,
// 116.83B and 5.13B), which leave out the embedding table and the unchosen experts.
TEST(GptOss, PublishedConfigurationsCountTheirTotalAndActiveParametersExactly) {
  const auto& registry = ModelRegistry::instance();
  const ModelStats small = measure_model(registry.get("gpt-oss-20b"));
  EXPECT_EQ(small.params, 20'914'757'184);
  EXPECT_EQ(small.active_params, 3'608'307'264);
  const ModelStats large = measure_model(registry.get("gpt-oss-120b"));
  EXPECT_EQ(large.params, 116'829'156'672);
  EXPECT_EQ(large.active_params, 5'132'849'472);
  EXPECT_EQ(registry.get("gpt-oss-120b").capabilities.experts, 128);
  EXPECT_EQ(registry.get("gpt-oss-20b").capabilities.experts_per_token, 4);
  EXPECT_EQ(registry.get("gpt-oss-20b").capabilities.default_weights, "mxfp4");
}

ModelOptions options_at(int64_t seq_len, Tuning tuning = Tuning::kFull) {
  ModelOptions options;
  options.seq_len = seq_len;
  options.tuning = tuning;
  options.lora.rank = 4;
  options.lora.alpha = 8;
  options.lora.targets = {"q", "k", "v", "o"};
  return options;
}

// Parameters and FLOPs counted on an instance (the experts count the rows they computed: every
// token's k experts) equal the rule's, in full and with LoRA's adapters.
TEST(GptOss, TheCountingRuleIsWhatABuiltModelCounts) {
  const ModelInfo& info = ModelRegistry::instance().get("test-tiny-gpt-oss");
  for (const int64_t top_k : {0, 1}) {  // the model's 2, and 1 (--experts-per-token)
    for (const Tuning tuning : {Tuning::kFull, Tuning::kLora}) {
      ModelOptions options = options_at(12, tuning);
      options.experts_per_token = top_k;
      torch::manual_seed(1);
      auto model = info.instantiate(options);
      const ModelStats counted = measure_instance(*model);
      const ModelStats rule = info.count(options);
      EXPECT_EQ(counted.params, rule.params);
      EXPECT_EQ(counted.trainable_params, rule.trainable_params);
      EXPECT_EQ(counted.forward_flops, rule.forward_flops);
      EXPECT_EQ(counted.frozen_weight_flops, rule.frozen_weight_flops);
      int64_t expert_weights = 0;  // what MXFP4 holds: the experts' two weight matrices
      for (const torch::Tensor& parameter : moe::expert_parameters(model->module())) {
        if (parameter.dim() == 3) expert_weights += parameter.numel();
      }
      EXPECT_EQ(rule.expert_weight_params, expert_weights);
    }
  }
  // fit's probe models: 4 of the 8 experts, and half the width.
  for (const auto& [experts, divisor] : {std::pair<int64_t, int64_t>{4, 1}, {0, 2}, {4, 2}}) {
    ModelOptions options = options_at(12);
    options.experts = experts;
    options.width_divisor = divisor;
    auto model = info.instantiate(options);
    EXPECT_EQ(measure_instance(*model).params, info.count(options).params);
    EXPECT_LT(info.count(options).params, info.count(options_at(12)).params);
  }
  ModelOptions top_1 = options_at(12);
  top_1.experts_per_token = 1;
  EXPECT_LT(info.count(top_1).active_params, info.count(options_at(12)).active_params);
  EXPECT_LT(info.count(top_1).forward_flops, info.count(options_at(12)).forward_flops);
}

nlohmann::json reference_fixture() {
  std::ifstream in(std::string(GPUBENCH_SOURCE_DIR) + "/tests/fixtures/gpt_oss_reference.json");
  return nlohmann::json::parse(in);
}

// scripts/hf_gpt_oss_reference.py's formula for the index-th parameter (by sorted name).
torch::Tensor formula(int64_t index, const std::vector<int64_t>& shape, const std::string& name) {
  const torch::Tensor j = torch::arange(c10::multiply_integers(shape), torch::kDouble);
  torch::Tensor values = torch::sin(0.61 * j + 1.7 * static_cast<double>(index) + 0.3);
  if (name.find("norm") != std::string::npos) {
    values = 1 + 0.1 * values;
  } else {
    values = values * (name.find("embed_tokens") != std::string::npos ? 1.0 : 0.2);
  }
  return values.to(torch::kFloat).reshape(shape);
}

GptOssConfig fixture_config(const nlohmann::json& c) {
  GptOssConfig config;
  config.vocab_size = c["vocab_size"];
  config.hidden_size = c["hidden_size"];
  config.intermediate_size = c["intermediate_size"];
  config.num_layers = c["num_hidden_layers"];
  config.num_heads = c["num_attention_heads"];
  config.num_kv_heads = c["num_key_value_heads"];
  config.head_dim = c["head_dim"];
  config.num_experts = c["num_local_experts"];
  config.experts_per_token = c["num_experts_per_tok"];
  config.sliding_window = c["sliding_window"];
  config.max_positions = c["max_position_embeddings"];
  config.yarn_original_max_positions = 16;
  return config;
}

// Every parameter by Hugging Face's name; the experts' weights are [E, in, out] there and [E,
// out, in] here (the checkpoints' MXFP4 layout).
void load_reference_weights(GptOssModel& model, const nlohmann::json& fixture) {
  auto parameters = model.module().named_parameters();
  torch::NoGradGuard no_grad;
  int64_t index = 0;
  for (const auto& entry : fixture["parameters"]) {
    const std::string name = entry[0];
    torch::Tensor values = formula(index++, entry[1].get<std::vector<int64_t>>(), name);
    if (name.find("experts.gate_up_proj") != std::string::npos ||
        name.find("experts.down_proj") != std::string::npos) {
      if (values.dim() == 3) values = values.transpose(1, 2);
    }
    ASSERT_TRUE(parameters.contains(name)) << name;
    ASSERT_EQ(parameters[name].sizes(), values.sizes()) << name;
    parameters[name].copy_(values);
  }
  EXPECT_EQ(index, static_cast<int64_t>(parameters.size()));
}

// Inference's attention whole (its scores within the default block) and by blocks of one query
// row (models/gpt_oss.cpp): each gives Hugging Face's logits.
// fit's training probes route each token to the next k experts in turn, weighted by the softmax
// of its logits there: 3 tokens of 2 routes each visit all of 6 experts, and 5 of 4 all 4.
TEST(GptOss, BalancedRoutesVisitTheExpertsInTurn) {
  torch::manual_seed(2);
  moe::TopKRouter router(8, 6, 2, /*balanced=*/true);
  torch::nn::init::normal_(router->weight);
  const torch::Tensor tokens = torch::randn({3, 8});
  const moe::Routes routes = router(tokens);
  EXPECT_TRUE(torch::equal(routes.experts, torch::tensor({0, 1, 2, 3, 4, 5}).view({3, 2})));
  const torch::Tensor logits = torch::linear(tokens, router->weight, router->bias);
  EXPECT_TRUE(torch::allclose(routes.weights, torch::softmax(logits.gather(1, routes.experts), 1)));
  moe::TopKRouter four(8, 4, 2, /*balanced=*/true);
  EXPECT_EQ(std::get<0>(torch::_unique(four(torch::randn({5, 8})).experts)).numel(), 4);
}

TEST(GptOss, LogitsAreHuggingFacesAtATinyConfiguration) {
  const nlohmann::json fixture = reference_fixture();
  const auto tokens = fixture["tokens"].get<std::vector<std::vector<int64_t>>>();
  const torch::Tensor batch = torch::stack({torch::tensor(tokens[0]), torch::tensor(tokens[1])});
  const auto expected_values =
      fixture["logits"].get<std::vector<std::vector<std::vector<float>>>>();
  std::vector<torch::Tensor> rows;
  for (const auto& sequence : expected_values) {
    for (const auto& row : sequence) rows.push_back(torch::tensor(row));
  }
  const torch::Tensor expected = torch::stack(rows).reshape({2, 12, -1});
  for (const int64_t block_bytes : {GptOssConfig{}.attention_block_bytes, int64_t{1}}) {
    SCOPED_TRACE(block_bytes);
    GptOssConfig config = fixture_config(fixture["config"]);
    config.attention_block_bytes = block_bytes;
    GptOssModel model(config, options_at(12));
    load_reference_weights(model, fixture);
    model.module().eval();
    torch::NoGradGuard no_grad;
    const torch::Tensor logits = model.logits(batch);
    EXPECT_LT((logits - expected).abs().max().item<double>(), 2e-5)
        << "largest logit " << expected.abs().max().item<double>();
  }
}

// The scores the model declares for fit (prefill_score_bytes): a block's rows within its bytes,
// twice over the keys and the sink, and the block's mask; every row at once with autograd on.
TEST(GptOss, TheAttentionsScoresAreDeclaredByItsBlocks) {
  GptOssConfig config = models::gpt_oss_120b();
  const ModelOptions options;
  // 8K keys and the sink of 64 heads: 2,097,408 bytes a row, 511 rows within 1 GiB.
  EXPECT_EQ(models::prefill_score_bytes(config, options, 1, 8192),
            int64_t{511} * (2 * 64 * 8193 * 4 + 8192));
  EXPECT_EQ(models::prefill_score_bytes(config, options, 1, 100), 100 * (2 * 64 * 101 * 4 + 100));
  config.attention_block_bytes = 1;
  EXPECT_EQ(models::prefill_score_bytes(config, options, 2, 100), 2 * 2 * 64 * 101 * 4 + 100);
  // Two tensor-parallel ranks hold 32 heads each.
  ModelOptions half;
  half.placement.tensor_parallel = parallelism::one_rank_alone(2);
  config.attention_block_bytes = GptOssConfig{}.attention_block_bytes;
  EXPECT_EQ(models::prefill_score_bytes(config, half, 1, 100), 100 * (2 * 32 * 101 * 4 + 100));
}

// Drawing the routes (a fit probe's zeroed model, TrainableModel::initialize_routing) gives the
// model's own weights storage of their own; what an adapter added from outside holds it leaves
// be. It once gave LoRA's factors fresh storage and drew nothing into it, so that a LoRA fit's
// probes routed their tokens through uninitialised memory.
TEST(GptOss, DrawingTheRoutesLeavesTheAdaptersBe) {
  const ModelInfo& info = ModelRegistry::instance().get("test-tiny-gpt-oss");
  torch::manual_seed(3);
  auto model = info.instantiate(options_at(12, Tuning::kLora));
  std::set<std::string> own;
  for (const auto& [name, parameter] : layers::own_parameters(model->module())) own.insert(name);
  std::map<std::string, std::pair<const void*, torch::Tensor>> adapters;
  for (const auto& item : model->module().named_parameters()) {
    if (own.count(item.key()) == 0) {
      adapters[item.key()] = {item.value().data_ptr(), item.value().detach().clone()};
    }
  }
  ASSERT_FALSE(adapters.empty());
  for (const auto& [name, held] : adapters) {
    EXPECT_NE(name.find(".lora_"), std::string::npos) << name;  // PEFT's names
  }
  const std::string routed_weight = *std::find_if(own.begin(), own.end(), [](const std::string& n) {
    return n.find(".experts.") == std::string::npos;  // the experts keep their storage
  });
  const void* routed_storage = model->module().named_parameters()[routed_weight].data_ptr();
  model->initialize_routing();
  EXPECT_NE(model->module().named_parameters()[routed_weight].data_ptr(), routed_storage)
      << routed_weight << " drawn into storage of its own";
  for (const auto& item : model->module().named_parameters()) {
    const auto adapter = adapters.find(item.key());
    if (adapter == adapters.end()) continue;
    EXPECT_EQ(item.value().data_ptr(), adapter->second.first) << item.key();
    EXPECT_TRUE(torch::equal(item.value(), adapter->second.second)) << item.key();
  }
}

// The cached path (a prompt shorter than the window, or longer, then one token at a time past
// it) gives the logits of the whole sequence recomputed without a cache. A sliding layer's cache
// is a ring of its window's 4 positions, which the longer prompt already wraps.
TEST(GptOss, GenerationWithTheCacheAndTheWindowGivesTheUncachedLogits) {
  const ModelInfo& info = ModelRegistry::instance().get("test-tiny-gpt-oss");
  torch::manual_seed(2);
  auto model = info.instantiate(options_at(12));
  model->module().eval();
  TextGenerator& generator = *model->text_generator();
  const torch::Tensor sequence = torch::randint(256, {2, 12});
  torch::NoGradGuard no_grad;
  for (const int64_t prompt : {3, 6}) {
    KvCache cache = generator.allocate_cache(2, 12, torch::kCPU, torch::kFloat);
    torch::Tensor cached = generator.next_token_logits(sequence.narrow(1, 0, prompt), cache);
    for (int64_t end = prompt; end <= 12; ++end) {
      if (end > prompt) cached = generator.next_token_logits(sequence.narrow(1, end - 1, 1), cache);
      const torch::Tensor full = generator.last_logits_without_cache(sequence.narrow(1, 0, end));
      EXPECT_LT((cached - full).abs().max().item<double>(), 1e-5)
          << "at " << end << " tokens after a prompt of " << prompt;
    }
    EXPECT_EQ(cache.length, 12);
  }
}

// A decoded token's attention is one operator a layer (gpubench::decode_attention: two kernels
// on CUDA, the splits and their join with the sinks), sliding layers and full ones alike: no
// softmax, no concatenation of the sinks, no copy of a ring. A prompt's still runs the blocks of
// attention_with_sinks.
TEST(GptOss, ADecodedTokensAttentionIsOneOperatorALayer) {
  const ModelInfo& info = ModelRegistry::instance().get("test-tiny-gpt-oss");
  torch::manual_seed(3);
  auto model = info.instantiate(options_at(12));
  model->module().eval();
  TextGenerator& generator = *model->text_generator();
  const torch::Tensor sequence = torch::randint(256, {2, 8});
  const c10::InferenceMode inference_mode;
  KvCache cache = generator.allocate_cache(2, 12, torch::kCPU, torch::kFloat);
  // The softmaxes launched outside the decode operator: the router's, one a layer, and
  // attention's where it runs apart.
  const auto softmaxes_apart = [](const testing::RecordedOperators& recorded) {
    return std::count_if(recorded.launches.begin(), recorded.launches.end(),
                         [](const std::string& launch) {
                           return launch.rfind("aten::_softmax", 0) == 0 &&
                                  launch.find("gpubench::decode_attention") == std::string::npos;
                         });
  };
  const testing::RecordedOperators prompt = testing::record_operators(
      [&] { generator.next_token_logits(sequence.narrow(1, 0, 7), cache); });
  EXPECT_EQ(prompt.called.count("gpubench::decode_attention"), 0);
  EXPECT_EQ(softmaxes_apart(prompt), 8) << "4 layers' attention and router";
  const testing::RecordedOperators step = testing::record_operators(
      [&] { generator.next_token_logits(sequence.narrow(1, 7, 1), cache); });
  EXPECT_EQ(step.called.count("gpubench::decode_attention"), 4);
  EXPECT_EQ(softmaxes_apart(step), 4) << "4 layers' router";
}

// Layers 0 and 2 slide over 4 positions, 1 and 3 attend to all: a sequence's cache at 12
// positions holds 2 x 12 + 2 x 4 positions of 2 key/value heads of 8, keys and values in float32.
TEST(GptOss, ASlidingLayersCacheHoldsItsWindowOnly) {
  const ModelInfo& info = ModelRegistry::instance().get("test-tiny-gpt-oss");
  auto model = info.instantiate(options_at(12));
  const KvCache cache = model->text_generator()->allocate_cache(2, 12, torch::kCPU, torch::kFloat);
  EXPECT_EQ(cache.windows, (std::vector<int64_t>{4, 0, 4, 0}));
  EXPECT_EQ(cache.keys[0].size(2), 4);
  EXPECT_EQ(cache.values[1].size(2), 12);
  const int64_t per_layer_token = 2 * 2 * 8 * 4;
  EXPECT_EQ(cache.bytes_per_token(), 2 * per_layer_token);
  EXPECT_EQ(cache.window_bytes_per_token(), 2 * per_layer_token);
  EXPECT_EQ(cache.window(), 4);
  EXPECT_EQ(cache.bytes_at(12), (2 * 12 + 2 * 4) * per_layer_token);
  EXPECT_EQ(cache.bytes_at(3), 4 * 3 * per_layer_token);
  EXPECT_EQ(cache.bytes(), 2 * cache.bytes_at(12));
}

// The experts in MXFP4 (every other weight in bf16): exactly the model whose experts hold the
// dequantised weights in bf16 (the products are the same); and at the model's own initialisation,
// close to the unquantised model in bf16.
TEST(GptOss, ExpertsInMxfp4AreTheirDequantisedWeightsAndKeepTheLogitsCloseToBf16s) {
  const ModelInfo& info = ModelRegistry::instance().get("test-tiny-gpt-oss");
  torch::manual_seed(5);
  const torch::Tensor tokens = torch::randint(256, {8, 16});
  const auto build = [&] {
    torch::manual_seed(3);
    auto model = info.instantiate(options_at(8));
    model->module().eval();
    model->cast_for_inference(torch::kBFloat16);
    return model;
  };
  torch::NoGradGuard no_grad;
  auto bf16_model = build();
  const torch::Tensor bf16 = bf16_model->inference_output({tokens, {}, {}}).to(torch::kFloat);
  for (auto& item : bf16_model->module().named_parameters()) {
    if (item.value().dim() == 3) {  // the experts' weights, rounded as MXFP4 rounds them
      item.value().copy_(mxfp4::dequantize(mxfp4::quantize(item.value()), torch::kBFloat16));
    }
  }
  const torch::Tensor rounded = bf16_model->inference_output({tokens, {}, {}}).to(torch::kFloat);

  auto model = build();
  const layers::QuantizedLayers quantized =
      layers::quantize_linear_layers(model->module(), *layers::make_weight_format("mxfp4"));
  EXPECT_EQ(quantized.quantized, 4);  // the four layers' experts; the linear layers stay
  const torch::Tensor mxfp4 = model->inference_output({tokens, {}, {}}).to(torch::kFloat);
  EXPECT_TRUE(torch::equal(mxfp4, rounded));
  // 0.15 here: 4.25 bits a weight move each expert's output by about a tenth, and the routes that
  // move with it; 80 % of the 128 next tokens stay (a random model's logits are close together;
  // chance would keep 0.4 %).
  const double relative = ((mxfp4 - bf16).norm() / bf16.norm()).item<double>();
  EXPECT_GT(relative, 0.0);
  EXPECT_LT(relative, 0.25);
  const double agreeing =
      (mxfp4.argmax(-1) == bf16.argmax(-1)).to(torch::kFloat).mean().item<double>();
  EXPECT_GT(agreeing, 0.6);
}

// infer builds the experts in MXFP4: code bytes and scales only, drawn with about the reference
// initialisation's rms; bf16 casts leave the bytes as they are.
TEST(GptOss, ExpertsBuiltInMxfp4HoldOnlyTheirCodesAndScales) {
  ModelOptions options = options_at(8);
  options.experts_in_mxfp4 = true;
  torch::manual_seed(4);
  const auto tiny = ModelRegistry::instance().get("test-tiny-gpt-oss").instantiate(options);
  EXPECT_EQ(tiny->module().named_parameters()["model.layers.0.mlp.experts.gate_up_proj"].numel(),
            0);
  tiny->cast_for_inference(torch::kBFloat16);
  const auto buffers = tiny->module().named_buffers();
  const torch::Tensor blocks = buffers["model.layers.1.mlp.experts.down_proj_blocks"];
  const torch::Tensor scales = buffers["model.layers.1.mlp.experts.down_proj_scales"];
  ASSERT_EQ(blocks.scalar_type(), torch::kUInt8);
  ASSERT_EQ(scales.scalar_type(), torch::kUInt8);
  const torch::Tensor weights = mxfp4::dequantize({blocks, scales}, torch::kFloat);
  EXPECT_NEAR(weights.pow(2).mean().sqrt().item<double>(), 0.02, 0.006);
  EXPECT_EQ(
      std::get<0>(torch::_unique(torch::cat({blocks.bitwise_and(15), blocks.div(16, "floor")})))
          .numel(),
      16);
  torch::NoGradGuard no_grad;
  const torch::Tensor logits = tiny->inference_output({torch::randint(256, {1, 8}), {}, {}});
  EXPECT_TRUE(logits.isfinite().all().item<bool>());
}

}  // namespace
}  // namespace gpt_oss_tests
}  // namespace gpubench
