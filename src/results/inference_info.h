// An inference run's figures beside its throughput: the result's metrics.inference block
// (docs/inference.md). Measuring them is infer/'s job.
#pragma once

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpubench {

// Milliseconds per request over the timed requests; percentiles interpolate linearly between
// order statistics (numpy's default), as results/statistics.h does.
struct LatencySummary {
  int64_t count = 0;
  double p50 = 0, p90 = 0, p99 = 0, max = 0, mean = 0;
};
LatencySummary summarize_latency(const std::vector<double>& milliseconds);

struct InferenceMetrics {
  bool present = false;
  // One request: a forward pass of the batch, or a whole generation (prompt and every generated
  // token), synchronised at both ends.
  LatencySummary request_latency_ms;
  // Generation only (0 and empty for the other models).
  double prefill_tokens_per_second = 0;  // prompt tokens of the batch over time to first token
  double decode_tokens_per_second = 0;   // tokens generated one at a time over their time
  LatencySummary time_to_first_token_ms;
  LatencySummary time_per_output_token_ms;  // each decode step, synchronised
  // How the weights were held and multiplied where not simply in the precision's dtype:
  // "mxfp4 (dequantised; native FP4 needs compute capability 10.0)".
  std::string weights_held;
  int64_t kv_cache_bytes = 0;            // preallocated for prompt + generated tokens
  int64_t kv_cache_bytes_per_token = 0;  // per token of one sequence, every layer
  bool kv_cache_reallocated = false;     // checked after every generation
  // The cache is held in another dtype than attention computes in (--kv-cache fp8), so every
  // decode step converts what attention reads: capacity bought with decode time (docs/fp8.md).
  bool kv_cache_converted_per_step = false;
  // Bytes of the weights the linear products read in one decode step, over the sequences it
  // decodes: what a memory-bound decode moves per token (docs/fp8.md).
  int64_t weight_bytes_per_decoded_token = 0;
  // The decode ceiling (docs/inference.md#the-decode-ceiling): the bytes a decoded token must read
  // (its share of the weights, and its sequence's key/value cache at the mean context of the
  // decode), the memory bandwidth (the datasheet's for a GPU, the measured copy's for the CPU),
  // the tokens/s they allow over every rank, and the share of it reached. 0 where no bandwidth
  // is known (an unmatched GPU).
  int64_t bytes_per_decoded_token = 0;
  double ceiling_bandwidth_gbs = 0;
  std::string ceiling_bandwidth_source;  // "datasheet H200-SXM" or "measured (CPU copy)"
  double decode_ceiling_tokens_per_second = 0;
  double decode_ceiling_fraction = 0;
  // The kernels a decode step launches, counted by the device in the CUDA graph of the step that
  // graph mode captures (one step decodes a token of every sequence); 0 where not counted (eager
  // mode, the CPU, a LibTorch before 2.8).
  int64_t kernels_per_decode_step = 0;
};

nlohmann::json inference_to_json(const InferenceMetrics& metrics);
InferenceMetrics inference_from_json(const nlohmann::json& block);  // null: absent; UsageError

}  // namespace gpubench
