#include "models/gpt_oss.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "kernels/fused_operators.h"
#include "modeling/adapted_linear.h"
#include "modeling/block_observer.h"
#include "modeling/fine_tuning_model.h"
#include "modeling/flop_counter.h"
#include "modeling/mixture_of_experts.h"
#include "modeling/rms_norm.h"
#include "modeling/score_moment.h"

namespace gpubench::models {
namespace {

using layers::AdaptedLinear;
using layers::RmsNorm;
using layers::RmsScale;
using torch::Tensor;

// GptOssExperts._apply_gate: gate and up interleaved (even and odd columns), the gate clamped
// above at `limit`, up on both sides, (up + 1) * gate * sigmoid(alpha * gate).
moe::ExpertActivation clamped_swiglu(double alpha, double limit) {
  return [alpha, limit](const Tensor& gate_up) {
    const Tensor gate = gate_up.slice(-1, 0, c10::nullopt, 2).clamp_max(limit);
    const Tensor up = gate_up.slice(-1, 1, c10::nullopt, 2).clamp(-limit, limit);
    return (up + 1) * (gate * torch::sigmoid(gate * alpha));
  };
}

// x [..., tokens, head_dim] rotated by the half tables cos and sin [tokens, head_dim / 2]
// (Hugging Face's _apply_rotary_emb: the first half against the second).
Tensor rotate(const Tensor& x, const Tensor& cos, const Tensor& sin) {
  const auto halves = x.chunk(2, -1);
  return torch::cat({halves[0] * cos - halves[1] * sin, halves[1] * cos + halves[0] * sin}, -1);
}

// Query rows per block of the attention's scores in inference: as many as keep one block's
// float32 scores of `heads` heads over `keys` keys within `block_bytes`, at least one.
int64_t score_rows_per_block(int64_t block_bytes, int64_t batch, int64_t heads, int64_t tokens,
                             int64_t keys) {
  const int64_t row_bytes = batch * heads * (keys + 1) * static_cast<int64_t>(sizeof(float));
  return std::clamp<int64_t>(block_bytes / row_bytes, 1, tokens);
}

// What the scores are multiplied by: head_dim^-0.5, transformers' `scaling`, in the prompt's
// attention and the decode step's alike.
double attention_scaling(int64_t head_dim) {
  return 1.0 / std::sqrt(static_cast<double>(head_dim));
}

// Attention with one sink logit per head (eager_attention_forward of modeling_gpt_oss): the sink
// joins each row's softmax and is dropped after it, so a query may attend to nothing. q [batch,
// heads, tokens, d] at positions first_query.., k and v [batch, kv_heads, keys, d] at positions
// first_key..; causal, and within `window` positions when it is positive. Each group of query
// heads reads its key/value head as it lies (no repeated copy); scores and softmax in float32.
// A row's softmax needs no other row, so the queries go through in blocks of
// score_rows_per_block: a long prompt's scores (gpt-oss-120b at 8K: 17 GB per copy) never exist
// whole. Within a block at most two float32 copies of its scores live at once
// (prefill_score_bytes).
Tensor attention_with_sinks(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& sinks,
                            int64_t first_query, int64_t first_key, int64_t window,
                            int64_t block_bytes) {
  const int64_t batch = q.size(0), heads = q.size(1), tokens = q.size(2), d = q.size(3);
  const int64_t kv_heads = k.size(1), group = heads / kv_heads, keys = k.size(2);
  const Tensor keys_t = k.unsqueeze(2).transpose(-2, -1);
  const auto positions = torch::TensorOptions().dtype(torch::kLong).device(q.device());
  const Tensor key_at = torch::arange(first_key, first_key + keys, positions).unsqueeze(0);
  const Tensor sink = sinks.to(torch::kFloat).reshape({1, kv_heads, group, 1, 1});
  // With autograd on, every row at once: training keeps every row's weights for backward anyway.
  const int64_t rows = torch::GradMode::is_enabled()
                           ? tokens
                           : score_rows_per_block(block_bytes, batch, heads, tokens, keys);
  std::vector<Tensor> blocks;
  for (int64_t row = 0; row < tokens; row += rows) {
    const int64_t n = std::min(rows, tokens - row);
    const ScoreMoment moment;
    const Tensor grouped = q.narrow(2, row, n).reshape({batch, kv_heads, group, n, d});
    Tensor scores = torch::matmul(grouped, keys_t).to(torch::kFloat);
    scores.mul_(attention_scaling(d));
    const Tensor query_at =
        torch::arange(first_query + row, first_query + row + n, positions).unsqueeze(1);
    Tensor hidden = key_at > query_at;
    if (window > 0) hidden = hidden | (key_at <= query_at - window);
    scores.masked_fill_(hidden, -INFINITY);
    scores = torch::cat({scores, sink.expand({batch, kv_heads, group, n, 1})}, -1);
    scores = torch::softmax(scores, -1);
    blocks.push_back(torch::matmul(scores.narrow(-1, 0, keys).to(v.scalar_type()), v.unsqueeze(2))
                         .reshape({batch, heads, n, d}));
  }
  return blocks.size() == 1 ? blocks.front() : torch::cat(blocks, 2);
}

}  // namespace

int64_t prefill_score_bytes(const GptOssConfig& c, const ModelOptions& options, int64_t batch,
                            int64_t tokens) {
  const int64_t heads = options.placement.share_of(c.num_heads, "the attention heads");
  const int64_t rows = score_rows_per_block(c.attention_block_bytes, batch, heads, tokens, tokens);
  // The softmax's input and output, each over the keys and the sink, and the block's mask.
  return rows * (2 * batch * heads * (tokens + 1) * static_cast<int64_t>(sizeof(float)) + tokens);
}

namespace {

class GptOssDecoderLayerImpl : public torch::nn::Module, public CheckpointableBlock {
 public:
  // The projections and experts as the options' placement lays them out
  // (modeling/layer_placement.h, moe::ExpertsOptions): the heads this layer computes, and their
  // sinks, are those its q and k projections hold.
  GptOssDecoderLayerImpl(const GptOssConfig& c, int64_t index, const ModelOptions& options)
      : head_dim_(c.head_dim),
        hidden_(c.hidden_size),
        window_(c.sliding(index) ? c.sliding_window : 0),
        block_bytes_(c.attention_block_bytes) {
    const int64_t h = c.hidden_size;
    input_layernorm =
        register_module("input_layernorm", RmsNorm(h, c.rms_norm_eps, RmsScale::kInFloat32));
    auto attn = register_module("self_attn", std::make_shared<torch::nn::Module>());
    attention = layers::attention_projections(*attn, h, c.num_heads, c.num_kv_heads, head_dim_,
                                              true, options.placement);
    sinks = attn->register_parameter("sinks", torch::empty({attention.heads}));
    post_attention_layernorm = register_module("post_attention_layernorm",
                                               RmsNorm(h, c.rms_norm_eps, RmsScale::kInFloat32));
    auto mlp = register_module("mlp", std::make_shared<torch::nn::Module>());
    router = mlp->register_module(
        "router", moe::TopKRouter(h, c.num_experts, c.experts_per_token, options.balanced_routes));
    moe::ExpertsOptions experts_options{c.num_experts,
                                        h,
                                        c.intermediate_size,
                                        clamped_swiglu(c.swiglu_alpha, c.swiglu_limit),
                                        options.experts_in_mxfp4,
                                        options.placement};
    experts = mlp->register_module("experts", moe::Experts(experts_options));
  }

