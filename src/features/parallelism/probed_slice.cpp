#include "features/parallelism/probed_slice.h"

namespace gpubench::parallelism {

bool splits_at_width(const TensorParallelSplits& split_counts, int64_t ranks, int64_t k,
                     bool keeping_key_value_heads) {
  for (const auto& [what, count] : split_counts) {
    if (what == "vocabulary") continue;
    const bool kept = keeping_key_value_heads && what == kKeyValueHeadsSplit;
    if ((!kept && count % k != 0) || (kept ? count : count / k) % ranks != 0) return false;
  }
  return true;
}

std::string probed_slice(const ResolvedBenchmark& b, int64_t experts) {
  std::string slice;
  if (b.tensor_parallel > 1) {
    slice += ", one tensor-parallel rank's slice of " + std::to_string(b.tensor_parallel) +
             " (its collectives' buffers left out)";
  }
  if (b.expert_parallel > 1) {
    slice += ", one expert-parallel rank's " + std::to_string(experts / b.expert_parallel) +
             " of " + std::to_string(experts) +
             " experts a layer, routed as many tokens as its own (the exchanges' buffers left "
             "out)";
  }
  return slice;
}

}  // namespace gpubench::parallelism
