#include "memory/run_memory.h"

#include <algorithm>

#include "memory/tensor_memory.h"

namespace gpubench {

void record_peak_memory(torch::Device device, Metrics& metrics) {
  if (device.is_cuda()) {
    metrics.peak_memory_bytes = tensor_memory::peak_allocated_bytes(device);
    metrics.peak_memory_source = tensor_memory::peak_source(device);
    return;
  }
  metrics.peak_memory_bytes = tensor_memory::process_peak_rss_bytes();
  metrics.peak_memory_source = "process max RSS (CPU run: includes the whole process)";
}

MemoryReport memory_report(torch::Device device, const char* basis, int64_t peak,
                           const MemoryBreakdown& parts) {
  MemoryReport report;
  report.basis = basis;
  report.breakdown = parts;
  report.breakdown.other = 0;
  // The parts are counted at one moment and the peak read at another: where the parts add up
  // to more (activations measured across a step whose peak came earlier), the peak is at least
  // their sum and nothing is "other", never a negative amount.
  report.peak_bytes = std::max(peak, report.breakdown.total());
  report.breakdown.other = report.peak_bytes - report.breakdown.total();
  report.peak_source = tensor_memory::peak_source(device);
  report.peak_reserved_bytes = tensor_memory::peak_reserved_bytes(device);
  if (!device.is_cuda()) report.peak_rss_bytes = tensor_memory::process_peak_rss_bytes();
  return report;
}

}  // namespace gpubench
