// Greedy generation with a key/value cache, timed token by token (docs/inference.md): the
// prompt in one forward pass (the prefill, which gives the first token), then one token at a
// time (the decode), each step synchronised so that its time is its own.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include <torch/torch.h>

#include "infer/static_decode.h"
#include "modeling/text_generation.h"

namespace gpubench {

struct Generation {
  torch::Tensor tokens;  // [batch, gen_len]: the first from the prefill, the rest decoded
  double time_to_first_token_ms = 0;
  std::vector<double> decode_step_ms;  // gen_len - 1 steps
  double total_ms = 0;
  // Any of the cache's tensors moved (the cache was reallocated) during the generation.
  bool cache_reallocated = false;
};

// Starts from an empty cache (its length reset, its tensors kept) of at least prompt + gen_len
// positions. With `decode`, the decode steps run through it (the static form, or its CUDA
// graph) instead of at the cache's length.
// `after_prefill`, where given, runs once the prompt pass has finished on the device, before the
// first decode step.
Generation generate_greedy(TextGenerator& model, KvCache& cache, const torch::Tensor& prompt,
                           int64_t gen_len, torch::Device device, StaticDecode* decode = nullptr,
                           const std::function<void()>& after_prefill = {});

// The same tokens by recomputing the whole sequence at every step, with no cache: the reference
// the cached generation must reproduce.
torch::Tensor generate_greedy_without_cache(TextGenerator& model, const torch::Tensor& prompt,
                                            int64_t gen_len);

}  // namespace gpubench
