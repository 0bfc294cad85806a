#include "train/fit_probe.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <optional>

#include <torch/torch.h>

#include "features/memory_terms.h"
#include "features/model_options.h"
#include "features/parallelism/parallelism_memory.h"
#include "features/precision/precision_policy.h"
#include "features/weights/nf4_weights.h"
#include "memory/backward_moments.h"
#include "memory/shared_storage.h"
#include "memory/tensor_memory.h"
#include "memory/training_memory.h"
#include "modeling/model_registry.h"
#include "run/device_setup.h"
#include "run/model_setup.h"
#include "run/resolve_benchmark.h"
#include "train/training_step.h"

namespace gpubench {
namespace {

// What the probes of one model (whole, or with some blocks) give.
struct ProbeFits {
  int64_t weights = 0, gradients = 0, optimizer_states = 0, optimizer_workspace = 0;
  int64_t per_tensor_states = 0;  // of optimizer_states: held once a tensor (fused AdamW's steps)
  BatchSeqFit inputs, activations, backward_extra;
  std::optional<BatchSeqFit> backward_steepest;  // MemoryFit's
  int64_t gradient_peak_extra = 0;
};

std::vector<BatchSeqFit::Point> points_of(const std::vector<double>& x,
                                          const std::vector<ProbeShape>& shapes) {
  std::vector<BatchSeqFit::Point> points;
  for (size_t i = 0; i < shapes.size(); ++i) {
    points.push_back({shapes[i].batch, shapes[i].seq, x[i]});
  }
  return points;
}

// On CPUs with AVX-512 BF16 or AMX, LibTorch runs a bf16 matmul through oneDNN once it has more
// than 16^3 multiply-adds (ATen's mkldnn_gemm_min_size) and through its own kernel below that,
// and the two leave different temporaries in backward. Probes at a quarter, a half and the whole
// of a short length can straddle that size, and the curve through them misses the run's peak (a
// tiny Llama's LoRA bf16 peak at seq 64 predicted 18 % low from probes at 4-16 on a Zen 4). Such
// probes run LibTorch's own kernels throughout, whose temporaries matched the oneDNN run's there;
// the run itself is left as it is.
class NativeCpuMatmuls {
 public:
  explicit NativeCpuMatmuls(bool active)
      : active_(active), previous_(at::globalContext().userEnabledMkldnn()) {
    if (active_) at::globalContext().setUserEnabledMkldnn(false);
  }
  ~NativeCpuMatmuls() {
    if (active_) at::globalContext().setUserEnabledMkldnn(previous_);
  }
  NativeCpuMatmuls(const NativeCpuMatmuls&) = delete;
  NativeCpuMatmuls& operator=(const NativeCpuMatmuls&) = delete;

