#include "infer/inference_runner.h"

#include <chrono>
#include <numeric>

#include <torch/torch.h>

#include "common/errors.h"
#include "datasheets/run_efficiency.h"
#include "infer/greedy_generation.h"
#include "infer/request_timing.h"
#include "infer/static_decode.h"
#include "memory/tensor_memory.h"
#include "memory/training_memory.h"
#include "models/model_registry.h"
#include "train/captured_graph.h"
#include "train/compat.h"
#include "train/device_timers.h"
#include "train/measurement.h"
#include "train/model_setup.h"
#include "train/precision_policy.h"
#include "train/resolve_benchmark.h"
#include "train/run_memory.h"
#include "train/run_telemetry.h"

namespace gpubench {
namespace {

// Half precision as inference engines run it: the weights themselves in fp16 or bf16, no
// autocast; fp32 and tf32 as in training.
std::optional<torch::ScalarType> weight_dtype(Precision precision) {
  if (precision == Precision::kFp16) return torch::kHalf;
  if (precision == Precision::kBf16) return torch::kBFloat16;
  return std::nullopt;
}

int64_t weight_bytes(torch::nn::Module& module) {
  std::vector<torch::Tensor> tensors = module.parameters();
  for (const torch::Tensor& buffer : module.buffers()) tensors.push_back(buffer);
  return storage_bytes(tensors);
}

// Memory: weights counted from the tensors, the key/value cache as allocated (other), and the
// rest of the peak, the forward pass's transient tensors (activations).
MemoryReport inference_memory(torch::Device device, int64_t weights, int64_t kv_cache) {
  MemoryBreakdown parts;
  parts.weights = weights;
  const int64_t peak = tensor_memory::peak_allocated_bytes(device);
  parts.activations = std::max<int64_t>(0, peak - weights - kv_cache);
  return memory_report(device, kMemoryMeasured, peak, parts);
}

struct Forward {
  TrainableModel& model;
  SyntheticBatch batch;
  void operator()() const { model.inference_output(batch); }
};

// Forward passes of the batch: throughput trials, then one request per timed pass.
void measure_forward(const ResolvedBenchmark& spec, TrainableModel& model, torch::Device device,
                     std::optional<torch::ScalarType> dtype, const MeasurementHooks& hooks,
                     Result& result) {
  SyntheticBatch batch = model.synthetic_batch(spec.batch_size, device, spec.channels_last);
  if (dtype && batch.inputs.is_floating_point()) batch.inputs = batch.inputs.to(*dtype);
  std::function<void()> forward = Forward{model, batch};
  Metrics& metrics = result.metrics;
  int warmup = spec.warmup_steps;
  std::unique_ptr<CapturedGraph> graph;
  if (spec.mode == Mode::kGraph) {  // the warm-up runs before the capture, inside
    graph = std::make_unique<CapturedGraph>(forward, device, std::max(1, warmup));
    metrics.graph_capture_ms = graph->capture_ms();
    forward = [&graph] { graph->replay(); };
    warmup = 0;
  }
  const int64_t samples = spec.batch_size * model.samples_per_item();
  auto timer = make_step_timer(device);
  const Measurement measured = measure_trials(
      {warmup, spec.steps, spec.repeat, static_cast<double>(samples)}, *timer, forward, hooks);
  metrics.trials = measured.trials;
  metrics.step_time_ms = measured.step_time_ms;
  metrics.throughput = measured.throughput;
  metrics.per_device_throughput = measured.throughput;
  if (model.tokens_per_item() > 0) {
    metrics.sequences_per_second = measured.throughput;
    metrics.tokens_per_second = measured.throughput * static_cast<double>(model.tokens_per_item());
  }
  metrics.achieved_tflops =
      static_cast<double>(metrics.forward_flops_per_sample) * measured.throughput / 1e12;
  metrics.inference.request_latency_ms =
      summarize_latency(time_requests(*timer, spec.steps * spec.repeat, forward));
}

// Greedy generations: `warmup_steps` untimed, then `repeat` trials of `steps` generations. A
// trial's throughput is its decode tokens over its decode time.
void measure_generation(const ResolvedBenchmark& spec, TextGenerator& model, torch::Device device,
                        torch::ScalarType dtype, const MeasurementHooks& hooks, Result& result) {
  KvCache cache =
      model.allocate_cache(spec.batch_size, spec.prompt_len + spec.gen_len, device, dtype);
  InferenceMetrics& inference = result.metrics.inference;
  inference.kv_cache_bytes = cache.bytes();
  inference.kv_cache_bytes_per_token = cache.bytes_per_token();
  const torch::Tensor prompt =
      torch::randint(model.vocab_size(), {spec.batch_size, spec.prompt_len},
                     torch::TensorOptions().device(device).dtype(torch::kLong));
  // Graph mode: each decode step a replay of one captured step.
  std::unique_ptr<StaticDecode> graphed;
  if (spec.mode == Mode::kGraph) {
    graphed = std::make_unique<StaticDecode>(model, cache, spec.batch_size, device, true);
    result.metrics.graph_capture_ms = graphed->capture_ms();
  }
  for (int i = 0; i < spec.warmup_steps; ++i) {
    generate_greedy(model, cache, prompt, spec.gen_len, device, graphed.get());
    if (hooks.progress) hooks.progress({true, 0, spec.repeat, i + 1, spec.warmup_steps, 0});
  }
  const double batch = static_cast<double>(spec.batch_size);
  std::vector<double> requests, first_tokens, steps, prefill_rates;
  Metrics& metrics = result.metrics;
  for (int trial = 1; trial <= spec.repeat; ++trial) {
    if (hooks.window_opened) hooks.window_opened();
    double decode_ms = 0;
    for (int i = 1; i <= spec.steps; ++i) {
      const Generation g =
          generate_greedy(model, cache, prompt, spec.gen_len, device, graphed.get());
      inference.kv_cache_reallocated |= g.cache_reallocated;
      requests.push_back(g.total_ms);
      first_tokens.push_back(g.time_to_first_token_ms);
      prefill_rates.push_back(batch * static_cast<double>(spec.prompt_len) /
                              (g.time_to_first_token_ms / 1e3));
      steps.insert(steps.end(), g.decode_step_ms.begin(), g.decode_step_ms.end());
      decode_ms += std::accumulate(g.decode_step_ms.begin(), g.decode_step_ms.end(), 0.0);
      if (hooks.progress) hooks.progress({false, trial, spec.repeat, i, spec.steps, 0});
    }
    if (hooks.window_closed) hooks.window_closed();
    const double decoded = batch * static_cast<double>(spec.gen_len - 1) * spec.steps;
    metrics.trials.push_back(decoded / (decode_ms / 1e3));
  }
  metrics.throughput = median(metrics.trials);
  metrics.per_device_throughput = metrics.throughput;
  metrics.tokens_per_second = metrics.throughput;
  metrics.step_time_ms = summarize(steps);
  inference.decode_tokens_per_second = metrics.throughput;
  inference.prefill_tokens_per_second = median(prefill_rates);
  inference.request_latency_ms = summarize_latency(requests);
  inference.time_to_first_token_ms = summarize_latency(first_tokens);
  inference.time_per_output_token_ms = summarize_latency(steps);
}

}  // namespace

Result run_inference(const ResolvedBenchmark& spec, const RunContext& context) {
  const auto wall_start = std::chrono::steady_clock::now();
  const ModelInfo& info = ModelRegistry::instance().get(spec.model);
  const torch::Device device =
      spec.device == DeviceKind::kCuda
          ? torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(context.rank.device_index))
          : torch::Device(torch::kCPU);
  const PrecisionPolicy policy(spec.precision, device);
  policy.apply_global_flags(spec.deterministic);
  Result result = result_for(spec);
  result.optimizer.clear();
  if (info.generates_text) result.metrics.throughput_unit = "tokens/sec";
  result.metrics.inference.present = true;
  tensor_memory::track_cpu_tensors();
  tensor_memory::set_limit(device, spec.memory_limit);
  int64_t weights = 0;
  try {
    at::set_num_threads(spec.threads);
    torch::manual_seed(static_cast<uint64_t>(spec.seed));
    const std::optional<torch::ScalarType> dtype = weight_dtype(spec.precision);
    ModelOptions options = model_options_for(spec);
    std::optional<ModelStats> counted;
    if (info.count) counted = info.count(options);
    // Models counted from their configuration are built in the weights' dtype and drawn on the
    // device; the others are counted on an instance in float32 first.
    options.defer_initialization = counted.has_value();
    std::unique_ptr<TrainableModel> model = build_model(info, options, spec, policy);
    const ModelStats stats = counted ? *counted : measure_instance(*model);
    result.params = stats.params;
    result.trainable_params = 0;
    result.metrics.forward_flops_per_sample = stats.forward_flops;
    place_model(*model, device, options, spec.channels_last);
    if (dtype) model->cast_for_inference(*dtype);
    model->module().eval();
    weights = weight_bytes(model->module());
    const c10::InferenceMode inference_mode;
    tensor_memory::reset_peak(device);
    RunTelemetry telemetry(spec, context.rank);
    MeasurementHooks hooks;
    hooks.progress = context.progress;
    hooks.window_opened = [&telemetry] { telemetry.window_opened(); };
    hooks.window_closed = [&telemetry] { telemetry.window_closed(); };
    double timed_samples = 0;
    if (TextGenerator* generator = model->text_generator(); generator && info.generates_text) {
      measure_generation(spec, *generator, device, dtype.value_or(torch::kFloat), hooks, result);
      timed_samples =
          static_cast<double>(spec.batch_size) * (spec.gen_len - 1) * spec.steps * spec.repeat;
    } else {
      measure_forward(spec, *model, device, dtype, hooks, result);
      timed_samples = static_cast<double>(spec.batch_size * model->samples_per_item()) *
                      spec.steps * spec.repeat;
    }
    record_peak_memory(device, result.metrics);
    result.metrics.memory =
        inference_memory(device, weights, result.metrics.inference.kv_cache_bytes);
    result.telemetry = telemetry.report(timed_samples);
  } catch (const std::exception& error) {
    result.oom_cause =
        compat::out_of_memory_cause(error, tensor_memory::near_limit(device, spec.memory_limit));
    const bool oom = !result.oom_cause.empty();
    result.status = oom ? RunStatus::kOom : RunStatus::kFailed;
    result.error = first_line(error.what());
    if (oom) {
      MemoryBreakdown parts;
      parts.weights = weights;
      result.metrics.memory = memory_report(device, kMemoryAtFailure,
                                            tensor_memory::peak_allocated_bytes(device), parts);
    }
  }
  tensor_memory::set_limit(device, 0);
  attach_datasheet(result);
  result.duration_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return result;
}

}  // namespace gpubench
