#include "memory/inference_fit.h"

#include <algorithm>
#include <cmath>

#include "settings/setting_values.h"

namespace gpubench {

MemoryBreakdown InferenceMemoryFit::breakdown_at(int64_t batch, int64_t context) const {
  const int64_t prompt = std::max<int64_t>(1, context - gen_len);
  MemoryBreakdown m;
  m.weights = weights;
  m.other = kv_cache_bytes_at(context) * batch;
  // The prompt's pass runs into a cache of the whole context; a decode step's longest read is
  // the last one's, at context - 1 tokens.
  double prefill = prefill_extra.at(batch, prompt);
  if (prefill_scores) {
    prefill = std::max(prefill, prefill_at_scores.at(batch, prompt) +
                                    static_cast<double>(prefill_scores(batch, prompt)));
  }
  const double transient = std::max(prefill, decode_extra.at(batch, context - 1));
  // The generated tokens (int64), which the probes do not hold: a step's list, the joined
  // [batch, gen] tensor and the generation before it (infer/greedy_generation.h).
  const auto tokens = static_cast<double>(3 * sizeof(int64_t) * batch * gen_len);
  m.activations = std::max<int64_t>(0, std::llround(transient + tokens));
  return m;
}

int64_t InferenceMemoryFit::max_batch(int64_t capacity) const {
  return largest_fitting(largest_batch_size(),
                         [&](int64_t batch) { return peak_at(batch, context()) <= capacity; });
}

int64_t InferenceMemoryFit::max_context(int64_t capacity, int64_t batch) const {
  constexpr int64_t kLongest = int64_t{1} << 21;  // prompt_len's bound and the generation's
  const int64_t longest = context_limit > 0 ? context_limit : kLongest;
  const int64_t shortest = gen_len + 1;
  if (shortest > longest) return 0;
  // Searched as the tokens past the generation's, so that 0 is "none".
  const int64_t extra = largest_fitting(longest - gen_len, [&](int64_t prompt) {
    return peak_at(batch, gen_len + prompt) <= capacity;
  });
  return extra > 0 ? gen_len + extra : 0;
}

}  // namespace gpubench
