// `gpubench fit --task infer`'s model of a generation's peak memory per device (docs/memory.md,
// "Inference"): the weights in their format (codes and scales), the key/value cache allocated for
// batch x (prompt + generated) tokens, and the larger of two transient moments above them, each
// measured by probes (infer/inference_fit_probe.h) and scaled: the prompt's pass (the prefill)
// at (batch, prompt length), with the attention's scores the model declares, and a decode step at
// (batch, context).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "memory/fit_prediction.h"
#include "results/memory_info.h"

namespace gpubench {

// One probe: a prompt of `seq` tokens into an empty cache, and a decode step after
// `decode_context` tokens.
struct InferenceProbeReading {
  int64_t blocks = 0;         // 0: the whole model
  int64_t vocab = 0;          // 0: the model's own
  int64_t width_divisor = 1;  // the probe model's width is the model's over this
  int64_t experts = 0;        // a mixture of experts' in each MoE layer; 0: the model's own
  int64_t batch = 0;
  int64_t seq = 0;
  int64_t weights = 0;  // the probe model's, in their format
  int64_t kv_cache = 0;
  // Above the weights and the cache, the prompt included; for a model that declares its
  // attention's scores (ModelInfo::prefill_score_bytes), outside the moments that hold them.
  int64_t prefill_peak_above = 0;
  // Such a model's: what lived beside its scores (above the weights and the cache), and the
  // scores' own peak, as measured (the declared figure's check); each the largest of its layers'.
  int64_t prefill_at_scores_above = 0;
  int64_t prefill_scores = 0;
  int64_t decode_context = 0;  // the decode step's: it reads this many tokens and its own
  int64_t decode_peak_above = 0;
};

struct InferenceMemoryFit {
  // The asked generation: its batch, its prompt's tokens and the tokens it generates.
  int64_t batch_size = 0, prompt_len = 0, gen_len = 0;
  int64_t weights = 0;
  int64_t kv_cache_bytes_per_token = 0;  // one sequence, the layers that keep every position
  // The sliding-window layers' (KvCache::windows): bytes per token up to their window's positions.
  int64_t kv_cache_window_bytes_per_token = 0;
  int64_t kv_cache_window = 0;
  int64_t context_limit = 0;  // the positions the model has (0: no limit)
  BatchSeqFit prefill_extra;  // at (batch, prompt length)
  BatchSeqFit decode_extra;   // at (batch, context)
  // A model that declares its attention's scores (ModelInfo::prefill_score_bytes): the prompt's
  // pass peaks at the larger of prefill_extra and what lives beside the scores (probed, at
  // (batch, prompt length)) plus the scores (declared: probes a few tokens long see none of their
  // growth with the square of the prompt). Unset: prefill_extra alone.
  BatchSeqFit prefill_at_scores;
  std::function<int64_t(int64_t batch, int64_t prompt)> prefill_scores;
  std::string method;
  std::vector<InferenceProbeReading> readings;
  double probe_seconds = 0;

  int64_t context() const { return prompt_len + gen_len; }
  // One sequence's key/value cache at `context` positions.
  int64_t kv_cache_bytes_at(int64_t context) const {
    return kv_cache_bytes_per_token * context +
           kv_cache_window_bytes_per_token * std::min(context, kv_cache_window);
  }
  // weights; other: the cache at batch x context; activations: the larger transient moment.
  MemoryBreakdown breakdown_at(int64_t batch, int64_t context) const;
  int64_t peak_at(int64_t batch, int64_t context) const {
    return breakdown_at(batch, context).total();
  }
  // The largest batch at the asked context whose peak is at most `capacity`; 0: none.
  int64_t max_batch(int64_t capacity) const;
  // The longest context (a longer prompt, the same generation) at `batch` whose peak is at most
  // `capacity`, up to the model's positions; 0: not even one token of prompt.
  int64_t max_context(int64_t capacity, int64_t batch) const;
};

}  // namespace gpubench
