#include "gpubench/benchmark_runner.h"

#include <sys/resource.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include <torch/torch.h>

#if GPUBENCH_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#endif

#include "gpubench/compat.h"
#include "gpubench/errors.h"
#include "gpubench/model_registry.h"
#include "gpubench/precision_policy.h"
#include "gpubench/statistics.h"
#include "gpubench/step_timer.h"
#include "gpubench/training_step.h"

namespace gpubench {
namespace {

torch::Device device_for(const BenchmarkSpec& spec, const RankContext& rank) {
  return spec.device == DeviceKind::kCuda
             ? torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(rank.device_index))
             : torch::Device(torch::kCPU);
}

int rank_of(const RankContext& rank) {
  return rank.collectives ? rank.collectives->rank() : 0;
}

int world_size_of(const RankContext& rank) {
  return rank.collectives ? rank.collectives->world_size() : 1;
}

void to_channels_last(torch::nn::Module& module) {
  torch::NoGradGuard no_grad;
  for (auto& parameter : module.parameters()) {
    if (parameter.dim() == 4) {
      parameter.set_data(parameter.data().contiguous(torch::MemoryFormat::ChannelsLast));
    }
  }
}

void reset_peak_memory(torch::Device device) {
#if GPUBENCH_WITH_CUDA
  if (device.is_cuda()) c10::cuda::CUDACachingAllocator::resetPeakStats(device.index());
#else
  (void)device;
#endif
}

void record_peak_memory(torch::Device device, Metrics& metrics) {
#if GPUBENCH_WITH_CUDA
  if (device.is_cuda()) {
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device.index());
    metrics.peak_memory_bytes = stats.allocated_bytes[0].peak;
    metrics.peak_memory_source = "cuda caching allocator, peak allocated bytes";
    return;
  }
#else
  (void)device;
#endif
  struct rusage usage {};
  ::getrusage(RUSAGE_SELF, &usage);
  metrics.peak_memory_bytes = static_cast<int64_t>(usage.ru_maxrss) * 1024;
  metrics.peak_memory_source = "process max RSS (CPU run: includes the whole process)";
}

void inject_fault_if_asked(const BenchmarkSpec& spec, int rank) {
  const char* fault = std::getenv(kFaultInjectionVariable);
  if (fault == nullptr) return;
  std::string kind = fault;
  const auto colon = kind.find(':');
  if (colon != std::string::npos) {
    const std::string only_for = kind.substr(colon + 1);
    kind = kind.substr(0, colon);
    if (only_for != spec.model && only_for != to_string(spec.precision) &&
        only_for != "rank" + std::to_string(rank)) {
      return;
    }
  }
  if (kind == "throw") throw std::runtime_error("injected failure (" + kind + ")");
  if (kind == "oom") throw std::runtime_error("CUDA out of memory (injected failure)");
  if (kind == "abort") std::abort();
  if (kind == "hang") {
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  }
}

// Timed trials; warm-up excluded. Returns per-trial throughput and every step time.
void measure(const BenchmarkSpec& spec, double global_samples_per_step, torch::Device device,
             const RankContext& rank, TrainingStep& step, const SyntheticBatch& batch,
             const ProgressCallback& progress, Metrics& metrics, torch::Tensor& last_loss) {
  auto timer = StepTimer::for_device(device);
  if (rank.collectives) timer->set_barrier([&rank] { rank.collectives->barrier(); });
  std::vector<double> step_times;
  for (int trial = 1; trial <= spec.repeat; ++trial) {
    const auto trial_start = std::chrono::steady_clock::now();
    timer->start_window();
    for (int i = 1; i <= spec.steps; ++i) {
      if (trial == 1 && i == 1) inject_fault_if_asked(spec, rank_of(rank));
      last_loss = step.run(batch);
      timer->mark_step();
      if (progress) {
        const double elapsed =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - trial_start).count();
        progress({false, trial, spec.repeat, i, spec.steps,
                  elapsed > 0 ? global_samples_per_step * i / elapsed : 0});
      }
    }
    const WindowTiming timing = timer->stop_window();
    metrics.trials.push_back(global_samples_per_step * spec.steps / timing.seconds);
    step_times.insert(step_times.end(), timing.step_times_ms.begin(), timing.step_times_ms.end());
  }
  metrics.step_time_ms = summarize(step_times);
  metrics.throughput = median(metrics.trials);
  metrics.per_device_throughput = metrics.throughput / world_size_of(rank);
}

void describe_placement(const RankContext& rank, DistributedInfo& info) {
  info.launcher = rank.launcher;
  if (!rank.collectives) return;
  info.world_size = rank.collectives->world_size();
  info.nodes = rank.collectives->nodes();
  info.backend = rank.collectives->backend();
}

