// A run's telemetry: each rank samples its own GPU through NVML; on the CPU, rank 0 reads the
// host's RAPL package energy (shared by every rank on the host, so read once). The report is
// gathered over the ranks.
#pragma once

#include <memory>

#include "results/telemetry_info.h"
#include "run/run_setup.h"
#include "settings/benchmark.h"
#include "telemetry/telemetry_recorder.h"

namespace gpubench {

class RunTelemetry {
 public:
  RunTelemetry(const ResolvedBenchmark& spec, const RankPlacement& rank);
  void window_opened();
  void window_closed();
  // Collective on a GPU run with several ranks: every rank calls it.
  TelemetryReport report(double timed_samples);

 private:
  const RankPlacement& rank_;
  std::string source_name_;
  int interval_ms_ = 0;
  bool gathered_ = false;  // one device per rank (GPUs), or rank 0's host (CPU)
  std::unique_ptr<TelemetryRecorder> recorder_;
  std::string reason_;  // why recorder_ is null
};

}  // namespace gpubench
