#include "models/llama.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <tuple>

#include "kernels/fused_compositions.h"
#include "kernels/fused_operators.h"
#include "modeling/adapted_linear.h"
#include "modeling/block_observer.h"
#include "modeling/fine_tuning_model.h"
#include "modeling/flop_counter.h"
#include "modeling/layer_placement.h"
#include "modeling/rms_norm.h"
#include "modeling/score_moment.h"
#include "modeling/shared_input_products.h"
#include "torch_support/compat.h"

namespace gpubench::models {
namespace {

using layers::AdaptedLinear;
using layers::LayerPlacement;
using layers::RmsNorm;
using torch::Tensor;

// One forward pass's rotary tables in float32: cos [tokens, head_dim] and the sine with the sign
// of rotate_half's first half moved into it, made once for all the layers; and both in the dtype
// the layers compute in, cast once by the first layer that asks (the layers' q and k have that
// dtype, which autocast or the weights decide).
class RotaryTables {
 public:
  // From cos and sin [tokens, head_dim], float32.
  static RotaryTables of(const Tensor& cos, const Tensor& sin) {
    const int64_t half = sin.size(-1) / 2;
    return {cos, torch::cat({-sin.narrow(-1, 0, half), sin.narrow(-1, half, half)}, -1)};
  }
  // The float32 tables as a checkpointed block's extras carry them, and back.
  std::vector<Tensor> as_extras() const { return {cos_, signed_sin_}; }
  static RotaryTables from_extras(const std::vector<Tensor>& extras) {
    return {extras.at(0), extras.at(1)};
  }

  // x cos + rotate_half(x) sin, Hugging Face's apply_rotary_pos_emb for one of q and k: the same
  // products, rotate_half's negation taken by the table.
  Tensor apply(const Tensor& x) {
    cast_to(x.scalar_type());
    return kernels::composition::rotary_composition(x, cos_cast_, signed_sin_cast_);
  }
  // A static decode step's q and k rotated, k written into `keys` and v into `values` at the
  // device-held `position`, in one operator (one kernel on CUDA); returns q rotated.
  Tensor apply_and_write(const Tensor& q, const Tensor& k, const Tensor& v, Tensor& keys,
                         Tensor& values, const Tensor& position) {
    cast_to(q.scalar_type());
    return kernels::rotary_cache_write(q, k, v, cos_cast_, signed_sin_cast_, keys, values,
                                       position);
  }

 private:
  RotaryTables(Tensor cos, Tensor signed_sin)
      : cos_(std::move(cos)), signed_sin_(std::move(signed_sin)) {}
  void cast_to(torch::ScalarType dtype) {
    if (!cos_cast_.defined() || cos_cast_.scalar_type() != dtype) {
      cos_cast_ = cos_.to(dtype);
      signed_sin_cast_ = signed_sin_.to(dtype);
    }
  }

  Tensor cos_, signed_sin_;
  Tensor cos_cast_, signed_sin_cast_;
};

// Inverse frequencies of the rotary embedding, with Llama 3.1's scaling where configured.
Tensor inverse_frequencies(const LlamaConfig& c) {
  const int64_t d = c.head_dim();
  Tensor inv_freq = 1.0 / torch::pow(c.rope_theta, torch::arange(0, d, 2, torch::kDouble) /
                                                       static_cast<double>(d));
  if (c.rope_scaling_factor > 0) {
    const double low_wavelen = c.rope_original_max_positions / c.rope_low_freq_factor;
    const double high_wavelen = c.rope_original_max_positions / c.rope_high_freq_factor;
    const Tensor wavelen = 2 * M_PI / inv_freq;
    Tensor scaled = torch::where(wavelen > low_wavelen, inv_freq / c.rope_scaling_factor, inv_freq);
    const Tensor smooth = (c.rope_original_max_positions / wavelen - c.rope_low_freq_factor) /
                          (c.rope_high_freq_factor - c.rope_low_freq_factor);
    const Tensor smoothed = (1 - smooth) * scaled / c.rope_scaling_factor + smooth * scaled;
    const Tensor medium = (wavelen >= high_wavelen) & (wavelen <= low_wavelen);
    inv_freq = torch::where(medium, smoothed, scaled);
  }
  return inv_freq.to(torch::kFloat);
}

class LlamaDecoderLayerImpl : public torch::nn::Module, public CheckpointableBlock {
 public:
  // The projections as `placement` lays them out (modeling/layer_placement.h): the heads this
  // layer computes are those its q and k projections hold.
  LlamaDecoderLayerImpl(const LlamaConfig& c, const LayerPlacement& placement)
      : head_dim_(c.head_dim()) {
    const int64_t h = c.hidden_size, mlp_width = c.intermediate_size;
    input_layernorm = register_module("input_layernorm", RmsNorm(h, c.rms_norm_eps));
    auto attn = register_module("self_attn", std::make_shared<torch::nn::Module>());
    attention = layers::attention_projections(*attn, h, c.num_heads, c.num_kv_heads, head_dim_,
                                              false, placement);
    post_attention_layernorm =
        register_module("post_attention_layernorm", RmsNorm(h, c.rms_norm_eps));
    auto mlp = register_module("mlp", std::make_shared<torch::nn::Module>());
    const auto linear = [&placement](int64_t in, int64_t out, const char* role) {
      return layers::projection(in, out, false, role, placement);
    };
    gate_proj = mlp->register_module("gate_proj", linear(h, mlp_width, "gate"));
    up_proj = mlp->register_module("up_proj", linear(h, mlp_width, "up"));
    down_proj = mlp->register_module("down_proj", linear(mlp_width, h, "down"));
  }