 private:
  bool active_;
  bool previous_;
};

constexpr int64_t kOneDnnMinMultiplyAdds = 16 * 16 * 16;

// Whether the probes' matmuls, up to `longest` tokens long, can lie on both sides of that size
// in a way that shows in their peak. Not where attention's products, longest^2 x the head width
// at most (the head width `head_dim` where the model declares it; else 4 tokens and heads up to
// 256 wide), are below it at every probe, and the weight matrices at or under it (a linear layer
// at one token is above it otherwise) hold at most a thousandth of the model's matrices'
// elements: their temporaries are as small beside the rest (Llama 3.1 405B LoRA, narrowed: its
// key and value adapters' B, 128 x 16, about 1/13,000 of the probe's matrices; the prediction with
// oneDNN 1.2 MB, 0.0001 %, above LibTorch's own kernels', 3 s against 29 s). A tiny model's
// matrices are all of them under it. gpt-oss's heads, 64 wide, are below it up to 8 tokens: its
// probes' predictions the same to the byte with oneDNN, gpt-oss-120b's fit 18.5 s against 8.9 s.
bool matmuls_can_straddle(torch::nn::Module& model, int64_t longest, int64_t head_dim) {
  constexpr int64_t kLongestBelow = 4, kWidestHeadBelow = 256;
  constexpr int64_t kSmallShare = 1000;  // the small matrices' share of elements: at most 1/1000
  const int64_t attention = longest * longest * (head_dim > 0 ? head_dim : kWidestHeadBelow);
  if (attention > kOneDnnMinMultiplyAdds || (head_dim <= 0 && longest > kLongestBelow)) return true;
  int64_t small = 0, all = 0;
  for (const torch::Tensor& parameter : model.parameters()) {
    if (parameter.dim() < 2) continue;
    all += parameter.numel();
    if (parameter.numel() <= kOneDnnMinMultiplyAdds) small += parameter.numel();
  }
  return small * kSmallShare > all;
}

// A model that reads its segments with a recurrent memory (Transformer-XL) starts each synthetic
// batch with none, where a run's timed steps hold it full: batch 2 probed at an empty memory and
// batch 1 at a full one put the test Transformer-XL's peak 18 % under its run at batch 8. The
// probes fill it first, by forward passes without gradients, and read what the step then holds at
// its start (the memory, and the buffers it was cut from) with its inputs.
void fill_recurrent_memory(TrainableModel& model, const SyntheticBatch& batch,
                           const ModelInfo& info, const ResolvedBenchmark& b,
                           const PrecisionPolicy& policy) {
  if (info.capabilities.input != SyntheticInput::kTokenSegments || b.tgt_len <= 0) return;
  const int64_t passes = (b.mem_len + b.tgt_len - 1) / b.tgt_len;
  const torch::NoGradGuard no_grad;
  const MixedPrecisionScope mixed_precision(policy);
  for (int64_t pass = 0; pass < passes; ++pass) model.training_loss(batch);
}

// Zeroed gradients for the parameters that train, and each one's version: what backward
// accumulates into in place, where kept.
std::vector<std::pair<torch::Tensor, uint32_t>> zeroed_gradients(torch::nn::Module& module) {
  torch::NoGradGuard no_grad;
  std::vector<std::pair<torch::Tensor, uint32_t>> versions;
  for (torch::Tensor parameter : module.parameters()) {
    if (!parameter.requires_grad()) continue;
    torch::Tensor& gradient = parameter.mutable_grad();
    if (!gradient.defined()) gradient = torch::zeros_like(parameter);
    versions.emplace_back(parameter, gradient._version());
  }
  return versions;
}

// The gradients a backward did not reach let go, as a run never holds them.
void drop_unreached(std::vector<std::pair<torch::Tensor, uint32_t>>& versions) {
  for (auto& [parameter, version] : versions) {
    if (parameter.grad()._version() == version) parameter.mutable_grad() = torch::Tensor();
  }
}

// An undrawn model's weights zeroed, over one shared buffer where `shared`
// (memory/shared_storage.h), and the weights that decide its routes drawn.
void zero_undrawn_weights(TrainableModel& model, bool shared) {
  if (shared) {
    share_zeroed_parameters(model.module().parameters());
  } else {
    torch::NoGradGuard no_grad;
    for (auto& parameter : model.module().parameters()) parameter.zero_();
  }
  model.initialize_routing();
}

// A model without a length probed at two batches: the line of backward's moment that grows
// fastest with the batch, above the activations, where the two ran the same nodes. The line
// through the two probes' peaks follows the moment that peaks at those batches, and a moment
// that grows faster peaks at larger ones: Transformer-XL's backward peaks at its adaptive
// softmax at batches 1 and 2 and inside its attention at 32 (the test model predicted 20 % under
// its run there from the peaks alone).
std::optional<BatchSeqFit> steepest_moment_fit(
    const std::vector<ProbeShape>& shapes,
    const std::vector<std::vector<BackwardMoments::Moment>>& moments) {
  if (shapes.size() != 2 || moments.size() != 2 || shapes.front().seq != 0) return std::nullopt;
  const auto steepest = steepest_moment(moments[0], moments[1]);
  if (!steepest) return std::nullopt;
  const std::vector<BatchSeqFit::Point> points = {
      {shapes[0].batch, 0, static_cast<double>(moments[0][steepest->first].peak)},
      {shapes[1].batch, 0, static_cast<double>(moments[1][steepest->second].peak)}};
  return BatchSeqFit::from(points, /*for_peak=*/true);
}

// A step with the gradients kept from the one before: its activations and peak into `reading`,
// and with `moments` backward's moments, each peak above the activations.
std::vector<BackwardMoments::Moment> run_kept_probe(TrainingStep& step, const SyntheticBatch& batch,
                                                    torch::Device device, bool moments,
                                                    ProbeReading& reading) {
  step.measure_memory_of_next_step(device, moments);
  step.run_forward_backward(batch, /*clear_gradients=*/false);
  const StepMemory& measured = step.last_step_memory();
  reading.activations = measured.activations();
  reading.peak_above_start_kept = measured.peak_above_start();
  std::vector<BackwardMoments::Moment> above = measured.backward_moments;
  for (BackwardMoments::Moment& moment : above) moment.peak -= measured.start + reading.activations;
  return above;
}

// What a fit's probes share: their readings, and the CPU kernels they run. The probe models of one
// fit (by blocks, at two widths, with more experts) are combined into one prediction, so they run
// one kind of kernel: LibTorch's own throughout once any of them can straddle oneDNN's size
// (matmuls_can_straddle). A Zen 5's LoRA bf16 fit of Llama 3.2 1B narrowed by 8 probed 1/8 of its
// width on LibTorch's kernels and 2/8 on oneDNN's, whose backward held a moment the narrower did
// not: the line through the two put the peak at batch 8 77 % above the probes at its width.
struct FitProbing {
  std::vector<ProbeReading>& readings;
  bool native_matmuls = false;
  bool probed = false;
  bool probe_again = false;  // a probe after the first chose LibTorch's kernels: all run again

