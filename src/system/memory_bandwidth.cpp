#include "system/memory_bandwidth.h"

#include <algorithm>
#include <chrono>

#include <torch/torch.h>

namespace gpubench {

double measure_copy_bandwidth_gbs() {
  constexpr int kTimedCopies = 3;
  const int64_t floats = kCopyBandwidthArrayBytes / static_cast<int64_t>(sizeof(float));
  const torch::Tensor source = torch::ones({floats});
  torch::Tensor destination = torch::empty({floats});
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
