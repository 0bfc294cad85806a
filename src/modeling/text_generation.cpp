#include "modeling/text_generation.h"

#include <algorithm>

#include "kernels/fused_compositions.h"

namespace gpubench {

KvCache KvCache::allocate(int64_t layers, int64_t batch, int64_t kv_heads, int64_t capacity,
                          int64_t head_dim, const torch::TensorOptions& options,
                          const std::vector<int64_t>& windows) {
  KvCache cache;
  cache.capacity = capacity;
  cache.windows = windows;
  for (int64_t i = 0; i < layers; ++i) {
    const int64_t window = windows.empty() ? 0 : windows.at(static_cast<size_t>(i));
    const int64_t slots = window > 0 ? std::min(window, capacity) : capacity;
    for (auto* tensors : {&cache.keys, &cache.values}) {
      tensors->push_back(torch::zeros({batch, kv_heads, slots, head_dim}, options));
    }
  }
  return cache;
}

void KvCache::check_room_for(int64_t tokens) const {
  if (length + tokens > capacity) {
    throw std::logic_error("the key/value cache holds " + std::to_string(capacity) +
                           " positions; " + std::to_string(length + tokens) + " asked");
  }
}

NextTokenBatch next_token_batch(int64_t vocab, int64_t batch, int64_t tokens,
                                torch::Device device) {
  const torch::Tensor ids = torch::randint(
      vocab, {batch, tokens + 1}, torch::TensorOptions().device(device).dtype(torch::kLong));
  return {ids.narrow(1, 0, tokens).contiguous(), ids.narrow(1, 1, tokens).contiguous()};
}

namespace {

// One layer's keys and values for one position of one sequence.
int64_t layer_bytes_per_token(const torch::Tensor& keys, const torch::Tensor& values) {
  const int64_t positions = keys.size(0) * keys.size(2);
  if (positions == 0) return 0;
  return (keys.numel() * keys.element_size() + values.numel() * values.element_size()) / positions;
}

}  // namespace

int64_t KvCache::bytes() const {
  int64_t total = 0;
  for (const auto* tensors : {&keys, &values}) {
    for (const torch::Tensor& t : *tensors) total += t.numel() * t.element_size();
  }
  return total;
}

namespace {

// Bytes one token of one sequence takes in the layers with a window, or in those without.
int64_t per_token_bytes(const KvCache& cache, bool windowed) {
  int64_t total = 0;
  for (size_t i = 0; i < cache.keys.size(); ++i) {
    const bool has_window = !cache.windows.empty() && cache.windows[i] > 0;
    if (has_window == windowed) total += layer_bytes_per_token(cache.keys[i], cache.values[i]);
  }
  return total;
}

}  // namespace

int64_t KvCache::bytes_per_token() const {
  return per_token_bytes(*this, false);
}

int64_t KvCache::window_bytes_per_token() const {
  return per_token_bytes(*this, true);
}

int64_t KvCache::window() const {
  return windows.empty() ? 0 : *std::max_element(windows.begin(), windows.end());
}

int64_t KvCache::bytes_at(int64_t context) const {
  int64_t total = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    const int64_t window = windows.empty() ? 0 : windows[i];
    const int64_t positions = window > 0 ? std::min(window, context) : context;
    total += layer_bytes_per_token(keys[i], values[i]) * positions;
  }
  return total;
}

torch::Tensor KvCache::to_stored(const torch::Tensor& x, const torch::Tensor& stored) {
  return kernels::composition::to_cache_dtype(x, stored);
}

void KvCache::write_at(const torch::Tensor& stored, const torch::Tensor& position,
                       const torch::Tensor& x) {
  kernels::composition::write_cache_at_composition(stored, position, x);
}

torch::Tensor KvCache::to_compute(const torch::Tensor& stored, torch::ScalarType dtype) {
  return stored.to(dtype);
}

}  // namespace gpubench
