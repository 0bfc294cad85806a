// Where this process sits in a data-parallel run, read from the launcher's environment:
// torchrun (RANK, WORLD_SIZE, LOCAL_RANK, ...), Slurm's srun (SLURM_PROCID, ...), Open MPI's
// mpirun (OMPI_COMM_WORLD_*), or gpubench's own launcher, which sets torchrun's variables.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "common/environment.h"

namespace gpubench {

struct LaunchEnvironment {
  std::string launcher;  // "torchrun", "slurm", "mpi" or "gpubench"
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  // The TCPStore server is hosted by the launcher (torchrun's agent, gpubench's own launcher),
  // so every rank connects as a client; otherwise rank 0 hosts it.
  bool store_hosted_by_launcher = false;
  // GLOO_SOCKET_IFNAME: the interface CPU ranks use across machines; empty: decided by the run.
  std::string gloo_interface;
  // gpubench's launcher only: where this rank writes its result (GPUBENCH_RANK_RESULTS).
  std::string rank_results_folder;
};

// The launch this process belongs to, or nothing when no launcher started it (or Slurm or MPI
// started it as their only task; torchrun's variables with WORLD_SIZE=1 do make a group of one).
// Throws UsageError for an environment that is set but inconsistent.
std::optional<LaunchEnvironment> detect_launch_environment(const EnvironmentLookup& lookup);

// The first host of a Slurm node list: "gpu[03-04,07],cpu1" -> "gpu03"; "" for "". Throws
// UsageError for anything that is not a node list (an unclosed '[', an empty entry, a character
// no host name has), rather than take it as a host name and wait on it for the whole timeout.
std::string first_slurm_host(const std::string& node_list);

}  // namespace gpubench