  // extras: the rotary cos and sin half tables [tokens, head_dim / 2].
  Tensor run_block(const Tensor& x, const std::vector<Tensor>& extras) override {
    return run(x, extras[0], extras[1], nullptr);
  }

  // Generation: x's keys and values written into the cache at `start`; attention over the
  // positions the cache holds up to them. A sliding layer's cache is a ring of its window's
  // positions (KvCache::windows), so it reads and keeps only those. `decode_position`, for one
  // token: the last slot of the cache its attention reads, on the device (a full layer's:
  // `start`; a ring's: the last filled slot, every slot once it has wrapped).
  struct CacheSlot {
    Tensor& keys;
    Tensor& values;
    int64_t start;
    const Tensor* decode_position = nullptr;
  };
  Tensor run(const Tensor& x, const Tensor& cos_table, const Tensor& sin_table,
             const CacheSlot* cache) {
    const int64_t batch = x.size(0), tokens = x.size(1);
    const Tensor normed = input_layernorm(x);
    auto [q, k, v] = attention.heads_of(normed, head_dim_);
    const Tensor cos = cos_table.to(q.scalar_type()), sin = sin_table.to(q.scalar_type());
    q = rotate(q, cos, sin);
    k = rotate(k, cos, sin);
    int64_t keys_read = 0;
    const Tensor attended = cache && cache->decode_position
                                ? decode_attention(q, k, v, *cache, keys_read)
                                : attend(q, k, v, cache, keys_read);
    // Query x key and weights x value over every key read (the masked ones included).
    FlopCounter::record_multiply_adds(2 * batch * attention.heads * tokens * keys_read * head_dim_);
    const auto [h, normed_h] = post_attention_layernorm->add_and_normalize(
        x, attention.o(
               attended.transpose(1, 2).reshape({batch, tokens, attention.heads * head_dim_})));
    const Tensor m = normed_h.reshape({batch * tokens, hidden_});
    return h + experts(m, router(m)).view({batch, tokens, hidden_});
  }

