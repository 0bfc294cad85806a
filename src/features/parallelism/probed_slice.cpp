#include "features/parallelism/probed_slice.h"

#include "features/parallelism/model_parallelism.h"

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

std::string probed_slice(const ResolvedBenchmark& b, const ModelInfo& info) {
  const ModelParallelism* kind = asked_model_parallelism(b);
  return kind ? kind->probed_slice(b, info) : "";
}

}  // namespace gpubench::parallelism
