// A workload: what one kind of run does on the device, plugged into the run's lifecycle
// (run/run_session.h) the way nccl-tests plugs each collective into one harness. The session
// owns everything runs have in common (device, policy, seed, limits, building and placing the
// model, telemetry, the failure's classification, the datasheet, the duration, the result's
// common blocks); a workload fills in the functions below and registers itself by name
// (WorkloadRegistration), so that the session never names one. A workload returns its figures
// and never writes the result: the session alone does.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "features/parallelism/model_parallelism.h"
#include "modeling/model_registry.h"
#include "results/result.h"
#include "run/measurement.h"
#include "settings/benchmark.h"
#include "torch_support/step_timer.h"

namespace gpubench {

class RunSession;

// What the result says of a workload before it runs, and once it is prepared.
struct WorkloadDescription {
  std::optional<std::string> optimizer;  // its text; empty: none (inference); unset: unchanged
  std::string optimizer_impl;            // foreach, fused, ...
  bool inference = false;                // the result carries metrics.inference
};

// The model's figures for the result, from its counts (ModelStats) and the workload's plan.
struct WorkloadCounts {
  int64_t forward_flops_per_sample = 0;
  int64_t train_flops_per_step = 0;  // training: global, every product of a step
};

// What a workload measured beyond the trials, the throughput and the step times (which the
// session records from the Measurement): its metrics (their throughput, trials, step times and
// memory fields are the session's and ignored), its ranks' communication, its timeline.
struct WorkloadFigures {
  Metrics metrics;
  std::optional<DistributedInfo> distributed;  // the gradient sync's shape and cost
  // The model-parallel group's wait (run/model_parallel_wait.h); unset without one.
  std::optional<parallelism::GroupWait> model_parallel_wait;
  StepTimelineInfo timeline;
  double cpu_memory_bandwidth_gbs = 0;  // measured for the system block; 0: not measured
};

class Workload {
 public:
  virtual ~Workload() = default;

  // Whether it trains the model: its trainable parameters count (inference trains none).
  virtual bool trains() const = 0;
  // Before anything runs: what the result says of this workload.
  virtual WorkloadDescription describe(const RunSession&) { return {}; }
  // The model counted from its configuration, before it is built: a workload that can tell
  // throws OutOfMemoryBeforeRun (run/run_session.h) for a run that cannot fit.
  virtual void check_counted(RunSession&, const ModelStats&) {}
  // The model's figures, once it is built (the session records its parameters itself).
  virtual WorkloadCounts counts(RunSession&, const ModelStats& stats) = 0;
  // After the model is built and placed, before the device's peak is reset: what the steps
  // need (an optimiser, a batch, the ranks' weights in step); what the result says of it then.
  virtual WorkloadDescription prepare(RunSession&) = 0;
  // After the peak is reset: what comes just before the first step (a graph capture) and the
  // trials' plan, whose samples_per_step is the items one step processes (global).
  virtual TrialPlan start(RunSession&) = 0;
  // One step (untimed in the warm-up, timed in a trial).
  virtual void step() = 0;
  // The trials: by default measure_trials over step(); a workload that times parts of a step
  // (generation: its decode steps) measures itself.
  virtual Measurement measure(RunSession& session, const TrialPlan& plan, StepTimer& timer,
                              const MeasurementHooks& hooks);
  // After the trials: the workload's figures (WorkloadFigures).
  virtual WorkloadFigures figures(RunSession&, const Measurement&) = 0;
  // The peak and where it went, after the trials.
  virtual MemoryReport memory_breakdown(RunSession&) = 0;
  // The memory when the run ran out of it, where the workload can tell.
  virtual std::optional<MemoryReport> memory_at_failure(RunSession&) { return std::nullopt; }
};

struct WorkloadInfo {
  std::string name;
  std::string summary;
  // Whether this workload runs `benchmark` of the model `info`.
  std::function<bool(const ResolvedBenchmark& benchmark, const ModelInfo& info)> runs;
  std::function<std::unique_ptr<Workload>()> make;
};

class WorkloadRegistry {
 public:
  static WorkloadRegistry& instance();
  void add(WorkloadInfo info);
  // The one workload that runs `benchmark`; std::logic_error when none or several do.
  const WorkloadInfo& for_benchmark(const ResolvedBenchmark& benchmark,
                                    const ModelInfo& info) const;
  const std::vector<WorkloadInfo>& all() const { return workloads_; }

 private:
  std::vector<WorkloadInfo> workloads_;
};

// A static instance of this in a workload's file registers it.
struct WorkloadRegistration {
  explicit WorkloadRegistration(WorkloadInfo info) {
    WorkloadRegistry::instance().add(std::move(info));
  }
};

}  // namespace gpubench
