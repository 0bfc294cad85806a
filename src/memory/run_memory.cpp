#include "memory/run_memory.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "memory/tensor_memory.h"

namespace gpubench {

PeakMemory run_peak_memory(torch::Device device) {
  if (device.is_cuda()) {
    return {tensor_memory::peak_allocated_bytes(device), tensor_memory::peak_source(device)};
  }
  return {tensor_memory::process_peak_rss_bytes(),
          "process max RSS (CPU run: includes the whole process)"};
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

std::optional<int64_t> host_available_memory() {
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    std::istringstream fields(line);
    std::string key;
    int64_t kib = 0;
    if (fields >> key >> kib && key == "MemAvailable:") return kib * 1024;
  }
  return std::nullopt;
}

}  // namespace gpubench
