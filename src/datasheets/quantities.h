// The quantities a datasheet entry may give, defined once: key (as in data/datasheets.json),
// label, unit, and for peak rates the precision and whether 2:4 sparsity is counted. The
// database reader, the `specs` tables and the datasheet block of results all use this table.
#pragma once

#include <string>
#include <vector>

namespace gpubench {

enum class QuantityKind { kPeakRate, kMemorySize, kBandwidth, kPower, kText };

struct Quantity {
  std::string key;    // "bf16_tflops"
  std::string label;  // "BF16 tensor, dense"
  std::string unit;   // "TFLOPS"; empty for text
  QuantityKind kind = QuantityKind::kText;
  std::string precision;                        // peak rates: fp32, tf32, fp16, bf16, fp8, int8
  bool sparse = false;                          // peak rates: with 2:4 structured sparsity
  double plausible_min = 0, plausible_max = 0;  // numbers: a wrong unit falls outside
};

const std::vector<Quantity>& datasheet_quantities();
const Quantity* find_quantity(const std::string& key);  // nullptr when unknown
// The peak-rate quantity of `precision` ("bf16"), dense or sparse; nullptr when there is none.
const Quantity* peak_rate_quantity(const std::string& precision, bool sparse);
// The precisions peak rates are given for, in table order: fp32, tf32, fp16, bf16, fp8, int8.
std::vector<std::string> peak_rate_precisions();

}  // namespace gpubench
