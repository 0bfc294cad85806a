// Autoregressive generation for `gpubench infer`: a key/value cache preallocated for the whole
// generation, and the model's forward pass that appends to it (docs/inference.md).
#pragma once

#include <cstdint>
#include <vector>

#include <torch/torch.h>

namespace gpubench {

// Per layer, keys and values [batch, kv_heads, capacity, head_dim]; positions below `length`
// hold the tokens seen so far. Allocated once: appending writes into it, never reallocates.
struct KvCache {
  std::vector<torch::Tensor> keys, values;
  int64_t capacity = 0;
  int64_t length = 0;
  // Per layer: the positions a sliding-window layer keeps, its keys and values a ring of
  // min(window, capacity) slots (position p in slot p mod slots); 0 for a layer that keeps every
  // position. Empty: no layer has a window.
  std::vector<int64_t> windows;

  // `layers` layers' keys and values [batch, kv_heads, slots, head_dim], zeroed: `capacity`
  // slots, or a windowed layer's ring.
  static KvCache allocate(int64_t layers, int64_t batch, int64_t kv_heads, int64_t capacity,
                          int64_t head_dim, const torch::TensorOptions& options,
                          const std::vector<int64_t>& windows = {});
  // Throws std::logic_error unless `tokens` more positions fit.
  void check_room_for(int64_t tokens) const;

  int64_t bytes() const;
  // Bytes one more token of one sequence adds, over the layers that keep every position (every
  // layer without windows).
  int64_t bytes_per_token() const;
  // Bytes one token of one sequence takes in the windowed layers, while the context is shorter
  // than their windows.
  int64_t window_bytes_per_token() const;
  // The windows' positions (the largest window; 0 without one).
  int64_t window() const;
  // Bytes one sequence's keys and values take at `context` positions: what a decode step reads.
  int64_t bytes_at(int64_t context) const;

  // Keys or values in the dtype `stored` (a tensor of the cache) holds: an FP8 cache
  // (--kv-cache fp8, docs/fp8.md) saturates them to e4m3's range, unscaled (vLLM's default
  // without calibration: scale 1), since a cast past the range gives NaN
  // (kernels::composition::to_cache_dtype).
  static torch::Tensor to_stored(const torch::Tensor& x, const torch::Tensor& stored);
  // Writes `x` (batch, heads, tokens, head dim) into `stored` at the positions `position` holds
  // along dim 2, in place: graph mode's static decode, whose position lives on the device.
  static void write_at(const torch::Tensor& stored, const torch::Tensor& position,
                       const torch::Tensor& x);
  // What the cache holds in `dtype`, the attention's: the same tensor where they agree.
  static torch::Tensor to_compute(const torch::Tensor& stored, torch::ScalarType dtype);
};

// A causal language model's synthetic batch: `batch` sequences of `tokens` ids below `vocab`,
// each position's target the next token (drawn with them).
struct NextTokenBatch {
  torch::Tensor inputs, targets;  // long [batch, tokens]
};
NextTokenBatch next_token_batch(int64_t vocab, int64_t batch, int64_t tokens, torch::Device device);

class TextGenerator {
 public:
  virtual ~TextGenerator() = default;
  virtual KvCache allocate_cache(int64_t batch, int64_t capacity, torch::Device device,
                                 torch::ScalarType dtype) = 0;
  // Runs `tokens` [batch, n] at positions cache.length.. (appending their keys and values) and
  // returns the logits of the last position [batch, vocab]. n > 1 only for the prompt, into an
  // empty cache.
  virtual torch::Tensor next_token_logits(const torch::Tensor& tokens, KvCache& cache) = 0;
  // One token per sequence [batch, 1] at `position` (a long device tensor [1]) with shapes that
  // do not depend on it (attention over the whole cache, masked past the position), so that a
  // CUDA graph can capture the step and replay it for every position; leaves cache.length to the
  // caller. Gives what next_token_logits gives for a token at cache.length.
  virtual torch::Tensor next_token_logits_at(const torch::Tensor& token,
                                             const torch::Tensor& position, KvCache& cache) = 0;
  // Logits of the last position recomputed from the whole sequence, without a cache (the
  // reference the cached path must agree with).
  virtual torch::Tensor last_logits_without_cache(const torch::Tensor& tokens) = 0;
  // Whether a decode step converts a cache held in `cache` to `compute` for attention, in each
  // layer (capacity bought with time): where they differ, unless the model's attention reads the
  // cache as it is stored (gpubench's CUDA decode attention reads FP8).
  virtual bool decode_converts_cache(torch::Device device, torch::ScalarType cache,
                                     torch::ScalarType compute) const {
    (void)device;
    return cache != compute;
  }
  virtual int64_t vocab_size() const = 0;
  // The longest sequence (prompt and generated tokens) the model has positions for.
  virtual int64_t context_length() const = 0;
};

}  // namespace gpubench
