// A run's memory figures, as every run records them (docs/memory.md), and the host's available
// memory, which runs and fit's probes are checked against.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <torch/torch.h>

#include "results/memory_info.h"

namespace gpubench {

struct PeakMemory {
  int64_t bytes = 0;
  std::string source;  // what measured it
};

// The peak of the run: the CUDA caching allocator's, or on the CPU the process's max RSS.
PeakMemory run_peak_memory(torch::Device device);

// A report of `basis` whose breakdown adds up to `peak`: `other` is what the parts leave.
MemoryReport memory_report(torch::Device device, const char* basis, int64_t peak,
                           const MemoryBreakdown& parts);

// MemAvailable of /proc/meminfo, in bytes; nullopt where it cannot be read.
std::optional<int64_t> host_available_memory();

}  // namespace gpubench
