#include "results/inference_info.h"

#include <algorithm>
#include <numeric>

#include "common/json_fields.h"
#include "results/json_block.h"
#include "results/statistics.h"

namespace gpubench {
namespace {

using nlohmann::json;

template <typename Io, typename S>
void latency_fields(Io& io, S& s) {
  io.integer("count", s.count);
  io.number("p50", s.p50);
  io.number("p90", s.p90);
  io.number("p99", s.p99);
  io.number("max", s.max);
  io.number("mean", s.mean);
}

json latency_to_json(const LatencySummary& s) {
  return write_block(latency_fields<BlockWriter, const LatencySummary>, s);
}

LatencySummary latency_from_fields(const JsonFields& block, const std::string& key) {
  LatencySummary s;
  read_block(block.object(key), latency_fields<BlockReader, LatencySummary>, s);
  return s;
}

}  // namespace

LatencySummary summarize_latency(const std::vector<double>& milliseconds) {
  LatencySummary s;
  if (milliseconds.empty()) return s;
  s.count = static_cast<int64_t>(milliseconds.size());
  s.p50 = percentile(milliseconds, 0.50);
  s.p90 = percentile(milliseconds, 0.90);
  s.p99 = percentile(milliseconds, 0.99);
  s.max = *std::max_element(milliseconds.begin(), milliseconds.end());
  s.mean = std::accumulate(milliseconds.begin(), milliseconds.end(), 0.0) /
           static_cast<double>(milliseconds.size());
  return s;
}

namespace {

// The request latency always; the rest for the models that generate (a key/value cache).
template <typename Io, typename M>
void inference_fields(Io& io, M& m) {
  io.custom("request_latency_ms", m.request_latency_ms, latency_from_fields, latency_to_json);
  io.integer("kv_cache_bytes", m.kv_cache_bytes, 0, 0, kMaxInteger, Written::kWhenPositive);
  if (m.kv_cache_bytes <= 0) return;
  io.number("prefill_tokens_per_second", m.prefill_tokens_per_second);
  io.number("decode_tokens_per_second", m.decode_tokens_per_second);
  io.custom("time_to_first_token_ms", m.time_to_first_token_ms, latency_from_fields,
            latency_to_json);
  io.custom("time_per_output_token_ms", m.time_per_output_token_ms, latency_from_fields,
            latency_to_json);
  io.integer("kv_cache_bytes_per_token", m.kv_cache_bytes_per_token);
  io.flag("kv_cache_reallocated", m.kv_cache_reallocated);
  io.flag("kv_cache_converted_per_step", m.kv_cache_converted_per_step);
  io.integer("weight_bytes_per_decoded_token", m.weight_bytes_per_decoded_token, 0, 0, kMaxInteger,
             Written::kWhenPositive);
  io.integer("bytes_per_decoded_token", m.bytes_per_decoded_token, 0, 0, kMaxInteger,
             Written::kWhenPositive);
  io.integer("kernels_per_decode_step", m.kernels_per_decode_step, 0, 0, kMaxInteger,
             Written::kWhenPositive);
  if (m.bytes_per_decoded_token <= 0) return;
  io.number("ceiling_bandwidth_gbs", m.ceiling_bandwidth_gbs, 0, 1e9, Written::kWhenPositive);
  io.text("ceiling_bandwidth_source", m.ceiling_bandwidth_source, "", Written::kWhenPositive);
  io.text("weights_held", m.weights_held, "", Written::kWhenPositive);
  io.number("decode_ceiling_tokens_per_second", m.decode_ceiling_tokens_per_second, 0,
            std::numeric_limits<double>::max(), Written::kWhenPositive);
  io.number("decode_ceiling_fraction", m.decode_ceiling_fraction, 0, 1e6, Written::kWhenPositive);
}

}  // namespace

json inference_to_json(const InferenceMetrics& m) {
  return write_block(inference_fields<BlockWriter, const InferenceMetrics>, m);
}

InferenceMetrics inference_from_json(const json& block) {
  InferenceMetrics m;
  if (block.is_null()) return m;
  m.present = true;
  read_block(JsonFields(block, "metrics.inference"),
             inference_fields<BlockReader, InferenceMetrics>, m);
  return m;
}

}  // namespace gpubench
