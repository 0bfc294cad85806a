#include "datasheets/quantities.h"

namespace gpubench {
namespace {

Quantity rate(const std::string& precision, bool sparse, const std::string& what) {
  const bool integer = precision == "int8";
  Quantity q;
  q.key = precision + (sparse ? "_sparse" : "") + (integer ? "_tops" : "_tflops");
  q.label = what + (sparse ? ", 2:4 sparse" : ", dense");
  q.unit = integer ? "TOPS" : "TFLOPS";
  q.kind = QuantityKind::kPeakRate;
  q.precision = precision;
  q.sparse = sparse;
  q.plausible_min = 1;
  q.plausible_max = 20000;
  return q;
}

std::vector<Quantity> make_quantities() {
  std::vector<Quantity> table;
  table.push_back({"architecture", "Architecture", "", QuantityKind::kText, "", false, 0, 0});
  table.push_back(rate("fp32", false, "FP32 (non-tensor)"));
  const std::vector<std::pair<std::string, std::string>> tensor = {
      {"tf32", "TF32 tensor"},
      {"fp16", "FP16 tensor, FP32 accumulate"},
      {"bf16", "BF16 tensor, FP32 accumulate"},
      {"fp8", "FP8 tensor"},
      {"int8", "INT8 tensor"}};
  for (const auto& [precision, what] : tensor) {
    table.push_back(rate(precision, false, what));
    table.push_back(rate(precision, true, what));
  }
  table.push_back({"memory_gb", "Memory", "GB", QuantityKind::kMemorySize, "", false, 1, 2000});
  table.push_back({"memory_type", "Memory type", "", QuantityKind::kText, "", false, 0, 0});
  table.push_back({"memory_bandwidth_gbs", "Memory bandwidth", "GB/s", QuantityKind::kBandwidth, "",
                   false, 50, 50000});
  table.push_back({"tdp_w", "TDP (board power)", "W", QuantityKind::kPower, "", false, 10, 3000});
  table.push_back({"nvlink_gbs", "NVLink, bidirectional per GPU", "GB/s", QuantityKind::kBandwidth,
                   "", false, 10, 10000});
  table.push_back({"host_interface", "Host interface", "", QuantityKind::kText, "", false, 0, 0});
  table.push_back({"form_factor", "Form factor", "", QuantityKind::kText, "", false, 0, 0});
  return table;
}

}  // namespace

const std::vector<Quantity>& datasheet_quantities() {
  static const std::vector<Quantity> table = make_quantities();
  return table;
}

const Quantity* find_quantity(const std::string& key) {
  for (const Quantity& q : datasheet_quantities()) {
    if (q.key == key) return &q;
  }
  return nullptr;
}

const Quantity* peak_rate_quantity(const std::string& precision, bool sparse) {
  for (const Quantity& q : datasheet_quantities()) {
    if (q.kind == QuantityKind::kPeakRate && q.precision == precision && q.sparse == sparse) {
      return &q;
    }
  }
  return nullptr;
}

std::vector<std::string> peak_rate_precisions() {
  std::vector<std::string> precisions;
  for (const Quantity& q : datasheet_quantities()) {
    if (q.kind == QuantityKind::kPeakRate && !q.sparse) precisions.push_back(q.precision);
  }
  return precisions;
}

}  // namespace gpubench
