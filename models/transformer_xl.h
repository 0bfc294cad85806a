// Transformer-XL (Dai et al. 2019) as NVIDIA DeepLearningExamples' PyTorch MemTransformerLM
// builds it for WikiText-103: relative positional attention with the learnable global biases,
// adaptive input embedding and adaptive softmax with tied weights, segment-level recurrence.
#pragma once

#include <vector>

#include <torch/torch.h>

#include "modeling/model_registry.h"

namespace gpubench::models {

struct TransformerXLConfig {
  int64_t n_token = 267735;  // WikiText-103's vocabulary
  int64_t n_layer = 16;
  int64_t n_head = 8;
  int64_t d_head = 64;
  int64_t d_model = 512;
  int64_t d_embed = 512;
  int64_t d_inner = 2048;
  double dropout = 0.1;
  double dropatt = 0.0;
  int64_t div_val = 1;
  std::vector<int64_t> cutoffs = {19997, 39997, 199997};
  int64_t tgt_len = 192;
  int64_t mem_len = 192;
};

TransformerXLConfig transformer_xl_base();
TransformerXLConfig transformer_xl_large();

struct SegmentOutput {
  torch::Tensor hidden;               // [tgt_len, batch, d_model]
  torch::Tensor nll;                  // [tgt_len * batch], float32
  std::vector<torch::Tensor> memory;  // per layer [<= mem_len, batch, d_model], detached
};

class TransformerXLNetImpl;

// The trainable language model: a synthetic token stream on the device, consumed one segment
// per step, with each step's hidden states kept (detached) as the next step's memory.
class TransformerXLModel : public TrainableModel {
 public:
  // defer_initialization: NVIDIA's initialisation waits for initialize_weights().
  explicit TransformerXLModel(const TransformerXLConfig& config, bool defer_initialization = false);
  ~TransformerXLModel() override;

  void initialize_weights() override;

  torch::nn::Module& module() override;
  SyntheticBatch synthetic_batch(int64_t batch_size, torch::Device device,
                                 bool channels_last) override;
  torch::Tensor training_loss(const SyntheticBatch& batch) override;
  int64_t count_forward() override;
  int64_t samples_per_item() const override { return config_.tgt_len; }

  // One segment with an explicit memory (empty: none); does not touch the model's own memory.
  SegmentOutput run_segment(const torch::Tensor& tokens, const torch::Tensor& targets,
                            const std::vector<torch::Tensor>& memory);
  const std::vector<torch::Tensor>& memory() const { return memory_; }
  void set_memory(std::vector<torch::Tensor> memory) { memory_ = std::move(memory); }
  void rewind() { position_ = 0; }  // the next step reads the stream's first segment again
  void clear_recurrent_memory() override { memory_.clear(); }
  const TransformerXLConfig& config() const { return config_; }

 private:
  TransformerXLConfig config_;
  std::shared_ptr<TransformerXLNetImpl> net_;
  std::vector<torch::Tensor> memory_;
  int64_t position_ = 0;
};

}  // namespace gpubench::models