  // x's tokens against their keys: x's own without a cache; with one, written into it and
  // attended over the positions it holds up to them (a ring's through it). `keys_read`: the keys
  // each query is scored against (the masked ones included).
  Tensor attend(const Tensor& q, Tensor k, Tensor v, const CacheSlot* cache, int64_t& keys_read) {
    const int64_t tokens = q.size(2);
    int64_t first_query = 0, first_key = 0;
    if (cache && window_ > 0) {
      first_query = cache->start;
      first_key = std::max<int64_t>(0, cache->start - window_ + 1);
      k = through_ring(cache->keys, k, cache->start, first_key);
      v = through_ring(cache->values, v, cache->start, first_key);
    } else if (cache) {
      cache->keys.narrow(2, cache->start, tokens).copy_(KvCache::to_stored(k, cache->keys));
      cache->values.narrow(2, cache->start, tokens).copy_(KvCache::to_stored(v, cache->values));
      first_query = cache->start;
      const int64_t keys = cache->start + tokens;
      k = KvCache::to_compute(cache->keys.narrow(2, 0, keys), q.scalar_type());
      v = KvCache::to_compute(cache->values.narrow(2, 0, keys), q.scalar_type());
    }
    keys_read = k.size(2);
    return attention_with_sinks(q, k, v, sinks, first_query, first_key, window_, block_bytes_);
  }

  // One token's attention (kernels::decode_attention: one operator, two kernels on CUDA): its key
  // and value written into their slot (a ring's: start mod its slots), then every slot up to the
  // decode position read where it lies, each head's sink joining its softmax. A ring holds
  // exactly the positions the window lets the token see, in slot order, which a softmax does not
  // mind. `keys_read`: the positions the token sees.
  Tensor decode_attention(const Tensor& q, const Tensor& k, const Tensor& v, const CacheSlot& cache,
                          int64_t& keys_read) const {
    const int64_t slot = window_ > 0 ? cache.start % cache.keys.size(2) : cache.start;
    cache.keys.narrow(2, slot, 1).copy_(KvCache::to_stored(k, cache.keys));
    cache.values.narrow(2, slot, 1).copy_(KvCache::to_stored(v, cache.values));
    keys_read = window_ > 0 ? std::min(cache.start + 1, window_) : cache.start + 1;
    return kernels::decode_attention(q, cache.keys, cache.values, *cache.decode_position,
                                     attention_scaling(head_dim_), sinks);
  }

