#include "features/parallelism/scaling/bucket_rule.h"

#include <algorithm>

namespace gpubench {

std::vector<size_t> bucket_of_gradients(const std::vector<BucketedGradient>& gradients,
                                        int64_t bucket_bytes) {
  std::vector<size_t> bucket_of;
  size_t buckets = 0;
  int64_t filled = 0;
  for (size_t i = 0; i < gradients.size(); ++i) {
    // The cap of the bucket being filled: the first one closes early.
    const int64_t cap = buckets == 1 ? std::min(kFirstBucketBytes, bucket_bytes) : bucket_bytes;
    if (buckets == 0 || filled >= cap || gradients[i].dtype != gradients[i - 1].dtype) {
      ++buckets;
      filled = 0;
    }
    bucket_of.push_back(buckets - 1);
    filled += gradients[i].bytes;
  }
  return bucket_of;
}

}  // namespace gpubench
