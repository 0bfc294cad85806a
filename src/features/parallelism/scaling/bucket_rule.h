// DDP's rule for grouping gradients into buckets (torch/nn/parallel/distributed.py, the Reducer),
// on sizes alone, so that the gradient synchronizer (distributed/gradient_buckets.h) and
// `gpubench scale`'s extended timelines (scaling/timeline_extension.h) group alike: gradients in
// the order backward produces them; a new bucket when the open one is full or the dtype changes,
// the first closing at 1 MiB so that communication starts soon after backward does, the rest at
// the cap.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpubench {

inline constexpr int64_t kFirstBucketBytes = 1 << 20;  // DDP's _DEFAULT_FIRST_BUCKET_BYTES

struct BucketedGradient {
  int64_t bytes = 0;
  int dtype = 0;  // any value that differs between dtypes
};

// Per gradient, in the order given, its bucket's index.
std::vector<std::size_t> bucket_of_gradients(const std::vector<BucketedGradient>& gradients,
                                             int64_t bucket_bytes);

}  // namespace gpubench
