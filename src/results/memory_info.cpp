#include "results/memory_info.h"

#include <cmath>
#include <cstdio>
#include <limits>

#include "common/json_fields.h"

namespace gpubench {

using nlohmann::json;

namespace {

constexpr int64_t kLowest = std::numeric_limits<int64_t>::min();

MemoryBreakdown read_breakdown(const JsonFields& fields) {
  MemoryBreakdown b;
  b.weights = fields.integer("weights");
  b.gradients = fields.integer("gradients");
  b.optimizer_states = fields.integer("optimizer_states");
  b.activations = fields.integer("activations");
  b.other = fields.integer("other", 0, kLowest);
  return b;
}

}  // namespace

json breakdown_to_json(const MemoryBreakdown& b) {
  return {{"weights", b.weights},
          {"gradients", b.gradients},
          {"optimizer_states", b.optimizer_states},
          {"activations", b.activations},
          {"other", b.other}};
}

MemoryBreakdown breakdown_from_json(const json& block) {
  return read_breakdown(JsonFields(block, "breakdown"));
}

json memory_to_json(const MemoryReport& r) {
  json block = breakdown_to_json(r.breakdown);
  block.update({{"basis", r.basis}, {"peak_bytes", r.peak_bytes}, {"peak_source", r.peak_source}});
  if (r.peak_reserved_bytes > 0) block["peak_reserved_bytes"] = r.peak_reserved_bytes;
  if (r.peak_rss_bytes > 0) block["peak_rss_bytes"] = r.peak_rss_bytes;
  return block;
}

MemoryReport memory_from_json(const json& block) {
  MemoryReport r;
  if (block.is_null()) return r;
  const JsonFields fields(block, "metrics.memory");
  r.breakdown = read_breakdown(fields);
  r.basis = fields.text("basis");
  r.peak_bytes = fields.integer("peak_bytes");
  r.peak_source = fields.text("peak_source");
  r.peak_reserved_bytes = fields.integer("peak_reserved_bytes");
  r.peak_rss_bytes = fields.integer("peak_rss_bytes");
  return r;
}

json batch_search_to_json(const BatchSearchInfo& s) {
  json probes = json::array();
  for (const BatchProbe& p : s.probes) {
    json probe = {{"batch", p.batch}, {"outcome", p.outcome}, {"peak_bytes", p.peak_bytes}};
    if (!p.error.empty()) probe["error"] = p.error;
    if (!p.oom_cause.empty()) probe["oom_cause"] = p.oom_cause;
    probes.push_back(probe);
  }
  return {{"memory_limit_bytes", s.memory_limit_bytes},
          {"memory_limit_source", s.memory_limit_source},
          {"predicted_batch", s.predicted_batch},
          {"found_batch", s.found_batch},
          {"probes", probes}};
}

BatchSearchInfo batch_search_from_json(const json& block) {
  BatchSearchInfo s;
  if (block.is_null()) return s;
  const JsonFields fields(block, "batch_search");
  s.searched = true;
  s.memory_limit_bytes = fields.integer("memory_limit_bytes");
  s.memory_limit_source = fields.text("memory_limit_source");
  s.predicted_batch = fields.integer("predicted_batch");
  s.found_batch = fields.integer("found_batch");
  for (const JsonFields& probe : fields.objects("probes")) {
    s.probes.push_back({probe.integer("batch"), probe.text("outcome"), probe.integer("peak_bytes"),
                        probe.text("error"), probe.text("oom_cause")});
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
