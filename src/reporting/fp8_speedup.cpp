#include "reporting/fp8_speedup.h"

#include <map>
#include <tuple>

#include "common/text_table.h"
#include "reporting/specs_table.h"

namespace gpubench {
namespace {

// The two precisions' runs of one benchmark on one card.
struct Pair {
  std::string card, setup, recipe;
  std::vector<const Result*> bf16, fp8;
};

ReportCell number_cell(const std::optional<double>& value, int digits) {
  if (!value) return {std::nullopt, "-"};
  return {*value, format_significant(*value, digits)};
}

// The datasheet's FP8 over BF16 dense peak, for the entry the run matched.
std::optional<double> peak_ratio(const Result& r, const DatasheetDatabase& database) {
  if (!r.datasheet.matched) return std::nullopt;
  const Accelerator* entry = database.find(r.datasheet.entry);
  if (entry == nullptr) return std::nullopt;
  const auto fp8 = entry->number("fp8_tflops"), bf16 = entry->number("bf16_tflops");
  if (!fp8 || !bf16 || *bf16 <= 0) return std::nullopt;
  return *fp8 / *bf16;
}

}  // namespace

ReportTable fp8_speedup_table(const std::vector<LoadedResult>& results,
                              const DatasheetDatabase& database) {
  const std::vector<std::string> leave_out = {"precision", "fp8_recipe"};
  // (card, benchmark's values, recipe) -> the runs; a bf16 run counts for every recipe.
  std::map<std::tuple<std::string, std::string>, std::vector<const Result*>> bf16;
  std::map<std::tuple<std::string, std::string, std::string>, Pair> pairs;
  for (const LoadedResult& l : results) {
    const Result& r = l.result;
    if (r.status != RunStatus::kOk) continue;
    const Precision precision = r.benchmark.precision;
    if (precision != Precision::kBf16 && precision != Precision::kFp8) continue;
    const BenchmarkIdentity identity = identity_of(r);
    const std::string values = identity.values_text(leave_out);
    if (precision == Precision::kBf16) {
      bf16[{identity.system, values}].push_back(&r);
      continue;
    }
    Pair& pair = pairs[{identity.system, values, r.benchmark.fp8_recipe}];
    pair.card = identity.system;
    pair.setup = identity.settings_text(leave_out);
    pair.recipe = r.benchmark.fp8_recipe;
    pair.fp8.push_back(&r);
  }
  ReportTable table;
  table.id = "fp8-speedup";
  table.label_columns = {"card", "benchmark", "FP8 recipe"};
  table.columns = {"bf16", "fp8", "measured FP8/BF16", "FP8 share of products",
                   "datasheet peak FP8/BF16"};
  for (auto& [key, pair] : pairs) {
    const auto found = bf16.find({std::get<0>(key), std::get<1>(key)});
    if (found == bf16.end()) continue;
    const Result& a = *newest_result(found->second);
    const Result& b = *newest_result(pair.fp8);
    ReportRow row{{pair.card, pair.setup, pair.recipe}, {}};
    row.cells.push_back(number_cell(a.metrics.throughput, 4));
    row.cells.push_back(number_cell(b.metrics.throughput, 4));
    row.cells.push_back(number_cell(b.metrics.throughput / a.metrics.throughput, 3));
    row.cells.push_back(
        b.metrics.fp8_matmul_flop_share > 0
            ? ReportCell{b.metrics.fp8_matmul_flop_share,
                         format_fixed(100 * b.metrics.fp8_matmul_flop_share, 1) + "%"}
            : ReportCell{std::nullopt, "-"});
    row.cells.push_back(number_cell(peak_ratio(b, database), 3));
    table.rows.push_back(std::move(row));
  }
  table.title = table.rows.empty()
                    ? "Measured FP8/BF16 speed-up: no benchmark among the results ran in both"
                    : "Measured FP8/BF16 speed-up (result files; throughput in each run's unit)";
  return table;
}

}  // namespace gpubench
