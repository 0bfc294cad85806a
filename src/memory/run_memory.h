// A run's memory figures, as every runner records them (docs/memory.md).
#pragma once

#include <cstdint>

#include <torch/torch.h>

#include "results/result.h"

namespace gpubench {

// The peak of the run: the CUDA caching allocator's, or on the CPU the process's max RSS.
void record_peak_memory(torch::Device device, Metrics& metrics);

// A report of `basis` whose breakdown adds up to `peak`: `other` is what the parts leave.
MemoryReport memory_report(torch::Device device, const char* basis, int64_t peak,
                           const MemoryBreakdown& parts);

}  // namespace gpubench