  // extras: RotaryTables::as_extras().
  Tensor run_block(const Tensor& x, const std::vector<Tensor>& extras) override {
    RotaryTables rotary = RotaryTables::from_extras(extras);
    const LayerOutput out = run(x, Tensor(), rotary, nullptr);
    return out.residual + out.update;
  }

  // Generation: the keys and values of x's tokens written into the cache at `start`, attention
  // over every position the cache holds up to them (`position`, a device tensor [1] holding the
  // last). With `static_form`, what a CUDA graph can capture: the token written at the position
  // held on the device, no shape depending on it.
  struct CacheSlot {
    Tensor& keys;
    Tensor& values;
    int64_t start;
    const Tensor* position = nullptr;
    bool static_form = false;
  };
  // The layer's output is residual + update. Generation leaves the sum to the next layer's
  // first norm (or the model's last), which adds and normalises in one operator: pass the
  // previous layer's update as `pending` (undefined for the first layer).
  struct LayerOutput {
    Tensor residual, update;
  };
  LayerOutput run(const Tensor& input, const Tensor& pending, RotaryTables& rotary,
                  const CacheSlot* cache) {
    Tensor x = input, normed;
    if (pending.defined()) {
      std::tie(x, normed) = input_layernorm->add_and_normalize(input, pending);
    } else {
      normed = input_layernorm(input);
    }
    const int64_t batch = x.size(0), tokens = x.size(1);
    auto [q, k, v] = attention.heads_of(normed, head_dim_);
    if (cache && cache->static_form) {
      q = rotary.apply_and_write(q, k, v, cache->keys, cache->values, *cache->position);
    } else if (cache) {
      // Generation: q and k through the rotary embedding as one tensor, one set of kernels for
      // both. Training keeps them apart, so that backward holds no joined copy.
      const Tensor rotated = rotary.apply(torch::cat({q, k}, 1));
      q = rotated.narrow(1, 0, attention.heads);
      k = rotated.narrow(1, attention.heads, attention.kv_heads);
      cache->keys.narrow(2, cache->start, tokens).copy_(KvCache::to_stored(k, cache->keys));
      cache->values.narrow(2, cache->start, tokens).copy_(KvCache::to_stored(v, cache->values));
    } else {
      q = rotary.apply(q);
      k = rotary.apply(k);
    }
    int64_t keys = tokens;
    Tensor attended;
    if (cache && tokens == 1) {
      // Each group of query heads reads its shared key/value head where the cache holds it (no
      // copy of the cache per step, as repeating the heads would make), up to the position.
      keys = cache->static_form ? cache->keys.size(2) : cache->start + 1;
      attended = kernels::decode_attention(q, cache->keys, cache->values, *cache->position,
                                           1.0 / std::sqrt(static_cast<double>(head_dim_)));
    } else {
      if (cache) {
        keys = cache->start + tokens;
        k = KvCache::to_compute(cache->keys.narrow(2, 0, keys), q.scalar_type());
        v = KvCache::to_compute(cache->values.narrow(2, 0, keys), q.scalar_type());
      }
      if (attention.kv_heads != attention.heads) {
        k = k.repeat_interleave(attention.heads / attention.kv_heads, 1);
        v = v.repeat_interleave(attention.heads / attention.kv_heads, 1);
      }
      // A prompt (into an empty cache, or without one) attends causally; where that holds the
      // scores (prefill_score_bytes), fit's probes watch the moment.
      std::optional<ScoreMoment> moment;
      if (!compat::kHasFusedAttention) moment.emplace();
      attended = compat::scaled_dot_product_attention(q, k, v, 0.0, /*causal=*/true);
    }
    // Query x key and weights x value over the full square (what the unfused kernel computes).
    FlopCounter::record_multiply_adds(2 * batch * attention.heads * tokens * keys * head_dim_);
    const auto [h, m] = post_attention_layernorm->add_and_normalize(
        x, attention.o(
               attended.transpose(1, 2).reshape({batch, tokens, attention.heads * head_dim_})));
    const std::vector<Tensor> gate_up = layers::project_together(m, {gate_proj, up_proj});
    return {h, down_proj(kernels::silu_mul(gate_up[0], gate_up[1]))};
  }

