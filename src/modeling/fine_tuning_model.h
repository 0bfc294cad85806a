// What the fine-tuning models (BERT, the Llamas, gpt-oss) share: their registry entry (sequence
// length, AdamW, activation checkpointing, counts from the configuration). A model declares its
// blocks' projections by role; LoRA's roles and rank limits are derived from them here, and
// tuning, applied from outside the model (features/tuning/tuning_transform.h), adds its adapters
// and their counts by those roles.
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "modeling/adapted_linear.h"
#include "modeling/model_registry.h"
#include "modeling/model_transforms.h"

namespace gpubench::models {

// An embedding table left uninitialised (the model initialises every weight itself, on the
// device it trains on when the launcher defers it), unlike torch::nn::Embedding's constructor.
inline torch::nn::Embedding uninitialised_embedding(int64_t rows, int64_t width) {
  return torch::nn::Embedding(
      torch::nn::EmbeddingOptions(rows, width)._weight(torch::empty({rows, width})));
}

// A projection of a repeated block, by the role LoRA's targets name it with.
struct Projection {
  std::string role;  // "q", "k", "v", "o", "gate", "up", "down"
  int64_t in = 0, out = 0;
};

// What a fine-tuning model declares for a configuration: its repeated blocks and each block's
// projections, in role order, and the tokens a sample runs through them (1 for a language
// model's token; seq_len for a BERT sequence).
struct BlockProjections {
  int64_t blocks = 0;
  std::vector<Projection> per_block;
  int64_t tokens_per_sample = 1;
};

// The shape that the activation estimate reads.
struct TransformerShape {
  int64_t layers, hidden, heads, vocab;
  int64_t head_dim = 0;  // 0: hidden / heads
};

// Activations a transformer keeps for backward (Korthikanti et al. 2022, arXiv 2205.05198):
// s b h (34 + 5 a s / h) bytes per block with 16-bit activations, scaled for 32-bit ones; with
// checkpointing only each block's input and one block's activations at a time. The logits add
// b s V in the activation dtype, their float32 copy and its gradient. Over `ranks`
// tensor-parallel ranks, each keeps s b h (10 + 24 / t + 5 a s / (h t)) a block (the norms' and
// the residual's tensors whole, the rest split) and its slice of the logits. An estimate: it is
// what the memory check holds a CPU run to, where running out kills the process instead of
// failing.
inline int64_t transformer_activation_bytes(const TransformerShape& t, int64_t seq, int64_t batch,
                                            int64_t element_bytes, bool checkpointing,
                                            int64_t ranks = 1) {
  const double sbh = static_cast<double>(seq) * batch * t.hidden,
               split = static_cast<double>(ranks);
  const double per_block =
      sbh * (10.0 + 24.0 / split + 5.0 * t.heads * static_cast<double>(seq) / (t.hidden * split)) *
      element_bytes / 2.0;
  const double blocks =
      checkpointing ? t.layers * sbh * element_bytes + per_block : t.layers * per_block;
  const double logits = static_cast<double>(seq) * batch * t.vocab * (element_bytes + 8) / split;
  return static_cast<int64_t>(blocks + logits);
}

// The configuration with ModelOptions::blocks layers and ModelOptions::vocab tokens where the
// options ask for fewer.
template <typename Config>
Config reduced(Config config, const ModelOptions& options) {
  if (options.blocks > 0) config.num_layers = options.blocks;
  if (options.vocab > 0) config.vocab_size = options.vocab;
  return config;
}

// The configuration at ModelOptions::width_divisor: the hidden size, the MLP (or expert) width and
// the attention and key/value heads divided, the head width kept; the key/value heads kept whole
// where ModelOptions::width_keeps_key_value_heads.
template <typename Config>
Config narrowed_in_width(Config config, const ModelOptions& options) {
  const int64_t k = options.width_divisor;
  if (k > 1) {
    config.hidden_size /= k;
    config.intermediate_size /= k;
    config.num_heads /= k;
    if (!options.width_keeps_key_value_heads) config.num_kv_heads /= k;
  }
  return config;
}

// The largest power of two up to kMaxWidthDivisor (ModelCapabilities::max_width_divisor) that the
// heads divide by and the hidden size and the MLP width divide by to multiples of `granule`; with
// the key/value heads kept, the attention heads divided still a multiple of them.
template <typename Config>
int64_t max_width_divisor(const Config& c, bool keeping_key_value_heads, int64_t granule) {
  int64_t k = kMaxWidthDivisor;
  const auto divides = [&](int64_t by) {
    const bool heads = keeping_key_value_heads
                           ? c.num_heads % by == 0 && (c.num_heads / by) % c.num_kv_heads == 0
                           : c.num_kv_heads % by == 0 && c.num_heads % by == 0;
    return heads && c.hidden_size % (granule * by) == 0 &&
           c.intermediate_size % (granule * by) == 0;
  };
  while (k > 1 && !divides(k)) k /= 2;
  return k;
}

struct FineTuningEntry {
  std::string name;
  std::string task;
  std::string sample_unit;
  int64_t default_batch_size;
  int64_t default_seq_len;
  int64_t max_seq_len;
  std::string reference;
  std::function<BlockProjections(const ModelOptions&)> projections;
  // The model as built and counted with every weight trained: tuning is applied to it here.
  std::function<std::unique_ptr<TrainableModel>(const ModelOptions&)> create;
  std::function<ModelStats(const ModelOptions&)> count;
  TransformerShape shape;
  bool hidden = false;
};

inline ModelInfo fine_tuning_info(FineTuningEntry entry) {
  ModelInfo info;
  info.name = std::move(entry.name);
  info.family = "language-model";
  info.task = std::move(entry.task);
  info.sample_unit = std::move(entry.sample_unit);
  info.input_shape = {entry.default_seq_len};
  info.default_batch_size = entry.default_batch_size;
  info.reference = std::move(entry.reference);
  info.default_seq_len = entry.default_seq_len;
  info.max_seq_len = entry.max_seq_len;
  info.optimizer = "adamw";
  ModelCapabilities& can = info.capabilities;
  can.input = SyntheticInput::kTokenSequences;
  can.infers = true;
  can.graph_training = true;
  can.graph_inference = true;
  can.activation_checkpointing = true;
  can.products_in_linear_layers = true;
  can.blocks = entry.shape.layers;
  can.observed_blocks = true;
  can.vocab = entry.shape.vocab;
  can.hidden_size = entry.shape.hidden;
  can.attention_head_dim =
      entry.shape.head_dim > 0 ? entry.shape.head_dim : entry.shape.hidden / entry.shape.heads;
  can.weight_formats.push_back("fp8");
  info.hidden = entry.hidden;
  const int64_t default_seq_len = entry.default_seq_len;
  auto with_defaults = [default_seq_len](ModelOptions options) {
    if (options.seq_len <= 0) options.seq_len = default_seq_len;
    return options;
  };
  for (const Projection& projection : entry.projections(with_defaults(ModelOptions{})).per_block) {
    can.lora_roles.push_back(projection.role);
    can.lora_rank_limits[projection.role] = std::min(projection.in, projection.out);
  }
  info.create = [create = std::move(entry.create), with_defaults](const ModelOptions& options) {
    return create(with_defaults(options));
  };
  info.count = [count = std::move(entry.count), projections = entry.projections,
                with_defaults](const ModelOptions& given) {
    const ModelOptions options = with_defaults(given);
    ModelStats stats = count(options);
    count_model_transforms(stats, projections(options), options);
    return stats;
  };
  info.activation_bytes = [shape = entry.shape, with_defaults](const ModelOptions& given,
                                                               int64_t batch, int64_t bytes) {
    const ModelOptions options = with_defaults(given);
    return transformer_activation_bytes(shape, options.seq_len, batch, bytes,
                                        options.activation_checkpointing,
                                        options.placement.tensor_parallel_ranks());
  };
  return info;
}

}  // namespace gpubench::models