  // A sliding layer's keys or values `x` [batch, heads, tokens, d] at positions start..: the
  // ring's earlier positions first_key..start - 1 (the first query sees no key more than
  // window - 1 positions before it), read before x's last positions take their slots, then x,
  // rounded through the ring's dtype as the full layers' keys are.
  static Tensor through_ring(Tensor& ring, const Tensor& x, int64_t start, int64_t first_key) {
    const int64_t slots = ring.size(2), tokens = x.size(2);
    const Tensor stored = KvCache::to_stored(x, ring);
    Tensor read = KvCache::to_compute(stored, x.scalar_type());
    if (first_key < start) {
      const Tensor earlier =
          torch::arange(first_key, start, torch::TensorOptions().dtype(torch::kLong))
              .remainder(slots)
              .to(ring.device());
      read = torch::cat({KvCache::to_compute(ring, x.scalar_type()).index_select(2, earlier), read},
                        2);
    }
    // The last `slots` positions, in at most two runs of slots (the ring wraps once).
    const int64_t kept = std::min(tokens, slots);
    for (int64_t done = 0; done < kept;) {
      const int64_t position = start + tokens - kept + done;
      const int64_t run = std::min(kept - done, slots - position % slots);
      ring.narrow(2, position % slots, run).copy_(stored.narrow(2, tokens - kept + done, run));
      done += run;
    }
    return read;
  }

  RmsNorm input_layernorm{nullptr}, post_attention_layernorm{nullptr};
  layers::AttentionProjections attention;  // q, k, v, o and the heads they hold
  Tensor sinks;
  moe::TopKRouter router{nullptr};
  moe::Experts experts{nullptr};

 private:
  int64_t head_dim_, hidden_;
  int64_t window_;       // 0: full attention
  int64_t block_bytes_;  // attention_with_sinks's
};
TORCH_MODULE(GptOssDecoderLayer);

}  // namespace

YarnRotary yarn_rotary(const GptOssConfig& c) {
  const int64_t d = c.head_dim;
  const Tensor exponents = torch::arange(0, d, 2, torch::kDouble) / static_cast<double>(d);
  const Tensor extrapolation = 1.0 / torch::pow(c.rope_theta, exponents);
  const Tensor interpolation = extrapolation / c.yarn_factor;
  // The dimensions whose wavelengths make beta_fast and beta_slow turns over the original
  // context bound the blend (truncate false: not rounded to whole dimensions).
  const auto correction_dim = [&](double rotations) {
    return d * std::log(c.yarn_original_max_positions / (rotations * 2 * M_PI)) /
           (2 * std::log(c.rope_theta));
  };
  const double low = std::max(0.0, correction_dim(c.yarn_beta_fast));
  double high = std::min(static_cast<double>(d - 1), correction_dim(c.yarn_beta_slow));
  if (low == high) high += 0.001;
  const Tensor ramp = ((torch::arange(d / 2, torch::kDouble) - low) / (high - low)).clamp(0, 1);
  const Tensor extrapolated_share = 1 - ramp;
  const Tensor inverse =
      interpolation * (1 - extrapolated_share) + extrapolation * extrapolated_share;
  return {inverse.to(torch::kFloat), 0.1 * std::log(c.yarn_factor) + 1.0};
}

class GptOssNetImpl : public torch::nn::Module {
 public:
  static constexpr double kInitialStd = 0.02;  // GptOssConfig.initializer_range

  // Every layer as the options' placement lays it out (as Llama's).
  GptOssNetImpl(const GptOssConfig& c, const ModelOptions& options)
      : placement(options.placement), rotary_(yarn_rotary(c)) {
    auto model = register_module("model", std::make_shared<torch::nn::Module>());
    embed_tokens = model->register_module(
        "embed_tokens", layers::TokenEmbedding(c.vocab_size, c.hidden_size, placement));
    auto list = model->register_module("layers", torch::nn::ModuleList());
    for (int64_t i = 0; i < c.num_layers; ++i) {
      layers.push_back(GptOssDecoderLayer(c, i, options));
      list->push_back(layers.back());
    }
    norm = model->register_module("norm",
                                  RmsNorm(c.hidden_size, c.rms_norm_eps, RmsScale::kInFloat32));
    lm_head =
        register_module("lm_head", layers::projection(c.hidden_size, c.vocab_size, false,
                                                      layers::kVocabularyHeadRole, placement));
    if (!options.defer_initialization) initialize();
  }

