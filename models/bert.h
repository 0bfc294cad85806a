// BERT for pre-training as Hugging Face's BertForPreTraining (and NVIDIA DeepLearningExamples'
// modeling.py) builds it: word, position and token-type embeddings, post-LayerNorm encoder blocks
// with GELU, a pooler, the masked-LM head (transform, then a decoder whose weight is tied to the
// word embeddings, with its own bias) and the next-sentence head. Throughput in sequences/sec.
#pragma once

#include <memory>

#include <torch/torch.h>

#include "modeling/fine_tuning_model.h"
#include "modeling/model_registry.h"

namespace gpubench::models {

struct BertConfig {
  int64_t vocab_size = 30522;
  int64_t hidden_size = 1024;
  int64_t num_layers = 24;
  int64_t num_heads = 16;
  int64_t intermediate_size = 4096;
  int64_t max_positions = 512;
  int64_t type_vocab_size = 2;
  double layer_norm_eps = 1e-12;
  double dropout = 0.1;  // hidden states and attention weights
};

BertConfig bert_large();
// Counts from the configuration, trained in full (tuning's part is added from outside:
// tuning::with_tuning, features/tuning/).
ModelStats bert_stats(const BertConfig& config, const ModelOptions& options);
// Its blocks and each block's projections by role; a sequence of seq_len tokens a sample.
BlockProjections bert_projections(const BertConfig& config, const ModelOptions& options);

class BertNetImpl;

struct BertOutput {
  torch::Tensor prediction_scores;        // [batch, tokens, vocab]
  torch::Tensor seq_relationship_scores;  // [batch, 2]
};

class BertModel : public TrainableModel {
 public:
  BertModel(const BertConfig& config, const ModelOptions& options);
  ~BertModel() override;

  torch::nn::Module& module() override;
  // Token ids, token types (the first half sentence A, the rest B), a full attention mask, 15 % of
  // positions as masked-LM targets (the others -100, ignored), random next-sentence labels.
  SyntheticBatch synthetic_batch(int64_t batch_size, torch::Device device,
                                 bool channels_last) override;
  torch::Tensor training_loss(const SyntheticBatch& batch) override;
  int64_t count_forward() override;
  void initialize_weights() override;
  int64_t tokens_per_item() const override { return seq_len_; }
  bool set_sequence_length(int64_t tokens) override {
    seq_len_ = tokens;
    return true;
  }
  // The encoder and the masked-LM head's scores.
  torch::Tensor inference_output(const SyntheticBatch& batch) override;

  // An all-ones mask is not applied (as Hugging Face's SDPA path drops it), so the fused
  // attention kernels run; any other mask is added to the attention scores.
  BertOutput forward(const torch::Tensor& tokens, const torch::Tensor& token_types,
                     const torch::Tensor& attention_mask);

 private:
  BertConfig config_;
  int64_t seq_len_;
  std::shared_ptr<BertNetImpl> net_;
  bool mask_is_full_ = true;  // decided once, when the batch is made
};

}  // namespace gpubench::models
