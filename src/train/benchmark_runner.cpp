#include "train/benchmark_runner.h"

#include <chrono>
#include <stdexcept>

#include <torch/torch.h>

#if GPUBENCH_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#endif

#include "common/errors.h"
#include "datasheets/run_efficiency.h"
#include "infer/inference_runner.h"
#include "memory/tensor_memory.h"
#include "memory/training_memory.h"
#include "models/model_registry.h"
#include "results/statistics.h"
#include "system/system_probe.h"
#include "train/compat.h"
#include "train/device_timers.h"
#include "train/graphed_step.h"
#include "train/memory_plan.h"
#include "train/model_setup.h"
#include "train/precision_policy.h"
#include "train/resolve_benchmark.h"
#include "train/run_memory.h"
#include "train/run_telemetry.h"
#include "train/training_step.h"

namespace gpubench {
namespace {

torch::Device device_for(const ResolvedBenchmark& spec, const RankContext& rank) {
  return spec.device == DeviceKind::kCuda
             ? torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(rank.device_index))
             : torch::Device(torch::kCPU);
}

int world_size_of(const RankContext& rank) {
  return rank.collectives ? rank.collectives->world_size() : 1;
}

// The peak of the timed steps and where it went (docs/memory.md): weights, gradients and
// optimiser states counted from the tensors after `measured` (one more step, untimed),
// activations what its forward pass left allocated, other the rest of the peak.
MemoryReport measured_memory(torch::Device device, int64_t run_peak, const StepMemory& measured,
                             MemoryBreakdown counted) {
  counted.activations = measured.activations();
  return memory_report(device, kMemoryMeasured, std::max(run_peak, measured.peak), counted);
}

// When a run ran out: the peak it reached before the allocation that failed, the weights,
// gradients and optimiser states then alive, and the rest of that peak as activations (what the
// step held; its temporaries are among them).
MemoryReport memory_at_failure(torch::Device device, MemoryBreakdown counted) {
  const int64_t peak = tensor_memory::peak_allocated_bytes(device);
  counted.activations = std::max<int64_t>(0, peak - counted.total());
  return memory_report(device, kMemoryAtFailure, peak, counted);
}

// A run refused before it started: the bytes planned (train/memory_plan.h).
MemoryReport planned_memory(const MemoryPlan& plan) {
  MemoryReport report;
  report.basis = kMemoryPlanned;
  report.breakdown.weights = plan.weights;
  report.breakdown.gradients = plan.gradients;
  report.breakdown.optimizer_states = plan.optimizer_state;
  report.breakdown.activations = plan.activations;
  report.peak_bytes = report.breakdown.total();
  report.peak_source =
      "planned before the run: counted from the configuration, activations "
      "estimated";
  return report;
}

void describe_placement(const RankContext& rank, DistributedInfo& info) {
  info.launcher = rank.launcher;
  if (!rank.collectives) return;
  info.world_size = rank.collectives->world_size();
  info.nodes = rank.collectives->nodes();
  info.backend = rank.collectives->backend();
}

// Communication the backward pass left exposed, averaged over the timed steps, on the slowest
// rank, and the gradient sync's shape. Read right after the timed windows: their intervals are
// the last ones recorded, and the device is synchronised past them before they are read.
void record_exposed_communication(const RankContext& rank, GradientSynchronizer* synchronizer,
                                  torch::Device device, Result& result) {
  if (!rank.collectives) return;
  DistributedInfo& info = result.distributed;
  info.buckets = synchronizer->bucket_count();
  info.gradient_bytes = synchronizer->gradient_bytes();
  synchronize_device(device);
  auto exposed = synchronizer->take_exposed_communication_ms();
  const size_t timed = static_cast<size_t>(result.benchmark.steps) * result.benchmark.repeat;
  if (exposed.size() > timed) exposed.erase(exposed.begin(), exposed.end() - timed);
  info.exposed_communication_ms = rank.collectives->max_over_ranks(summarize(exposed).mean);
  const double step_ms = result.metrics.step_time_ms.median;
  info.exposed_communication_share = step_ms > 0 ? info.exposed_communication_ms / step_ms : 0;
}

// The largest peak memory of any rank.
void record_peak_over_ranks(const RankContext& rank, Result& result) {
  if (!rank.collectives) return;
  result.metrics.peak_memory_bytes = static_cast<int64_t>(
      rank.collectives->max_over_ranks(static_cast<double>(result.metrics.peak_memory_bytes)));
}

// The run's certain bytes do not fit: raised before the model is built.
class OutOfMemoryBeforeRun : public std::runtime_error {
 public:
  OutOfMemoryBeforeRun(const std::string& why, MemoryPlan plan)
      : std::runtime_error(why), plan(plan) {}
  MemoryPlan plan;
};

void refuse_if_short(const ModelStats& stats, const ResolvedBenchmark& spec, const ModelInfo& info,
                     const ModelOptions& options, torch::Device device, const RunContext& context) {
  const std::optional<int64_t> host =
      context.host_memory_available ? context.host_memory_available : host_available_memory();
  if (!host) return;
  const MemoryPlan plan = plan_memory(stats, spec, info, options);
  const std::string shortfall = memory_shortfall(
      plan, spec, *host, device.is_cuda() ? tensor_memory::device_total_bytes(device) : *host);
  if (!shortfall.empty()) throw OutOfMemoryBeforeRun(shortfall, plan);
}

}  // namespace