  // The logits of this rank's slice of the vocabulary (all of it without a group).
  Tensor forward(const Tensor& tokens) {
    Tensor hidden = embed_tokens(tokens);
    const std::vector<Tensor> rotary = rotary_tables(0, tokens.size(1));
    for (GptOssDecoderLayer& layer : layers) {
      hidden = run_observed_block(*layer, hidden, rotary);
    }
    return head(norm(hidden));
  }

  Tensor head(const Tensor& normed) { return lm_head(normed); }

  // Appends `tokens` to the cache; the logits of the last position only, gathered.
  Tensor forward_cached(const Tensor& tokens, KvCache& cache) {
    const int64_t n = tokens.size(1), start = cache.length;
    Tensor hidden = embed_tokens(tokens);
    const std::vector<Tensor> rotary = rotary_tables(start, n);
    // One token: the last slot each layer's attention reads, on the device, one tensor for every
    // layer that reads up to the same slot (the full layers, the rings).
    std::map<int64_t, Tensor> decode_positions;
    for (size_t i = 0; i < layers.size(); ++i) {
      GptOssDecoderLayerImpl::CacheSlot slot{cache.keys[i], cache.values[i], start};
      if (n == 1) {
        const bool ring = i < cache.windows.size() && cache.windows[i] > 0;
        const int64_t last = ring ? std::min(start, cache.keys[i].size(2) - 1) : start;
        Tensor& position = decode_positions[last];
        if (!position.defined()) {
          position = torch::full({1}, last, tokens.options().dtype(torch::kLong));
        }
        slot.decode_position = &position;
      }
      hidden = layers[i]->run(hidden, rotary[0], rotary[1], &slot);
    }
    cache.length = start + n;
    return layers::whole_vocabulary(head(norm(hidden.narrow(1, n - 1, 1))).squeeze(1), placement);
  }

  // cos and sin [n, head_dim / 2] at positions start..start+n, scaled by YaRN's attention
  // factor, float32 whatever the weights' dtype (the layers round them to theirs).
  std::vector<Tensor> rotary_tables(int64_t start, int64_t n) {
    const torch::Device device = embed_tokens->weight.device();
    if (inverse_on_device_.device() != device) {
      inverse_on_device_ = rotary_.inverse_frequencies.to(device);
    }
    const Tensor positions = torch::arange(start, start + n, inverse_on_device_.options());
    const Tensor angles = positions.unsqueeze(1) * inverse_on_device_.unsqueeze(0);
    return {angles.cos() * rotary_.attention_factor, angles.sin() * rotary_.attention_factor};
  }

  // GptOssPreTrainedModel._init_weights: normal(0, 0.02) for the projections, experts,
  // embeddings, sinks and the router (its bias too); zero for the other biases; ones for the
  // norms (as built).
  void initialize() {
    torch::NoGradGuard no_grad;
    draw_mxfp4_experts();
    for (auto& [name, parameter] : layers::own_parameters(*this)) {
      if (name.find("norm") == std::string::npos) draw(name, parameter);
    }
  }

  // Every weight but the experts' in floating point (most of the model's, and no part of which
  // expert a token goes to in their own layer), as initialize() draws them and the norms' ones,
  // each into storage of its own: the tokens' hidden states differ, and so do their routes.
  // Parameters added from outside (adapters) keep what they hold.
  void initialize_routing() {
    torch::NoGradGuard no_grad;
    // Experts in MXFP4 too (bytes, cheap to draw): their outputs feed the next layers' routes.
    draw_mxfp4_experts();
    for (auto& [name, parameter] : layers::own_parameters(*this)) {
      if (name.find(".experts.") != std::string::npos) continue;
      parameter.set_data(torch::empty_like(parameter));
      if (name.find("norm") != std::string::npos) {
        parameter.fill_(1.0);
      } else {
        draw(name, parameter);
      }
    }
  }