  RmsNorm input_layernorm{nullptr}, post_attention_layernorm{nullptr};
  layers::AttentionProjections attention;  // q, k, v, o and the heads they hold
  AdaptedLinear gate_proj{nullptr}, up_proj{nullptr}, down_proj{nullptr};

 private:
  int64_t head_dim_;
};
TORCH_MODULE(LlamaDecoderLayer);

}  // namespace

class LlamaNetImpl : public torch::nn::Module {
 public:
  // Every layer as `placement` lays it out: where it splits the vocabulary, the embedding and
  // the head hold a slice of it each.
  LlamaNetImpl(const LlamaConfig& c, bool defer_initialization, const LayerPlacement& placement)
      : placement(placement), c_(c) {
    auto model = register_module("model", std::make_shared<torch::nn::Module>());
    embed_tokens = model->register_module(
        "embed_tokens", layers::TokenEmbedding(c.vocab_size, c.hidden_size, placement));
    auto list = model->register_module("layers", torch::nn::ModuleList());
    for (int64_t i = 0; i < c.num_layers; ++i) {
      layers.push_back(LlamaDecoderLayer(c, placement));
      list->push_back(layers.back());
    }
    norm = model->register_module("norm", RmsNorm(c.hidden_size, c.rms_norm_eps));
    if (!c.tie_embeddings) {
      lm_head =
          register_module("lm_head", layers::projection(c.hidden_size, c.vocab_size, false,
                                                        layers::kVocabularyHeadRole, placement));
    }
    inv_freq_ = inverse_frequencies(c);
    if (!defer_initialization) initialize();
  }

  Tensor forward(const Tensor& tokens) {
    Tensor hidden = embed_tokens(tokens);
    const std::vector<Tensor> tables = rotary_tables(0, tokens.size(1));
    const std::vector<Tensor> rotary = RotaryTables::of(tables[0], tables[1]).as_extras();
    for (LlamaDecoderLayer& layer : layers) {
      hidden = run_observed_block(*layer, hidden, rotary);
    }
    return head(norm(hidden));
  }

  // Appends `tokens` to the cache; the logits of the last position only, as generation needs.
  Tensor forward_cached(const Tensor& tokens, KvCache& cache) {
    const int64_t n = tokens.size(1), start = cache.length;
    const std::vector<Tensor> tables = rotary_tables(start, n);
    RotaryTables rotary = RotaryTables::of(tables[0], tables[1]);
    const Tensor last = torch::full({1}, start + n - 1, tables[0].options().dtype(torch::kLong));
    const Tensor normed = run_layers(embed_tokens(tokens), rotary, cache, start, last, false);
    cache.length = start + n;
    return layers::whole_vocabulary(head(normed).squeeze(1), placement);
  }

