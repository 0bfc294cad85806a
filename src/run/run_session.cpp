#include "run/run_session.h"

#include "common/errors.h"
#include "common/phase_progress.h"
#include "common/text_table.h"
#include "datasheets/run_efficiency.h"
#include "distributed/collective_errors.h"
#include "distributed/collectives.h"
#include "features/model_options.h"
#include "features/parallelism/model_parallel_collectives.h"
#include "features/parallelism/model_parallelism.h"
#include "features/parallelism/parallelism_memory.h"
#include "memory/run_memory.h"
#include "memory/tensor_memory.h"
#include "optim/optimizer_registry.h"
#include "run/expert_routing.h"
#include "run/model_setup.h"
#include "run/profiled_trial.h"
#include "run/resolve_benchmark.h"
#include "run/run_telemetry.h"
#include "system/machine.h"
#include "system/system_probe.h"
#include "torch_support/compat.h"
#include "torch_support/device_timers.h"

namespace gpubench {
namespace {

void describe_placement(const RankPlacement& rank, DistributedInfo& info) {
  info.launcher = rank.launcher;
  if (!rank.collectives) return;
  info.world_size = rank.collectives->world_size();
  info.nodes = rank.collectives->nodes();
  info.backend = rank.collectives->backend();
}

// The largest peak memory of any rank.
void record_peak_over_ranks(const RankPlacement& rank, Result& result) {
  if (!rank.collectives) return;
  result.metrics.peak_memory_bytes = static_cast<int64_t>(
      rank.collectives->max_over_ranks(static_cast<double>(result.metrics.peak_memory_bytes)));
}

// Below Blackwell no tensor core multiplies FP4: each expert's weight is dequantised to bf16 for
// its product (modeling/mxfp4_weights.h). gpubench has no native FP4 product on Blackwell either.
std::string mxfp4_weights_held(DeviceKind device) {
  constexpr int kNativeFp4ComputeCapability = 100;
  const int capability =
      device == DeviceKind::kCuda ? read_machine_facts().cuda_compute_capability : 0;
  return capability >= kNativeFp4ComputeCapability
             ? "mxfp4 (dequantised; gpubench has no native FP4 product yet)"
             : "mxfp4 (dequantised; native FP4 needs compute capability 10.0)";
}

}  // namespace

Result result_for(const ResolvedBenchmark& resolved) {
  const ModelInfo& info = ModelRegistry::instance().get(resolved.model);
  Result result = planned_result(resolved);
  result.model_reference = info.reference;
  result.model_family = info.family;
  result.input_shape = info.input_shape;
  if (info.capabilities.hidden_size > 0) {
    result.model_hidden_size = info.capabilities.hidden_size;
    result.model_blocks = info.capabilities.blocks;
    result.model_vocab = info.capabilities.vocab;
  }
  result.model_tensor_parallel_splits = info.capabilities.split_counts;
  if (info.capabilities.blocks > 0 && info.count) {
    result.model_block_params = count_shard_units(info, model_options_for(resolved)).block;
  }
  result.experts.experts = info.capabilities.experts;
  result.experts.experts_per_token = resolved.experts_per_token;
  result.metrics.throughput_unit = info.throughput_unit(resolved.task);
  result.optimizer =
      OptimizerRegistry::instance().get(optimizer_for(resolved.optimizer, info.optimizer)).label;
  result.system = collect_system_info();
  result.telemetry = unavailable_telemetry("not measured: the run ended before its timed windows",
                                           "none", resolved.telemetry_interval_ms);
  return result;
}

RunSession::RunSession(const ResolvedBenchmark& benchmark, const RunSetup& run_setup)
    : benchmark_(benchmark),
      run_setup_(run_setup),
      started_(std::chrono::steady_clock::now()),
      device_setup_(benchmark, run_setup.rank.device_index),
      result_(result_for(benchmark)) {
  describe_placement(run_setup.rank, result_.distributed);
  tensor_memory::set_limit(device(), benchmark.memory_limit);
}

RunSession::~RunSession() {
  tensor_memory::set_limit(device(), 0);
}

int RunSession::world_size() const {
  return run_setup_.rank.collectives ? run_setup_.rank.collectives->world_size() : 1;
}

Result RunSession::run(Workload& workload) {
  record_description(workload.describe(*this));
  try {
    build_model(workload);
    record_description(workload.prepare(*this));
    tensor_memory::reset_peak(device());
    measure(workload);
  } catch (const Interrupted&) {
    throw;  // not a failure of the benchmark: the command ends by the signal, with no result
  } catch (const std::exception& error) {
    record_failure(workload, error);
  }
  attach_datasheet(result_);  // after the metrics: the share of peak needs the achieved TFLOP/s
  result_.duration_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  return result_;
}

// Models too large to build everywhere are counted from their configuration, so the memory
// check comes before anything is allocated, and their weights are drawn where they run.
std::optional<int64_t> RunSession::host_memory() const {
  return run_setup_.host_memory_available ? run_setup_.host_memory_available
                                          : host_available_memory();
}

void RunSession::build_model(Workload& workload) {
  options_ = model_options_for(benchmark_);
  split_layers_ =
      parallelism::SplitLayers(run_setup_.rank.model_parallelism, run_setup_.rank.model_parallel);
  options_.placement = split_layers_.placement();
  std::optional<ModelStats> counted;
  if (info().count) counted = info().count(options_);
  // The model's size, once: before it is built where it is counted (a run refused by its plan
  // still says it), else measured on the instance.
  const auto record_size = [&](const ModelStats& stats) {
    result_.params = stats.params;
    result_.experts.active_params = stats.active_params;
    result_.trainable_params = workload.trains() ? stats.trainable_params : 0;
  };
  if (counted) {
    record_size(*counted);
    workload.check_counted(*this, *counted);
  }
  options_.defer_initialization = counted.has_value();
  report_phase({"building the model", counted ? counted_parameters(counted->params) : "", 0, 0});
  model_ = gpubench::build_model(info(), options_, benchmark_, policy());
  const ModelStats stats = counted ? *counted : measure_instance(*model_);  // on the CPU
  if (!counted) record_size(stats);
  const WorkloadCounts counts = workload.counts(*this, stats);
  result_.metrics.forward_flops_per_sample = counts.forward_flops_per_sample;
  result_.metrics.train_flops_per_step = counts.train_flops_per_step;
  place_model(*model_, device(), options_, benchmark_.channels_last);
}

void RunSession::record_description(const WorkloadDescription& description) {
  if (description.optimizer) result_.optimizer = *description.optimizer;
  if (!description.optimizer_impl.empty()) result_.optimizer_impl = description.optimizer_impl;
  result_.metrics.inference.present = result_.metrics.inference.present || description.inference;
}

// The workload's own metrics (Workload::figures): every other field of Metrics is the session's.
void RunSession::record_figures(const WorkloadFigures& figures) {
  const Metrics& from = figures.metrics;
  Metrics& metrics = result_.metrics;
  if (figures.cpu_memory_bandwidth_gbs > 0) {
    result_.system.cpu_memory_bandwidth_gbs = figures.cpu_memory_bandwidth_gbs;
  }
  metrics.achieved_tflops = from.achieved_tflops;
  metrics.final_loss = from.final_loss;
  metrics.skipped_steps = from.skipped_steps;
  metrics.sequences_per_second = from.sequences_per_second;
  metrics.tokens_per_second = from.tokens_per_second;
  metrics.graph_capture_ms = from.graph_capture_ms;
  metrics.fp8_matmul_flop_share = from.fp8_matmul_flop_share;
  if (metrics.inference.present) {
    metrics.inference = from.inference;
    metrics.inference.present = true;
  }
  if (figures.distributed) {
    DistributedInfo& distributed = result_.distributed;
    distributed.buckets = figures.distributed->buckets;
    distributed.gradient_bytes = figures.distributed->gradient_bytes;
    distributed.exposed_communication_ms = figures.distributed->exposed_communication_ms;
    distributed.exposed_communication_share = figures.distributed->exposed_communication_share;
    distributed.gathered_bytes = figures.distributed->gathered_bytes;
    distributed.exposed_in_passes_ms = figures.distributed->exposed_in_passes_ms;
  }
  if (figures.model_parallel_wait && run_setup_.rank.model_parallelism) {
    run_setup_.rank.model_parallelism->record_wait(*figures.model_parallel_wait,
                                                   result_.distributed);
  }
  result_.timeline = figures.timeline;
}

void RunSession::measure(Workload& workload) {
  const TrialPlan plan = workload.start(*this);
  auto timer = make_step_timer(device());
  const RankPlacement& rank = run_setup_.rank;
  if (rank.collectives) timer->set_barrier([&rank] { rank.collectives->barrier(); });
  RunTelemetry telemetry(benchmark_, rank);
  MeasurementHooks hooks;
  hooks.progress = run_setup_.progress;
  ExpertRouting routing(model_->module());
  hooks.window_opened = [&telemetry, &routing] {
    telemetry.window_opened();
    routing.window_opened();
  };
  hooks.window_closed = [&telemetry, &routing] {
    telemetry.window_closed();
    routing.window_closed();
  };
  if (run_setup_.fault) hooks.before_first_timed_step = [this] { run_setup_.fault->trigger(); };
  const Measurement measured = workload.measure(*this, plan, *timer, hooks);
  Metrics& metrics = result_.metrics;
  metrics.trials = measured.trials;
  metrics.step_time_ms = measured.step_time_ms;
  metrics.throughput = measured.throughput;
  metrics.per_device_throughput = metrics.throughput / world_size();
  record_figures(workload.figures(*this, measured));
  routing.report(plan.steps, result_.experts);
  if (benchmark_.weights == "mxfp4") {
    metrics.inference.weights_held = mxfp4_weights_held(benchmark_.device);
  }
  const PeakMemory peak = run_peak_memory(device());
  metrics.peak_memory_bytes = peak.bytes;
  metrics.peak_memory_source = peak.source;
  metrics.memory = workload.memory_breakdown(*this);
  record_peak_over_ranks(rank, result_);
  result_.telemetry =
      telemetry.report(plan.samples_per_step * benchmark_.steps * benchmark_.repeat);
  if (!benchmark_.profile.empty()) {
    const bool rank0 = !rank.collectives || rank.collectives->rank() == 0;
    result_.profile = run_profiled_trial(
        plan, *timer, [&workload] { workload.step(); }, device(), benchmark_.profile, rank0);
  }
}

void RunSession::record_failure(Workload& workload, const std::exception& error) {
  const auto* refused = dynamic_cast<const OutOfMemoryBeforeRun*>(&error);
  result_.oom_cause =
      refused != nullptr ? "planned before the run"
                         : compat::out_of_memory_cause(
                               error, tensor_memory::near_limit(device(), benchmark_.memory_limit));
  const bool oom = !result_.oom_cause.empty();
  result_.status = oom ? RunStatus::kOom : RunStatus::kFailed;
  result_.error = first_line(error.what());
  if (rank().collectives != nullptr) {  // a peer that stopped answering, in gpubench's words
    if (std::string said = described_collective_error(result_.error); !said.empty()) {
      result_.error = said;
    }
  }
  if (refused != nullptr) {
    result_.metrics.memory = refused->planned;
  } else if (oom) {
    if (std::optional<MemoryReport> memory = workload.memory_at_failure(*this)) {
      result_.metrics.memory = *memory;
    }
  }
}

}  // namespace gpubench