  layers::TokenEmbedding embed_tokens{nullptr};
  std::vector<GptOssDecoderLayer> layers;
  RmsNorm norm{nullptr};
  AdaptedLinear lm_head{nullptr};
  layers::LayerPlacement placement;

 private:
  void draw_mxfp4_experts() {
    for (GptOssDecoderLayer& layer : layers) {
      if (layer->experts->mxfp4()) layer->experts->initialize_mxfp4(kInitialStd);
    }
  }

  static void draw(const std::string& name, Tensor& parameter) {
    const bool bias = name.size() >= 4 && name.compare(name.size() - 4, 4, "bias") == 0;
    if (bias && name.find("router") == std::string::npos) {
      parameter.zero_();
    } else if (parameter.is_cpu() && parameter.scalar_type() != torch::kFloat) {
      // LibTorch's CPU draws float32 normals in vectorised runs and 16-bit ones one at a time
      // (most of gpt-oss-120b's inference fit went there): float32 in chunks of 16 MB, then cast.
      for (Tensor chunk : parameter.view({-1}).split(int64_t{1} << 22)) {
        chunk.copy_(torch::empty({chunk.numel()}, chunk.options().dtype(torch::kFloat))
                        .normal_(0.0, kInitialStd));
      }
    } else {
      parameter.normal_(0.0, kInitialStd);
    }
  }

  // float32 and not a buffer, so that no cast of the module reaches it (as Llama's).
  YarnRotary rotary_;
  Tensor inverse_on_device_ = rotary_.inverse_frequencies;
};

GptOssModel::GptOssModel(const GptOssConfig& config, const ModelOptions& options)
    : config_(config),
      seq_len_(options.seq_len),
      net_(std::make_shared<GptOssNetImpl>(config, options)) {}

GptOssModel::~GptOssModel() = default;

void GptOssModel::initialize_weights() {
  net_->initialize();
}

void GptOssModel::initialize_routing() {
  net_->initialize_routing();
}

// The floating tensors only: experts held in MXFP4 keep their code bytes.
void GptOssModel::cast_for_inference(torch::ScalarType dtype) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> tensors = net_->parameters();
  for (const torch::Tensor& buffer : net_->buffers()) tensors.push_back(buffer);
  for (torch::Tensor& tensor : tensors) {
    if (tensor.is_floating_point()) tensor.set_data(tensor.to(dtype));
  }
}

torch::nn::Module& GptOssModel::module() {
  return *net_;
}

SyntheticBatch GptOssModel::synthetic_batch(int64_t batch_size, torch::Device device, bool) {
  NextTokenBatch batch = next_token_batch(config_.vocab_size, batch_size, seq_len_, device);
  return {std::move(batch.inputs), std::move(batch.targets), {}};
}

Tensor GptOssModel::logits(const Tensor& tokens) {
  return layers::whole_vocabulary(net_->forward(tokens), net_->placement);
}

// Causal-LM loss in float32, every position predicting the next token (as Llama's; from this
// rank's slice of the logits where the vocabulary is split).
Tensor GptOssModel::training_loss(const SyntheticBatch& batch) {
  const Tensor out = net_->forward(batch.inputs);
  return layers::vocabulary_cross_entropy(out.reshape({-1, out.size(-1)}).to(torch::kFloat),
                                          batch.targets.reshape({-1}), net_->placement);
}

Tensor GptOssModel::inference_output(const SyntheticBatch& batch) {
  return logits(batch.inputs);
}

// A full layer's cache holds the whole capacity, a sliding layer's only its window (a ring).
KvCache GptOssModel::allocate_cache(int64_t batch, int64_t capacity, torch::Device device,
                                    torch::ScalarType dtype) {
  std::vector<int64_t> windows;
  for (int64_t i = 0; i < config_.num_layers; ++i) {
    windows.push_back(config_.sliding(i) ? config_.sliding_window : 0);
  }
  return KvCache::allocate(config_.num_layers, batch,
                           net_->placement.share_of(config_.num_kv_heads, "the key/value heads"),
                           capacity, config_.head_dim,
                           torch::TensorOptions().device(device).dtype(dtype), windows);
}

