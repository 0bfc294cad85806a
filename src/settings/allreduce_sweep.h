// The message sizes and iteration counts of `gpubench allreduce` (nccl-tests' -b, -e, -f, -n,
// -w): LibTorch-free, so that gpubench checks them before it becomes gpubench-train.
#pragma once

#include <cstdint>
#include <vector>

namespace gpubench {

// Bounds of a sweep's options: a factor past 1024 skips most sizes, and a million all-reduces
// per size is already hours.
inline constexpr int kMaxSweepFactor = 1024;
inline constexpr int kMaxSweepIterations = 1000000;
inline constexpr int64_t kSweepElementBytes = 4;  // float32

struct AllreduceSweep {
  int64_t min_bytes = 8;
  int64_t max_bytes = 128LL << 20;
  int factor = 2;
  int warmup_iters = 5;
  int iters = 20;
};

// Message sizes from min to max, multiplied by factor, rounded down to whole float32 elements.
std::vector<int64_t> allreduce_sizes(const AllreduceSweep& sweep);
void validate_sweep(const AllreduceSweep& sweep);  // throws UsageError

}  // namespace gpubench
