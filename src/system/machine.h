// What this machine offers a benchmark: CUDA devices and CPU cores, read in one place.
#pragma once

namespace gpubench {

struct MachineFacts {
  bool cuda_available = false;
  int cuda_device_count = 0;
  int cpu_cores = 1;
  // Ranks of this run on this machine: 0 when gpubench starts all of them here. Under a
  // launcher that binds one device to each task a single visible CUDA device is enough.
  int local_ranks = 0;
};

// Asks LibTorch's CUDA runtime (and the OS for cores) once per call.
MachineFacts read_machine_facts(int local_ranks = 0);

}  // namespace gpubench
