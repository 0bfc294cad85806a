#include "results/memory_info.h"

#include <cmath>
#include <cstdio>
#include <limits>

#include "common/json_fields.h"
#include "results/json_block.h"

namespace gpubench {

using nlohmann::json;

namespace {

constexpr int64_t kLowest = std::numeric_limits<int64_t>::min();

template <typename Io, typename B>
void breakdown_fields(Io& io, B& b) {
  io.integer("weights", b.weights);
  io.integer("gradients", b.gradients);
  io.integer("optimizer_states", b.optimizer_states);
  io.integer("activations", b.activations);
  io.integer("other", b.other, 0, kLowest);
}

// The breakdown's keys sit beside these in one block.
template <typename Io, typename R>
void memory_fields(Io& io, R& r) {
  breakdown_fields(io, r.breakdown);
  io.text("basis", r.basis);
  io.integer("peak_bytes", r.peak_bytes);
  io.text("peak_source", r.peak_source);
  io.integer("peak_reserved_bytes", r.peak_reserved_bytes, 0, 0, kMaxInteger,
             Written::kWhenPositive);
  io.integer("peak_rss_bytes", r.peak_rss_bytes, 0, 0, kMaxInteger, Written::kWhenPositive);
}

template <typename Io, typename P>
void probe_fields(Io& io, P& p) {
  io.integer("batch", p.batch);
  io.text("outcome", p.outcome);
  io.integer("peak_bytes", p.peak_bytes);
  io.text("error", p.error, "", Written::kWhenPositive);
  io.text("oom_cause", p.oom_cause, "", Written::kWhenPositive);
}

template <typename Io, typename S>
void batch_search_fields(Io& io, S& s) {
  io.integer("memory_limit_bytes", s.memory_limit_bytes);
  io.text("memory_limit_source", s.memory_limit_source);
  io.text("memory_limit_caps", s.memory_limit_caps, "", Written::kWhenPositive);
  io.integer("predicted_batch", s.predicted_batch);
  io.integer("found_batch", s.found_batch);
}

}  // namespace

json breakdown_to_json(const MemoryBreakdown& b) {
  return write_block(breakdown_fields<BlockWriter, const MemoryBreakdown>, b);
}

MemoryBreakdown breakdown_from_json(const json& block) {
  MemoryBreakdown b;
  read_block(JsonFields(block, "breakdown"), breakdown_fields<BlockReader, MemoryBreakdown>, b);
  return b;
}

json memory_to_json(const MemoryReport& r) {
  return write_block(memory_fields<BlockWriter, const MemoryReport>, r);
}

MemoryReport memory_from_json(const json& block) {
  MemoryReport r;
  if (block.is_null()) return r;
  read_block(JsonFields(block, "metrics.memory"), memory_fields<BlockReader, MemoryReport>, r);
  return r;
}

json batch_search_to_json(const BatchSearchInfo& s) {
  json block = write_block(batch_search_fields<BlockWriter, const BatchSearchInfo>, s);
  block["probes"] = json::array();
  for (const BatchProbe& p : s.probes) {
    block["probes"].push_back(write_block(probe_fields<BlockWriter, const BatchProbe>, p));
  }
  return block;
}

BatchSearchInfo batch_search_from_json(const json& block) {
  BatchSearchInfo s;
  if (block.is_null()) return s;
  const JsonFields fields(block, "batch_search");
  s.searched = true;
  read_block(fields, batch_search_fields<BlockReader, BatchSearchInfo>, s);
  for (const JsonFields& probe : fields.objects("probes")) {
    BatchProbe p;
    read_block(probe, probe_fields<BlockReader, BatchProbe>, p);
    s.probes.push_back(std::move(p));
  }
  return s;
}

std::string bytes_text(int64_t bytes) {
  const double magnitude = std::abs(static_cast<double>(bytes));
  const char* unit = magnitude >= (1ll << 30) ? "GiB" : magnitude >= (1 << 20) ? "MiB" : "KiB";
  const double scale = magnitude >= (1ll << 30) ? (1ll << 30)
                       : magnitude >= (1 << 20) ? (1 << 20)
                                                : 1024;
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f %s", static_cast<double>(bytes) / scale, unit);
  return text;
}

}  // namespace gpubench
