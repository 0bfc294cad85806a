#include "models/transformer_xl.h"

#include <cmath>
#include <numeric>

#include "modeling/flop_counter.h"
#include "modeling/layers.h"
#include "torch_support/compat.h"

namespace gpubench::models {
namespace {

using layers::Linear;
using torch::Tensor;

Linear linear(int64_t in, int64_t out, bool bias) {
  return Linear(torch::nn::LinearOptions(in, out).bias(bias));
}

// A module holding numbered parameters ("0", "1", ...), like torch.nn.ParameterList.
class ParameterListImpl : public torch::nn::Module {
 public:
  Tensor add(Tensor parameter) {
    return register_parameter(std::to_string(count_++), std::move(parameter));
  }

 private:
  int count_ = 0;
};
TORCH_MODULE(ParameterList);

// Counts a matrix product's multiply-adds (the einsums and projections torch::nn does not see).
void count(int64_t multiply_adds) {
  FlopCounter::record_multiply_adds(multiply_adds);
}

class RelPartialLearnableAttentionImpl : public torch::nn::Module {
 public:
  explicit RelPartialLearnableAttentionImpl(const TransformerXLConfig& c)
      : n_head_(c.n_head),
        d_head_(c.d_head),
        dropout_(c.dropout),
        dropatt_(c.dropatt),
        qkv_net(register_module("qkv_net", linear(c.d_model, 3 * c.n_head * c.d_head, false))),
        r_net(register_module("r_net", linear(c.d_model, c.n_head * c.d_head, false))),
        o_net(register_module("o_net", linear(c.n_head * c.d_head, c.d_model, false))),
        layer_norm(register_module(
            "layer_norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.d_model})))) {}

  // w [qlen, bsz, d_model], r [klen, d_model], memory [mlen, bsz, d_model] or undefined.
  Tensor forward(const Tensor& w, const Tensor& r, const Tensor& r_w_bias, const Tensor& r_r_bias,
                 const Tensor& mask, const Tensor& memory) {
    const int64_t qlen = w.size(0), bsz = w.size(1), rlen = r.size(0);
    const Tensor cat = memory.defined() && memory.size(0) > 0 ? torch::cat({memory, w}, 0) : w;
    const int64_t klen = cat.size(0);
    const auto heads = qkv_net(cat).chunk(3, -1);
    const Tensor q = heads[0].narrow(0, klen - qlen, qlen).reshape({qlen, bsz, n_head_, d_head_});
    const Tensor k = heads[1].reshape({klen, bsz, n_head_, d_head_});
    const Tensor v = heads[2].reshape({klen, bsz, n_head_, d_head_});
    const Tensor r_k = r_net(r).reshape({rlen, n_head_, d_head_});

    const Tensor ac = torch::einsum("ibnd,jbnd->bnij", {q + r_w_bias, k});
    const Tensor bd = rel_shift(torch::einsum("ibnd,jnd->bnij", {q + r_r_bias, r_k}));
    Tensor score = (ac + bd) * (1.0 / std::sqrt(static_cast<double>(d_head_)));
    score = score.masked_fill(mask.unsqueeze(0).unsqueeze(0), -INFINITY);
    const Tensor prob = torch::dropout(torch::softmax(score, 3), dropatt_, is_training());
    const Tensor vec = torch::einsum("bnij,jbnd->ibnd", {prob, v})
                           .contiguous()
                           .view({qlen, bsz, n_head_ * d_head_});
    // The three attention products: query x key, query x relative position, weights x value.
    count(3 * bsz * n_head_ * qlen * klen * d_head_);
    const Tensor out = torch::dropout(o_net(vec), dropout_, is_training());
    return layers::normed(layer_norm, w + out);
  }

  int64_t n_head_, d_head_;
  double dropout_, dropatt_;
  Linear qkv_net, r_net, o_net;
  torch::nn::LayerNorm layer_norm;

 private:
  // Aligns relative positions: row i of [b, n, i, j] shifted so that column j is distance i - j.
  static Tensor rel_shift(const Tensor& x) {
    const Tensor zero_pad = torch::zeros({x.size(0), x.size(1), x.size(2), 1}, x.options());
    const Tensor padded =
        torch::cat({zero_pad, x}, 3).view({x.size(0), x.size(1), x.size(3) + 1, x.size(2)});
    return padded.narrow(2, 1, x.size(3)).view_as(x);
  }
};
TORCH_MODULE(RelPartialLearnableAttention);

class PositionwiseFFImpl : public torch::nn::Module {
 public:
  explicit PositionwiseFFImpl(const TransformerXLConfig& c)
      : dropout_(c.dropout),
        CoreNet(register_module("CoreNet", torch::nn::Sequential())),
        layer_norm(register_module(
            "layer_norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.d_model})))) {
    // NVIDIA's indices: 0 Linear, 1 ReLU, 2 Dropout, 3 Linear, 4 Dropout.
    CoreNet->push_back(linear(c.d_model, c.d_inner, true));
    CoreNet->push_back(torch::nn::ReLU());
    CoreNet->push_back(torch::nn::Dropout(c.dropout));
    CoreNet->push_back(linear(c.d_inner, c.d_model, true));
    CoreNet->push_back(torch::nn::Dropout(c.dropout));
  }
  Tensor forward(const Tensor& x) { return layers::normed(layer_norm, x + CoreNet->forward(x)); }

  double dropout_;
  torch::nn::Sequential CoreNet;
  torch::nn::LayerNorm layer_norm;
};
TORCH_MODULE(PositionwiseFF);

class DecoderLayerImpl : public torch::nn::Module {
 public:
  explicit DecoderLayerImpl(const TransformerXLConfig& c)
      : dec_attn(register_module("dec_attn", RelPartialLearnableAttention(c))),
        pos_ff(register_module("pos_ff", PositionwiseFF(c))) {}
  RelPartialLearnableAttention dec_attn;
  PositionwiseFF pos_ff;
};
TORCH_MODULE(DecoderLayer);

// Cluster i covers tokens [ends[i], ends[i + 1]).
std::vector<int64_t> cluster_ends(const TransformerXLConfig& c) {
  std::vector<int64_t> ends{0};
  ends.insert(ends.end(), c.cutoffs.begin(), c.cutoffs.end());
  ends.push_back(c.n_token);
  return ends;
}

// Per-cluster embedding width: d_embed / div_val^i.
int64_t cluster_width(const TransformerXLConfig& c, size_t i) {
  int64_t width = c.d_embed;
  for (size_t k = 0; k < i; ++k) width /= c.div_val;
  return width;
}

}  // namespace

// The network: adaptive embedding, the decoder layers, the tied adaptive softmax.
class TransformerXLNetImpl : public torch::nn::Module {
 public:
  TransformerXLNetImpl(const TransformerXLConfig& c, bool defer_initialization)
      : c_(c), ends_(cluster_ends(c)) {
    auto word_emb = register_module("word_emb", std::make_shared<torch::nn::Module>());
    auto emb_layers =
        word_emb->register_module("emb_layers", std::make_shared<torch::nn::Module>());
    auto emb_projs = word_emb->register_module("emb_projs", ParameterList());
    const size_t clusters = c.div_val == 1 ? 1 : ends_.size() - 1;
    for (size_t i = 0; i < clusters; ++i) {
      const int64_t rows = c.div_val == 1 ? c.n_token : ends_[i + 1] - ends_[i];
      auto embedding = torch::nn::Embedding(rows, cluster_width(c, i));
      emb_layers->register_module(std::to_string(i), embedding);
      emb_weights_.push_back(embedding->weight);
      if (c.div_val != 1 || c.d_model != c.d_embed) {
        emb_projs_.push_back(emb_projs->add(torch::zeros({c.d_model, cluster_width(c, i)})));
      }
    }
    auto layer_list = register_module("layers", torch::nn::ModuleList());
    for (int64_t i = 0; i < c.n_layer; ++i) {
      layers_.push_back(DecoderLayer(c));
      layer_list->push_back(layers_.back());
    }
    r_w_bias_ = register_parameter("r_w_bias", torch::zeros({c.n_head, c.d_head}));
    r_r_bias_ = register_parameter("r_r_bias", torch::zeros({c.n_head, c.d_head}));
    // Adaptive softmax: output weights tied to the embeddings; projections tied except the
    // head's when div_val > 1 (NVIDIA's tie_projs = [False, True, True, True]).
    auto crit = register_module("crit", std::make_shared<torch::nn::Module>());
    const auto n_clusters = static_cast<int64_t>(c.cutoffs.size());
    cluster_weight_ =
        crit->register_parameter("cluster_weight", torch::zeros({n_clusters, c.d_embed}));
    cluster_bias_ = crit->register_parameter("cluster_bias", torch::zeros({n_clusters}));
    auto biases = crit->register_module("out_layers_biases", ParameterList());
    for (size_t i = 0; i < clusters; ++i) {
      const int64_t rows = c.div_val == 1 ? c.n_token : ends_[i + 1] - ends_[i];
      out_biases_.push_back(biases->add(torch::zeros({rows})));
    }
    if (c.div_val != 1) {
      auto projs = crit->register_module("out_projs", ParameterList());
      head_out_proj_ = projs->add(torch::zeros({c.d_model, c.d_embed}));
    }
    if (!defer_initialization) initialize();
  }

  SegmentOutput forward(const Tensor& tokens, const Tensor& targets,
                        const std::vector<Tensor>& memory) {
    const int64_t qlen = tokens.size(0);
    const int64_t mlen = memory.empty() ? 0 : memory[0].size(0);
    const int64_t klen = mlen + qlen;
    const Tensor embedded = embed(tokens);
    const Tensor mask =
        torch::triu(torch::ones({qlen, klen}, tokens.options().dtype(torch::kBool)), 1 + mlen);
    const Tensor positions = torch::arange(klen - 1, -1, -1.0, embedded.options());
    const Tensor inv_freq =
        1.0 /
        torch::pow(10000.0, torch::arange(0.0, c_.d_model, 2.0, embedded.options()) / c_.d_model);
    const Tensor sinusoid = torch::outer(positions, inv_freq);
    const Tensor pos_emb =
        torch::dropout(torch::cat({sinusoid.sin(), sinusoid.cos()}, -1), c_.dropout, is_training());

    Tensor core = torch::dropout(embedded, c_.dropout, is_training());
    std::vector<Tensor> hidden_states;
    for (size_t i = 0; i < layers_.size(); ++i) {
      hidden_states.push_back(core.detach());
      const Tensor layer_memory = memory.empty() ? Tensor() : memory[i];
      core = layers_[i]->dec_attn(core, pos_emb, r_w_bias_, r_r_bias_, mask, layer_memory);
      core = layers_[i]->pos_ff(core);
    }
    core = torch::dropout(core, c_.dropout, is_training());

    SegmentOutput out;
    out.hidden = core;
    for (size_t i = 0; i < layers_.size(); ++i) {
      const Tensor all =
          memory.empty() ? hidden_states[i] : torch::cat({memory[i], hidden_states[i]}, 0);
      const int64_t keep = std::min(c_.mem_len, all.size(0));
      out.memory.push_back(all.narrow(0, all.size(0) - keep, keep).detach());
    }
    out.nll = adaptive_nll(core.reshape({-1, c_.d_model}), targets.reshape({-1}));
    return out;
  }

  // NVIDIA's train.py: normal(0, 0.02) weights, normal(0, 0.01) projections and embeddings,
  // zero biases, layer norms normal(1, 0.02).
  void initialize() {
    torch::NoGradGuard no_grad;
    for (auto& item : named_parameters()) {
      const std::string& name = item.key();
      Tensor& p = item.value();
      if (name.find("layer_norm.weight") != std::string::npos) {
        p.normal_(1.0, 0.02);
      } else if (name.find("bias") != std::string::npos && name.find("r_") != 0) {
        p.zero_();
      } else if (name.find("proj") != std::string::npos ||
                 name.find("emb_layers") != std::string::npos) {
        p.normal_(0.0, 0.01);
      } else {
        p.normal_(0.0, 0.02);
      }
    }
  }

 private:
  Tensor embed(const Tensor& tokens) {
    const double scale = std::sqrt(static_cast<double>(c_.d_model));
    if (c_.div_val == 1 && emb_projs_.empty()) {
      return torch::embedding(emb_weights_[0], tokens) * scale;
    }
    const Tensor flat = tokens.reshape({-1});
    Tensor out;
    for (size_t i = 0; i < emb_weights_.size(); ++i) {
      const Tensor index = c_.div_val == 1
                               ? torch::arange(flat.size(0), flat.options())
                               : ((flat >= ends_[i]) & (flat < ends_[i + 1])).nonzero().squeeze(1);
      if (index.numel() == 0) continue;
      const Tensor local = c_.div_val == 1 ? flat : flat.index_select(0, index) - ends_[i];
      const Tensor projected =
          torch::nn::functional::linear(torch::embedding(emb_weights_[i], local), emb_projs_[i]);
      count(index.numel() * emb_projs_[i].size(0) * emb_projs_[i].size(1));
      if (!out.defined()) out = torch::zeros({flat.size(0), c_.d_model}, projected.options());
      out = out.index_copy(0, index, projected);
    }
    return out.view({tokens.size(0), tokens.size(1), c_.d_model}) * scale;
  }

  // logits = hidden [x proj] x weight^T + bias, with its multiply-adds counted.
  static Tensor logits(const Tensor& hidden, const Tensor& weight, const Tensor& bias,
                       const Tensor& proj) {
    Tensor h = hidden;
    if (proj.defined()) {
      h = h.matmul(proj);
      count(hidden.size(0) * proj.size(0) * proj.size(1));
    }
    count(h.size(0) * weight.size(0) * weight.size(1));
    return torch::nn::functional::linear(h, weight, bias);
  }

  // Negative log-likelihood per token under the adaptive softmax, computed in float32 with
  // autocast off: the log-softmax over up to 200k classes is not safe in half precision.
  Tensor adaptive_nll(const Tensor& hidden_in, const Tensor& target) {
    const c10::DeviceType device = hidden_in.device().type();
    const bool autocast_was = compat::autocast_enabled(device);
    compat::set_autocast_enabled(device, false);
    const Tensor hidden = hidden_in.to(torch::kFloat);
    const size_t clusters = ends_.size() - 1;
    std::vector<Tensor> weights, biases;
    for (size_t i = 0; i < clusters; ++i) {
      if (c_.div_val == 1) {
        weights.push_back(emb_weights_[0].narrow(0, ends_[i], ends_[i + 1] - ends_[i]));
        biases.push_back(out_biases_[0].narrow(0, ends_[i], ends_[i + 1] - ends_[i]));
      } else {
        weights.push_back(emb_weights_[i]);
        biases.push_back(out_biases_[i]);
      }
    }
    const Tensor head_proj =
        c_.div_val == 1 ? (emb_projs_.empty() ? Tensor() : emb_projs_[0]) : head_out_proj_;
    const Tensor head_logprob =
        torch::log_softmax(logits(hidden, torch::cat({weights[0], cluster_weight_}, 0),
                                  torch::cat({biases[0], cluster_bias_}, 0), head_proj),
                           1);
    Tensor nll = torch::zeros({target.size(0)}, hidden.options());
    for (size_t i = 0; i < clusters; ++i) {
      const Tensor index = ((target >= ends_[i]) & (target < ends_[i + 1])).nonzero().squeeze(1);
      if (index.numel() == 0) continue;
      const Tensor local_target = (target.index_select(0, index) - ends_[i]).unsqueeze(1);
      const Tensor head_i = head_logprob.index_select(0, index);
      Tensor logprob;
      if (i == 0) {
        logprob = head_i.gather(1, local_target).squeeze(1);
      } else {
        const Tensor proj = c_.div_val == 1 ? head_proj : emb_projs_[i];
        const Tensor tail = torch::log_softmax(
            logits(hidden.index_select(0, index), weights[i], biases[i], proj), 1);
        // The reference reads cluster i's head log-probability from column -i.
        logprob = head_i.select(1, head_i.size(1) - static_cast<int64_t>(i)) +
                  tail.gather(1, local_target).squeeze(1);
      }
      nll = nll.index_copy(0, index, -logprob);
    }
    compat::set_autocast_enabled(device, autocast_was);
    return nll;
  }

  TransformerXLConfig c_;
  std::vector<int64_t> ends_;
  std::vector<Tensor> emb_weights_, emb_projs_, out_biases_;
  std::vector<DecoderLayer> layers_;
  Tensor r_w_bias_, r_r_bias_, cluster_weight_, cluster_bias_, head_out_proj_;
};

TransformerXLConfig transformer_xl_base() {
  return {};
}

TransformerXLConfig transformer_xl_large() {
  TransformerXLConfig c;
  c.n_layer = 18;
  c.n_head = 16;
  c.d_model = 1024;
  c.d_embed = 1024;
  c.d_inner = 4096;
  c.dropout = 0.2;
  c.dropatt = 0.2;
  c.div_val = 4;
  c.tgt_len = 384;
  c.mem_len = 384;
  return c;
}

TransformerXLModel::TransformerXLModel(const TransformerXLConfig& config, bool defer_initialization)
    : config_(config), net_(std::make_shared<TransformerXLNetImpl>(config, defer_initialization)) {}

TransformerXLModel::~TransformerXLModel() = default;

void TransformerXLModel::initialize_weights() {
  net_->initialize();
}

torch::nn::Module& TransformerXLModel::module() {
  return *net_;
}

// Tokens from a Zipf(1) law over the vocabulary, whose ids are in frequency order as
// WikiText-103's are: about 80 % of tokens fall in the head cluster, as in real text, so the
// adaptive softmax does the work it does on real data. Each segment's tokens are the law's
// quantiles at evenly spaced levels, in an order that strides through them: every step's tokens
// fall in the clusters in the law's proportions whatever the batch, where a draw of a few put
// them as chance had it (what the adaptive softmax holds goes by how many fall in each: fit's
// probes of the test Transformer-XL, 8 and 16 tokens, read 13 % apart). Eight segments and a
// row, then the stream repeats.
SyntheticBatch TransformerXLModel::synthetic_batch(int64_t batch_size, torch::Device device, bool) {
  constexpr int64_t kSegments = 8;
  const int64_t per_segment = config_.tgt_len * batch_size;
  auto stride =
      std::max<int64_t>(1, static_cast<int64_t>(0.618 * static_cast<double>(per_segment)));
  while (std::gcd(stride, per_segment) != 1) ++stride;
  const double log_range = std::log(static_cast<double>(config_.n_token) + 1.0);
  std::vector<int64_t> ids((kSegments * config_.tgt_len + 1) * batch_size);
  for (size_t i = 0; i < ids.size(); ++i) {
    const int64_t place = static_cast<int64_t>(i) % per_segment;
    const double level = (static_cast<double>(place * stride % per_segment) + 0.5) /
                         static_cast<double>(per_segment);
    ids[i] = std::min(config_.n_token - 1, static_cast<int64_t>(std::exp(level * log_range) - 1.0));
  }
  const Tensor tokens =
      torch::tensor(ids).view({kSegments * config_.tgt_len + 1, batch_size}).to(device);
  memory_.clear();
  position_ = 0;
  return {tokens, tokens, {}};
}

SegmentOutput TransformerXLModel::run_segment(const Tensor& tokens, const Tensor& targets,
                                              const std::vector<Tensor>& memory) {
  return net_->forward(tokens, targets, memory);
}

Tensor TransformerXLModel::training_loss(const SyntheticBatch& batch) {
  const Tensor& stream = batch.inputs;
  if (position_ + config_.tgt_len + 1 > stream.size(0)) position_ = 0;
  const Tensor tokens = stream.narrow(0, position_, config_.tgt_len);
  const Tensor targets = stream.narrow(0, position_ + 1, config_.tgt_len);
  position_ += config_.tgt_len;
  SegmentOutput out = run_segment(tokens, targets, memory_);
  memory_ = std::move(out.memory);
  return out.nll.mean();
}

// One sequence at the steady state: tgt_len tokens attending to a full memory.
int64_t TransformerXLModel::count_forward() {
  const Tensor tokens = torch::randint(config_.n_token, {config_.tgt_len, 1}, torch::kLong);
  std::vector<Tensor> memory(config_.n_layer, torch::zeros({config_.mem_len, 1, config_.d_model}));
  run_segment(tokens, tokens, memory);
  return config_.tgt_len;
}

namespace {

ModelInfo transformer_xl_info(const std::string& name, TransformerXLConfig config,
                              int64_t default_batch, const std::string& reference) {
  ModelInfo info;
  info.name = name;
  info.family = "language-model";
  info.task = "language-modeling";
  info.sample_unit = "tokens";
  info.input_shape = {config.tgt_len};
  info.default_batch_size = default_batch;
  info.reference = reference;
  // Its memory is a new tensor every step, which a replayed graph would never read.
  info.capabilities.input = SyntheticInput::kTokenSegments;
  info.capabilities.products_in_linear_layers = true;
  info.capabilities.memory_independent_of_weights = true;  // its clusters go by the tokens
  info.capabilities.blocks = config.n_layer;
  info.capabilities.weight_formats.clear();  // no inference path
  info.capabilities.graph_refusal =
      "its recurrent memory is a new tensor every step, which a replayed graph would never read";
  info.default_tgt_len = config.tgt_len;
  info.default_mem_len = config.mem_len;
  // The recurrence memory must be full before the timed steps: mem_len / tgt_len segments,
  // plus two to settle.
  info.minimum_warmup_steps = [](int64_t tgt_len, int64_t mem_len) {
    return static_cast<int>(mem_len / tgt_len) + 2;
  };
  info.create = [config](const ModelOptions& options) -> std::unique_ptr<TrainableModel> {
    TransformerXLConfig c = config;
    if (options.tgt_len > 0) c.tgt_len = options.tgt_len;
    if (options.tgt_len > 0) c.mem_len = options.mem_len;  // given together, once resolved
    if (options.blocks > 0) c.n_layer = options.blocks;
    return std::make_unique<TransformerXLModel>(c, options.defer_initialization);
  };
  return info;
}

// Per-GPU batches are NVIDIA's for WikiText-103 (base 32, large 8 tokens-by-segment rows).
const ModelRegistration kBase{with_default_counts(
    transformer_xl_info(
        "transformerxl-base", transformer_xl_base(), 32,
        "NVIDIA DeepLearningExamples Transformer-XL, wt103_base (16 layers, d_model 512)"),
    191950298, 191950298, 297015285)};
const ModelRegistration kTransformerXlLarge{with_default_counts(
    transformer_xl_info("transformerxl-large", transformer_xl_large(), 8,
                        "NVIDIA DeepLearningExamples Transformer-XL, wt103_large (18 layers, "
                        "d_model 1024, div_val 4)"),
    285167482, 285167482, 783568942)};

// Hidden: for the tests, which need the language-model path (tokens, memory, adaptive softmax)
// without 151M parameters on a 2-core CPU.
TransformerXLConfig tiny_transformer_xl_config() {
  TransformerXLConfig c;
  c.n_token = 1000;
  c.n_layer = 2;
  c.n_head = 2;
  c.d_head = 8;
  c.d_model = 16;
  c.d_embed = 16;
  c.d_inner = 32;
  c.cutoffs = {200, 400, 800};
  c.tgt_len = 8;
  c.mem_len = 8;
  return c;
}

ModelInfo hidden(ModelInfo info) {
  info.hidden = true;
  return info;
}

const ModelRegistration kTinyTransformerXL{
    hidden(transformer_xl_info("test-tiny-transformerxl", tiny_transformer_xl_config(), 2,
                               "a test model: Transformer-XL, 2 layers, d_model 16"))};

}  // namespace
}  // namespace gpubench::models
