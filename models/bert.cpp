#include "models/bert.h"

#include <cmath>

#include "modeling/adapted_linear.h"
#include "modeling/block_observer.h"
#include "modeling/fine_tuning_model.h"
#include "modeling/flop_counter.h"
#include "modeling/layers.h"
#include "torch_support/compat.h"

namespace gpubench::models {
namespace {

using layers::AdaptedLinear;
using layers::normed;
using torch::Tensor;
namespace F = torch::nn::functional;

torch::nn::LayerNorm layer_norm(const BertConfig& c) {
  return torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.hidden_size}).eps(c.layer_norm_eps));
}

// BERT's exact (erf) GELU.
Tensor erf_gelu(const Tensor& x) {
  return x * 0.5 * (1.0 + torch::erf(x / std::sqrt(2.0)));
}

class EncoderLayerImpl : public torch::nn::Module, public CheckpointableBlock {
 public:
  explicit EncoderLayerImpl(const BertConfig& c)
      : heads_(c.num_heads), head_dim_(c.hidden_size / c.num_heads), dropout_(c.dropout) {
    const int64_t h = c.hidden_size;
    auto attention = register_module("attention", std::make_shared<torch::nn::Module>());
    auto self = attention->register_module("self", std::make_shared<torch::nn::Module>());
    query = self->register_module("query", AdaptedLinear(h, h, true, "q"));
    key = self->register_module("key", AdaptedLinear(h, h, true, "k"));
    value = self->register_module("value", AdaptedLinear(h, h, true, "v"));
    auto attention_output =
        attention->register_module("output", std::make_shared<torch::nn::Module>());
    attention_dense = attention_output->register_module("dense", AdaptedLinear(h, h, true, "o"));
    attention_norm = attention_output->register_module("LayerNorm", layer_norm(c));
    auto intermediate = register_module("intermediate", std::make_shared<torch::nn::Module>());
    intermediate_dense =
        intermediate->register_module("dense", AdaptedLinear(h, c.intermediate_size, true, "up"));
    auto output = register_module("output", std::make_shared<torch::nn::Module>());
    output_dense =
        output->register_module("dense", AdaptedLinear(c.intermediate_size, h, true, "down"));
    output_norm = output->register_module("LayerNorm", layer_norm(c));
  }

  // extras: empty, or the additive attention mask [batch, 1, 1, tokens].
  Tensor run_block(const Tensor& x, const std::vector<Tensor>& extras) override {
    const int64_t batch = x.size(0), tokens = x.size(1);
    auto heads = [&](AdaptedLinear& proj) {
      return proj(x).view({batch, tokens, heads_, head_dim_}).transpose(1, 2);
    };
    const Tensor q = heads(query), k = heads(key), v = heads(value);
    const double dropout = is_training() ? dropout_ : 0.0;
    Tensor context;
    if (extras.empty()) {
      context = compat::scaled_dot_product_attention(q, k, v, dropout, /*causal=*/false);
    } else {
      const Tensor scores =
          torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(static_cast<double>(head_dim_)) +
          extras[0].to(q.scalar_type());
      context =
          torch::matmul(torch::dropout(torch::softmax(scores, -1), dropout, is_training()), v);
    }
    FlopCounter::record_multiply_adds(2 * batch * heads_ * tokens * tokens * head_dim_);
    context = context.transpose(1, 2).reshape({batch, tokens, heads_ * head_dim_});
    const Tensor h = normed(attention_norm,
                            x + torch::dropout(attention_dense(context), dropout_, is_training()));
    const Tensor up = erf_gelu(intermediate_dense(h));
    return normed(output_norm, h + torch::dropout(output_dense(up), dropout_, is_training()));
  }

  AdaptedLinear query{nullptr}, key{nullptr}, value{nullptr}, attention_dense{nullptr};
  AdaptedLinear intermediate_dense{nullptr}, output_dense{nullptr};
  torch::nn::LayerNorm attention_norm{nullptr}, output_norm{nullptr};

 private:
  int64_t heads_, head_dim_;
  double dropout_;
};
TORCH_MODULE(EncoderLayer);

}  // namespace

