// One run's lifecycle, written once for every workload (docs/development.md, "One run"):
//   setup        device, precision policy and its flags, threads, seed (DeviceSetup); memory limit
//   result       the benchmark, the model's facts, the system, the ranks (result_for)
//   model        counted from its configuration where it can be, checked, built, placed
//   workload     prepare; the peak reset; start; the trials inside telemetry windows
//   metrics      trials, throughput, step times; the workload's own; peak memory and its parts
//   failure      out of memory (planned, or raised) or failed, with the memory at the failure
//   end          the memory limit lifted, the datasheet, the duration
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include <torch/torch.h>

#include "features/parallelism/split_layers.h"
#include "modeling/model_registry.h"
#include "results/result.h"
#include "run/device_setup.h"
#include "run/run_setup.h"
#include "run/workload.h"
#include "settings/benchmark.h"

namespace gpubench {

// A run refused before its model is built: its certain bytes do not fit (`planned` says which).
class OutOfMemoryBeforeRun : public std::runtime_error {
 public:
  OutOfMemoryBeforeRun(const std::string& why, MemoryReport planned)
      : std::runtime_error(why), planned(std::move(planned)) {}
  MemoryReport planned;
};

class RunSession {
 public:
  RunSession(const ResolvedBenchmark& benchmark, const RunSetup& run_setup);
  ~RunSession();  // lifts the memory limit
  RunSession(const RunSession&) = delete;
  RunSession& operator=(const RunSession&) = delete;

  // Never throws for a run-time failure: an out-of-memory gives status oom, anything else
  // status failed, both with the error text.
  Result run(Workload& workload);

  // What the workloads use.
  const ResolvedBenchmark& benchmark() const { return benchmark_; }
  const RunSetup& run_setup() const { return run_setup_; }
  // The host memory this run may take: its setup's share, else MemAvailable; unset where
  // neither can be read.
  std::optional<int64_t> host_memory() const;
  const RankPlacement& rank() const { return run_setup_.rank; }
  const ModelInfo& info() const { return device_setup_.info(); }
  torch::Device device() const { return device_setup_.device(); }
  const PrecisionPolicy& policy() const { return device_setup_.policy(); }
  int world_size() const;
  // Model replicas, each with its own batch: the world over --tensor-parallel.
  int replica_count() const { return world_size() / benchmark_.tensor_parallel; }
  const ModelOptions& model_options() const { return options_; }
  // The result as far as the session has written it (the benchmark, the model's counts, the
  // placement); a workload reads it, never writes it.
  const Result& result() const { return result_; }
  // Built and placed (from the workload's counts on); null before.
  TrainableModel* model() { return model_.get(); }

 private:
  void build_model(Workload& workload);
  void record_description(const WorkloadDescription& description);
  void record_figures(const WorkloadFigures& figures);
  void measure(Workload& workload);
  void record_failure(Workload& workload, const std::exception& error);

  const ResolvedBenchmark& benchmark_;
  const RunSetup& run_setup_;
  const std::chrono::steady_clock::time_point started_;
  DeviceSetup device_setup_;
  Result result_;
  ModelOptions options_;
  parallelism::SplitLayers split_layers_;  // outlives the model placed over it
  std::unique_ptr<TrainableModel> model_;
};

// The result before any measurement: the benchmark, its planned placement (planned_result),
// the model's facts, the unit, the system as it is now. A session starts from it, and a parent
// records a child that died with it (failed_result_for), so both are built alike.
Result result_for(const ResolvedBenchmark& benchmark);

}  // namespace gpubench
