// OpenAI's gpt-oss, as Hugging Face's GptOssForCausalLM builds it: a decoder whose MLP is a
// mixture of experts (modeling/mixture_of_experts.h: top-k routing with a softmax over the chosen
// experts, each expert a SwiGLU clamped at swiglu_limit with sigmoid gain swiglu_alpha over
// interleaved gate and up columns, with biases), attention with biases and one learned sink logit
// per head, sliding-window attention on every other layer (the first included), rotary position
// embeddings with YaRN scaling, RMSNorm, an untied head. Causal-LM loss on synthetic tokens;
// throughput in tokens/sec. The released checkpoints hold the experts in MXFP4
// (modeling/mxfp4_weights.h), which is how infer holds them by default.
#pragma once

#include <memory>

#include <torch/torch.h>

#include "modeling/fine_tuning_model.h"
#include "modeling/model_registry.h"

namespace gpubench::models {

struct GptOssConfig {
  int64_t vocab_size = 201088;
  int64_t hidden_size = 2880;
  int64_t intermediate_size = 2880;  // each expert's
  int64_t num_layers = 36;
  int64_t num_heads = 64;
  int64_t num_kv_heads = 8;
  int64_t head_dim = 64;
  int64_t num_experts = 128;
  int64_t experts_per_token = 4;
  int64_t sliding_window = 128;
  double rope_theta = 150000;
  // YaRN (Peng et al. 2023): factor, the correction range's rotations, the original context.
  double yarn_factor = 32;
  double yarn_beta_fast = 32;
  double yarn_beta_slow = 1;
  int64_t yarn_original_max_positions = 4096;
  double rms_norm_eps = 1e-5;
  double swiglu_alpha = 1.702;
  double swiglu_limit = 7.0;
  int64_t max_positions = 131072;
  // Inference's attention goes through its queries in blocks whose float32 scores take at most
  // this many bytes (at least one row): not Hugging Face's eager attention, which holds every
  // row's at once, but the same figures row by row.
  int64_t attention_block_bytes = int64_t{1} << 30;

  // Hugging Face's layer_types: sliding attention on even layers, full on odd ones.
  bool sliding(int64_t layer) const { return layer % 2 == 0; }
};

GptOssConfig gpt_oss_20b();
GptOssConfig gpt_oss_120b();

// Counts from the configuration alone (ModelStats::active_params: per token, all but the
// embedding table and the experts not chosen, as OpenAI's model card counts them).
// Trained in full; tuning's part is added from outside (tuning::with_tuning, features/tuning/).
ModelStats gpt_oss_stats(const GptOssConfig& config, const ModelOptions& options);
// Its blocks and each block's attention projections by role (the experts are not projections:
// nothing applied from outside by role reaches them).
BlockProjections gpt_oss_projections(const GptOssConfig& config);

// The attention's largest transient on the prompt's pass at `batch` x `tokens` (inference): the
// float32 scores of one block of query rows, twice (the softmax's input and output), and its mask.
int64_t prefill_score_bytes(const GptOssConfig& config, const ModelOptions& options, int64_t batch,
                            int64_t tokens);

// The inverse rotary frequencies [head_dim / 2] with YaRN's blend and its attention factor
// (0.1 ln(factor) + 1), which scales the cos and sin tables.
struct YarnRotary {
  torch::Tensor inverse_frequencies;  // float32
  double attention_factor = 1;
};
YarnRotary yarn_rotary(const GptOssConfig& config);

class GptOssNetImpl;

class GptOssModel : public TrainableModel, public TextGenerator {
 public:
  GptOssModel(const GptOssConfig& config, const ModelOptions& options);
  ~GptOssModel() override;

  torch::nn::Module& module() override;
  SyntheticBatch synthetic_batch(int64_t batch_size, torch::Device device,
                                 bool channels_last) override;
  torch::Tensor training_loss(const SyntheticBatch& batch) override;
  int64_t count_forward() override;
  void initialize_weights() override;
  void initialize_routing() override;
  void cast_for_inference(torch::ScalarType dtype) override;
  int64_t samples_per_item() const override { return seq_len_; }
  int64_t tokens_per_item() const override { return seq_len_; }
  bool set_sequence_length(int64_t tokens) override {
    seq_len_ = tokens;
    return true;
  }

  torch::Tensor inference_output(const SyntheticBatch& batch) override;
  TextGenerator* text_generator() override { return this; }

  KvCache allocate_cache(int64_t batch, int64_t capacity, torch::Device device,
                         torch::ScalarType dtype) override;
  torch::Tensor next_token_logits(const torch::Tensor& tokens, KvCache& cache) override;
  // The MoE layer's grouping reads how many tokens each expert took on the host, so no decode
  // step is captured (the model declares no graph-mode inference).
  torch::Tensor next_token_logits_at(const torch::Tensor& token, const torch::Tensor& position,
                                     KvCache& cache) override;
  torch::Tensor last_logits_without_cache(const torch::Tensor& tokens) override;
  bool decode_converts_cache(torch::Device device, torch::ScalarType cache,
                             torch::ScalarType compute) const override;
  int64_t vocab_size() const override { return config_.vocab_size; }
  int64_t context_length() const override { return config_.max_positions; }

  // Logits [batch, tokens, vocab] for token ids [batch, tokens].
  torch::Tensor logits(const torch::Tensor& tokens);

 private:
  GptOssConfig config_;
  int64_t seq_len_;
  std::shared_ptr<GptOssNetImpl> net_;
};

}  // namespace gpubench::models
