#include "infer/greedy_generation.h"

#include <chrono>

#include "torch_support/device_timers.h"

namespace gpubench {
namespace {

std::vector<const void*> storages_of(const KvCache& cache) {
  std::vector<const void*> pointers;
  for (const auto* tensors : {&cache.keys, &cache.values}) {
    for (const torch::Tensor& t : *tensors) pointers.push_back(t.data_ptr());
  }
  return pointers;
}

double milliseconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

Generation generate_greedy(TextGenerator& model, KvCache& cache, const torch::Tensor& prompt,
                           int64_t gen_len, torch::Device device, StaticDecode* decode,
                           const std::function<void()>& after_prefill) {
  Generation out;
  cache.length = 0;
  const std::vector<const void*> storages = storages_of(cache);
  std::vector<torch::Tensor> tokens;
  tokens.reserve(static_cast<size_t>(gen_len));
  synchronize_device(device);
  const auto start = std::chrono::steady_clock::now();
  torch::Tensor next = model.next_token_logits(prompt, cache).argmax(-1, /*keepdim=*/true);
  tokens.push_back(next);
  synchronize_device(device);
  out.time_to_first_token_ms = milliseconds_since(start);
  if (after_prefill) after_prefill();
  for (int64_t i = 1; i < gen_len; ++i) {
    const auto step_start = std::chrono::steady_clock::now();
    next = decode ? decode->step(next).clone()
                  : model.next_token_logits(next, cache).argmax(-1, /*keepdim=*/true);
    tokens.push_back(next);
    synchronize_device(device);
    out.decode_step_ms.push_back(milliseconds_since(step_start));
  }
  out.total_ms = milliseconds_since(start);
  out.cache_reallocated = storages_of(cache) != storages;
  out.tokens = torch::cat(tokens, 1);
  return out;
}

torch::Tensor generate_greedy_without_cache(TextGenerator& model, const torch::Tensor& prompt,
                                            int64_t gen_len) {
  torch::Tensor sequence = prompt;
  for (int64_t i = 0; i < gen_len; ++i) {
    const torch::Tensor next =
        model.last_logits_without_cache(sequence).argmax(-1, /*keepdim=*/true);
    sequence = torch::cat({sequence, next}, 1);
  }
  return sequence.narrow(1, prompt.size(1), gen_len);
}

}  // namespace gpubench
