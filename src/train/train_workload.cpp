// The training workload: one optimiser step of the model on a synthetic batch, eager or replayed
// from a captured graph, its gradients averaged over the ranks (docs/method.md, docs/training.md).
#include <torch/torch.h>

#include "common/errors.h"
#include "features/memory_terms.h"
#include "features/parallelism/data_parallel_sync.h"
#include "memory/run_memory.h"
#include "memory/tensor_memory.h"
#include "memory/training_memory.h"
#include "results/statistics.h"
#include "run/model_parallel_wait.h"
#include "run/run_session.h"
#include "torch_support/device_timers.h"
#include "train/graphed_step.h"
#include "train/training_step.h"

namespace gpubench {
namespace {

// A run refused before it started: the bytes planned (features/memory_plan.h).
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

class TrainWorkload : public Workload {
 public:
  bool trains() const override { return true; }

  void check_counted(RunSession& session, const ModelStats& counted) override {
    const std::optional<int64_t> host = session.host_memory();
    if (!host) return;
    const ResolvedBenchmark& spec = session.benchmark();
    const torch::Device device = session.device();
    const MemoryPlan plan = plan_memory(counted, spec, session.info(), session.model_options());
    const std::string shortfall = memory_shortfall(
        plan, spec, *host, device.is_cuda() ? tensor_memory::device_total_bytes(device) : *host);
    if (!shortfall.empty()) throw OutOfMemoryBeforeRun(shortfall, planned_memory(plan));
  }

  WorkloadCounts counts(RunSession& session, const ModelStats& stats) override {
    const ResolvedBenchmark& spec = session.benchmark();
    samples_per_step_ =
        spec.batch_size * session.replica_count() * session.model()->samples_per_item();
    train_flops_per_step_ = stats.train_flops() * samples_per_step_;
    return {stats.forward_flops, train_flops_per_step_};
  }

  WorkloadDescription prepare(RunSession& session) override {
    const ResolvedBenchmark& spec = session.benchmark();
    const RankPlacement& rank = session.rank();
    TrainableModel& model = *session.model();
    if (Collectives* replicas = rank.replicas()) {
      // Identical weights in every replica (DDP's broadcast), then each replica its own data;
      // a replica's tensor-parallel ranks draw the same batch.
      auto state = model.module().parameters();
      for (auto& buffer : model.module().buffers()) state.push_back(buffer);
      replicas->broadcast_from_rank0(state);
      parallelism::DataParallelSync sync = parallelism::data_parallel_sync(
          spec, model.module(), trainable_parameters(model.module()), *replicas,
          rank.model_parallelism, rank.slice_replicas,
          session.policy().autocast_dtype().value_or(torch::kFloat));
      synchronizer_ = std::move(sync.sync);
      sharded_ = sync.sharded;
      torch::manual_seed(static_cast<uint64_t>(spec.seed) +
                         static_cast<uint64_t>(replicas->rank()));
    }
    batch_ = model.synthetic_batch(spec.batch_size, session.device(), spec.channels_last);
    step_ = std::make_unique<TrainingStep>(
        model, session.policy(),
        optimizer_settings_for(optimizer_for(spec.optimizer, session.info().optimizer),
                               spec.batch_size * session.replica_count()),
        synchronizer_.get());
    if (spec.timeline && spec.blocks > 0) {
      timeline_ =
          std::make_unique<StepTimeline>(session.device(), trainable_parameters(model.module()),
                                         blocks_of_trainable(model.module()));
    } else if (spec.timeline) {
      timeline_ = std::make_unique<StepTimeline>(
          session.device(), trainable_parameters(model.module()), int64_t{spec.bucket_mb} << 20);
    }
    if (timeline_) {
      step_->set_timeline(timeline_.get());
    }
    return {step_->optimizer().description(), to_string(step_->optimizer().implementation()),
            false};
  }