Tensor GptOssModel::next_token_logits(const Tensor& tokens, KvCache& cache) {
  cache.check_room_for(tokens.size(1));
  return net_->forward_cached(tokens, cache);
}

Tensor GptOssModel::next_token_logits_at(const Tensor&, const Tensor&, KvCache&) {
  throw std::logic_error("gpt-oss decodes in eager mode only (its experts' grouping is dynamic)");
}

bool GptOssModel::decode_converts_cache(torch::Device device, torch::ScalarType cache,
                                        torch::ScalarType compute) const {
  return kernels::decode_attention_converts_cache(device, cache, compute, config_.head_dim,
                                                  config_.num_heads / config_.num_kv_heads);
}

Tensor GptOssModel::last_logits_without_cache(const Tensor& tokens) {
  return logits(tokens).select(1, -1);
}

int64_t GptOssModel::count_forward() {
  logits(torch::zeros({1, seq_len_}, torch::kLong));
  return seq_len_;
}

ModelStats gpt_oss_stats(const GptOssConfig& c, const ModelOptions& options) {
  const int64_t h = c.hidden_size, q_out = c.num_heads * c.head_dim,
                kv_out = c.num_kv_heads * c.head_dim, i = c.intermediate_size, e = c.num_experts,
                k = c.experts_per_token, s = options.seq_len;
  const int64_t attention_weights = h * q_out + 2 * h * kv_out + q_out * h;
  const int64_t attention = attention_weights + q_out + 2 * kv_out + h + c.num_heads;
  const int64_t router = e * h + e;
  const int64_t expert = h * 2 * i + 2 * i + i * h + h;
  const int64_t block = attention + 2 * h + router + e * expert;
  const int64_t table = c.vocab_size * h;
  ModelStats stats;
  stats.params = 2 * table + c.num_layers * block + h;
  stats.active_params = table + c.num_layers * (block - (e - k) * expert) + h;
  stats.trainable_params = stats.params;
  stats.expert_weight_params = c.num_layers * e * 3 * h * i;
  // Per token: the attention projections, the router, k experts' two products, the head, and
  // the attention products over s positions.
  const int64_t weight_macs = c.num_layers * (attention_weights + e * h + k * 3 * h * i) + table;
  const int64_t attention_macs = c.num_layers * 2 * c.num_heads * s * c.head_dim;
  stats.forward_flops = 2 * (weight_macs + attention_macs);
  stats.weight_flops = 2 * weight_macs;
  return stats;
}

BlockProjections gpt_oss_projections(const GptOssConfig& c) {
  const int64_t h = c.hidden_size, q_out = c.num_heads * c.head_dim,
                kv_out = c.num_kv_heads * c.head_dim;
  return {c.num_layers, {{"q", h, q_out}, {"k", h, kv_out}, {"v", h, kv_out}, {"o", q_out, h}}};
}

// Published configurations (Hugging Face config.json of openai/gpt-oss-20b and -120b).
GptOssConfig gpt_oss_120b() {
  return {};
}

GptOssConfig gpt_oss_20b() {
  GptOssConfig c;
  c.num_layers = 24;
  c.num_experts = 32;
  return c;
}

