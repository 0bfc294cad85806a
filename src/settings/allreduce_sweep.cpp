#include "settings/allreduce_sweep.h"

#include <string>

#include "common/errors.h"
#include "common/input_limits.h"

namespace gpubench {

void validate_sweep(const AllreduceSweep& sweep) {
  if (sweep.min_bytes < kSweepElementBytes) {
    throw UsageError("--min-bytes must be at least 4 (one float32), got " +
                     std::to_string(sweep.min_bytes));
  }
  if (sweep.max_bytes < sweep.min_bytes) {
    throw UsageError("--max-bytes " + std::to_string(sweep.max_bytes) + " is below --min-bytes " +
                     std::to_string(sweep.min_bytes));
  }
  if (sweep.factor < 2 || sweep.factor > kMaxSweepFactor) {
    throw UsageError("--factor must be from 2 to " + std::to_string(kMaxSweepFactor) + ", got " +
                     std::to_string(sweep.factor));
  }
  if (sweep.iters < 1 || sweep.warmup_iters < 0 || sweep.iters > kMaxSweepIterations ||
      sweep.warmup_iters > kMaxSweepIterations) {
    throw UsageError("--iters must be positive and --warmup-iters zero or more, got " +
                     std::to_string(sweep.iters) + " and " + std::to_string(sweep.warmup_iters));
  }
}

std::vector<int64_t> allreduce_sizes(const AllreduceSweep& sweep) {
  std::vector<int64_t> sizes;
  // Sizes are at most 1 TiB (parse_byte_size) and the factor at most 1024, so the product
  // fits; it is still checked, as every size arithmetic on input is.
  for (int64_t bytes = sweep.min_bytes; bytes <= sweep.max_bytes;
       bytes = checked_multiply(bytes, sweep.factor, "the all-reduce size")) {
    sizes.push_back(bytes / kSweepElementBytes * kSweepElementBytes);
  }
  return sizes;
}

}  // namespace gpubench
