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

LatencySummary latency_from_json(const JsonFields& f) {
  LatencySummary s;
  read_block(f, latency_fields<BlockReader, LatencySummary>, s);
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

json inference_to_json(const InferenceMetrics& m) {
  json block = {{"request_latency_ms", latency_to_json(m.request_latency_ms)}};
  if (m.kv_cache_bytes > 0) {
    block["prefill_tokens_per_second"] = m.prefill_tokens_per_second;
    block["decode_tokens_per_second"] = m.decode_tokens_per_second;
    block["time_to_first_token_ms"] = latency_to_json(m.time_to_first_token_ms);
    block["time_per_output_token_ms"] = latency_to_json(m.time_per_output_token_ms);
    block["kv_cache_bytes"] = m.kv_cache_bytes;
    block["kv_cache_bytes_per_token"] = m.kv_cache_bytes_per_token;
    block["kv_cache_reallocated"] = m.kv_cache_reallocated;
  }
  return block;
}

InferenceMetrics inference_from_json(const json& block) {
  InferenceMetrics m;
  if (block.is_null()) return m;
  const JsonFields f(block, "metrics.inference");
  m.present = true;
  m.request_latency_ms = latency_from_json(f.object("request_latency_ms"));
  m.prefill_tokens_per_second = f.number("prefill_tokens_per_second");
  m.decode_tokens_per_second = f.number("decode_tokens_per_second");
  if (!f.raw("time_to_first_token_ms").is_null()) {
    m.time_to_first_token_ms = latency_from_json(f.object("time_to_first_token_ms"));
    m.time_per_output_token_ms = latency_from_json(f.object("time_per_output_token_ms"));
  }
  m.kv_cache_bytes = f.integer("kv_cache_bytes");
  m.kv_cache_bytes_per_token = f.integer("kv_cache_bytes_per_token");
  m.kv_cache_reallocated = f.flag("kv_cache_reallocated");
  return m;
}

}  // namespace gpubench