  TrialPlan start(RunSession& session) override {
    const ResolvedBenchmark& spec = session.benchmark();
    TrialPlan plan{spec.warmup_steps, spec.steps, spec.repeat,
                   static_cast<double>(samples_per_step_)};
    if (spec.mode == Mode::kGraph) {  // the warm-up runs before the capture, inside
      graphed_ = std::make_unique<GraphedStep>(*step_, batch_, session.device(), spec.warmup_steps);
      plan.warmup_steps = 0;
    }
    return plan;
  }

  void step() override { loss_ = graphed_ ? graphed_->run() : step_->run(batch_); }

  // The timed steps' tensor-parallel wait: the warm-up's is forgotten before the first.
  Measurement measure(RunSession& session, const TrialPlan& plan, StepTimer& timer,
                      const MeasurementHooks& hooks) override {
    MeasurementHooks timed = hooks;
    timed.before_first_timed_step = [&] {
      take_model_parallel_wait(session.rank(), session.device());
      if (sharded_) {
        synchronize_device(session.device());
        sharded_->take_exposed_in_passes_ms();
      }
      if (hooks.before_first_timed_step) hooks.before_first_timed_step();
    };
    const Measurement measured = Workload::measure(session, plan, timer, timed);
    model_parallel_wait_ = per_step_on_slowest_rank(
        session.rank(), take_model_parallel_wait(session.rank(), session.device()),
        int64_t{plan.steps} * plan.repeat);
    if (sharded_) {
      synchronize_device(session.device());
      in_passes_wait_ms_ = session.rank().collectives->max_over_ranks(
          sharded_->take_exposed_in_passes_ms() / static_cast<double>(plan.steps * plan.repeat));
    }
    return measured;
  }

  WorkloadFigures figures(RunSession& session, const Measurement& measured) override {
    TrainableModel& model = *session.model();
    WorkloadFigures figures;
    Metrics& metrics = figures.metrics;
    if (graphed_) metrics.graph_capture_ms = graphed_->capture_ms();
    if (model.tokens_per_item() > 0 || model.samples_per_item() > 1) {
      metrics.sequences_per_second =
          measured.throughput / static_cast<double>(model.samples_per_item());
    }
    if (model.tokens_per_item() > 0) {
      metrics.tokens_per_second =
          metrics.sequences_per_second * static_cast<double>(model.tokens_per_item());
    }
    metrics.final_loss = loss_.item<double>();
    metrics.skipped_steps = step_->skipped_steps();
    if (session.benchmark().precision == Precision::kFp8) {
      metrics.fp8_matmul_flop_share = step_->forward_counts().fp8_training_share();
      require_fp8_products(session.benchmark().model, metrics.fp8_matmul_flop_share);
    }
    metrics.achieved_tflops = static_cast<double>(train_flops_per_step_) * measured.throughput /
                              static_cast<double>(samples_per_step_) / 1e12;
    figures.distributed = exposed_communication(session, measured);
    if (session.rank().model_parallel) {
      figures.model_parallel_wait =
          parallelism::GroupWait{model_parallel_wait_.ms, 0, model_parallel_wait_.collectives};
    }
    figures.timeline = timeline(session);
    return figures;
  }

  // The peak of the timed steps and where it went (docs/memory.md): weights, gradients and
  // optimiser states counted from the tensors after one more step (untimed), activations what
  // its forward pass left allocated, other the rest of the peak. A graph's step was measured in
  // its last eager warm-up, before the graph's pool existed.
  MemoryReport memory_breakdown(RunSession& session) override {
    const torch::Device device = session.device();
    const int64_t run_peak = tensor_memory::peak_allocated_bytes(device);
    if (!graphed_) {
      step_->measure_memory_of_next_step(device);
      step_->run(batch_);
    }
    const StepMemory& measured = step_->last_step_memory();
    MemoryBreakdown counted = counted_training_state(session.model()->module(), step_->optimizer());
    counted.activations = measured.activations();
    return memory_report(device, kMemoryMeasured, std::max(run_peak, measured.peak), counted);
  }

