#include "memory/fit_prediction.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <torch/torch.h>

#include "common/errors.h"
#include "memory/tensor_memory.h"
#include "memory/training_memory.h"
#include "models/model_registry.h"
#include "train/memory_plan.h"
#include "train/model_setup.h"
#include "train/precision_policy.h"
#include "train/resolve_benchmark.h"
#include "train/training_step.h"

namespace gpubench {
namespace {

// The whole model is probed where its weights and gradients take at most this much (on the CPU;
// on a GPU, half its memory): more and the probes use one and two blocks.
constexpr int64_t kWholeModelCpuBytes = int64_t{2} << 30;
// Probes shorter than this say little about how activations grow with the length.
constexpr int64_t kShortestProbe = 16;

struct Shape {
  int64_t batch, seq;
};

// What the probes of one model (whole, or with some blocks) give.
struct ProbeFits {
  int64_t weights = 0, gradients = 0, optimizer_states = 0, optimizer_workspace = 0;
  BatchSeqFit inputs, activations, activation_peak;
  int64_t gradient_peak_extra = 0;
};

BatchSeqFit fitted(const std::vector<double>& x, const std::vector<Shape>& shapes) {
  if (shapes.size() == 2) return BatchSeqFit::from(x[0], x[1], shapes[0].seq, 0, 0);
  return BatchSeqFit::from(x[0], x[1], shapes[0].seq, x[2], shapes[2].seq);
}

ProbeFits probe_model(const ResolvedBenchmark& b, const ModelInfo& info, ModelOptions options,
                      torch::Device device, const PrecisionPolicy& policy,
                      const std::vector<Shape>& shapes, std::vector<ProbeReading>& readings) {
  // Counted models are built undrawn and their weights zeroed on the device: memory does not
  // depend on the values, and drawing billions of them on the CPU would take the minute.
  options.defer_initialization = static_cast<bool>(info.count);
  std::unique_ptr<TrainableModel> model = build_model(info, options, b, policy);
  ModelOptions placed = options;
  placed.defer_initialization = false;
  place_model(*model, device, placed, b.channels_last);
  if (options.defer_initialization) {
    torch::NoGradGuard no_grad;
    for (auto& parameter : model->module().parameters()) parameter.zero_();
  }
  TrainingStep step(*model, policy, optimizer_settings_for(info.optimizer, b.batch_size));
  ProbeFits fits;
  fits.weights = counted_training_state(model->module(), step.optimizer()).weights;
  fits.optimizer_states = step.optimizer().planned_state_bytes();
  fits.optimizer_workspace = step.optimizer().step_workspace_bytes();
  std::vector<double> inputs, activations, activation_peak;
  for (const Shape& shape : shapes) {
    if (shape.seq > 0) model->set_sequence_length(shape.seq);
    const int64_t before = tensor_memory::allocated_bytes(device);
    const SyntheticBatch batch = model->synthetic_batch(shape.batch, device, b.channels_last);
    ProbeReading reading;
    reading.blocks = options.blocks;
    reading.batch = shape.batch;
    reading.seq = shape.seq;
    reading.inputs = tensor_memory::allocated_bytes(device) - before;
    if (device.is_cuda()) step.run_forward_backward(batch);  // cuDNN's autotuning, workspaces
    step.measure_memory_of_next_step(device);
    step.run_forward_backward(batch);
    reading.activations = step.last_step_memory().activations();
    reading.peak_above_start = step.last_step_memory().peak_above_start();
    reading.gradients = counted_training_state(model->module(), step.optimizer()).gradients;
    step.measure_memory_of_next_step(device);
    step.run_forward_backward(batch, /*clear_gradients=*/false);
    reading.peak_above_start_kept = step.last_step_memory().peak_above_start();
    fits.gradients = reading.gradients;
    const int64_t extra = reading.peak_above_start - reading.gradients;
    fits.gradient_peak_extra = readings.empty() ? extra : std::min(fits.gradient_peak_extra, extra);
    inputs.push_back(static_cast<double>(reading.inputs));
    activations.push_back(static_cast<double>(reading.activations));
    activation_peak.push_back(static_cast<double>(reading.peak_above_start_kept));
    readings.push_back(reading);
  }
  fits.inputs = fitted(inputs, shapes);
  fits.activations = fitted(activations, shapes);
  fits.activation_peak = fitted(activation_peak, shapes);
  return fits;
}

int64_t extended(int64_t one, int64_t two, double t) {
  return std::llround(static_cast<double>(one) + t * static_cast<double>(two - one));
}

// Planned weights and gradients of the probe model, for the check that it can be built here.
int64_t planned_probe_bytes(const ModelInfo& info, const ModelOptions& options,
                            const ResolvedBenchmark& b) {
  if (!info.count) return 0;
  const MemoryPlan plan = plan_memory(info.count(options), b, info, options);
  return plan.weights + plan.gradients;
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
  while (seq > kShortestProbe && cost(seq) > fit.cpu_flop_budget) seq = (seq + 1) / 2;
  return seq;
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

double BatchSeqFit::at(int64_t batch, int64_t seq) const {
  const double t = seq > 0 ? static_cast<double>(seq) : 1.0;
  return fixed + static_cast<double>(batch) * (linear * t + quadratic * t * t);
}

BatchSeqFit BatchSeqFit::from(double at_1_s, double at_2_s, int64_t s, double at_1_s2, int64_t s2) {
  BatchSeqFit fit;
  const double t = s > 0 ? static_cast<double>(s) : 1.0;
  const double per_item = at_2_s - at_1_s;
  fit.fixed = at_1_s - per_item;
  if (s2 <= 0 || s2 == s) {
    fit.linear = per_item / t;
    return fit;
  }
  // per_item(s) = linear s + quadratic s^2 through both lengths.
  const double t2 = static_cast<double>(s2);
  const double per_item2 = at_1_s2 - fit.fixed;
  fit.quadratic = (per_item2 - per_item * t2 / t) / (t2 * (t2 - t));
  if (fit.quadratic < 0) {  // no term grows faster than the length: the steeper line
    fit.quadratic = 0;
    fit.linear = std::max(per_item / t, per_item2 / t2);
    return fit;
  }
  fit.linear = (per_item - fit.quadratic * t * t) / t;
  return fit;
}

BatchSeqFit BatchSeqFit::extended(const BatchSeqFit& a, const BatchSeqFit& b, double t) {
  return {a.fixed + t * (b.fixed - a.fixed), a.linear + t * (b.linear - a.linear),
          a.quadratic + t * (b.quadratic - a.quadratic)};
}

MemoryBreakdown MemoryFit::breakdown_at(int64_t batch) const {
  const int64_t seq = benchmark.seq_len;
  MemoryBreakdown m;
  m.weights = weights;
  m.gradients = gradients;
  m.optimizer_states = optimizer_states;
  m.activations = std::max<int64_t>(0, std::llround(activations.at(batch, seq)));
  // The step's peak, taken as if every gradient were alive through backward (as where they are
  // zeroed instead of freed): the batch, every gradient, and the larger of backward's peak
  // above them (every activation and backward's temporaries) and the update's temporaries.
  // Where activations and gradients do not peak together this is above the run's peak by up to
  // the gradients; never below it.
  const double step =
      inputs.at(batch, seq) + static_cast<double>(gradients) +
      std::max({activation_peak.at(batch, seq), static_cast<double>(gradient_peak_extra),
                static_cast<double>(optimizer_workspace)});
  const int64_t total = weights + optimizer_states + std::llround(step);
  m.other = total - m.weights - m.gradients - m.optimizer_states - m.activations;
  return m;
}

int64_t MemoryFit::max_batch(int64_t capacity) const {
  constexpr int64_t kLargest = int64_t{1} << 20;  // batch_size's bound
  if (peak_at(1) > capacity) return 0;
  int64_t fits = 1, fails = 2;
  while (fails <= kLargest && peak_at(fails) <= capacity) {
    fits = fails;
    fails *= 2;
  }
  if (fails > kLargest) return std::min(kLargest, fits);
  while (fails - fits > 1) {
    const int64_t middle = fits + (fails - fits) / 2;
    (peak_at(middle) <= capacity ? fits : fails) = middle;
  }
  return fits;
}

MemoryFit fit_memory(const ResolvedBenchmark& b, const FitOptions& fit_options) {
  if (b.batch_size <= 0) throw UsageError("fit needs a batch size of 1 or more");
  const auto started = std::chrono::steady_clock::now();
  const ModelInfo& info = ModelRegistry::instance().get(b.model);
  const torch::Device device =
      b.device == DeviceKind::kCuda ? torch::Device(torch::kCUDA, 0) : torch::Device(torch::kCPU);
  tensor_memory::track_cpu_tensors();
  const PrecisionPolicy policy(b.precision, device);
  policy.apply_global_flags();
  at::set_num_threads(b.threads);
  torch::manual_seed(static_cast<uint64_t>(b.seed));
  const ModelOptions options = model_options_for(b);

  const int64_t whole_limit =
      device.is_cuda() ? tensor_memory::device_total_bytes(device) / 2 : kWholeModelCpuBytes;
  const bool by_blocks = info.blocks > 1 && (fit_options.force_blocks ||
                                             planned_probe_bytes(info, options, b) > whole_limit);
  ModelOptions one_block = options, two_blocks = options;
  one_block.blocks = 1;
  two_blocks.blocks = 2;
  const int64_t seq = probe_length(info, by_blocks ? two_blocks : options, b, fit_options);
  // Built up one by one: GCC 12 warns (wrongly, -Wnonnull) on assigning a braced list here.
  std::vector<Shape> shapes;
  const int64_t short_seq = seq > 0 ? std::max<int64_t>(1, seq / 2) : 0;
  shapes.push_back({1, short_seq});
  shapes.push_back({2, short_seq});
  if (seq > 0 && short_seq != seq) shapes.push_back({1, seq});
  const std::optional<int64_t> host = host_available_memory();
  if (host && !device.is_cuda()) {
    const int64_t needed = planned_probe_bytes(info, by_blocks ? two_blocks : options, b);
    if (needed > *host) {
      throw UsageError("fit cannot probe " + b.model + " here: its probe model needs " +
                       bytes_text(needed) + " for weights and gradients and the host has " +
                       bytes_text(*host) + " available");
    }
  }

  MemoryFit fit;
  fit.benchmark = b;
  ProbeFits fits;
  if (by_blocks) {
    const ProbeFits one = probe_model(b, info, one_block, device, policy, shapes, fit.readings);
    const ProbeFits two = probe_model(b, info, two_blocks, device, policy, shapes, fit.readings);
    const double t = static_cast<double>(info.blocks - 1);
    fits.weights = extended(one.weights, two.weights, t);
    fits.gradients = extended(one.gradients, two.gradients, t);
    fits.optimizer_states = extended(one.optimizer_states, two.optimizer_states, t);
    fits.optimizer_workspace = extended(one.optimizer_workspace, two.optimizer_workspace, t);
    fits.inputs = one.inputs;
    fits.activations = BatchSeqFit::extended(one.activations, two.activations, t);
    fits.activation_peak = BatchSeqFit::extended(one.activation_peak, two.activation_peak, t);
    fits.gradient_peak_extra = extended(one.gradient_peak_extra, two.gradient_peak_extra, t);
    fit.method = "forward and backward of the model with 1 and with 2 of its " +
                 std::to_string(info.blocks) + " blocks at " + shapes_text(shapes) + " on the " +
                 to_string(b.device) + ", extended to " + std::to_string(info.blocks) + " blocks";
  } else {
    fits = probe_model(b, info, options, device, policy, shapes, fit.readings);
    fit.method = "forward and backward of the whole model at " + shapes_text(shapes) + " on the " +
                 to_string(b.device);
  }
  fit.weights = fits.weights;
  fit.gradients = fits.gradients;
  fit.optimizer_states = fits.optimizer_states;
  fit.optimizer_workspace = fits.optimizer_workspace;
  fit.inputs = fits.inputs;
  fit.activations = fits.activations;
  fit.activation_peak = fits.activation_peak;
  fit.gradient_peak_extra = fits.gradient_peak_extra;
  if (seq > 0 && seq != b.seq_len) {
    fit.method += ", scaled to seq " + std::to_string(b.seq_len);
  }
  fit.probe_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return fit;
}

}  // namespace gpubench