  // One token per sequence at `position` (a device tensor [1]) in the static form
  // (LlamaDecoderLayerImpl::CacheSlot); the caller keeps cache.length.
  Tensor forward_static(const Tensor& tokens, const Tensor& position, KvCache& cache) {
    const Tensor& inv_freq = frequencies_on(tokens.device());
    const Tensor angles_half = position.to(torch::kFloat).unsqueeze(1) * inv_freq.unsqueeze(0);
    const Tensor angles = torch::cat({angles_half, angles_half}, -1);
    RotaryTables rotary = RotaryTables::of(angles.cos(), angles.sin());
    const Tensor normed = run_layers(embed_tokens(tokens), rotary, cache, 0, position, true);
    return layers::whole_vocabulary(head(normed).squeeze(1), placement);
  }

  // The layers over the cache and the model's last norm at the last token: each layer's output
  // sum left to the next norm, which adds and normalises in one operator.
  Tensor run_layers(const Tensor& embedded, RotaryTables& rotary, KvCache& cache, int64_t start,
                    const Tensor& last, bool static_form) {
    Tensor hidden = embedded, pending;
    for (size_t i = 0; i < layers.size(); ++i) {
      const LlamaDecoderLayerImpl::CacheSlot slot{cache.keys[i], cache.values[i], start, &last,
                                                  static_form};
      LlamaDecoderLayerImpl::LayerOutput out = layers[i]->run(hidden, pending, rotary, &slot);
      hidden = std::move(out.residual);
      pending = std::move(out.update);
    }
    const int64_t last_token = hidden.size(1) - 1;
    return norm
        ->add_and_normalize(hidden.narrow(1, last_token, 1), pending.narrow(1, last_token, 1))
        .second;
  }

  // cos and sin of the rotary angles for positions start..start+n, [n, head_dim], float32 on
  // the model's device whatever the weights' dtype (the layers round them to theirs).
  std::vector<Tensor> rotary_tables(int64_t start, int64_t n) {
    const Tensor& inv_freq = frequencies_on(embed_tokens->weight.device());
    const Tensor positions = torch::arange(start, start + n, inv_freq.options());
    const Tensor freqs = positions.unsqueeze(1) * inv_freq.unsqueeze(0);  // float32, no autocast
    const Tensor angles = torch::cat({freqs, freqs}, -1);
    return {angles.cos(), angles.sin()};
  }

  // The logits of this rank's slice of the vocabulary (all of it when it holds it whole).
  Tensor head(const Tensor& normed) {
    return lm_head ? lm_head(normed) : embed_tokens->tied_logits(normed);
  }

  layers::TokenEmbedding embed_tokens{nullptr};
  std::vector<LlamaDecoderLayer> layers;
  RmsNorm norm{nullptr};
  AdaptedLinear lm_head{nullptr};
  LayerPlacement placement;

 public:
  // Hugging Face's LlamaPreTrainedModel: normal(0, 0.02) for projections and embeddings, ones
  // for the norms.
  void initialize() {
    torch::NoGradGuard no_grad;
    for (auto& [name, parameter] : layers::own_parameters(*this)) {
      if (name.find("norm") == std::string::npos) parameter.normal_(0.0, 0.02);
    }
  }

 private:
  // The rotary frequencies on `device`, copied once per device (before any graph capture: the
  // capture's warm-up calls this first).
  const Tensor& frequencies_on(torch::Device device) {
    if (!inv_freq_on_device_.defined() || inv_freq_on_device_.device() != device) {
      inv_freq_on_device_ = inv_freq_.to(device);
    }
    return inv_freq_on_device_;
  }