  // The peak reached before the allocation that failed, the weights, gradients and optimiser
  // states then alive, and the rest of that peak as activations (what the step held; its
  // temporaries are among them).
  std::optional<MemoryReport> memory_at_failure(RunSession& session) override {
    if (!session.model() || !step_) return std::nullopt;
    const torch::Device device = session.device();
    MemoryBreakdown counted = counted_training_state(session.model()->module(), step_->optimizer());
    const int64_t peak = tensor_memory::peak_allocated_bytes(device);
    counted.activations = std::max<int64_t>(0, peak - counted.total());
    return memory_report(device, kMemoryAtFailure, peak, counted);
  }

 private:
  // Communication the backward pass left exposed, averaged over the timed steps, on the slowest
  // rank, and the gradient sync's shape. Read right after the timed windows: their intervals
  // are the last ones recorded, and the device is synchronised past them before they are read.
  std::optional<DistributedInfo> exposed_communication(RunSession& session,
                                                       const Measurement& measured) {
    const RankPlacement& rank = session.rank();
    if (!rank.collectives) return std::nullopt;
    const ResolvedBenchmark& spec = session.benchmark();
    DistributedInfo info;
    info.buckets = synchronizer_->bucket_count();
    info.gradient_bytes = synchronizer_->gradient_bytes();
    if (sharded_) {
      info.gathered_bytes = sharded_->gathered_bytes_per_step();
      info.exposed_in_passes_ms = in_passes_wait_ms_;
    }
    synchronize_device(session.device());
    auto exposed = synchronizer_->take_exposed_communication_ms();
    const size_t timed = static_cast<size_t>(spec.steps) * spec.repeat;
    if (exposed.size() > timed) exposed.erase(exposed.begin(), exposed.end() - timed);
    info.exposed_communication_ms = rank.collectives->max_over_ranks(summarize(exposed).mean);
    const double step_ms = measured.step_time_ms.median;
    info.exposed_communication_share = step_ms > 0 ? info.exposed_communication_ms / step_ms : 0;
    return info;
  }

  // The timed steps' backward timeline (a graph's: its eager warm-up steps'); later steps (the
  // memory step, a profiled trial) record none.
  StepTimelineInfo timeline(RunSession& session) {
    if (!timeline_) return {};
    synchronize_device(session.device());
    const ResolvedBenchmark& spec = session.benchmark();
    const bool graphed = graphed_ != nullptr;
    const size_t steps = graphed ? static_cast<size_t>(spec.warmup_steps)
                                 : static_cast<size_t>(spec.steps) * spec.repeat;
    StepTimelineInfo info =
        timeline_->summary(steps, graphed ? "eager warm-up steps" : "timed steps");
    if (spec.blocks > 0) info.model_blocks = session.info().capabilities.blocks;
    timeline_->stop();
    return info;
  }

  int64_t samples_per_step_ = 0;
  int64_t train_flops_per_step_ = 0;
  std::unique_ptr<GradientSync> synchronizer_;
  ShardedDataParallel* sharded_ = nullptr;  // synchronizer_, where it shards
  double in_passes_wait_ms_ = 0;
  std::unique_ptr<StepTimeline> timeline_;
  SyntheticBatch batch_;
  std::unique_ptr<TrainingStep> step_;
  std::unique_ptr<GraphedStep> graphed_;
  torch::Tensor loss_;
  ModelParallelWait model_parallel_wait_;
};

const WorkloadRegistration kTrainWorkload{
    {"train", "optimiser steps on a synthetic batch (gpubench train)",
     [](const ResolvedBenchmark& benchmark, const ModelInfo&) {
       return benchmark.task == Task::kTrain;
     },
     [] { return std::make_unique<TrainWorkload>(); }}};

}  // namespace
}  // namespace gpubench
