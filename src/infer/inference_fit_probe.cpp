#include "infer/inference_fit_probe.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <optional>
#include <set>

#include <torch/torch.h>

#include "common/errors.h"
#include "features/model_options.h"
#include "infer/inference_model.h"
#include "memory/fit_prediction.h"
#include "memory/shared_storage.h"
#include "memory/tensor_memory.h"
#include "modeling/mxfp4_weights.h"
#include "modeling/score_moment.h"
#include "modeling/text_generation.h"
#include "run/device_setup.h"
#include "run/model_setup.h"

namespace gpubench {
namespace {

// A decode probe's cache (at batch 4) takes at most this much: past it the decode's contexts are
// shorter than the asked one, and its extra is extended linearly.
constexpr int64_t kDecodeProbeCacheBytes = int64_t{1} << 30;

// The probes' batches: this and twice it (two_batches_at_three_lengths).
constexpr int64_t kSmallerProbeBatch = 2;

// What the probes of one model (whole, or with some blocks) give.
struct GenerationFits {
  int64_t weights = 0, kv_cache_per_token = 0;
  int64_t kv_window_per_token = 0, kv_window = 0;  // the sliding-window layers'
  BatchSeqFit prefill_extra, prefill_at_scores, decode_extra;
};

// The model as infer holds it, with its weights undrawn where probed_undrawn (memory does not
// depend on the values: zeros, quantised, take the bytes random ones do).
// With `shared`, every weight lies over one zeroed buffer per dtype, in the dtype infer casts it
// to (memory/shared_storage.h): a probe holds its largest weight's bytes, not every weight's
// (Llama 3.1 405B's two blocks: 12.8 GB in bf16). `routed`: the weights that decide a pass's
// routes drawn (TrainableModel::initialize_routing); false for a model built for its weights alone.
std::unique_ptr<TrainableModel> inference_probe_model(const ResolvedBenchmark& b,
                                                      const ModelInfo& info, ModelOptions options,
                                                      torch::Device device,
                                                      const PrecisionPolicy& policy, bool shared,
                                                      bool routed) {
  options.defer_initialization = probed_undrawn(info);
  std::unique_ptr<TrainableModel> model = build_model(info, options, b, policy);
  ModelOptions placed = options;
  placed.defer_initialization = false;
  place_model(*model, device, placed, false);
  if (options.defer_initialization) {
    torch::NoGradGuard no_grad;
    if (shared) {
      share_zeroed_parameters(model->module().parameters(), inference_weight_dtype(b.precision));
    } else {
      for (auto& parameter : model->module().parameters()) parameter.zero_();
    }
    // Weights held as codes and scales (MXFP4 experts) are buffers, left undrawn otherwise:
    // garbage there made NaN hidden states, whose routes all went to the same experts.
    for (auto& buffer : model->module().buffers()) buffer.zero_();
    if (routed) model->initialize_routing();
  }
  prepare_for_inference(*model, b, policy);
  return model;
}

// The bytes of the model's parameters and buffers, each tensor once: what inference_weight_bytes
// counts of a model whose tensors have storages of their own, where the probe's weights share one
// (tested equal: InferenceFitPrediction.ProbesOverSharedStorageReadWhatOwnStorageDoes).
int64_t distinct_tensor_bytes(torch::nn::Module& module) {
  std::set<const c10::TensorImpl*> counted;
  int64_t bytes = 0;
  std::vector<torch::Tensor> tensors = module.parameters();
  for (const torch::Tensor& buffer : module.buffers()) tensors.push_back(buffer);
  for (const torch::Tensor& tensor : tensors) {
    if (counted.insert(tensor.unsafeGetTensorImpl()).second) {
      bytes += static_cast<int64_t>(tensor.nbytes());
    }
  }
  return bytes;
}

// The peak above `start` of `work`, from a peak reset to what is allocated now.
template <typename Work>
int64_t peak_above(torch::Device device, int64_t start, Work&& work) {
  tensor_memory::reset_peak(device);
  work();
  return tensor_memory::peak_allocated_bytes(device) - start;
}

// Batch 2 and 4 at a quarter, a half and the whole of `seq` (at least 1, 2 and 3). Not batch 1:
// there a matmul of one row (a decode step's) can take another kernel, with other temporaries,
// than a batch's (test-tiny-llama bf16 on LibTorch 2.11: probes at 1 and 2 put the batch of 32
// 4 % under its peak).
std::vector<ProbeShape> two_batches_at_three_lengths(int64_t seq) {
  const int64_t l3 = std::max<int64_t>(seq, 3), l2 = std::max<int64_t>(2, l3 / 2),
                l1 = std::max<int64_t>(1, l3 / 4);
  std::vector<ProbeShape> shapes;
  for (const int64_t length : {l1, l2, l3}) {
    shapes.push_back({kSmallerProbeBatch, length});
    shapes.push_back({2 * kSmallerProbeBatch, length});
  }
  return shapes;
}

// The decode's probes at the context the run's last step reads, as long as a probe cache at batch
// 4 of kDecodeProbeCacheBytes holds (on a GPU an eighth of its memory).
std::vector<ProbeShape> decode_probes(const ResolvedBenchmark& b, int64_t per_token,
                                      torch::Device device) {
  const int64_t budget =
      device.is_cuda() ? tensor_memory::device_total_bytes(device) / 8 : kDecodeProbeCacheBytes;
  const int64_t held = budget / (2 * kSmallerProbeBatch * std::max<int64_t>(1, per_token));
  return two_batches_at_three_lengths(
      std::min(b.prompt_len + b.gen_len - 1, std::max<int64_t>(3, held)));
}

// The prompt's pass of `shape` into an empty cache (the prompt's own bytes are in its extra):
// its cache and its peak above them; for a model that declares its attention's scores, the peak
// outside them, what lives beside them and their own peak (the declared figure's check), each
// the largest of its layers' and blocks'. The cache holds one position more than the pass reads,
// as the run's does (it holds the whole generation): attention reads a narrowed view, which a
// kernel may copy (LibTorch 2.x's fused attention does: test-tiny-llama bf16 at batch 32 peaked
// 4 % above probes whose caches the pass read whole).
void probe_prefill(TextGenerator& generator, const ProbeShape& shape, torch::Device device,
                   torch::ScalarType cache_dtype, InferenceProbeReading& reading) {
  KvCache cache = generator.allocate_cache(shape.batch, shape.seq + 1, device, cache_dtype);
  reading.kv_cache = cache.bytes_at(shape.seq) * shape.batch;
  const int64_t start = tensor_memory::allocated_bytes(device);
  int64_t beside = 0;
  const ScoreMomentWatch watch(
      [&] {
        reading.prefill_peak_above = std::max(reading.prefill_peak_above,
                                              tensor_memory::peak_allocated_bytes(device) - start);
        beside = tensor_memory::allocated_bytes(device);
        reading.prefill_at_scores_above = std::max(reading.prefill_at_scores_above, beside - start);
        tensor_memory::reset_peak(device);
      },
      [&] {
        reading.prefill_scores =
            std::max(reading.prefill_scores, tensor_memory::peak_allocated_bytes(device) - beside);
        tensor_memory::reset_peak(device);
      });
  const auto tokens = torch::TensorOptions().device(device).dtype(torch::kLong);
  reading.prefill_peak_above =
      std::max(reading.prefill_peak_above, peak_above(device, start, [&] {
                 const torch::Tensor prompt =
                     torch::randint(generator.vocab_size(), {shape.batch, shape.seq}, tokens);
                 generator.next_token_logits(prompt, cache).argmax(-1, true);
               }));
}

// The attention's scores at (batch, prompt) as the model declares them, in the policy's compute
// dtype; 0 for a model that declares none.
int64_t declared_score_bytes(const ModelInfo& info, const ModelOptions& options,
                             const PrecisionPolicy& policy, int64_t batch, int64_t prompt) {
  if (!info.prefill_score_bytes) return 0;
  const std::optional<torch::ScalarType> compute = policy.autocast_dtype();
  const int64_t element_bytes =
      compute ? static_cast<int64_t>(c10::elementSize(*compute)) : int64_t{4};
  return info.prefill_score_bytes(options, batch, prompt, element_bytes);
}

GenerationFits probe_generation(const ResolvedBenchmark& b, const ModelInfo& info,
                                const ModelOptions& options, torch::Device device,
                                const PrecisionPolicy& policy,
                                const std::vector<ProbeShape>& prefill_shapes,
                                const FitOptions& fit_options,
                                std::vector<InferenceProbeReading>& readings) {
  const bool shared = fit_options.shared_storage && probed_undrawn(info);
  const std::unique_ptr<TrainableModel> model =
      inference_probe_model(b, info, options, device, policy, shared, !prefill_shapes.empty());
  TextGenerator& generator = *model->text_generator();
  GenerationFits fits;
  fits.weights =
      shared ? distinct_tensor_bytes(model->module()) : inference_weight_bytes(model->module());
  if (fit_options.counted_weights) {
    fits.weights += layers::counted_bytes_change(model->module(), *fit_options.counted_weights);
  }
  if (prefill_shapes.empty()) return fits;  // the weights alone
  const c10::InferenceMode inference_mode;
  const torch::ScalarType cache_dtype = kv_cache_dtype(b);
  const auto tokens = torch::TensorOptions().device(device).dtype(torch::kLong);
  {
    const KvCache one_position = generator.allocate_cache(1, 1, device, cache_dtype);
    fits.kv_cache_per_token = one_position.bytes_per_token();
    fits.kv_window_per_token = one_position.window_bytes_per_token();
    fits.kv_window = one_position.window();
  }
  const std::vector<ProbeShape> decode_shapes =
      decode_probes(b, fits.kv_cache_per_token + fits.kv_window_per_token, device);
  std::vector<BatchSeqFit::Point> prefill, at_scores, decode;
  for (size_t i = 0; i < prefill_shapes.size(); ++i) {
    const ProbeShape& shape = prefill_shapes[i];
    const ProbeShape& decode_shape = decode_shapes[i];
    report_probing(prefill_shapes, i);
    auto reading = probe_reading<InferenceProbeReading>(options, shape);
    reading.decode_context = decode_shape.seq;
    reading.weights = fits.weights;
    probe_prefill(generator, shape, device, cache_dtype, reading);
    {  // One decode step at the context, into a cache that holds it (its contents do not count).
      KvCache cache =
          generator.allocate_cache(decode_shape.batch, decode_shape.seq + 2, device, cache_dtype);
      cache.length = decode_shape.seq;
      const int64_t start = tensor_memory::allocated_bytes(device);
      reading.decode_peak_above = peak_above(device, start, [&] {
        const torch::Tensor token = torch::zeros({decode_shape.batch, 1}, tokens);
        generator.next_token_logits(token, cache).argmax(-1, true);
      });
    }
    prefill.push_back({shape.batch, shape.seq, static_cast<double>(reading.prefill_peak_above)});
    // Only the declared scores grow with the square of the prompt: what else the moment held (a
    // kernel's own temporaries; 1.13's operators for the Llama keep copies of q and k) grows in
    // proportion, as what lived beside it does.
    const int64_t beyond_declared =
        std::max<int64_t>(0, reading.prefill_scores - declared_score_bytes(info, options, policy,
                                                                           shape.batch, shape.seq));
    at_scores.push_back({shape.batch, shape.seq,
                         static_cast<double>(reading.prefill_at_scores_above + beyond_declared)});
    decode.push_back(
        {decode_shape.batch, decode_shape.seq, static_cast<double>(reading.decode_peak_above)});
    readings.push_back(reading);
  }
  fits.prefill_extra = BatchSeqFit::from_three_lengths(prefill);
  fits.prefill_at_scores = BatchSeqFit::from_three_lengths(at_scores);
  fits.decode_extra = BatchSeqFit::from_three_lengths(decode);
  return fits;
}

// The fits at the model's width from those at 1/k and 2/k of it: the weights on the parabola
// through 0, the cache and the passes' moments on the line (fit_prediction.h).
GenerationFits widened_fits(const GenerationFits& narrow, const GenerationFits& twice, int64_t k) {
  GenerationFits fits;
  fits.weights = std::llround(
      widened_square(static_cast<double>(narrow.weights), static_cast<double>(twice.weights), k));
  const auto line = [&](int64_t GenerationFits::*member) {
    return std::llround(
        widened_figure(static_cast<double>(narrow.*member), static_cast<double>(twice.*member), k));
  };
  fits.kv_cache_per_token = line(&GenerationFits::kv_cache_per_token);
  fits.kv_window_per_token = line(&GenerationFits::kv_window_per_token);
  fits.kv_window = narrow.kv_window;
  fits.prefill_extra = BatchSeqFit::widened(narrow.prefill_extra, twice.prefill_extra, k);
  fits.prefill_at_scores =
      BatchSeqFit::widened(narrow.prefill_at_scores, twice.prefill_at_scores, k);
  fits.decode_extra = BatchSeqFit::widened(narrow.decode_extra, twice.decode_extra, k);
  return fits;
}

// The probes by blocks at one width, extended to the whole model's blocks and vocabulary.
GenerationFits probe_blocks_at_width(const ProbeModels& models, const ResolvedBenchmark& b,
                                     const ModelInfo& info, torch::Device device,
                                     const PrecisionPolicy& policy,
                                     const std::vector<ProbeShape>& prefill,
                                     const FitOptions& fit_options, InferenceMemoryFit& fit) {
  const auto probe = [&](const ModelOptions& options) {
    return probe_generation(b, info, options, device, policy, prefill, fit_options, fit.readings);
  };
  const GenerationFits one = probe(models.one_block), two = probe(models.two_blocks);
  const GenerationFits vocab = models.narrowed ? probe(models.wider) : one;
  const double t = models.extra_blocks(info), u = models.extra_vocabularies(info);
  GenerationFits fits;
  const auto line = [&](int64_t GenerationFits::*member) {
    return std::llround(extended_figure(static_cast<double>(one.*member),
                                        static_cast<double>(two.*member), t,
                                        static_cast<double>(vocab.*member), u));
  };
  fits.weights = line(&GenerationFits::weights);
  fits.kv_cache_per_token = line(&GenerationFits::kv_cache_per_token);
  fits.kv_window_per_token = line(&GenerationFits::kv_window_per_token);
  fits.kv_window = one.kv_window;
  fits.prefill_extra =
      BatchSeqFit::extended(one.prefill_extra, two.prefill_extra, t, vocab.prefill_extra, u);
  fits.prefill_at_scores = BatchSeqFit::extended(one.prefill_at_scores, two.prefill_at_scores, t,
                                                 vocab.prefill_at_scores, u);
  fits.decode_extra =
      BatchSeqFit::extended(one.decode_extra, two.decode_extra, t, vocab.decode_extra, u);
  return fits;
}

// The probes by blocks (and by width), extended to the whole model.
GenerationFits probe_generation_by_blocks(const ProbeModels& models, const ResolvedBenchmark& b,
                                          const ModelInfo& info, torch::Device device,
                                          const PrecisionPolicy& policy,
                                          const std::vector<ProbeShape>& prefill,
                                          const FitOptions& fit_options, InferenceMemoryFit& fit) {
  const auto at_experts = [&](const ProbeModels& probed, const std::vector<ProbeShape>& shapes) {
    const auto at_width = [&](const ProbeModels& at) {
      return probe_blocks_at_width(at, b, info, device, policy, shapes, fit_options, fit);
    };
    const int64_t k = probed.width_divisor;
    return k > 1 ? widened_fits(at_width(probed), at_width(probed.twice_as_wide()), k)
                 : at_width(probed);
  };
  GenerationFits fits = at_experts(models, prefill);
  // Fewer experts (fit_probes.h's ProbeModels::experts): their weights on the line through the
  // probes and the same models built with twice the experts. The cache and the passes' moments
  // are the probes' own: they hold the tokens' tensors and one expert's weights dequantised at a
  // time, whatever the count (on the line, the routes' differences between two sets of probes,
  // a few hundred KB, grew to 13.6 GiB of activations for gpt-oss-20b at prompt 8192, where
  // probes with all 32 experts give 2.2).
  if (models.experts > 0) {
    const GenerationFits twice = at_experts(models.with_twice_the_experts(), {});
    fits.weights =
        std::llround(widened_figure(static_cast<double>(fits.weights),
                                    static_cast<double>(twice.weights), models.experts_factor()));
  }
  // The last position's logits, [batch, vocabulary] in the activations' dtype: at a narrowed
  // vocabulary a moment of fixed size (one block's) can hide them, at the model's own they are a
  // decode step's peak (test-vocab-llama at batch 32: 8.4 MB, where the narrowed probes saw
  // 0.14 MB at every batch). The larger of the two, per item.
  if (models.narrowed) {
    const double logits = static_cast<double>(info.capabilities.vocab) *
                          static_cast<double>(c10::elementSize(
                              inference_weight_dtype(b.precision).value_or(torch::kFloat)));
    for (BatchSeqFit* extra : {&fits.prefill_extra, &fits.decode_extra}) {
      extra->item = std::max(extra->item, logits);
    }
  }
  return fits;
}

}  // namespace

InferenceMemoryFit fit_inference_memory(const ResolvedBenchmark& b, const FitOptions& fit_options) {
  check_fit_shape(b);
  const auto started = std::chrono::steady_clock::now();
  const DeviceSetup setup(b, /*device_index=*/0);
  const ModelInfo& info = setup.info();
  if (!info.capabilities.generates) {
    throw UsageError("fit --task infer predicts the models that generate text (the Llamas); " +
                     b.model + " does not");
  }
  const torch::Device device = setup.device();
  const ModelOptions options = probed_model_options(b);
  const ProbeBytes weights = [&](const ModelOptions& probe) {
    return planned_weight_bytes(info, probe, b);
  };
  const ProbeModels models = probe_models(info, options, device, fit_options, weights);
  check_host_memory(models, options, b, fit_options, weights, "for its weights");
  const ModelOptions largest = models.largest(options);
  const double flops_per_token =
      info.count ? static_cast<double>(info.count(largest).forward_flops) : 0.0;
  const std::vector<ProbeShape> prefill = two_batches_at_three_lengths(probe_length(
      b.prompt_len, b, flops_per_token * kSmallerProbeBatch, fit_options,  // batch 4's cost
      ProbePass::kForward));

  InferenceMemoryFit fit;
  fit.batch_size = b.batch_size;
  fit.prompt_len = b.prompt_len;
  fit.gen_len = b.gen_len;
  fit.context_limit = info.max_seq_len;
  std::optional<tensor_memory::ReusedFreedBlocks> reused;
  if (models.by_blocks) reused.emplace();
  const GenerationFits fits =
      models.by_blocks ? probe_generation_by_blocks(models, b, info, device, setup.policy(),
                                                    prefill, fit_options, fit)
                       : probe_generation(b, info, options, device, setup.policy(), prefill,
                                          fit_options, fit.readings);
  fit.weights = fits.weights;
  fit.kv_cache_bytes_per_token = fits.kv_cache_per_token;
  fit.kv_cache_window_bytes_per_token = fits.kv_window_per_token;
  fit.kv_cache_window = fits.kv_window;
  fit.prefill_extra = fits.prefill_extra;
  fit.prefill_at_scores = fits.prefill_at_scores;
  fit.decode_extra = fits.decode_extra;
  if (info.prefill_score_bytes) {
    fit.prefill_scores = [&info, options, policy = setup.policy()](int64_t batch, int64_t prompt) {
      return declared_score_bytes(info, options, policy, batch, prompt);
    };
  }
  fit.method = probe_method("a prompt's pass and a decode step", models, info, prefill, b);
  if (models.experts > 0) {
    fit.method += " (the passes with " + std::to_string(models.experts) +
                  " experts; the models with " + std::to_string(2 * models.experts) +
                  " built for their weights alone)";
  }
  if (prefill.back().seq != b.prompt_len) {
    fit.method += ", scaled to prompt " + std::to_string(b.prompt_len);
  }
  fit.method += info.prefill_score_bytes
                    ? "; attention that holds its scores: their square in the prompt as the model "
                      "declares it, the rest in proportion to the prompt"
                    : "; attention through a fused kernel that holds no scores: everything in "
                      "proportion to the prompt";
  fit.probe_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return fit;
}

}  // namespace gpubench
