#include "system/memory_bandwidth.h"

#include <algorithm>
#include <chrono>

#include <torch/torch.h>

#include "common/log.h"

namespace gpubench {

double measure_copy_bandwidth_gbs() {
  constexpr int kTimedCopies = 3;
  const int64_t floats = kCopyBandwidthArrayBytes / static_cast<int64_t>(sizeof(float));
  torch::Tensor source, destination;
  try {
    source = torch::ones({floats});
    destination = torch::empty({floats});
  } catch (const std::exception&) {
    log::warn("no CPU bandwidth for the decode ceiling: its copy's arrays could not be allocated");
    return 0;
  }
  destination.copy_(source);  // touches the pages
  double best_s = 0;
  for (int i = 0; i < kTimedCopies; ++i) {
    const auto start = std::chrono::steady_clock::now();
    destination.copy_(source);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best_s = i == 0 ? seconds : std::min(best_s, seconds);
  }
  return best_s > 0 ? 2.0 * static_cast<double>(kCopyBandwidthArrayBytes) / best_s / 1e9 : 0;
}

}  // namespace gpubench
