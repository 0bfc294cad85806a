// A benchmark over several ranks: as one rank of a launcher's run (torchrun, Slurm, MPI or
// gpubench's own), or as gpubench's launcher starting the ranks on this machine.
#pragma once

#include <chrono>
#include <string>

#include <torch/torch.h>

#include "distributed/launch_environment.h"
#include "run/run_benchmark.h"

namespace gpubench {

// Connects to the other ranks and runs the benchmark as this rank. A failed rendezvous or a
// peer that dies or hangs past the benchmark's timeout_s gives a failed result. Only rank 0
// reports progress.
Result run_benchmark_as_rank(const ResolvedBenchmark& resolved, const LaunchEnvironment& launch,
                             RunSetup run_setup = {});

// Where a rank of gpubench's launcher (launch.rank_results_folder set) writes its result, which
// run_local_ranks reads.
std::string rank_result_path(const LaunchEnvironment& launch);

struct LocalRanksOptions {
  std::string executable;  // the gpubench binary the ranks run
  std::string log_level = "info";
  double run_limit_seconds = 0;  // all ranks together; <= 0 for none (a suite's limit)
  bool discard_stdout = false;   // a suite prints one table
};

// Starts resolved.gpus ranks of the child subcommand (launcher/child_command.h) here, each given
// the resolved benchmark as a file, and returns rank 0's result, or a failed result naming the
// first rank that failed and why.
Result run_local_ranks(const ResolvedBenchmark& resolved, const LocalRanksOptions& options);

}  // namespace gpubench
