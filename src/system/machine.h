// What this machine offers a benchmark: CUDA devices and CPU cores, read in one place.
#pragma once

#include <string>

namespace gpubench {

struct MachineFacts {
  bool cuda_available = false;
  int cuda_device_count = 0;
  int cpu_cores = 1;
  // The first CUDA device's name and compute capability (major * 10 + minor: 89 for Ada, 90 for
  // Hopper); empty and 0 without one.
  std::string cuda_device_name;
  int cuda_compute_capability = 0;
  // Ranks of this run on this machine: 0 when gpubench starts all of them here. Under a
  // launcher that binds one device to each task a single visible CUDA device is enough.
  int local_ranks = 0;
};

// Asks LibTorch's CUDA runtime (and the OS for cores) once per call.
MachineFacts read_machine_facts(int local_ranks = 0);

// The value of the first CPU's line `name` in /proc/cpuinfo ("model name", "flags"); "" where
// there is none or the file cannot be read.
std::string cpuinfo_field(const std::string& name);

// Whether /proc/cpuinfo lists `flag` (as "avx512bw") for the first CPU; false where it cannot be
// read.
bool cpu_has_flag(const std::string& flag);

// A compute capability as NVIDIA writes it: 90 is "9.0".
std::string compute_capability_text(int capability);

}  // namespace gpubench