// Communication the backward pass left exposed, averaged over the timed steps, on the slowest
// rank; the gradient sync's shape; the largest peak memory of any rank.
void record_distributed(const RankContext& rank, GradientSynchronizer* synchronizer,
                        Result& result) {
  if (!rank.collectives) return;
  DistributedInfo& info = result.distributed;
  info.buckets = synchronizer->bucket_count();
  info.gradient_bytes = synchronizer->gradient_bytes();
  auto exposed = synchronizer->take_exposed_communication_ms();
  const size_t timed = static_cast<size_t>(result.spec.steps) * result.spec.repeat;
  if (exposed.size() > timed) exposed.erase(exposed.begin(), exposed.end() - timed);
  info.exposed_communication_ms = rank.collectives->max_over_ranks(summarize(exposed).mean);
  const double step_ms = result.metrics.step_time_ms.median;
  info.exposed_communication_share = step_ms > 0 ? info.exposed_communication_ms / step_ms : 0;
  result.metrics.peak_memory_bytes = static_cast<int64_t>(
      rank.collectives->max_over_ranks(static_cast<double>(result.metrics.peak_memory_bytes)));
}

}  // namespace

Result result_for(const BenchmarkSpec& resolved) {
  const ModelInfo& info = ModelRegistry::instance().get(resolved.model);
  Result result;
  result.spec = resolved;
  result.model_reference = info.reference;
  result.model_family = info.family;
  result.input_shape = info.input_shape;
  result.started_at = utc_timestamp_now();
  result.metrics.throughput_unit = info.sample_unit + "/sec";
  result.system = collect_system_info();
  return result;
}

Result failed_result_for(const BenchmarkSpec& resolved, const std::string& error) {
  Result result = result_for(resolved);
  result.status = RunStatus::kFailed;
  result.error = error;
  return result;
}

Result run_benchmark(const BenchmarkSpec& spec, const ProgressCallback& progress,
                     const RankContext& rank) {
  const auto wall_start = std::chrono::steady_clock::now();
  const ModelInfo& info = ModelRegistry::instance().get(spec.model);
  const torch::Device device = device_for(spec, rank);
  const int world_size = world_size_of(rank);
  const PrecisionPolicy policy(spec.precision, device);
  policy.apply_global_flags();  // first, so the system block records the TF32 flags in force
  Result result = result_for(spec);
  describe_placement(rank, result.distributed);
  try {
    at::set_num_threads(spec.threads);
    torch::manual_seed(spec.seed);
    const ModelOptions options{spec.tgt_len, spec.mem_len};
    std::unique_ptr<TrainableModel> model = info.instantiate(options);
    const ModelStats stats = measure_instance(*model);  // on the CPU, before the move
    const int64_t samples_per_step = spec.batch_size * world_size * model->samples_per_item();
    result.params = stats.params;
    result.metrics.forward_flops_per_sample = stats.forward_flops;
    result.metrics.train_flops_per_step = 3 * stats.forward_flops * samples_per_step;

    model->module().to(device);
    if (spec.channels_last.value_or(false)) to_channels_last(model->module());
    model->module().train();
    std::unique_ptr<GradientSynchronizer> synchronizer;
    if (rank.collectives) {
      // Identical weights everywhere (DDP's broadcast), then each rank its own data.
      auto state = model->module().parameters();
      for (auto& buffer : model->module().buffers()) state.push_back(buffer);
      rank.collectives->broadcast_from_rank0(state);
      synchronizer = std::make_unique<GradientSynchronizer>(
          *rank.collectives, model->module().parameters(), int64_t{spec.bucket_mb} << 20);
      torch::manual_seed(spec.seed + static_cast<uint64_t>(rank.collectives->rank()));
    }
    const SyntheticBatch batch =
        model->synthetic_batch(spec.batch_size, device, spec.channels_last.value_or(false));
    OptimizerSettings settings;
    settings.learning_rate = 0.1 * static_cast<double>(spec.batch_size * world_size) / 256.0;
    TrainingStep step(*model, policy, settings, synchronizer.get());
    result.optimizer_impl = to_string(step.optimizer_implementation());

    reset_peak_memory(device);
    torch::Tensor loss;
    for (int i = 1; i <= spec.warmup_steps; ++i) {
      loss = step.run(batch);
      if (progress) progress({true, 0, spec.repeat, i, spec.warmup_steps, 0});
    }
    measure(spec, static_cast<double>(samples_per_step), device, rank, step, batch, progress,
            result.metrics, loss);
    if (model->samples_per_item() > 1) {
      result.metrics.sequences_per_second =
          result.metrics.throughput / static_cast<double>(model->samples_per_item());
    }
    result.metrics.final_loss = loss.item<double>();
    result.metrics.skipped_steps = step.skipped_steps();
    result.metrics.achieved_tflops = static_cast<double>(result.metrics.train_flops_per_step) *
                                     result.metrics.throughput /
                                     static_cast<double>(samples_per_step) / 1e12;
    record_peak_memory(device, result.metrics);
    record_distributed(rank, synchronizer.get(), result);
  } catch (const std::exception& error) {
    result.status = compat::is_out_of_memory(error) ? RunStatus::kOom : RunStatus::kFailed;
    result.error = first_line(error.what());
  }
  result.duration_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return result;
}

}  // namespace gpubench