Result result_for(const ResolvedBenchmark& resolved) {
  const ModelInfo& info = ModelRegistry::instance().get(resolved.model);
  Result result = planned_result(resolved);
  result.model_reference = info.reference;
  result.model_family = info.family;
  result.input_shape = info.input_shape;
  result.metrics.throughput_unit = info.sample_unit + "/sec";
  result.optimizer = info.optimizer == OptimizerKind::kAdamW ? "AdamW" : "SGD";
  result.system = collect_system_info();
  result.telemetry = unavailable_telemetry("not measured: the run ended before its timed windows",
                                           "none", resolved.telemetry_interval_ms);
  return result;
}

Result failed_result_for(const ResolvedBenchmark& resolved, const std::string& error) {
  Result result = result_for(resolved);
  result.status = RunStatus::kFailed;
  result.error = error;
  attach_datasheet(result);
  return result;
}

Result run_benchmark(const ResolvedBenchmark& spec, const RunContext& context) {
  if (spec.task == Task::kInfer) return run_inference(spec, context);
  const auto wall_start = std::chrono::steady_clock::now();
  const RankContext& rank = context.rank;
  const ModelInfo& info = ModelRegistry::instance().get(spec.model);
  const torch::Device device = device_for(spec, rank);
  const int world_size = world_size_of(rank);
  const PrecisionPolicy policy(spec.precision, device);
  policy.apply_global_flags(spec.deterministic);  // first: the system block records the flags
  Result result = result_for(spec);
  describe_placement(rank, result.distributed);
  tensor_memory::track_cpu_tensors();
  tensor_memory::set_limit(device, spec.memory_limit);
  std::unique_ptr<TrainableModel> model;
  std::unique_ptr<TrainingStep> step;
  try {
    at::set_num_threads(spec.threads);
    torch::manual_seed(static_cast<uint64_t>(spec.seed));
    ModelOptions options = model_options_for(spec);
    // Models too large to build everywhere are counted from their configuration, so the memory
    // check comes before anything is allocated.
    std::optional<ModelStats> counted;
    if (info.count) counted = info.count(options);
    if (counted) {
      result.params = counted->params;
      result.trainable_params = counted->trainable_params;
      refuse_if_short(*counted, spec, info, options, device, context);
    }
    // Counted models need no instance on the host to count, so their weights are drawn where
    // they train.
    options.defer_initialization = counted.has_value();
    model = build_model(info, options, spec, policy);
    const ModelStats stats = counted ? *counted : measure_instance(*model);  // on the CPU
    const int64_t samples_per_step = spec.batch_size * world_size * model->samples_per_item();
    result.params = stats.params;
    result.trainable_params = stats.trainable_params;
    result.metrics.forward_flops_per_sample = stats.forward_flops;
    result.metrics.train_flops_per_step = stats.train_flops() * samples_per_step;

    place_model(*model, device, options, spec.channels_last);
    std::unique_ptr<GradientSynchronizer> synchronizer;
    if (rank.collectives) {
      // Identical weights everywhere (DDP's broadcast), then each rank its own data.
      auto state = model->module().parameters();
      for (auto& buffer : model->module().buffers()) state.push_back(buffer);
      rank.collectives->broadcast_from_rank0(state);
      synchronizer = std::make_unique<GradientSynchronizer>(
          *rank.collectives, trainable_parameters(model->module()), int64_t{spec.bucket_mb} << 20);
      torch::manual_seed(static_cast<uint64_t>(spec.seed) +
                         static_cast<uint64_t>(rank.collectives->rank()));
    }
    const SyntheticBatch batch =
        model->synthetic_batch(spec.batch_size, device, spec.channels_last);
    step = std::make_unique<TrainingStep>(
        *model, policy, optimizer_settings_for(info.optimizer, spec.batch_size * world_size),
        synchronizer.get());
    result.optimizer = step->optimizer().description();
    result.optimizer_impl = to_string(step->optimizer().implementation());

    tensor_memory::reset_peak(device);
    TrialPlan plan{spec.warmup_steps, spec.steps, spec.repeat,
                   static_cast<double>(samples_per_step)};
    torch::Tensor loss;
    std::function<void()> one_step = [&] { loss = step->run(batch); };
    std::unique_ptr<GraphedStep> graphed;
    if (spec.mode == Mode::kGraph) {  // the warm-up runs before the capture, inside
      if (rank.collectives) {
        throw UsageError(GraphedStep::unsupported_in_process_group(rank.launcher, world_size));
      }
      graphed = std::make_unique<GraphedStep>(*step, batch, device, spec.warmup_steps);
      result.metrics.graph_capture_ms = graphed->capture_ms();
      plan.warmup_steps = 0;
      one_step = [&] { loss = graphed->run(); };
    }
    auto timer = make_step_timer(device);
    if (rank.collectives) timer->set_barrier([&rank] { rank.collectives->barrier(); });
    RunTelemetry telemetry(spec, rank);
    MeasurementHooks hooks;
    hooks.progress = context.progress;
    hooks.window_opened = [&telemetry] { telemetry.window_opened(); };
    hooks.window_closed = [&telemetry] { telemetry.window_closed(); };
    if (context.fault) hooks.before_first_timed_step = [&] { context.fault->trigger(); };
    const Measurement measured = measure_trials(plan, *timer, one_step, hooks);
    Metrics& metrics = result.metrics;
    metrics.trials = measured.trials;
    metrics.step_time_ms = measured.step_time_ms;
    metrics.throughput = measured.throughput;
    metrics.per_device_throughput = metrics.throughput / world_size;
    if (model->tokens_per_item() > 0 || model->samples_per_item() > 1) {
      metrics.sequences_per_second =
          metrics.throughput / static_cast<double>(model->samples_per_item());
    }
    if (model->tokens_per_item() > 0) {
      metrics.tokens_per_second =
          metrics.sequences_per_second * static_cast<double>(model->tokens_per_item());
    }
    metrics.final_loss = loss.item<double>();
    metrics.skipped_steps = step->skipped_steps();
    metrics.achieved_tflops = static_cast<double>(metrics.train_flops_per_step) *
                              metrics.throughput / static_cast<double>(samples_per_step) / 1e12;
    record_exposed_communication(rank, synchronizer.get(), device, result);
    record_peak_memory(device, metrics);
    const int64_t run_peak = tensor_memory::peak_allocated_bytes(device);
    if (!graphed) {
      step->measure_memory_of_next_step(device);
      step->run(batch);
    }  // a graph's step was measured in its last eager warm-up, before the graph's pool existed
    metrics.memory = measured_memory(device, run_peak, step->last_step_memory(),
                                     counted_training_state(model->module(), step->optimizer()));
    record_peak_over_ranks(rank, result);
    result.telemetry =
        telemetry.report(static_cast<double>(samples_per_step) * spec.steps * spec.repeat);
  } catch (const std::exception& error) {
    const auto* refused = dynamic_cast<const OutOfMemoryBeforeRun*>(&error);
    result.oom_cause = refused != nullptr
                           ? "planned before the run"
                           : compat::out_of_memory_cause(
                                 error, tensor_memory::near_limit(device, spec.memory_limit));
    const bool oom = !result.oom_cause.empty();
    result.status = oom ? RunStatus::kOom : RunStatus::kFailed;
    result.error = first_line(error.what());
    if (refused != nullptr) {
      result.metrics.memory = planned_memory(refused->plan);
    } else if (oom && model && step) {
      result.metrics.memory =
          memory_at_failure(device, counted_training_state(model->module(), step->optimizer()));
    }
  }
  tensor_memory::set_limit(device, 0);
  attach_datasheet(result);  // after the metrics: the share of peak needs the achieved TFLOP/s
  result.duration_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return result;
}

}  // namespace gpubench