namespace {

// The configuration as the options ask: fewer blocks, a narrower vocabulary, another top-k, and
// for fit's probes fewer experts and a narrower width (the head width kept).
GptOssConfig configured(GptOssConfig config, const ModelOptions& options) {
  config = narrowed_in_width(reduced(config, options), options);
  if (options.experts_per_token > 0) config.experts_per_token = options.experts_per_token;
  if (options.experts > 0) config.num_experts = options.experts;
  return config;
}

ModelInfo gpt_oss_info(std::string name, GptOssConfig config, std::string reference,
                       bool hidden = false) {
  ModelInfo info = fine_tuning_info(
      {std::move(name),
       "causal-language-modeling",
       "tokens",
       1,
       std::min<int64_t>(2048, config.max_positions),
       config.max_positions,
       std::move(reference),
       [config](const ModelOptions& options) {
         return gpt_oss_projections(configured(config, options));
       },
       [config](const ModelOptions& options) -> std::unique_ptr<TrainableModel> {
         return std::make_unique<GptOssModel>(configured(config, options), options);
       },
       [config](const ModelOptions& options) {
         return gpt_oss_stats(configured(config, options), options);
       },
       {config.num_layers, config.hidden_size, config.num_heads, config.vocab_size,
        config.head_dim},
       hidden});
  info.family = "mixture-of-experts";
  ModelCapabilities& can = info.capabilities;
  can.generates = true;
  // The experts' grouping reads their token counts on the host: no step is captured.
  can.graph_training = false;
  can.graph_inference = false;
  // The experts' products, most of its FLOPs, are not linear layers.
  can.products_in_linear_layers = false;
  can.weight_formats = {"fp32", "bf16", "fp16", "mxfp4"};
  can.default_weights = "mxfp4";
  can.experts = config.num_experts;
  can.experts_per_token = config.experts_per_token;
  can.expert_width = config.intermediate_size;
  // Its experts in float (training); in MXFP4 they keep their width (run/fit_probes.cpp).
  can.max_width_divisor = max_width_divisor(config, false, 1);
  can.max_width_divisor_keeping_key_value_heads = max_width_divisor(config, true, 1);
  can.block_period = 2;  // a sliding-window layer and a full one
  // Its scores are float32 whatever the compute dtype.
  info.prefill_score_bytes = [config](const ModelOptions& options, int64_t batch, int64_t tokens,
                                      int64_t /*element_bytes*/) {
    return prefill_score_bytes(configured(config, options), options, batch, tokens);
  };
  can.split_counts = {{kKeyValueHeadsSplit, config.num_kv_heads},
                      {"attention heads", config.num_heads},
                      {"expert width", config.intermediate_size},
                      {"vocabulary", config.vocab_size}};
  return info;
}

const ModelRegistration k20b{gpt_oss_info(
    "gpt-oss-20b", gpt_oss_20b(),
    "OpenAI gpt-oss-20b (Hugging Face GptOssForCausalLM: 24 layers, hidden 2880, 32 experts "
    "top-4, GQA 64/8 heads, sliding window 128 on alternate layers, attention sinks, YaRN x32)")};
const ModelRegistration k120b{gpt_oss_info(
    "gpt-oss-120b", gpt_oss_120b(),
    "OpenAI gpt-oss-120b (Hugging Face GptOssForCausalLM: 36 layers, hidden 2880, 128 experts "
    "top-4, GQA 64/8 heads, sliding window 128 on alternate layers, attention sinks, YaRN x32)")};

// Hidden: gpt-oss's architecture at a size a 2-core CPU trains and generates with at once: 4
// layers (two sliding, two full), 8 experts of width 64 top-2, a window of 4; its attention's
// blocks of query rows within 128 KiB, so that a prompt of tens of tokens takes several.
GptOssConfig tiny_gpt_oss_config() {
  GptOssConfig c;
  c.vocab_size = 256;
  c.hidden_size = 32;
  c.intermediate_size = 64;  // two MXFP4 blocks, so that 2 ranks splitting it hold one each
  c.num_layers = 4;
  c.num_heads = 4;
  c.num_kv_heads = 2;
  c.head_dim = 8;
  c.num_experts = 8;
  c.experts_per_token = 2;
  c.sliding_window = 4;
  c.max_positions = 64;
  c.yarn_original_max_positions = 16;
  c.attention_block_bytes = 128 << 10;  // blocks of 17 rows at batch 8 and 56 keys
  return c;
}
const ModelRegistration kTiny{gpt_oss_info("test-tiny-gpt-oss", tiny_gpt_oss_config(),
                                           "a test model: gpt-oss, 4 layers, hidden 32, 8 "
                                           "experts of width 64 top-2, window 4",
                                           true)};

}  // namespace
}  // namespace gpubench::models