class BertNetImpl : public torch::nn::Module {
 public:
  BertNetImpl(const BertConfig& c, bool defer_initialization) : c_(c) {
    const int64_t h = c.hidden_size;
    auto bert = register_module("bert", std::make_shared<torch::nn::Module>());
    auto embeddings = bert->register_module("embeddings", std::make_shared<torch::nn::Module>());
    word_embeddings =
        embeddings->register_module("word_embeddings", uninitialised_embedding(c.vocab_size, h));
    position_embeddings = embeddings->register_module("position_embeddings",
                                                      uninitialised_embedding(c.max_positions, h));
    token_type_embeddings = embeddings->register_module(
        "token_type_embeddings", uninitialised_embedding(c.type_vocab_size, h));
    embedding_norm = embeddings->register_module("LayerNorm", layer_norm(c));
    auto encoder = bert->register_module("encoder", std::make_shared<torch::nn::Module>());
    auto list = encoder->register_module("layer", torch::nn::ModuleList());
    for (int64_t i = 0; i < c.num_layers; ++i) {
      layers.push_back(EncoderLayer(c));
      list->push_back(layers.back());
    }
    auto pooler = bert->register_module("pooler", std::make_shared<torch::nn::Module>());
    pooler_dense = pooler->register_module("dense", AdaptedLinear(h, h, true, ""));
    auto cls = register_module("cls", std::make_shared<torch::nn::Module>());
    auto predictions = cls->register_module("predictions", std::make_shared<torch::nn::Module>());
    auto transform =
        predictions->register_module("transform", std::make_shared<torch::nn::Module>());
    transform_dense = transform->register_module("dense", AdaptedLinear(h, h, true, ""));
    transform_norm = transform->register_module("LayerNorm", layer_norm(c));
    // The decoder's weight is the word embeddings' (tied); only its bias is its own.
    decoder_bias = predictions->register_parameter("bias", torch::zeros({c.vocab_size}));
    seq_relationship = cls->register_module("seq_relationship", AdaptedLinear(h, 2, true, ""));
    if (!defer_initialization) initialize();
  }

  BertOutput forward(const Tensor& tokens, const Tensor& token_types, const Tensor& mask) {
    const int64_t n = tokens.size(1);
    const Tensor positions = torch::arange(n, tokens.options()).unsqueeze(0);
    Tensor hidden = word_embeddings(tokens) + token_type_embeddings(token_types) +
                    position_embeddings(positions);
    hidden = torch::dropout(normed(embedding_norm, hidden), c_.dropout, is_training());
    std::vector<Tensor> extras;
    if (mask.defined()) {
      extras.push_back(((1.0 - mask.to(torch::kFloat)) * -10000.0).unsqueeze(1).unsqueeze(2));
    }
    for (EncoderLayer& layer : layers) {
      hidden = run_observed_block(*layer, hidden, extras);
    }
    BertOutput out;
    const Tensor transformed = normed(transform_norm, erf_gelu(transform_dense(hidden)));
    // The decoder is tied to the word embeddings, a linear layer all the same.
    out.prediction_scores = decoder_.forward(transformed, word_embeddings->weight, decoder_bias);
    const Tensor pooled = torch::tanh(pooler_dense(hidden.select(1, 0)));
    out.seq_relationship_scores = seq_relationship(pooled);
    return out;
  }

  torch::nn::Embedding word_embeddings{nullptr}, position_embeddings{nullptr},
      token_type_embeddings{nullptr};
  torch::nn::LayerNorm embedding_norm{nullptr}, transform_norm{nullptr};
  std::vector<EncoderLayer> layers;
  AdaptedLinear pooler_dense{nullptr}, transform_dense{nullptr}, seq_relationship{nullptr};
  Tensor decoder_bias;
  layers::LinearCompute decoder_;

 public:
  // Hugging Face's BertPreTrainedModel: normal(0, 0.02) weights and embeddings, zero biases,
  // LayerNorms weight one, bias zero.
  void initialize() {
    torch::NoGradGuard no_grad;
    for (auto& [name, parameter] : layers::own_parameters(*this)) {
      if (name.find("LayerNorm") != std::string::npos) {
        parameter.fill_(name.find("weight") != std::string::npos ? 1.0 : 0.0);
      } else if (name.size() >= 4 && name.compare(name.size() - 4, 4, "bias") == 0) {
        parameter.zero_();
      } else {
        parameter.normal_(0.0, 0.02);
      }
    }
  }

 private:
  BertConfig c_;
};

BertModel::BertModel(const BertConfig& config, const ModelOptions& options)
    : config_(config),
      seq_len_(options.seq_len),
      net_(std::make_shared<BertNetImpl>(config, options.defer_initialization)) {}

BertModel::~BertModel() = default;

void BertModel::initialize_weights() {
  net_->initialize();
}

torch::nn::Module& BertModel::module() {
  return *net_;
}

BertOutput BertModel::forward(const Tensor& tokens, const Tensor& token_types,
                              const Tensor& attention_mask) {
  return net_->forward(tokens, token_types, attention_mask);
}

SyntheticBatch BertModel::synthetic_batch(int64_t batch_size, torch::Device device, bool) {
  const auto longs = torch::TensorOptions().device(device).dtype(torch::kLong);
  const Tensor tokens = torch::randint(config_.vocab_size, {batch_size, seq_len_}, longs);
  const Tensor token_types = (torch::arange(seq_len_, longs) >= seq_len_ / 2)
                                 .to(torch::kLong)
                                 .expand({batch_size, seq_len_});
  const Tensor mask = torch::ones({batch_size, seq_len_}, longs);
  // 15 % of positions in each sequence (at least one) predict a random token.
  const int64_t masked = std::max<int64_t>(1, static_cast<int64_t>(std::lround(0.15 * seq_len_)));
  const Tensor chosen = torch::rand({batch_size, seq_len_}, torch::TensorOptions().device(device))
                            .argsort(/*dim=*/int64_t{1})
                            .narrow(1, 0, masked);
  const Tensor labels =
      torch::full({batch_size, seq_len_}, -100, longs)
          .scatter(1, chosen, torch::randint(config_.vocab_size, {batch_size, masked}, longs));
  const Tensor next_sentence = torch::randint(2, {batch_size}, longs);
  mask_is_full_ = mask.all().item<bool>();
  return {tokens, labels, {token_types.contiguous(), mask, next_sentence}};
}

