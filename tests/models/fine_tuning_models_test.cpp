// The fine-tuning models (BERT, the Llama family), LoRA and activation checkpointing on tiny
// configurations; the published configurations' exact parameter counts.
#include <map>
#include <set>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "common/errors.h"
#include "features/model_options.h"
#include "features/precision/precision_policy.h"
#include "features/tuning/activation_checkpoint.h"
#include "features/tuning/lora.h"
#include "features/tuning/tuning_transform.h"
#include "modeling/adapted_linear.h"
#include "modeling/model_registry.h"
#include "models/bert.h"
#include "models/llama.h"
#include "test_helpers.h"
#include "train/training_step.h"

namespace gpubench {
namespace {

using models::BertConfig;
using models::BertModel;
using models::LlamaConfig;
using models::LlamaModel;

LlamaConfig tiny_llama(bool tied, int64_t kv_heads) {
  LlamaConfig c;
  c.vocab_size = 96;
  c.hidden_size = 32;
  c.intermediate_size = 48;
  c.num_layers = 2;
  c.num_heads = 4;
  c.num_kv_heads = kv_heads;
  c.tie_embeddings = tied;
  c.max_positions = 64;
  return c;
}

BertConfig tiny_bert() {
  BertConfig c;
  c.vocab_size = 80;
  c.hidden_size = 32;
  c.num_layers = 2;
  c.num_heads = 4;
  c.intermediate_size = 64;
  c.max_positions = 32;
  return c;
}

ModelOptions options_for(Tuning tuning, std::vector<std::string> targets, int64_t seq_len,
                         bool checkpointing = false) {
  ModelOptions options;
  options.seq_len = seq_len;
  options.tuning = tuning;
  options.lora.rank = 4;
  options.lora.alpha = 8;
  options.lora.targets = std::move(targets);
  options.activation_checkpointing = checkpointing;
  return options;
}

void expect_same_stats(const ModelStats& counted, const ModelStats& rule, const std::string& what) {
  EXPECT_EQ(rule.params, counted.params) << what;
  EXPECT_EQ(rule.trainable_params, counted.trainable_params) << what;
  EXPECT_EQ(rule.forward_flops, counted.forward_flops) << what;
  EXPECT_EQ(rule.frozen_weight_flops, counted.frozen_weight_flops) << what;
}

const std::vector<std::string> kAttention = {"q", "k", "v", "o"};
const std::vector<std::string> kLlamaRoles = {"q", "k", "v", "o", "gate", "up", "down"};
const std::vector<std::string> kBertRoles = {"q", "k", "v", "o", "up", "down"};

// The counting rules with the tuning applied from outside, as the registry applies it
// (models::fine_tuning_info).
ModelStats tuned_llama_stats(const LlamaConfig& config, const ModelOptions& options) {
  return tuning::with_tuning(models::llama_stats(config, options),
                             models::llama_projections(config), options);
}
ModelStats tuned_bert_stats(const BertConfig& config, const ModelOptions& options) {
  return tuning::with_tuning(models::bert_stats(config, options),
                             models::bert_projections(config, options), options);
}

TEST(FineTuningModels, PublishedConfigurationsCountTheirParametersExactly) {
  const auto params = [](const std::string& name) {
    return measure_model(ModelRegistry::instance().get(name)).params;
  };
  // Hugging Face's num_parameters() of each model: BertForPreTraining (bert-large-uncased, the
  // MLM decoder tied), LlamaForCausalLM (Llama-3.2-1B tied, the others not).
  EXPECT_EQ(params("bert-large"), 336226108);
  EXPECT_EQ(params("llama-3.2-1b"), 1235814400);
  EXPECT_EQ(params("llama-2-7b"), 6738415616);
  EXPECT_EQ(params("llama-3-8b"), 8030261248);
  EXPECT_EQ(params("llama-3.1-8b"), 8030261248);
  EXPECT_EQ(params("llama-3.1-70b"), 70553706496);
  EXPECT_EQ(params("llama-3.1-405b"), 405853388800);
  // Llama 3.3 70B is Llama 3.1 70B's shape under another name.
  EXPECT_EQ(&ModelRegistry::instance().get("llama-3.3-70b"),
            &ModelRegistry::instance().get("llama-3.1-70b"));
}

// The rule that counts the 7B and 8B models without building them is the count of built ones:
// tied and untied heads, grouped-query and full attention, full tuning and LoRA.
TEST(FineTuningModels, TheCountingRuleIsWhatABuiltLlamaCounts) {
  for (const bool tied : {false, true}) {
    for (const int64_t kv_heads : {4, 2, 1}) {
      for (const auto& [tuning, targets] : std::vector<std::pair<Tuning, std::vector<std::string>>>{
               {Tuning::kFull, {}},
               {Tuning::kLora, kAttention},
               {Tuning::kLora, kLlamaRoles},
               {Tuning::kLora, {"v", "down"}}}) {
        const LlamaConfig config = tiny_llama(tied, kv_heads);
        const ModelOptions options = options_for(tuning, targets, 12);
        LlamaModel model(config, options);
        tuning::apply_tuning(model.module(), options);
        expect_same_stats(measure_instance(model), tuned_llama_stats(config, options),
                          "tied " + std::to_string(tied) + ", kv heads " +
                              std::to_string(kv_heads) + ", targets " + join(targets));
      }
    }
  }
}

TEST(FineTuningModels, TheCountingRuleIsWhatABuiltBertCounts) {
  for (const auto& [tuning, targets] : std::vector<std::pair<Tuning, std::vector<std::string>>>{
           {Tuning::kFull, {}}, {Tuning::kLora, kAttention}, {Tuning::kLora, kBertRoles}}) {
    for (const int64_t seq_len : {8, 20}) {
      const ModelOptions options = options_for(tuning, targets, seq_len);
      BertModel model(tiny_bert(), options);
      tuning::apply_tuning(model.module(), options);
      expect_same_stats(measure_instance(model), tuned_bert_stats(tiny_bert(), options),
                        "seq " + std::to_string(seq_len) + ", targets " + join(targets));
    }
  }
}

// The named configurations at their real widths (vocabulary, hidden size, heads, key/value
// heads, MLP), built with two of their blocks: the rule counts per block, and the published
// totals of the full depths are checked above without building them.
// Counted without drawing the weights (deferred): the counts and FLOPs depend on shapes only.
TEST(FineTuningModels, TheCountingRuleIsWhatBertLargeAndLlama32CountBuiltAtTwoBlocks) {
  {
    models::BertConfig config = models::bert_large();
    config.num_layers = 2;
    ModelOptions options = options_for(Tuning::kFull, {}, 128);
    options.defer_initialization = true;
    BertModel model(config, options);
    expect_same_stats(measure_instance(model), tuned_bert_stats(config, options), "bert-large");
  }
  models::LlamaConfig config = models::llama_3_2_1b();
  config.num_layers = 2;
  ModelOptions options = options_for(Tuning::kLora, kAttention, 8);
  options.defer_initialization = true;
  LlamaModel model(config, options);
  tuning::apply_tuning(model.module(), options);
  expect_same_stats(measure_instance(model), tuned_llama_stats(config, options), "llama-3.2-1b");
}

TEST(FineTuningModels, ForwardShapes) {
  torch::manual_seed(1);
  LlamaModel llama(tiny_llama(false, 2), options_for(Tuning::kFull, {}, 10));
  EXPECT_EQ(llama.logits(torch::randint(96, {3, 10}, torch::kLong)).sizes(),
            (std::vector<int64_t>{3, 10, 96}));
  const SyntheticBatch tokens = llama.synthetic_batch(3, torch::kCPU, false);
  EXPECT_EQ(tokens.inputs.sizes(), (std::vector<int64_t>{3, 10}));
  // The targets are the inputs shifted by one position.
  EXPECT_TRUE(torch::equal(tokens.inputs.narrow(1, 1, 9), tokens.targets.narrow(1, 0, 9)));

  BertModel bert(tiny_bert(), options_for(Tuning::kFull, {}, 20));
  const SyntheticBatch batch = bert.synthetic_batch(3, torch::kCPU, false);
  const models::BertOutput out = bert.forward(batch.inputs, batch.extras[0], batch.extras[1]);
  EXPECT_EQ(out.prediction_scores.sizes(), (std::vector<int64_t>{3, 20, 80}));
  EXPECT_EQ(out.seq_relationship_scores.sizes(), (std::vector<int64_t>{3, 2}));
  // 15 % of the 20 positions of each sequence are masked-LM targets; the rest are ignored.
  EXPECT_TRUE(torch::equal((batch.targets != -100).sum(1), torch::full({3}, 3, torch::kLong)));
  EXPECT_EQ(batch.extras[0].select(0, 0).sum().item<int64_t>(), 10);  // sentence B: the 2nd half
}

// Ten steps on one fixed batch: the loss falls (AdamW at 1e-3 on a tiny model).
TEST(FineTuningModels, ATinyLlamaAndATinyBertLearnTheirBatch) {
  for (const std::string name : {"test-tiny-llama", "test-tiny-bert"}) {
    for (const Tuning tuning : {Tuning::kFull, Tuning::kLora}) {
      torch::manual_seed(3);
      ModelOptions options = options_for(tuning, kAttention, 16);
      options.lora.rank = 8;
      auto model = ModelRegistry::instance().get(name).instantiate(options);
      const SyntheticBatch batch = model->synthetic_batch(4, torch::kCPU, false);
      OptimizerSettings settings = optimizer_settings_for("adamw", 4);
      settings.learning_rate = tuning == Tuning::kLora ? 1e-2 : 1e-3;
      TrainingStep step(*model, PrecisionPolicy(Precision::kFp32, torch::kCPU), settings);
      std::vector<double> losses;
      for (int i = 0; i < 10; ++i) losses.push_back(step.run(batch).item<double>());
      EXPECT_LT(losses.back(), losses.front() - 0.05)
          << name << " " << to_string(tuning) << ": " << losses.front() << " -> " << losses.back();
    }
  }
}

std::map<std::string, torch::Tensor> snapshot(torch::nn::Module& module) {
  std::map<std::string, torch::Tensor> copies;
  for (const auto& item : module.named_parameters()) copies[item.key()] = item.value().clone();
  return copies;
}

TEST(FineTuningModels, LoraChangesNothingAtFirstAndOnlyItsAdaptersTrain) {
  for (const std::string name : {"test-tiny-llama", "test-tiny-bert"}) {
    const ModelInfo& info = ModelRegistry::instance().get(name);
    torch::manual_seed(4);
    auto full = info.instantiate(options_for(Tuning::kFull, {}, 16));
    torch::manual_seed(4);
    auto lora = info.instantiate(options_for(Tuning::kLora, info.capabilities.lora_roles, 16));
    full->module().eval();  // no dropout: the same function on both sides
    lora->module().eval();
    torch::manual_seed(5);
    const SyntheticBatch batch = full->synthetic_batch(2, torch::kCPU, false);
    {
      torch::NoGradGuard no_grad;
      EXPECT_TRUE(torch::equal(full->training_loss(batch), lora->training_loss(batch))) << name;
    }
    lora->module().train();
    const auto before = snapshot(lora->module());
    TrainingStep step(*lora, PrecisionPolicy(Precision::kFp32, torch::kCPU),
                      optimizer_settings_for("adamw", 2));
    step.run(batch);
    step.run(batch);
    int adapters = 0;
    for (const auto& item : lora->module().named_parameters()) {
      const std::string& key = item.key();
      const bool adapter = key.find("lora_") != std::string::npos;
      EXPECT_EQ(item.value().requires_grad(), adapter) << name << " " << key;
      if (adapter) {
        ++adapters;
        if (key.find("lora_B") != std::string::npos) {
          EXPECT_FALSE(torch::equal(item.value(), before.at(key))) << name << " " << key;
        }
      } else {
        EXPECT_TRUE(torch::equal(item.value(), before.at(key))) << name << " " << key << " moved";
      }
    }
    EXPECT_EQ(adapters, 2 * 2 * static_cast<int>(info.capabilities.lora_roles.size()))
        << name;  // 2 blocks
  }
}

// Gradients of every trainable parameter after one backward pass, by name.
std::map<std::string, torch::Tensor> gradients_after_backward(
    const std::string& name, const ModelOptions& options,
    const std::optional<Precision>& autocast) {
  torch::manual_seed(6);
  auto model = ModelRegistry::instance().get(name).instantiate(options);
  model->module().train();
  torch::manual_seed(7);
  const SyntheticBatch batch = model->synthetic_batch(2, torch::kCPU, false);
  torch::manual_seed(8);  // dropout's masks: the same draws on both sides
  torch::Tensor loss;
  {
    const PrecisionPolicy policy(autocast.value_or(Precision::kFp32), torch::kCPU);
    MixedPrecisionScope scope(policy);
    loss = model->training_loss(batch);
  }
  loss.backward();
  std::map<std::string, torch::Tensor> grads;
  for (const auto& item : model->module().named_parameters()) {
    if (item.value().requires_grad()) grads[item.key()] = item.value().grad().clone();
  }
  return grads;
}

TEST(FineTuningModels, ActivationCheckpointingGivesTheSameGradients) {
  struct Case {
    std::string model;
    Tuning tuning;
    std::optional<Precision> autocast;
    double tolerance;
  };
  for (const Case& c :
       std::vector<Case>{{"test-tiny-llama", Tuning::kFull, std::nullopt, 1e-5},
                         {"test-tiny-bert", Tuning::kFull, std::nullopt, 1e-5},
                         {"test-tiny-llama", Tuning::kLora, std::nullopt, 1e-5},
                         {"test-tiny-bert", Tuning::kLora, std::nullopt, 1e-5},
                         {"test-tiny-llama", Tuning::kFull, Precision::kBf16, 1e-2}}) {
    const std::string what = c.model + " " + to_string(c.tuning) +
                             (c.autocast ? " " + to_string(*c.autocast) : std::string());
    const auto plain =
        gradients_after_backward(c.model, options_for(c.tuning, kAttention, 12, false), c.autocast);
    const auto recomputed =
        gradients_after_backward(c.model, options_for(c.tuning, kAttention, 12, true), c.autocast);
    ASSERT_EQ(plain.size(), recomputed.size()) << what;
    for (const auto& [key, grad] : plain) {
      ASSERT_TRUE(recomputed.at(key).defined()) << what << " " << key;
      const double scale = grad.abs().max().item<double>() + 1e-12;
      EXPECT_LE((recomputed.at(key) - grad).abs().max().item<double>(), c.tolerance * scale)
          << what << " " << key;
    }
  }
}

// Whether the autograd graph behind `output` holds a node named like `name`.
bool graph_has_node(const torch::Tensor& output, const std::string& name) {
  std::vector<std::shared_ptr<torch::autograd::Node>> pending{output.grad_fn()};
  std::set<torch::autograd::Node*> seen;
  while (!pending.empty()) {
    auto node = pending.back();
    pending.pop_back();
    if (!node || !seen.insert(node.get()).second) continue;
    if (node->name().find(name) != std::string::npos) return true;
    for (const auto& edge : node->next_edges()) pending.push_back(edge.function);
  }
  return false;
}

TEST(FineTuningModels, CheckpointedBlocksRecomputeInBackward) {
  for (const std::string name : {"test-tiny-llama", "test-tiny-bert"}) {
    for (const bool checkpointing : {false, true}) {
      auto model = ModelRegistry::instance().get(name).instantiate(
          options_for(Tuning::kLora, kAttention, 8, checkpointing));
      const SyntheticBatch batch = model->synthetic_batch(1, torch::kCPU, false);
      EXPECT_EQ(graph_has_node(model->training_loss(batch), "CheckpointFunction"), checkpointing)
          << name;
    }
  }
}

// Checkpointing is applied to a built model from outside, block by block: the model itself takes
// no such option.
TEST(FineTuningModels, CheckpointingIsAppliedToTheBuiltBlocks) {
  const ModelOptions options = options_for(Tuning::kFull, {}, 8, /*checkpointing=*/true);
  LlamaModel model(tiny_llama(false, 2), options);
  const SyntheticBatch batch = model.synthetic_batch(1, torch::kCPU, false);
  EXPECT_FALSE(graph_has_node(model.training_loss(batch), "CheckpointFunction"));
  EXPECT_EQ(tuning::checkpoint_blocks(model.module()), 2);  // tiny_llama's two blocks
  EXPECT_TRUE(graph_has_node(model.training_loss(batch), "CheckpointFunction"));
}

// Tuning is a transform applied from outside to every model the registry builds
// (modeling/model_transforms.h): the model's own create() adds no adapter and checkpoints no
// block; instantiate() does both, and the counts from the configuration take the adapters in.
TEST(FineTuningModels, TuningIsAModelTransformEveryBuiltModelIsGiven) {
  const ModelInfo& info = ModelRegistry::instance().get("test-tiny-llama");
  const ModelOptions options = options_for(Tuning::kLora, {"q", "v"}, 8, /*checkpointing=*/true);
  const auto adapters = [](TrainableModel& model) {
    return static_cast<int>(model.module().named_parameters().size() -
                            layers::own_parameters(model.module()).size());
  };
  const auto checkpointed = [](TrainableModel& model) {
    int count = 0;
    for (const auto& child : model.module().modules(/*include_self=*/false)) {
      const auto* block = dynamic_cast<const CheckpointableBlock*>(child.get());
      count += block && block->recomputation() ? 1 : 0;
    }
    return count;
  };
  const int64_t blocks = info.capabilities.blocks;
  ASSERT_GT(blocks, 0);
  std::unique_ptr<TrainableModel> bare = info.create(options);
  EXPECT_EQ(adapters(*bare), 0);
  EXPECT_EQ(checkpointed(*bare), 0);
  std::unique_ptr<TrainableModel> built = info.instantiate(options);
  EXPECT_EQ(adapters(*built), 2 * 2 * blocks);  // lora_A and lora_B on q and v
  EXPECT_EQ(checkpointed(*built), blocks);
  const ModelStats counted = info.count(options), measured = measure_instance(*built);
  EXPECT_EQ(counted.params, measured.params);
  EXPECT_EQ(counted.trainable_params, measured.trainable_params);
  EXPECT_LT(counted.trainable_params, counted.params);
}

// LoRA's roles and rank limits are derived from the projections a model declares (the smaller
// side of each), in the model's order.
TEST(FineTuningModels, LoraRolesAndRankLimitsComeFromTheDeclaredProjections) {
  const ModelCapabilities& llama = ModelRegistry::instance().get("llama-3-8b").capabilities;
  EXPECT_EQ(llama.lora_roles, kLlamaRoles);
  EXPECT_EQ(llama.lora_rank_limits, (std::map<std::string, int64_t>{{"q", 4096},
                                                                    {"k", 1024},
                                                                    {"v", 1024},
                                                                    {"o", 4096},
                                                                    {"gate", 4096},
                                                                    {"up", 4096},
                                                                    {"down", 4096}}));
  EXPECT_EQ(ModelRegistry::instance().get("bert-large").capabilities.lora_roles, kBertRoles);
  const ModelCapabilities& gpt_oss = ModelRegistry::instance().get("gpt-oss-20b").capabilities;
  EXPECT_EQ(gpt_oss.lora_roles, kAttention);
  // q [2880 -> 4096], k and v [2880 -> 512], o [4096 -> 2880].
  EXPECT_EQ(gpt_oss.lora_rank_limits,
            (std::map<std::string, int64_t>{{"q", 2880}, {"k", 512}, {"v", 512}, {"o", 2880}}));
}

TEST(FineTuningModels, LoraTargetsAreTheModelsProjections) {
  const auto& roles = kLlamaRoles;
  EXPECT_EQ(tuning::parse_lora_targets("all-linear", roles, "llama-3-8b"), roles);
  EXPECT_EQ(tuning::parse_lora_targets("q,v", roles, "llama-3-8b"),
            (std::vector<std::string>{"q", "v"}));
  EXPECT_EQ(
      testing::usage_error_of([&] { tuning::parse_lora_targets("q,x", roles, "llama-3-8b"); }),
      "lora_targets 'q,x': 'x' is not a projection of llama-3-8b; allowed: a "
      "comma-separated list of q, k, v, o, gate, up, down, or all-linear");
  EXPECT_NE(testing::usage_error_of([&] {
              tuning::parse_lora_targets("q,,v", roles, "m");
            }).find("an empty name"),
            std::string::npos);
  EXPECT_EQ(testing::usage_error_of([&] { tuning::parse_lora_targets("q,q", roles, "m"); }),
            "lora_targets 'q,q' names 'q' twice");
}

TEST(FineTuningModels, LoraTrainsFewerFlopsThanAFullFineTune) {
  const ModelInfo& info = ModelRegistry::instance().get("llama-3-8b");
  ModelOptions lora = options_for(Tuning::kLora, kAttention, 2048);
  lora.lora.rank = 16;
  const ModelStats full_stats = measure_model(info, options_for(Tuning::kFull, {}, 2048));
  const ModelStats lora_stats = measure_model(info, lora);
  EXPECT_EQ(full_stats.train_flops(), 3 * full_stats.forward_flops);
  // No weight gradients for the frozen base: about two thirds of the full step's work.
  EXPECT_EQ(lora_stats.train_flops(),
            3 * lora_stats.forward_flops - lora_stats.frozen_weight_flops);
  EXPECT_GT(lora_stats.train_flops(), full_stats.train_flops() / 2);
  EXPECT_LT(lora_stats.train_flops(), full_stats.train_flops() * 3 / 4);
  // Adapters on q, k, v, o of 32 blocks: 16 x (4096 + 4096 + 2 x (4096 + 1024) + 4096 + 4096).
  EXPECT_EQ(lora_stats.trainable_params, 32 * 16 * (4 * 4096 + 2 * (4096 + 1024)));
}

// A model is built from the benchmark's sequence and fine-tuning sections as they are, and
// LoRA's adapters are read only for a LoRA run, their targets checked against the model's roles.
TEST(ModelOptions, AreTheBenchmarksSectionsAndItsAdapters) {
  ResolvedBenchmark b;
  b.model = "llama-3.2-1b";
  b.seq_len = 96;
  b.blocks = 2;
  b.activation_checkpointing = true;
  b.tuning = Tuning::kFull;
  b.lora_rank = 4;
  b.lora_alpha = 8;
  b.lora_targets = "q,v";
  const ModelOptions full = model_options_for(b);
  EXPECT_EQ(full.seq_len, 96);
  EXPECT_EQ(full.blocks, 2);
  EXPECT_TRUE(full.activation_checkpointing);
  EXPECT_TRUE(full.lora.targets.empty());

  b.tuning = Tuning::kLora;
  const ModelOptions lora = model_options_for(b);
  EXPECT_EQ(lora.tuning, Tuning::kLora);
  EXPECT_EQ(lora.lora.rank, 4);
  EXPECT_EQ(lora.lora.alpha, 8);
  EXPECT_EQ(lora.lora.targets, (std::vector<std::string>{"q", "v"}));

  b.lora_targets = "q,wing";
  EXPECT_THROW(model_options_for(b), UsageError);
}

}  // namespace
}  // namespace gpubench
