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
  int64_t filled = 0;
  for (auto it = parameters.rbegin(); it != parameters.rend(); ++it) {
    if (!it->requires_grad() || !seen.insert(it->unsafeGetTensorImpl()).second) continue;
    const int64_t bytes = it->numel() * static_cast<int64_t>(it->element_size());
    // The cap of the bucket being filled: the first one closes early.
    const int64_t cap =
        buckets.members.size() == 1 ? std::min(kFirstBucketBytes, bucket_bytes) : bucket_bytes;
    const bool new_bucket =
        buckets.members.empty() || filled >= cap ||
        buckets.parameters[buckets.members.back().front()].scalar_type() != it->scalar_type();
    if (new_bucket) {
      buckets.members.emplace_back();
      buckets.bytes.push_back(0);
      filled = 0;
    }
    buckets.members.back().push_back(buckets.parameters.size());
    buckets.bucket_of.push_back(buckets.members.size() - 1);
    buckets.parameters.push_back(*it);
    buckets.bytes.back() += bytes;
    filled += bytes;
  }
  return buckets;
}

}  // namespace gpubench