  // Whether `model`'s probes, up to `longest` tokens, run LibTorch's own kernels.
  bool native_matmuls_for(torch::nn::Module& model, torch::Device device, int64_t longest,
                          int64_t head_dim) {
    if (!native_matmuls && !device.is_cuda() && longest > 0 &&
        matmuls_can_straddle(model, longest, head_dim)) {
      native_matmuls = true;
      probe_again = probed;
    }
    probed = true;
    return native_matmuls;
  }
};

ProbeFits probe_model(const ResolvedBenchmark& b, const ModelInfo& info, ModelOptions options,
                      torch::Device device, const PrecisionPolicy& policy,
                      const std::vector<ProbeShape>& shapes, bool shared_storage,
                      FitProbing& probing) {
  // Counted models built undrawn, their weights zeroed on the device (memory is not the values).
  options.defer_initialization = probed_undrawn(info);
  std::unique_ptr<TrainableModel> model = build_model(info, options, b, policy);
  ModelOptions placed = options;
  placed.defer_initialization = false;
  place_model(*model, device, placed, b.channels_last);
  TrainingStep step(
      *model, policy,
      optimizer_settings_for(optimizer_for(b.optimizer, info.optimizer), b.batch_size));
  ProbeFits fits;
  fits.weights = counted_training_state(model->module(), step.optimizer()).weights;
  fits.optimizer_states = step.optimizer().planned_state_bytes();
  fits.per_tensor_states = step.optimizer().planned_per_tensor_state_bytes();
  fits.optimizer_workspace = step.optimizer().step_workspace_bytes();
  shared_storage = shared_storage && options.defer_initialization;
  if (options.defer_initialization) zero_undrawn_weights(*model, shared_storage);
  const int64_t longest = shapes.back().seq;
  const NativeCpuMatmuls native_matmuls(probing.native_matmuls_for(
      model->module(), device, longest, info.capabilities.attention_head_dim));
  std::vector<double> inputs, activations;
  std::vector<BatchSeqFit::Point> backward_extra;
  std::vector<std::vector<BackwardMoments::Moment>> moments;  // above the step's start
  for (const ProbeShape& shape : shapes) {
    report_probing(shapes, static_cast<size_t>(&shape - shapes.data()));
    if (shape.seq > 0) model->set_sequence_length(shape.seq);
    model->clear_recurrent_memory();  // the shape before's, which its batch would let go
    tensor_memory::trim_host_heap();
    const int64_t before = tensor_memory::allocated_bytes(device);
    const SyntheticBatch batch = model->synthetic_batch(shape.batch, device, b.channels_last);
    fill_recurrent_memory(*model, batch, info, b, policy);
    auto reading = probe_reading<ProbeReading>(options, shape);
    reading.inputs = tensor_memory::allocated_bytes(device) - before;
    if (device.is_cuda()) step.run_forward_backward(batch);  // cuDNN's autotuning, workspaces
    // The smallest shape, the first, runs as a run does (gradients cleared first): backward's
    // peak above the gradients is least there. The probes after it run with the gradients kept,
    // for the activation-bound peak; the forward pass leaves the same activations. A model
    // without a length has two probes, both needed kept: its gradients are zeroed before the
    // first instead (a step of Mask R-CNN at 800 pixels is 5 s here), and backward's end beside
    // them is left to its kept peak, which is never below it (a kept backward holds each
    // incoming gradient as a temporary, where a cleared one keeps it as the gradient).
    const bool first = &shape == &shapes.front(), zeroed = first && shape.seq == 0;
    std::vector<std::pair<torch::Tensor, uint32_t>> versions;
    if (zeroed) {
      versions = zeroed_gradients(model->module());
    } else if (first) {
      step.measure_memory_of_next_step(device);
      step.run_forward_backward(batch);
      reading.activations = step.last_step_memory().activations();
      reading.peak_above_start = step.last_step_memory().peak_above_start();
      fits.gradients = counted_training_state(model->module(), step.optimizer()).gradients;
      fits.gradient_peak_extra = reading.peak_above_start - fits.gradients;
      if (shared_storage) share_zeroed_gradients(model->module().parameters());
    }
    if (!first || shape.seq == 0) {
      moments.push_back(run_kept_probe(step, batch, device, shape.seq == 0, reading));
      backward_extra.push_back(
          {shape.batch, shape.seq,
           static_cast<double>(reading.peak_above_start_kept - reading.activations)});
    }
    if (zeroed) {
      drop_unreached(versions);
      fits.gradients = counted_training_state(model->module(), step.optimizer()).gradients;
      if (shared_storage) share_zeroed_gradients(model->module().parameters());
    }
    reading.gradients = fits.gradients;
    inputs.push_back(static_cast<double>(reading.inputs));
    activations.push_back(static_cast<double>(reading.activations));
    probing.readings.push_back(reading);
  }
  fits.inputs = BatchSeqFit::from(points_of(inputs, shapes));
  fits.activations = BatchSeqFit::from(points_of(activations, shapes));
  fits.backward_extra = BatchSeqFit::from(backward_extra, /*for_peak=*/true);
  fits.backward_steepest = steepest_moment_fit(shapes, moments);
  return fits;
}

// A fit from others part by part: each counted figure `figure(member, for_peak)`, each curve
// `curve(member, for_peak)` (the peaks' parts for a peak), the inputs `inputs`.
template <typename Figure, typename Curve>
ProbeFits part_by_part(const Figure& figure, const Curve& curve, const BatchSeqFit& inputs) {
  ProbeFits fits;
  for (int64_t ProbeFits::*member :
       {&ProbeFits::weights, &ProbeFits::gradients, &ProbeFits::optimizer_states,
        &ProbeFits::per_tensor_states, &ProbeFits::optimizer_workspace}) {
    fits.*member = std::llround(figure(member, false));
  }
  fits.gradient_peak_extra = std::llround(figure(&ProbeFits::gradient_peak_extra, true));
  fits.inputs = inputs;
  fits.activations = curve(&ProbeFits::activations, false);
  fits.backward_extra = curve(&ProbeFits::backward_extra, true);
  return fits;
}

// One and two blocks at the narrowed vocabulary, and one block at twice it, as one fit of the
// whole model: linear in the blocks and in the vocabulary, which do not meet. The inputs too: a
// recurrent memory, a tensor a block, is held with them (fill_recurrent_memory); token ids are
// the same at every probe.
ProbeFits extended_fits(const ProbeFits& base, const ProbeFits& blocks, double t,
                        const ProbeFits& vocab, double u) {
  ProbeFits fits = part_by_part(
      [&](int64_t ProbeFits::*member, bool for_peak) {
        return extended_figure(static_cast<double>(base.*member),
                               static_cast<double>(blocks.*member), t,
                               static_cast<double>(vocab.*member), u, for_peak);
      },
      [&](BatchSeqFit ProbeFits::*member, bool for_peak) {
        return BatchSeqFit::extended(base.*member, blocks.*member, t, vocab.*member, u, for_peak);
      },
      BatchSeqFit::extended(base.inputs, blocks.inputs, t, vocab.inputs, u, false));
  if (base.backward_steepest && blocks.backward_steepest && vocab.backward_steepest) {
    fits.backward_steepest =
        BatchSeqFit::extended(*base.backward_steepest, *blocks.backward_steepest, t,
                              *vocab.backward_steepest, u, /*for_peak=*/true);
  }
  return fits;
}

// What the probe model's tensors hold while it runs: its weights and gradients (planned), or with
// shared storage its gradients alone (the first probe keeps each; the weights take one buffer).
// Unsharded, as the probes build it: planned as one rank's of --shard's (an eighth), Llama 3.1
// 70B's two blocks were probed at their width, 77 s and 9.3 GB, and Llama 3.2 1B whole.
int64_t planned_probe_bytes(const ModelInfo& info, const ModelOptions& options, ResolvedBenchmark b,
                            bool shared_storage) {
  // A model counted at its defaults alone (Transformer-XL): the whole model's, all its blocks.
  const bool whole = options.blocks == 0 && options.width_divisor == 1;
  if (!info.count && !(whole && info.default_counts)) return 0;
  const ModelStats stats = info.count ? info.count(options) : *info.default_counts;
  b.shard = "none";
  const MemoryPlan plan = plan_memory(stats, b, info, options);
  // QLoRA's NF4 weights are quantised from float32 ones as the model is built: 4 bytes each then.
  const int64_t as_built = plan.weights + 4 * stats.nf4_params - stats.nf4_params / 2;
  return (shared_storage ? 0 : as_built) + plan.gradients;
}

// The fits at the model's width from those at 1/k and 2/k of it: the counted state on the
// parabola through 0, what the step holds on the line (fit_prediction.h).
ProbeFits widened_fits(const ProbeFits& narrow, const ProbeFits& twice, int64_t k) {
  ProbeFits fits;
  const auto square = [&](int64_t ProbeFits::*member) {
    return std::llround(
        widened_square(static_cast<double>(narrow.*member), static_cast<double>(twice.*member), k));
  };
  fits.weights = square(&ProbeFits::weights);
  fits.gradients = square(&ProbeFits::gradients);
  // The tensors' count does not change with the width: what each holds once stays.
  fits.per_tensor_states = narrow.per_tensor_states;
  fits.optimizer_states =
      std::llround(widened_square(
          static_cast<double>(narrow.optimizer_states - narrow.per_tensor_states),
          static_cast<double>(twice.optimizer_states - twice.per_tensor_states), k)) +
      narrow.per_tensor_states;
  fits.optimizer_workspace = square(&ProbeFits::optimizer_workspace);
  fits.gradient_peak_extra = std::llround(
      widened_figure(static_cast<double>(narrow.gradient_peak_extra),
                     static_cast<double>(twice.gradient_peak_extra), k, /*for_peak=*/true));
  fits.inputs = narrow.inputs;  // token ids: the width does not change them
  fits.activations = BatchSeqFit::widened(narrow.activations, twice.activations, k);
  fits.backward_extra =
      BatchSeqFit::widened(narrow.backward_extra, twice.backward_extra, k, /*for_peak=*/true);
  return fits;
}

// A mixture of experts' probes by blocks route their tokens in turn (ModelOptions::
// balanced_routes): a step keeps what each expert its tokens visited needs (under autocast a
// 16-bit copy of its weights; backward, its slice's gradient in a bank-sized tensor), and a probe
// of a few tokens routed by its logits visits some of its experts, which ones changing with the
// width (the line through two widths then ran to petabytes), where a run's thousands of tokens
// visit them all.
ProbeModels with_balanced_routes(const ModelInfo& info, ProbeModels models) {
  if (!models.by_blocks || info.capabilities.experts == 0) return models;
  for (ModelOptions* options : models.each_model()) {
    options->balanced_routes = true;
  }
  return models;
}

// The fits with the model's experts from those with n and 2n of them (fit_probes.h's
// ProbeModels::experts), every token routed to all n, and to every expert of 2n from 2 tokens on:
// everything on the line (the weights, gradients and states grow with the count; what a step
// holds for each expert, its 16-bit copies and its bank's gradients, too; what the tokens hold
// does not), the peaks' parts where they grow.
ProbeFits with_all_experts(const ProbeFits& at_n, const ProbeFits& at_twice, int64_t k) {
  return part_by_part(
      [&](int64_t ProbeFits::*member, bool for_peak) {
        return widened_figure(static_cast<double>(at_n.*member),
                              static_cast<double>(at_twice.*member), k, for_peak);
      },
      [&](BatchSeqFit ProbeFits::*member, bool for_peak) {
        return BatchSeqFit::on_line(at_n.*member, at_twice.*member, k, for_peak);
      },
      at_n.inputs);
}

// The probes by blocks at one width, extended to the whole model's blocks and vocabulary.
ProbeFits probe_blocks_at_width(const ProbeModels& models, const ResolvedBenchmark& b,
                                const ModelInfo& info, torch::Device device,
                                const PrecisionPolicy& policy,
                                const std::vector<ProbeShape>& shapes, bool shared,
                                FitProbing& probing) {
  const ProbeFits one =
      probe_model(b, info, models.one_block, device, policy, shapes, shared, probing);
  const ProbeFits two =
      probe_model(b, info, models.two_blocks, device, policy, shapes, shared, probing);
  const ProbeFits vocab =
      models.narrowed ? probe_model(b, info, models.wider, device, policy, shapes, shared, probing)
                      : one;
  return extended_fits(one, two, models.extra_blocks(info), vocab, models.extra_vocabularies(info));
}

// The probes by blocks (and by width), extended to the whole model.
ProbeFits probe_by_blocks(const ProbeModels& models, const ResolvedBenchmark& b,
                          const ModelInfo& info, torch::Device device,
                          const PrecisionPolicy& policy, const std::vector<ProbeShape>& shapes,
                          bool shared, FitProbing& probing) {
  const auto at_width = [&](const ProbeModels& probed) {
    return probe_blocks_at_width(probed, b, info, device, policy, shapes, shared, probing);
  };
  const auto at_experts = [&](const ProbeModels& probed) {
    const int64_t k = probed.width_divisor;
    return k > 1 ? widened_fits(at_width(probed), at_width(probed.twice_as_wide()), k)
                 : at_width(probed);
  };
  ProbeFits fits =
      models.experts > 0
          ? with_all_experts(at_experts(models), at_experts(models.with_twice_the_experts()),
                             models.experts_factor())
          : at_experts(models);
  // The loss's backward holds the logits' gradient and the softmax's in float32, [tokens,
  // vocabulary] each. At a narrowed vocabulary a wide block's moment can hide them, at the
  // model's own they can be the peak: the larger of the two moments, per token. (Added to the
  // block's instead, a narrow model whose probes already saw the loss's moment counted it twice:
  // 27 % over the whole-vocabulary probes at hidden 256.)
  if (models.narrowed) {
    fits.backward_extra.linear =
        std::max(fits.backward_extra.linear,
                 static_cast<double>(info.capabilities.vocab) * 2 * sizeof(float));
  }
  return fits;
}

// Whether autocast keeps a compute-dtype copy of a float32 weight for backward here: one linear
// layer's forward under the policy, what it leaves allocated beside its output.
bool autocast_keeps_weight_copies(const PrecisionPolicy& policy, torch::Device device) {
  if (!policy.autocast_dtype()) return false;
  const torch::Tensor weight =
      torch::zeros({256, 256}, torch::TensorOptions().device(device)).requires_grad_(true);
  const torch::Tensor input = torch::zeros({4, 256}, torch::TensorOptions().device(device));
  const int64_t before = tensor_memory::allocated_bytes(device);
  torch::Tensor output;
  {
    MixedPrecisionScope mixed_precision(policy);
    output = torch::linear(input, weight);
  }
  const int64_t held = tensor_memory::allocated_bytes(device) - before - output.nbytes();
  return held >= weight.numel() * 2;
}

// A training item's FLOPs per token (per item for a model without tokens as its unit).
double train_flops_per_token(const ModelInfo& info, const ModelOptions& options,
                             const ResolvedBenchmark& b) {
  if (!info.count || b.seq_len <= 0) return 0;
  const auto flops = static_cast<double>(info.count(options).train_flops());
  return info.sample_unit == "tokens" ? flops : flops / static_cast<double>(b.seq_len);
}

// QLoRA probed as LoRA, whose probes run in a fraction of the time (each QLoRA probe dequantises
// every NF4 weight twice a step: Llama 3.1 8B at seq 2048 took 26 s, as LoRA 1.6 s), with what
// differs counted: the NF4 weights in their layout in place of the frozen weights in the compute
// dtype, and dequantising's transients, one weight at a time, on backward's peak (an upper
// bound: the moment LoRA's probes peak at need not be a product's). The steps keep the same
// activations: neither product saves more than its adapters' input.
MemoryFit with_nf4_counted(MemoryFit fit, const ResolvedBenchmark& probed,
                           const ResolvedBenchmark& asked, const ModelInfo& info) {
  const ModelOptions options = probed_model_options(asked),
                     as_probed = probed_model_options(probed);
  const ModelStats qlora = info.count(options);
  fit.weights += plan_memory(qlora, asked, info, options).weights -
                 plan_memory(info.count(as_probed), probed, info, as_probed).weights;
  const int64_t largest = qlora.largest_nf4_weight / std::max(1, asked.tensor_parallel);
  const int64_t dequantising = nf4::kDequantisingBytesPerWeight * largest;
  fit.gradient_peak_extra += dequantising;
  fit.backward_extra.fixed += static_cast<double>(dequantising);
  fit.method += ", probed as LoRA";
  fit.counted.push_back(
      "tuning qlora probed as lora: the NF4 weights counted in their layout (half a byte a "
      "weight, a float32 absmax a block of " +
      std::to_string(nf4::kBlock) + "), and dequantising one, " +
      std::to_string(nf4::kDequantisingBytesPerWeight) + " bytes a weight of the largest (" +
      std::to_string(largest) + " weights), added to backward's peak");
  return fit;
}

}  // namespace

MemoryFit fit_memory(const ResolvedBenchmark& b, const FitOptions& fit_options) {
  const ModelInfo& registered = ModelRegistry::instance().get(b.model);
  if (b.tuning == Tuning::kQlora && fit_options.qlora_as_lora && registered.count) {
    ResolvedBenchmark as_lora = b;
    as_lora.tuning = Tuning::kLora;
    return with_nf4_counted(fit_memory(as_lora, fit_options), as_lora, b, registered);
  }
  check_fit_shape(b);
  const auto started = std::chrono::steady_clock::now();
  const DeviceSetup setup(b, /*device_index=*/0);
  const ModelInfo& info = setup.info();
  const torch::Device device = setup.device();
  const PrecisionPolicy& policy = setup.policy();
  const ModelOptions options = probed_model_options(b);
  const bool shared = fit_options.shared_storage;
  const ProbeModels models = with_balanced_routes(
      info, probe_models(info, options, device, fit_options, [&](const ModelOptions& probe) {
        return planned_probe_bytes(info, probe, b, false);
      }));
  // Probes with 2k experts (fewer than the model's) visit all of them from 2 tokens on: the
  // shortest probe, a quarter of the longest, at 2 or more.
  FitOptions lengths = fit_options;
  if (models.experts > 0) lengths.shortest_probe = std::max<int64_t>(lengths.shortest_probe, 8);
  const int64_t seq =
      probe_length(b.seq_len, b, train_flops_per_token(info, models.largest(options), b), lengths,
                   ProbePass::kForwardAndBackward);
  const std::vector<ProbeShape> shapes = probe_shapes(seq, info.min_training_batch);
  check_host_memory(
      models, options, b, fit_options,
      [&](const ModelOptions& probe) { return planned_probe_bytes(info, probe, b, shared); },
      shared ? "for its gradients" : "for weights and gradients");

  MemoryFit fit;
  fit.seq_len = b.seq_len;
  // The weight-sized tensors of a model probed by blocks come again at every shape, and a whole
  // model's largest activations within a step (Mask R-CNN fp32: 19.4 s to 17.9 s, its peak RSS
  // 3.4 GB to 3.1 GB with 1 GiB of blocks kept under its tensors' highest).
  const tensor_memory::ReusedFreedBlocks reused;
  const auto probe = [&](FitProbing& probing) {
    return models.by_blocks
               ? probe_by_blocks(models, b, info, device, policy, shapes, shared, probing)
               : probe_model(b, info, options, device, policy, shapes, shared, probing);
  };
  FitProbing probing{fit.readings};
  ProbeFits fits = probe(probing);
  if (probing.probe_again) {
    fit.readings.clear();
    FitProbing native{fit.readings, /*native_matmuls=*/true};
    fits = probe(native);
  }
  fit.method = probe_method("forward and backward", models, info, shapes, b);
  fit.weights = fits.weights;
  fit.gradients = fits.gradients;
  fit.optimizer_states = fits.optimizer_states;
  fit.optimizer_workspace = fits.optimizer_workspace;
  fit.inputs = fits.inputs;
  fit.activations = fits.activations;
  fit.backward_extra = fits.backward_extra;
  fit.backward_steepest = fits.backward_steepest;
  fit.gradient_peak_extra = fits.gradient_peak_extra;
  if (seq > 0 && seq != b.seq_len) {
    fit.method += ", scaled to seq " + std::to_string(b.seq_len);
  }
  if (b.sharded()) {
    shard_memory_fit(fit, count_shard_units(info, options), b,
                     autocast_keeps_weight_copies(policy, device));
    fit.method += ", unsharded, then one rank's of " + std::to_string(b.gpus) + " with --shard " +
                  b.shard + " (its gathered units, 1/" + std::to_string(b.gpus) +
                  " of the state; docs/memory.md)";
  }
  fit.probe_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return fit;
}

}  // namespace gpubench