// The pre-training loss: masked-LM cross-entropy over the chosen positions plus next-sentence
// cross-entropy, in float32.
Tensor BertModel::training_loss(const SyntheticBatch& batch) {
  const Tensor& mask = batch.extras[1];
  const BertOutput out = forward(batch.inputs, batch.extras[0], mask_is_full_ ? Tensor() : mask);
  const Tensor mlm = torch::nn::functional::cross_entropy(
      out.prediction_scores.reshape({-1, config_.vocab_size}).to(torch::kFloat),
      batch.targets.reshape({-1}),
      torch::nn::functional::CrossEntropyFuncOptions().ignore_index(-100));
  const Tensor nsp =
      torch::cross_entropy_loss(out.seq_relationship_scores.to(torch::kFloat), batch.extras[2]);
  return mlm + nsp;
}

Tensor BertModel::inference_output(const SyntheticBatch& batch) {
  return forward(batch.inputs, batch.extras[0], mask_is_full_ ? Tensor() : batch.extras[1])
      .prediction_scores;
}

int64_t BertModel::count_forward() {
  const Tensor tokens = torch::zeros({1, seq_len_}, torch::kLong);
  forward(tokens, tokens, Tensor());
  return 1;
}

BlockProjections bert_projections(const BertConfig& c, const ModelOptions& options) {
  const int64_t h = c.hidden_size, i = c.intermediate_size;
  return {c.num_layers,
          {{"q", h, h}, {"k", h, h}, {"v", h, h}, {"o", h, h}, {"up", h, i}, {"down", i, h}},
          options.seq_len};
}

ModelStats bert_stats(const BertConfig& c, const ModelOptions& options) {
  const int64_t h = c.hidden_size, i = c.intermediate_size, s = options.seq_len, v = c.vocab_size;
  const int64_t block_weights = 4 * h * h + 2 * h * i;
  const int64_t block_params = block_weights + 4 * h + i + h + 4 * h;  // + biases + 2 LayerNorms
  const int64_t embeddings = (v + c.max_positions + c.type_vocab_size) * h + 2 * h;
  const int64_t heads = (h * h + h) + (h * h + h + 2 * h) + v + (2 * h + 2);  // pooler, MLM, NSP
  ModelStats stats;
  stats.params = embeddings + c.num_layers * block_params + heads;
  stats.trainable_params = stats.params;
  // Per sequence: every token through the blocks, the attention products over s positions and
  // the MLM head; the pooler and NSP head once.
  const int64_t weight_macs = s * (c.num_layers * block_weights + h * h + h * v) + h * h + 2 * h;
  const int64_t attention_macs = s * c.num_layers * 2 * s * h;
  stats.forward_flops = 2 * (weight_macs + attention_macs);
  stats.weight_flops = 2 * weight_macs;
  return stats;
}

BertConfig bert_large() {
  return {};
}

namespace {

ModelInfo bert_info(std::string name, BertConfig config, int64_t default_seq_len,
                    std::string reference, bool hidden = false) {
  ModelInfo info = fine_tuning_info(
      {std::move(name),
       "masked-language-modeling",
       "sequences",
       32,
       default_seq_len,
       config.max_positions,
       std::move(reference),
       [config](const ModelOptions& options) {
         return bert_projections(reduced(config, options), options);
       },
       [config](const ModelOptions& options) -> std::unique_ptr<TrainableModel> {
         return std::make_unique<BertModel>(reduced(config, options), options);
       },
       [config](const ModelOptions& options) {
         return bert_stats(reduced(config, options), options);
       },
       {config.num_layers, config.hidden_size, config.num_heads, config.vocab_size},
       hidden});
  return info;
}

const ModelRegistration kBertLarge{with_default_counts(
    bert_info("bert-large", bert_large(), 128,
              "BERT-large uncased pre-training (Hugging Face BertForPreTraining / NVIDIA "
              "DeepLearningExamples: 24 layers, hidden 1024, 16 heads, vocabulary 30522, tied MLM "
              "decoder)"),
    336226108, 336226108, 87191719936)};

BertConfig tiny_bert_config() {
  BertConfig c;
  c.vocab_size = 200;
  c.hidden_size = 32;
  c.num_layers = 2;
  c.num_heads = 4;
  c.intermediate_size = 64;
  c.max_positions = 64;
  return c;
}

const ModelRegistration kTinyBert{bert_info("test-tiny-bert", tiny_bert_config(), 16,
                                            "a test model: BERT, 2 layers, hidden 32", true)};

}  // namespace
}  // namespace gpubench::models
