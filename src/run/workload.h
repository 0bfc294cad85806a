// A workload: what one kind of run does on the device, plugged into the run's lifecycle
// (run/run_session.h) the way nccl-tests plugs each collective into one harness. The session
// owns everything runs have in common (device, policy, seed, limits, building and placing the
// model, telemetry, the failure's classification, the datasheet, the duration, the result's
// common blocks); a workload fills in the functions below and registers itself by name
// (WorkloadRegistration), so that the session never names one.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "modeling/model_registry.h"
#include "results/result.h"
#include "run/measurement.h"
#include "spec/benchmark.h"
#include "torch_support/step_timer.h"

namespace gpubench {

class RunSession;

class Workload {
 public:
  virtual ~Workload() = default;

  // Before anything runs: what the result says of this workload (its unit, its optimiser).
  virtual void describe(RunSession&) {}
  // The model counted from its configuration, before it is built: a workload that can tell
  // throws OutOfMemoryBeforeRun (run/run_session.h) for a run that cannot fit.
  virtual void check_counted(RunSession&, const ModelStats&) {}
  // The model's sizes and FLOPs into the result, once it is built.
  virtual void record_counts(RunSession&, const ModelStats& stats) = 0;
  // After the model is built and placed, before the device's peak is reset: what the steps
  // need (an optimiser, a batch, the ranks' weights in step).
  virtual void prepare(RunSession&) = 0;
  // After the peak is reset: what comes just before the first step (a graph capture) and the
  // trials' plan, whose samples_per_step is the items one step processes (global).
  virtual TrialPlan start(RunSession&) = 0;
  // One step (untimed in the warm-up, timed in a trial).
  virtual void step() = 0;
  // The trials: by default measure_trials over step(); a workload that times parts of a step
  // (generation: its decode steps) measures itself.
  virtual Measurement measure(RunSession& session, const TrialPlan& plan, StepTimer& timer,
                              const MeasurementHooks& hooks);
  // The workload's metrics beyond the trials, throughput and step times the session records.
  virtual void fill_metrics(RunSession&, const Measurement&) {}
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
