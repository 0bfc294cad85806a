// A benchmark over several ranks: as one rank of a launcher's run (torchrun, Slurm, MPI or
// gpubench's own), or as gpubench's launcher starting the ranks on this machine.
#pragma once

#include <chrono>
#include <string>

#include <torch/torch.h>

#include "gpubench/benchmark_runner.h"
#include "gpubench/launch_environment.h"

namespace gpubench {

// Set by gpubench's launcher: the folder where every rank writes rank-N.json.
inline constexpr const char* kRankResultsVariable = "GPUBENCH_RANK_RESULTS";
inline constexpr std::chrono::seconds kDefaultCollectiveTimeout{300};

// This rank's device: the CUDA device of its local rank (or the only one visible, when the
// launcher binds one device to each task), made current; the CPU otherwise.
torch::Device device_for_rank(DeviceKind kind, const LaunchEnvironment& launch);

// Connects to the other ranks and runs the benchmark as this rank. A failed rendezvous or a
// peer that dies or hangs past `timeout` gives a failed result.
Result run_benchmark_as_rank(const BenchmarkSpec& resolved, const LaunchEnvironment& launch,
                             std::chrono::milliseconds timeout,
                             const ProgressCallback& progress = {});

// Where this rank writes its result: every rank under gpubench's launcher (which reads them),
// otherwise rank 0 only, at `output_path`; empty for a rank that writes none.
std::string rank_result_path(const LaunchEnvironment& launch, const std::string& output_path);

struct LocalRanksOptions {
  std::string executable;  // the gpubench binary the ranks run
  std::string log_level = "info";
  std::chrono::milliseconds timeout = kDefaultCollectiveTimeout;
  std::string result_path;  // the run's result file
};

// Starts resolved.gpus ranks of `gpubench train` here and returns rank 0's result, or a failed
// result naming the first rank that failed and why.
Result run_local_ranks(const BenchmarkSpec& resolved, const LocalRanksOptions& options);

}  // namespace gpubench
