// The Llama family of decoders as Hugging Face's LlamaForCausalLM builds them: RMSNorm before
// attention and MLP, rotary position embeddings (with Llama 3.1's frequency scaling where the
// configuration has it), grouped-query attention, a SwiGLU MLP, no biases, an LM head tied to the
// embeddings or not. Causal-LM loss on synthetic tokens; throughput in tokens/sec.
#pragma once

#include <memory>

#include <torch/torch.h>

#include "modeling/fine_tuning_model.h"
#include "modeling/model_registry.h"

namespace gpubench::models {

struct LlamaConfig {
  int64_t vocab_size = 32000;
  int64_t hidden_size = 4096;
  int64_t intermediate_size = 11008;
  int64_t num_layers = 32;
  int64_t num_heads = 32;
  int64_t num_kv_heads = 32;  // fewer than num_heads: grouped-query attention
  double rope_theta = 10000;
  // Llama 3.1's rope_scaling ("llama3"); factor 0: none.
  double rope_scaling_factor = 0;
  double rope_low_freq_factor = 1;
  double rope_high_freq_factor = 4;
  int64_t rope_original_max_positions = 8192;
  double rms_norm_eps = 1e-5;
  bool tie_embeddings = false;
  int64_t max_positions = 4096;  // the context the model was trained for

  int64_t head_dim() const { return hidden_size / num_heads; }
};

LlamaConfig llama_3_2_1b();
LlamaConfig llama_2_7b();
LlamaConfig llama_3_8b();
// Llama 3.1 (Hugging Face's config.json of meta-llama/Llama-3.1-8B, -70B and -405B): rotary
// scaling "llama3" with factor 8 over an original context of 8,192, a context of 131,072.
LlamaConfig llama_3_1_8b();
LlamaConfig llama_3_1_70b();
LlamaConfig llama_3_1_405b();

// What measure_instance would count for this configuration trained in full, from the
// configuration alone (the 7B and 8B models do not fit in a test machine's memory in float32);
// tuning's part is added from outside the model (tuning::with_tuning, features/tuning/).
ModelStats llama_stats(const LlamaConfig& config, const ModelOptions& options);

// Its blocks and each block's projections by role.
BlockProjections llama_projections(const LlamaConfig& config);

class LlamaNetImpl;

class LlamaModel : public TrainableModel, public TextGenerator {
 public:
  LlamaModel(const LlamaConfig& config, const ModelOptions& options);
  ~LlamaModel() override;

  torch::nn::Module& module() override;
  SyntheticBatch synthetic_batch(int64_t batch_size, torch::Device device,
                                 bool channels_last) override;
  torch::Tensor training_loss(const SyntheticBatch& batch) override;
  int64_t count_forward() override;
  void initialize_weights() override;
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
  torch::Tensor next_token_logits_at(const torch::Tensor& token, const torch::Tensor& position,
                                     KvCache& cache) override;
  torch::Tensor last_logits_without_cache(const torch::Tensor& tokens) override;
  bool decode_converts_cache(torch::Device device, torch::ScalarType cache,
                             torch::ScalarType compute) const override;
  int64_t vocab_size() const override { return config_.vocab_size; }
  int64_t context_length() const override { return config_.max_positions; }

  // Logits [batch, tokens, vocab] for token ids [batch, tokens].
  torch::Tensor logits(const torch::Tensor& tokens);
  // cos and sin [n, head_dim] of the rotary angles at positions start..start+n, float32.
  std::vector<torch::Tensor> rotary_tables(int64_t start, int64_t n);

 private:
  LlamaConfig config_;
  int64_t seq_len_;
  std::shared_ptr<LlamaNetImpl> net_;
};

}  // namespace gpubench::models
