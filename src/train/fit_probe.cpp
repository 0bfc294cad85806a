#include "train/fit_probe.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include <torch/torch.h>

#include "common/errors.h"
#include "memory/memory_plan.h"
#include "memory/shared_storage.h"
#include "memory/tensor_memory.h"
#include "memory/training_memory.h"
#include "modeling/model_registry.h"
#include "run/device_setup.h"
#include "run/model_setup.h"
#include "run/precision_policy.h"
#include "run/resolve_benchmark.h"
#include "train/training_step.h"

namespace gpubench {
namespace {

// The whole model is probed where its weights and gradients take at most this much (on the CPU;
// on a GPU, half its memory): more and the probes use one and two blocks.
constexpr int64_t kWholeModelCpuBytes = int64_t{2} << 30;

struct Shape {
  int64_t batch, seq;
};

// What the probes of one model (whole, or with some blocks) give.
struct ProbeFits {
  int64_t weights = 0, gradients = 0, optimizer_states = 0, optimizer_workspace = 0;
  BatchSeqFit inputs, activations, backward_extra;
  int64_t gradient_peak_extra = 0;
};

std::vector<BatchSeqFit::Point> points_of(const std::vector<double>& x,
                                          const std::vector<Shape>& shapes) {
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

// Whether the probes' matmuls, up to `longest` tokens long, can lie on both sides of that size.
// Not where every weight matrix has more elements than it (a linear layer at one token is above
// it) and the probes are at most 4 tokens long (attention's products, at most 16 x the head
// dimension, are below it for heads up to 256 wide): the probes of a model too large to build
// here, where LibTorch's own bf16 kernels took two thirds of fit's time (Llama 3 8B: 41 s, 15 s
// with oneDNN, the prediction the same to the byte).
bool matmuls_can_straddle(torch::nn::Module& model, int64_t longest) {
  constexpr int64_t kLongestBelow = 4;
  if (longest > kLongestBelow) return true;
  for (const torch::Tensor& parameter : model.parameters()) {
    if (parameter.dim() >= 2 && parameter.numel() <= kOneDnnMinMultiplyAdds) return true;
  }
  return false;
}

ProbeFits probe_model(const ResolvedBenchmark& b, const ModelInfo& info, ModelOptions options,
                      torch::Device device, const PrecisionPolicy& policy,
                      const std::vector<Shape>& shapes, bool shared_storage,
                      std::vector<ProbeReading>& readings) {
  // Counted models are built undrawn and their weights zeroed on the device: memory does not
  // depend on the values, and drawing billions of them on the CPU would take the minute.
  options.defer_initialization = static_cast<bool>(info.count);
  std::unique_ptr<TrainableModel> model = build_model(info, options, b, policy);
  ModelOptions placed = options;
  placed.defer_initialization = false;
  place_model(*model, device, placed, b.channels_last);
  TrainingStep step(*model, policy,
                    optimizer_settings_for(optimizer_for(b, info.optimizer), b.batch_size));
  ProbeFits fits;
  fits.weights = counted_training_state(model->module(), step.optimizer()).weights;
  fits.optimizer_states = step.optimizer().planned_state_bytes();
  fits.optimizer_workspace = step.optimizer().step_workspace_bytes();
  shared_storage = shared_storage && options.defer_initialization;
  if (shared_storage) {
    share_zeroed_parameters(model->module().parameters());
  } else if (options.defer_initialization) {
    torch::NoGradGuard no_grad;
    for (auto& parameter : model->module().parameters()) parameter.zero_();
  }
  const int64_t longest = shapes.back().seq;
  const NativeCpuMatmuls native_matmuls(!device.is_cuda() && longest > 0 &&
                                        matmuls_can_straddle(model->module(), longest));
  std::vector<double> inputs, activations;
  std::vector<BatchSeqFit::Point> backward_extra;
  for (const Shape& shape : shapes) {
    if (shape.seq > 0) model->set_sequence_length(shape.seq);
    const int64_t before = tensor_memory::allocated_bytes(device);
    const SyntheticBatch batch = model->synthetic_batch(shape.batch, device, b.channels_last);
    ProbeReading reading;
    reading.blocks = options.blocks;
    reading.vocab = options.vocab;
    reading.batch = shape.batch;
    reading.seq = shape.seq;
    reading.inputs = tensor_memory::allocated_bytes(device) - before;
    if (device.is_cuda()) step.run_forward_backward(batch);  // cuDNN's autotuning, workspaces
    // The smallest shape, the first, runs as a run does (gradients cleared first): backward's
    // peak above the gradients is least there. The probes after it run with the gradients kept,
    // for the activation-bound peak; the forward pass leaves the same activations. A model
    // without a length has two probes, both needed kept.
    const bool first = &shape == &shapes.front();
    if (first) {
      step.measure_memory_of_next_step(device);
      step.run_forward_backward(batch);
      reading.activations = step.last_step_memory().activations();
      reading.peak_above_start = step.last_step_memory().peak_above_start();
      fits.gradients = counted_training_state(model->module(), step.optimizer()).gradients;
      fits.gradient_peak_extra = reading.peak_above_start - fits.gradients;
      if (shared_storage) share_zeroed_gradients(model->module().parameters());
    }
    if (!first || shape.seq == 0) {
      step.measure_memory_of_next_step(device);
      step.run_forward_backward(batch, /*clear_gradients=*/false);
      reading.activations = step.last_step_memory().activations();
      reading.peak_above_start_kept = step.last_step_memory().peak_above_start();
      backward_extra.push_back(
          {shape.batch, shape.seq,
           static_cast<double>(reading.peak_above_start_kept - reading.activations)});
    }
    reading.gradients = fits.gradients;
    inputs.push_back(static_cast<double>(reading.inputs));
    activations.push_back(static_cast<double>(reading.activations));
    readings.push_back(reading);
  }
  fits.inputs = BatchSeqFit::from(points_of(inputs, shapes));
  fits.activations = BatchSeqFit::from(points_of(activations, shapes));
  fits.backward_extra = BatchSeqFit::from(backward_extra, /*for_peak=*/true);
  return fits;
}

// The probes by blocks narrow a large vocabulary to this many tokens, and to twice it for the
// third probe: the token embedding, the output head, the logits and the loss's temporaries grow
// in proportion to it, and at 128K tokens they are most of a one-block model's memory and time.
constexpr int64_t kProbeVocab = 2048;

// One and two blocks at the narrowed vocabulary, and one block at twice it, as one fit of the
// whole model: linear in the blocks and in the vocabulary, which do not meet.
ProbeFits extended_fits(const ProbeFits& base, const ProbeFits& blocks, double t,
                        const ProbeFits& vocab, double u) {
  ProbeFits fits;
  const auto line = [&](int64_t ProbeFits::*member, bool for_peak = false) {
    return std::llround(extended_figure(static_cast<double>(base.*member),
                                        static_cast<double>(blocks.*member), t,
                                        static_cast<double>(vocab.*member), u, for_peak));
  };
  fits.weights = line(&ProbeFits::weights);
  fits.gradients = line(&ProbeFits::gradients);
  fits.optimizer_states = line(&ProbeFits::optimizer_states);
  fits.optimizer_workspace = line(&ProbeFits::optimizer_workspace);
  fits.gradient_peak_extra = line(&ProbeFits::gradient_peak_extra, /*for_peak=*/true);
  fits.inputs = base.inputs;
  fits.activations =
      BatchSeqFit::extended(base.activations, blocks.activations, t, vocab.activations, u);
  fits.backward_extra =
      BatchSeqFit::extended(base.backward_extra, blocks.backward_extra, t, vocab.backward_extra, u,
                            /*for_peak=*/true);
  return fits;
}

// What the probe model's tensors hold while it runs: its weights and gradients (planned), or with
// shared storage its gradients alone (the first probe keeps each; the weights take one buffer).
int64_t planned_probe_bytes(const ModelInfo& info, const ModelOptions& options,
                            const ResolvedBenchmark& b, bool shared_storage) {
  if (!info.count) return 0;
  const MemoryPlan plan = plan_memory(info.count(options), b, info, options);
  return (shared_storage ? 0 : plan.weights) + plan.gradients;
}

// The probes' sequence lengths: the benchmark's, halved on the CPU until the largest probe
// (batch 2) is within the FLOP budget.
int64_t probe_length(const ModelInfo& info, const ModelOptions& options, const ResolvedBenchmark& b,
                     const FitOptions& fit) {
  int64_t seq = b.seq_len;
  if (seq <= 0 || b.device == DeviceKind::kCuda || !info.count) return seq;
  const double item_flops = static_cast<double>(info.count(options).train_flops()) *
                            (info.sample_unit == "tokens" ? static_cast<double>(seq) : 1.0);
  auto cost = [&](int64_t length) {
    return 2.0 * item_flops * static_cast<double>(length) / static_cast<double>(seq);
  };
  while (seq > fit.shortest_probe && cost(seq) > fit.cpu_flop_budget) {
    seq = std::max(fit.shortest_probe, (seq + 1) / 2);
  }
  return seq;
}

// Batch 1 at a quarter of the length, then batch 1 and 2 at half of it and at it (1, 2 and 3 at
// the shortest): what grows per item and what grows once per step are told apart at every
// length. Built up one by one: GCC 12 warns (wrongly, -Wnonnull) on assigning a braced list.
std::vector<Shape> probe_shapes(int64_t seq) {
  std::vector<Shape> shapes;
  if (seq > 0) {
    const int64_t l3 = std::max<int64_t>(seq, 3), l2 = std::max<int64_t>(2, l3 / 2),
                  l1 = std::max<int64_t>(1, l3 / 4);
    shapes.push_back({1, l1});
    shapes.push_back({1, l2});
    shapes.push_back({2, l2});
    shapes.push_back({1, l3});
    shapes.push_back({2, l3});
  } else {
    shapes.push_back({1, 0});
    shapes.push_back({2, 0});
  }
  return shapes;
}

std::string shapes_text(const std::vector<Shape>& shapes) {
  std::string text;
  for (const Shape& shape : shapes) {
    if (!text.empty()) text += ", ";
    text += "batch " + std::to_string(shape.batch);
    if (shape.seq > 0) text += " seq " + std::to_string(shape.seq);
  }
  return text;
}

}  // namespace

namespace {

// The probe models: the whole one, or one and two blocks (at a narrowed vocabulary, with one
// block at twice it, for a large one).
struct ProbeModels {
  bool by_blocks = false, narrowed = false;
  ModelOptions one_block, two_blocks, wider;
};

ProbeModels probe_models(const ModelInfo& info, const ModelOptions& options,
                         const ResolvedBenchmark& b, torch::Device device,
                         const FitOptions& fit_options) {
  const int64_t whole_limit =
      device.is_cuda() ? tensor_memory::device_total_bytes(device) / 2 : kWholeModelCpuBytes;
  ProbeModels models;
  models.by_blocks =
      info.capabilities.blocks > 1 &&
      (fit_options.force_blocks || planned_probe_bytes(info, options, b, false) > whole_limit);
  models.one_block = models.two_blocks = models.wider = options;
  models.one_block.blocks = models.wider.blocks = 1;
  models.two_blocks.blocks = 2;
  models.narrowed =
      models.by_blocks && fit_options.narrow_vocab && info.capabilities.vocab > 2 * kProbeVocab;
  if (models.narrowed) {
    models.one_block.vocab = models.two_blocks.vocab = kProbeVocab;
    models.wider.vocab = 2 * kProbeVocab;
  }
  return models;
}

// Refuses before the probes start where the host cannot hold the largest probe model.
void check_host_memory(const ProbeModels& models, const ModelInfo& info,
                       const ModelOptions& options, const ResolvedBenchmark& b,
                       const FitOptions& fit_options) {
  const std::optional<int64_t> host =
      fit_options.host_available ? fit_options.host_available : host_available_memory();
  if (!host || b.device == DeviceKind::kCuda) return;
  const bool shared = fit_options.shared_storage;
  const int64_t needed =
      models.by_blocks
          ? std::max(planned_probe_bytes(info, models.two_blocks, b, shared),
                     models.narrowed ? planned_probe_bytes(info, models.wider, b, shared) : 0)
          : planned_probe_bytes(info, options, b, shared);
  if (needed > *host) {
    throw UsageError("the host cannot run fit's probes of " + b.model + ": the largest needs " +
                     bytes_text(needed) +
                     (shared ? " for its gradients" : " for weights and gradients") +
                     " and the host has " + bytes_text(*host) + " available");
  }
}

// The probes by blocks, extended to the whole model; `method` says how.
ProbeFits probe_by_blocks(const ProbeModels& models, const ResolvedBenchmark& b,
                          const ModelInfo& info, torch::Device device,
                          const PrecisionPolicy& policy, const std::vector<Shape>& shapes,
                          bool shared, MemoryFit& fit) {
  const ProbeFits one =
      probe_model(b, info, models.one_block, device, policy, shapes, shared, fit.readings);
  const ProbeFits two =
      probe_model(b, info, models.two_blocks, device, policy, shapes, shared, fit.readings);
  const double t = static_cast<double>(info.capabilities.blocks - 1);
  const bool narrowed = models.narrowed;
  const ProbeFits vocab =
      narrowed ? probe_model(b, info, models.wider, device, policy, shapes, shared, fit.readings)
               : one;
  const double u = narrowed ? static_cast<double>(info.capabilities.vocab - kProbeVocab) /
                                  static_cast<double>(kProbeVocab)
                            : 0.0;
  ProbeFits fits = extended_fits(one, two, t, vocab, u);
  // The loss's backward holds the logits' gradient and the softmax's in float32, [tokens,
  // vocabulary] each. At a narrowed vocabulary a wide block's moment can hide them, at the
  // model's own they can be the peak: the larger of the two moments, per token. (Added to the
  // block's instead, a narrow model whose probes already saw the loss's moment counted it twice:
  // 27 % over the whole-vocabulary probes at hidden 256.)
  if (narrowed) {
    fits.backward_extra.linear =
        std::max(fits.backward_extra.linear,
                 static_cast<double>(info.capabilities.vocab) * 2 * sizeof(float));
  }
  fit.method = "forward and backward of the model with 1 and with 2 of its " +
               std::to_string(info.capabilities.blocks) + " blocks" +
               (narrowed ? " at a vocabulary of " + std::to_string(kProbeVocab) +
                               " tokens, and 1 block at " + std::to_string(2 * kProbeVocab) + ","
                         : "") +
               " at " + shapes_text(shapes) + " on the " + to_string(b.device) + ", extended to " +
               std::to_string(info.capabilities.blocks) + " blocks" +
               (narrowed ? " and " + std::to_string(info.capabilities.vocab) + " tokens" : "");
  return fits;
}

}  // namespace

MemoryFit fit_memory(const ResolvedBenchmark& b, const FitOptions& fit_options) {
  if (b.batch_size <= 0) throw UsageError("fit needs a batch size of 1 or more");
  if (b.blocks > 0) {
    throw UsageError("blocks " + std::to_string(b.blocks) +
                     ": fit predicts the whole model, probing one and two blocks itself; "
                     "--blocks applies to train");
  }
  const auto started = std::chrono::steady_clock::now();
  const DeviceSetup setup(b, /*device_index=*/0);
  const ModelInfo& info = setup.info();
  const torch::Device device = setup.device();
  const PrecisionPolicy& policy = setup.policy();
  const ModelOptions options(b);
  const ProbeModels models = probe_models(info, options, b, device, fit_options);
  const int64_t seq =
      probe_length(info, models.by_blocks ? models.two_blocks : options, b, fit_options);
  const std::vector<Shape> shapes = probe_shapes(seq);
  check_host_memory(models, info, options, b, fit_options);

  MemoryFit fit;
  fit.benchmark = b;
  ProbeFits fits;
  if (models.by_blocks) {
    fits =
        probe_by_blocks(models, b, info, device, policy, shapes, fit_options.shared_storage, fit);
  } else {
    fits = probe_model(b, info, options, device, policy, shapes, fit_options.shared_storage,
                       fit.readings);
    fit.method = "forward and backward of the whole model at " + shapes_text(shapes) + " on the " +
                 to_string(b.device);
  }
  fit.weights = fits.weights;
  fit.gradients = fits.gradients;
  fit.optimizer_states = fits.optimizer_states;
  fit.optimizer_workspace = fits.optimizer_workspace;
  fit.inputs = fits.inputs;
  fit.activations = fits.activations;
  fit.backward_extra = fits.backward_extra;
  fit.gradient_peak_extra = fits.gradient_peak_extra;
  if (seq > 0 && seq != b.seq_len) {
    fit.method += ", scaled to seq " + std::to_string(b.seq_len);
  }
  fit.probe_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return fit;
}

}  // namespace gpubench
