#include "distributed/gradient_buckets.h"

#include <algorithm>
#include <numeric>
#include <set>

namespace gpubench {

int64_t GradientBuckets::total_bytes() const {
  return std::accumulate(bytes.begin(), bytes.end(), int64_t{0});
}

GradientBuckets assign_gradient_buckets(const std::vector<torch::Tensor>& parameters,
                                        int64_t bucket_bytes) {
  GradientBuckets buckets;
  std::set<const void*> seen;
  std::vector<BucketedGradient> gradients;
  for (auto it = parameters.rbegin(); it != parameters.rend(); ++it) {
    if (!it->requires_grad() || !seen.insert(it->unsafeGetTensorImpl()).second) continue;
    buckets.parameters.push_back(*it);
    gradients.push_back({it->numel() * static_cast<int64_t>(it->element_size()),
                         static_cast<int>(it->scalar_type())});
  }
  buckets.bucket_of = bucket_of_gradients(gradients, bucket_bytes);
  for (size_t p = 0; p < gradients.size(); ++p) {
    const size_t bucket = buckets.bucket_of[p];
    if (bucket == buckets.members.size()) {
      buckets.members.emplace_back();
      buckets.bytes.push_back(0);
    }
    buckets.members[bucket].push_back(p);
    buckets.bytes[bucket] += gradients[p].bytes;
  }
  return buckets;
}

}  // namespace gpubench