  LlamaConfig c_;
  // float32 from construction on and not a buffer, so that no cast of the module reaches it:
  // rounded to bf16 the angle at position 600 is off by about a radian.
  Tensor inv_freq_;
  Tensor inv_freq_on_device_;
};

LlamaModel::LlamaModel(const LlamaConfig& config, const ModelOptions& options)
    : config_(config),
      seq_len_(options.seq_len),
      net_(std::make_shared<LlamaNetImpl>(config, options.defer_initialization,
                                          options.placement)) {}

LlamaModel::~LlamaModel() = default;

void LlamaModel::initialize_weights() {
  net_->initialize();
}

torch::nn::Module& LlamaModel::module() {
  return *net_;
}

SyntheticBatch LlamaModel::synthetic_batch(int64_t batch_size, torch::Device device, bool) {
  NextTokenBatch batch = next_token_batch(config_.vocab_size, batch_size, seq_len_, device);
  return {std::move(batch.inputs), std::move(batch.targets), {}};
}

Tensor LlamaModel::logits(const Tensor& tokens) {
  return layers::whole_vocabulary(net_->forward(tokens), net_->placement);
}

// Causal-LM loss: every position predicts the next token (the targets are the inputs shifted by
// one, drawn with them), in float32 as Hugging Face computes it; from this rank's slice of the
// logits where the vocabulary is split.
Tensor LlamaModel::training_loss(const SyntheticBatch& batch) {
  const Tensor out = net_->forward(batch.inputs);
  return layers::vocabulary_cross_entropy(out.reshape({-1, out.size(-1)}).to(torch::kFloat),
                                          batch.targets.reshape({-1}), net_->placement);
}

Tensor LlamaModel::inference_output(const SyntheticBatch& batch) {
  return logits(batch.inputs);
}

std::vector<Tensor> LlamaModel::rotary_tables(int64_t start, int64_t n) {
  return net_->rotary_tables(start, n);
}

bool LlamaModel::decode_converts_cache(torch::Device device, torch::ScalarType cache,
                                       torch::ScalarType compute) const {
  return kernels::decode_attention_converts_cache(device, cache, compute, config_.head_dim(),
                                                  config_.num_heads / config_.num_kv_heads);
}

KvCache LlamaModel::allocate_cache(int64_t batch, int64_t capacity, torch::Device device,
                                   torch::ScalarType dtype) {
  return KvCache::allocate(config_.num_layers, batch,
                           net_->placement.share_of(config_.num_kv_heads, "the key/value heads"),
                           capacity, config_.head_dim(),
                           torch::TensorOptions().device(device).dtype(dtype));
}

Tensor LlamaModel::next_token_logits(const Tensor& tokens, KvCache& cache) {
  cache.check_room_for(tokens.size(1));
  return net_->forward_cached(tokens, cache);
}

Tensor LlamaModel::next_token_logits_at(const Tensor& token, const Tensor& position,
                                        KvCache& cache) {
  return net_->forward_static(token, position, cache);
}

Tensor LlamaModel::last_logits_without_cache(const Tensor& tokens) {
  return logits(tokens).select(1, -1);
}

int64_t LlamaModel::count_forward() {
  logits(torch::zeros({1, seq_len_}, torch::kLong));
  return seq_len_;
}

BlockProjections llama_projections(const LlamaConfig& c) {
  const int64_t h = c.hidden_size, i = c.intermediate_size, q_out = c.num_heads * c.head_dim(),
                kv_out = c.num_kv_heads * c.head_dim();
  return {c.num_layers,
          {{"q", h, q_out},
           {"k", h, kv_out},
           {"v", h, kv_out},
           {"o", q_out, h},
           {"gate", h, i},
           {"up", h, i},
           {"down", i, h}}};
}

ModelStats llama_stats(const LlamaConfig& c, const ModelOptions& options) {
  const int64_t h = c.hidden_size, i = c.intermediate_size, q_out = c.num_heads * c.head_dim(),
                kv_out = c.num_kv_heads * c.head_dim(), s = options.seq_len;
  const int64_t block_weights = h * q_out + 2 * h * kv_out + q_out * h + 3 * h * i;
  const int64_t head = c.tie_embeddings ? 0 : h * c.vocab_size;
  ModelStats stats;
  stats.params = c.vocab_size * h + head + c.num_layers * (block_weights + 2 * h) + h;
  stats.trainable_params = stats.params;
  // Per token: every projection, the attention products over s positions, the LM head.
  const int64_t weight_macs = c.num_layers * block_weights + h * c.vocab_size;
  const int64_t attention_macs = c.num_layers * 2 * c.num_heads * s * c.head_dim();
  stats.forward_flops = 2 * (weight_macs + attention_macs);
  stats.weight_flops = 2 * weight_macs;
  return stats;
}

// Published configurations (Hugging Face config.json of each model).
LlamaConfig llama_3_2_1b() {
  LlamaConfig c;
  c.vocab_size = 128256;
  c.hidden_size = 2048;
  c.intermediate_size = 8192;
  c.num_layers = 16;
  c.num_heads = 32;
  c.num_kv_heads = 8;
  c.rope_theta = 500000;
  c.rope_scaling_factor = 32;
  c.tie_embeddings = true;
  c.max_positions = 131072;
  return c;
}

LlamaConfig llama_2_7b() {
  return {};
}

LlamaConfig llama_3_8b() {
  LlamaConfig c;
  c.vocab_size = 128256;
  c.intermediate_size = 14336;
  c.num_kv_heads = 8;
  c.rope_theta = 500000;
  c.max_positions = 8192;
  return c;
}

LlamaConfig llama_3_1_8b() {
  LlamaConfig c = llama_3_8b();
  c.rope_scaling_factor = 8;
  c.max_positions = 131072;
  return c;
}

namespace {

// A larger Llama 3.1: the 8B's vocabulary, 8 key/value heads and rotary scaling at another width
// and depth.
LlamaConfig llama_3_1_at(int64_t hidden, int64_t intermediate, int64_t layers, int64_t heads) {
  LlamaConfig c = llama_3_1_8b();
  c.hidden_size = hidden;
  c.intermediate_size = intermediate;
  c.num_layers = layers;
  c.num_heads = heads;
  return c;
}

}  // namespace

LlamaConfig llama_3_1_70b() {
  return llama_3_1_at(8192, 28672, 80, 64);
}

LlamaConfig llama_3_1_405b() {
  return llama_3_1_at(16384, 53248, 126, 128);
}

namespace {

// The configuration a probe or a reduced run builds: ModelOptions' blocks, vocabulary and width.
LlamaConfig probed(const LlamaConfig& c, const ModelOptions& options) {
  return narrowed_in_width(reduced(c, options), options);
}

ModelInfo llama_info(std::string name, LlamaConfig config, std::string reference,
                     bool hidden = false) {
  ModelInfo info = fine_tuning_info(
      {std::move(name),
       "causal-language-modeling",
       "tokens",
       1,
       std::min<int64_t>(2048, config.max_positions),
       config.max_positions,
       std::move(reference),
       [config](const ModelOptions& options) { return llama_projections(probed(config, options)); },
       [config](const ModelOptions& options) -> std::unique_ptr<TrainableModel> {
         return std::make_unique<LlamaModel>(probed(config, options), options);
       },
       [config](const ModelOptions& options) {
         return llama_stats(probed(config, options), options);
       },
       {config.num_layers, config.hidden_size, config.num_heads, config.vocab_size},
       hidden});
  info.capabilities.generates = true;
  // Every width to multiples of 128, the largest group a weight format quantises by.
  info.capabilities.max_width_divisor = max_width_divisor(config, false, 128);
  info.capabilities.max_width_divisor_keeping_key_value_heads =
      max_width_divisor(config, true, 128);
  const int64_t h = config.hidden_size;
  const int64_t q_out = config.num_heads * config.head_dim(),
                kv_out = config.num_kv_heads * config.head_dim();
  info.capabilities.linear_weight_shapes = {{q_out, h, "q"},
                                            {kv_out, h, "k"},
                                            {h, q_out, "o"},
                                            {config.intermediate_size, h, "gate"},
                                            {h, config.intermediate_size, "down"}};
  if (!config.tie_embeddings) {
    info.capabilities.linear_weight_shapes.push_back(
        {config.vocab_size, h, layers::kVocabularyHeadRole});
  }
  if (!compat::kHasFusedAttention) {
    info.prefill_score_bytes = [config](const ModelOptions& options, int64_t batch, int64_t tokens,
                                        int64_t element_bytes) {
      const int64_t heads = options.placement.share_of(config.num_heads / options.width_divisor,
                                                       "the attention heads");
      return compat::scaled_dot_product_attention_score_bytes(batch, heads, tokens, tokens,
                                                              config.head_dim(), element_bytes);
    };
  }
  info.capabilities.split_counts = {{kKeyValueHeadsSplit, config.num_kv_heads},
                                    {"attention heads", config.num_heads},
                                    {"MLP width", config.intermediate_size},
                                    {"vocabulary", config.vocab_size}};
  return info;
}

const ModelRegistration k32_1b{llama_info(
    "llama-3.2-1b", llama_3_2_1b(),
    "Meta Llama 3.2 1B (Hugging Face LlamaForCausalLM: 16 layers, hidden 2048, GQA 32/8 heads, "
    "tied embeddings)")};
const ModelRegistration k2_7b{llama_info(
    "llama-2-7b", llama_2_7b(),
    "Meta Llama 2 7B (Hugging Face LlamaForCausalLM: 32 layers, hidden 4096, 32 heads)")};
const ModelRegistration k3_8b{llama_info(
    "llama-3-8b", llama_3_8b(),
    "Meta Llama 3 8B (Hugging Face LlamaForCausalLM: 32 layers, hidden 4096, GQA 32/8 heads)")};

const ModelRegistration k31_8b{llama_info(
    "llama-3.1-8b", llama_3_1_8b(),
    "Meta Llama 3.1 8B (Hugging Face LlamaForCausalLM: 32 layers, hidden 4096, GQA 32/8 heads, "
    "llama3 rotary scaling x8)")};

ModelInfo llama_3_1_70b_info() {
  ModelInfo info =
      llama_info("llama-3.1-70b", llama_3_1_70b(),
                 "Meta Llama 3.1 70B (Hugging Face LlamaForCausalLM: 80 layers, hidden "
                 "8192, GQA 64/8 heads, llama3 rotary scaling x8; Llama 3.3 70B has "
                 "the same shape)");
  info.aliases = {"llama-3.3-70b"};
  return info;
}
const ModelRegistration k31_70b{llama_3_1_70b_info()};
const ModelRegistration k31_405b{llama_info(
    "llama-3.1-405b", llama_3_1_405b(),
    "Meta Llama 3.1 405B (Hugging Face LlamaForCausalLM: 126 layers, hidden 16384, GQA 128/8 "
    "heads, llama3 rotary scaling x8)")};

LlamaConfig tiny_llama_config() {
  LlamaConfig c;
  c.vocab_size = 256;
  c.hidden_size = 32;
  c.intermediate_size = 64;
  c.num_layers = 2;
  c.num_heads = 4;
  c.num_kv_heads = 2;
  c.max_positions = 64;
  return c;
}

// Hidden: for the tests (tokens, GQA, adapters, checkpointing at a size a 2-core CPU trains at
// once).
const ModelRegistration kTinyLlama{llama_info("test-tiny-llama", tiny_llama_config(),
                                              "a test model: Llama, 2 layers, hidden 32", true)};

// Hidden: a Llama whose 4 key/value heads (8 query heads) split over 2 and 4 ranks, small enough
// to check both against one rank on a 2-core CPU.
LlamaConfig heads_over_ranks_llama_config() {
  LlamaConfig c = tiny_llama_config();
  c.hidden_size = 64;
  c.intermediate_size = 128;
  c.num_heads = 8;
  c.num_kv_heads = 4;
  return c;
}
const ModelRegistration kHeadsOverRanksLlama{
    llama_info("test-tp-llama", heads_over_ranks_llama_config(),
               "a test model: Llama, 2 layers, hidden 64, GQA 8/4 heads", true)};

// Hidden: a small Llama deep enough that `train --blocks 2` leaves blocks out, and wide enough
// that its adapters at rank 64 fill several 1 MiB buckets (the timeline's extension to the whole
// depth).
LlamaConfig small_deep_llama_config() {
  LlamaConfig c = tiny_llama_config();
  c.hidden_size = 256;
  c.intermediate_size = 512;
  c.num_layers = 6;
  return c;
}
const ModelRegistration kSmallDeepLlama{llama_info("test-deep-llama", small_deep_llama_config(),
                                                   "a test model: Llama, 6 layers, hidden 256",
                                                   true)};

// Hidden: Llama 3's vocabulary (128,256 tokens) at hidden 256, so that fit's narrowed-vocabulary
// probes can be checked against whole-vocabulary ones at a fraction of Llama 3.2 1B's cost.
LlamaConfig large_vocabulary_llama_config() {
  LlamaConfig c = small_deep_llama_config();
  c.vocab_size = 128256;
  c.num_layers = 2;
  return c;
}
const ModelRegistration kLargeVocabularyLlama{
    llama_info("test-vocab-llama", large_vocabulary_llama_config(),
               "a test model: Llama, 2 layers, hidden 256, Llama 3's 128,256 tokens", true)};

}  // namespace
}  // namespace gpubench::models
