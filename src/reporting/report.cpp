#include "reporting/report.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "common/errors.h"
#include "common/input_limits.h"
#include "common/json_text.h"
#include "common/text_table.h"
#include "datasheets/run_efficiency.h"
#include "results/statistics.h"
#include "settings/benchmark_fields.h"

namespace gpubench {
namespace {

// A row is one benchmark apart from where it ran: the identity's settings but the GPU count
// and bucket size, which go with the column. Precisions sort in their table order, batches by
// their number (448 before 1280).
struct RowKey {
  std::string family, model, precision;
  int precision_order;
  std::string setup;   // "batch 256 channels-last"
  std::string match;   // the identity's values but the columns' (BenchmarkIdentity::values_text)
  int64_t batch = -1;  // -1 where rows join across batch sizes (each cell names its own)
  std::vector<std::string> labels() const { return {model, precision, setup}; }
  bool operator<(const RowKey& o) const {
    return std::tie(family, model, precision_order, batch, setup, match) <
           std::tie(o.family, o.model, o.precision_order, o.batch, o.setup, o.match);
  }
};

struct ColumnKey {
  std::string system;
  int gpus;
  std::string bucket;  // "bucket 25 MiB" with several ranks; empty for one, or published
  bool operator<(const ColumnKey& o) const {
    return std::tie(system, gpus, bucket) < std::tie(o.system, o.gpus, o.bucket);
  }
  std::string label() const {
    return system + " x" + std::to_string(gpus) + (bucket.empty() ? "" : " (" + bucket + ")");
  }
};

int precision_order(Precision precision) {
  const auto names = precision_names();
  return static_cast<int>(std::find(names.begin(), names.end(), to_string(precision)) -
                          names.begin());
}

// Identity settings rows may join across (--across); every cell then names its own value.
class Across {
 public:
  explicit Across(const std::vector<std::string>& keys) {
    for (const std::string& key : keys) {
      const BenchmarkField* field = find_benchmark_field(key);
      if (field == nullptr || !field->identity || field->key == "model") {
        std::vector<std::string> allowed;
        for (const BenchmarkField& f : benchmark_fields()) {
          if (f.identity && f.key != "model") allowed.push_back(f.key);
        }
        throw UsageError("--across: '" + echoed(key) +
                         "' is not a setting of the identity; allowed: " + join(allowed));
      }
      keys_.push_back(field->key);
    }
    // The FP8 recipe exists where the precision is fp8: joined with it.
    if (joins("precision") && !joins("fp8_recipe")) keys_.push_back("fp8_recipe");
  }
  bool joins(const std::string& key) const {
    return std::find(keys_.begin(), keys_.end(), key) != keys_.end();
  }
  // A row's precision, or none where rows join across precisions (each cell names its own).
  std::pair<std::string, int> precision_of(const Result& r) const {
    if (joins("precision")) return {"per side", -1};
    return {to_string(r.benchmark.precision), precision_order(r.benchmark.precision)};
  }
  // The identity without `leave_out` and without these: its settings' text, and what rows match
  // on (the values, without the system: systems are the columns).
  std::pair<std::string, std::string> shared_settings(const Result& r,
                                                      std::vector<std::string> leave_out) const {
    leave_out.insert(leave_out.end(), keys_.begin(), keys_.end());
    const BenchmarkIdentity identity = identity_of(r);
    return {identity.settings_text(leave_out), identity.values_text(leave_out)};
  }
  ReportCell annotate(ReportCell cell, const Result* r) const {
    if (r == nullptr || keys_.empty()) return cell;
    // Each joined setting by its text, or as key=value where it has none (the device).
    const BenchmarkIdentity identity = identity_of(*r);
    std::vector<std::string> own;
    for (const std::string& key : keys_) {
      std::string text;
      for (const auto& [setting, shown] : identity.settings) {
        if (setting == key) text = shown;
      }
      const auto value = identity.values.find(key);
      if (text.empty() && value != identity.values.end()) {
        text = key + "=" + plain_text(*value);
      }
      if (!text.empty()) own.push_back(text);
    }
    if (!own.empty()) cell.text += " [" + join(own, " ") + "]";
    return cell;
  }

 private:
  std::vector<std::string> keys_;
};

RowKey row_of(const Result& r, const Across& across) {
  // The device goes with the system, a column.
  auto [setup, match] =
      across.shared_settings(r, {"model", "precision", "gpus", "bucket_mb", "device"});
  auto [precision, order] = across.precision_of(r);
  const int64_t batch = across.joins("batch_size") ? -1 : r.benchmark.batch_size;
  return {r.model_family, r.benchmark.model, std::move(precision),
          order,          std::move(setup),  std::move(match),
          batch};
}

std::string abbreviated_first_line(const std::string& text, size_t limit = 80) {
  const std::string line = first_line(text);
  return line.size() > limit ? line.substr(0, limit - 3) + "..." : line;
}

ReportCell throughput_cell(const Result* r) {
  if (r == nullptr) return {std::nullopt, "not run"};
  if (!has_throughput(r->status)) {
    return {std::nullopt, to_string(r->status) +
                              (r->error.empty() ? "" : ": " + abbreviated_first_line(r->error))};
  }
  std::string text = format_fixed(r->metrics.throughput, 1);
  const auto& trials = r->metrics.trials;
  if (r->status == RunStatus::kPublished) {
    text += " (published)";
    return {r->metrics.throughput, text, std::nullopt, true};
  }
  if (const double cv = coefficient_of_variation(trials); std::isfinite(cv)) {
    text += " ±" + format_fixed(100.0 * cv, 1) + "%";
    return {r->metrics.throughput, text, 100.0 * cv};
  }
  return {r->metrics.throughput, text};
}

using Grid = std::map<RowKey, std::map<ColumnKey, std::vector<const Result*>>>;

struct Layout {
  explicit Layout(const std::vector<std::string>& across_keys) : across(across_keys) {}
  Across across;
  Grid grid;
  std::vector<RowKey> rows;
  std::vector<ColumnKey> columns;
  std::map<RowKey, std::string> units;
};

// A published figure's publisher: the first word of its source ("BIZON", "Lambda", "NVIDIA").
std::string publisher_of(const Result& r) {
  const std::string first = r.source.substr(0, r.source.find(' '));
  return first.empty() ? "published" : first;
}

// A published figure gets its own column, named after its publisher, so that it stands beside a
// measurement of the same system, and two publishers' figures for one system (which differ in
// method) stay apart.
std::string column_system(const Result& r) {
  if (r.status != RunStatus::kPublished) return system_name(r);
  return system_name(r) + " (" + publisher_of(r) + ")";
}

Layout layout_of(const std::vector<LoadedResult>& results, const std::vector<std::string>& across) {
  Layout layout(across);
  std::set<ColumnKey> columns;
  for (const LoadedResult& loaded : results) {
    const Result& r = loaded.result;
    const RowKey row = row_of(r, layout.across);
    // A published figure was not measured with gpubench's gradient buckets.
    std::string bucket;
    for (const auto& [key, text] : identity_of(r).settings) {
      if (key == "bucket_mb" && r.status != RunStatus::kPublished) bucket = text;
    }
    const ColumnKey column{column_system(r), r.benchmark.gpus, bucket};
    layout.grid[row][column].push_back(&r);
    columns.insert(column);
    if (!r.metrics.throughput_unit.empty()) layout.units[row] = r.metrics.throughput_unit;
  }
  for (const auto& entry : layout.grid) layout.rows.push_back(entry.first);
  layout.columns.assign(columns.begin(), columns.end());
  return layout;
}

const Result* cell_result(const Layout& layout, const RowKey& row, const ColumnKey& column) {
  const auto r = layout.grid.find(row);
  if (r == layout.grid.end()) return nullptr;
  const auto c = r->second.find(column);
  return c == r->second.end() ? nullptr : newest_result(c->second);
}

std::optional<double> throughput_of(const Result* r) {
  if (r == nullptr || !has_throughput(r->status)) return std::nullopt;
  return r->metrics.throughput;
}

ReportTable table_for(const Layout& layout, std::string id, std::string title) {
  ReportTable table;
  table.id = std::move(id);
  table.title = std::move(title);
  table.label_columns = {"model", "precision", "setup"};
  for (const ColumnKey& c : layout.columns) table.columns.push_back(c.label());
  return table;
}

// A group of bars per row, a bar per figure of the first `columns` columns.
charts::BarChart bar_chart(const ReportTable& table, std::string title, std::string unit,
                           size_t columns = SIZE_MAX) {
  charts::BarChart chart{std::move(title), std::move(unit), {}, {}};
  for (size_t c = 0; c < table.columns.size() && c < columns; ++c)
    chart.series.push_back(table.columns[c]);
  for (const ReportRow& row : table.rows) {
    charts::BarGroup group{join(row.labels, " "), {}};
    for (size_t c = 0; c < row.cells.size() && c < table.columns.size() && c < columns; ++c) {
      const ReportCell& cell = row.cells[c];
      if (!cell.value || !std::isfinite(*cell.value)) continue;
      group.bars.push_back({table.columns[c], *cell.value, cell.spread_pct, cell.published});
    }
    chart.groups.push_back(std::move(group));
  }
  // The columns with a bar, in the table's order: a system keeps its colour across the charts
  // where the same systems have bars.
  const auto has_bar = [&](const std::string& series) {
    return std::any_of(chart.groups.begin(), chart.groups.end(), [&](const charts::BarGroup& g) {
      return std::any_of(g.bars.begin(), g.bars.end(),
                         [&](const charts::Bar& bar) { return bar.series == series; });
    });
  };
  chart.series.erase(std::remove_if(chart.series.begin(), chart.series.end(),
                                    [&](const std::string& s) { return !has_bar(s); }),
                     chart.series.end());
  return chart;
}

void add_normalized_tables(const Layout& layout, const std::vector<LoadedResult>& results,
                           const std::string& selector_text, Report& report) {
  const ResultSelector selector = ResultSelector::parse(selector_text);
  const bool any_match = std::any_of(results.begin(), results.end(), [&](const LoadedResult& l) {
    return selector.matches(l.result) && has_throughput(l.result.status);
  });
  if (!any_match) {
    throw UsageError("--normalize-to '" + echoed(selector_text) +
                     "' matches no result with a throughput");
  }
  ReportTable table = table_for(layout, "normalized", "Throughput normalised to " + selector_text);
  std::map<std::string, std::map<size_t, std::vector<double>>> by_family;  // family -> column
  for (const RowKey& row : layout.rows) {
    // The baseline of a row: the selected system's result of the same setup, else of the same
    // model (and precision, unless the selector fixes one) in any setup: published figures
    // rarely say their batch size.
    std::vector<const Result*> same_setup, same_model;
    for (const LoadedResult& l : results) {
      const Result& r = l.result;
      if (!selector.matches(r) || r.benchmark.model != row.model) continue;
      if (!selector.constrains("precision") && to_string(r.benchmark.precision) != row.precision)
        continue;
      same_model.push_back(&r);
      const RowKey key = row_of(r, layout.across);
      if (key.setup == row.setup && key.match == row.match) same_setup.push_back(&r);
    }
    const std::optional<double> baseline =
        throughput_of(newest_result(same_setup.empty() ? same_model : same_setup));
    ReportRow out{row.labels(), {}};
    for (size_t c = 0; c < layout.columns.size(); ++c) {
      const std::optional<double> value =
          throughput_of(cell_result(layout, row, layout.columns[c]));
      if (!baseline) {
        out.cells.push_back({std::nullopt, "no baseline"});
      } else if (!value) {
        out.cells.push_back({std::nullopt, "-"});
      } else {
        const double ratio = *value / *baseline;
        out.cells.push_back({ratio, format_fixed(ratio, 2)});
        by_family[row.family][c].push_back(ratio);
      }
    }
    table.rows.push_back(std::move(out));
  }
  ReportTable family =
      table_for(layout, "family", "Geometric mean of normalised throughput per family");
  family.label_columns = {"family"};
  for (const auto& [name, columns] : by_family) {
    ReportRow out{{name}, {}};
    for (size_t c = 0; c < layout.columns.size(); ++c) {
      const auto it = columns.find(c);
      if (it == columns.end()) {
        out.cells.push_back({std::nullopt, "-"});
        continue;
      }
      const double mean = geometric_mean(it->second);
      out.cells.push_back(
          {mean, format_fixed(mean, 2) + " (n=" + std::to_string(it->second.size()) + ")"});
    }
    family.rows.push_back(std::move(out));
  }
  report.charts.push_back(bar_chart(table, table.title, "x baseline"));
  report.tables.push_back(std::move(table));
  report.tables.push_back(std::move(family));
}

void add_scaling_table(const Layout& layout, Report& report) {
  ReportTable table;
  table.id = "scaling";
  table.title = "Scaling efficiency: throughput(N) / (N x throughput(1))";
  table.label_columns = {"model", "precision", "setup"};
  std::vector<ColumnKey> multi;
  for (const ColumnKey& c : layout.columns) {
    const bool has_single =
        std::any_of(layout.columns.begin(), layout.columns.end(),
                    [&](const ColumnKey& o) { return o.system == c.system && o.gpus == 1; });
    if (c.gpus > 1 && has_single) multi.push_back(c);
  }
  if (multi.empty()) return;
  for (const ColumnKey& c : multi) table.columns.push_back(c.label());
  charts::LineChart chart;
  chart.title = "Scaling efficiency";
  chart.y_label = "efficiency (1 = linear)";
  chart.x_label = "GPUs";
  std::set<int> counts{1};
  for (const ColumnKey& c : multi) counts.insert(c.gpus);
  for (int n : counts) chart.categories.push_back(counted(n, "GPU"));
  for (const RowKey& row : layout.rows) {
    ReportRow out{row.labels(), {}};
    std::map<std::string, std::vector<std::optional<double>>> lines;  // system -> per count
    for (const ColumnKey& c : multi) {
      const auto one = throughput_of(cell_result(layout, row, {c.system, 1, ""}));
      const auto many = throughput_of(cell_result(layout, row, c));
      if (!one || !many) {
        out.cells.push_back({std::nullopt, "-"});
        continue;
      }
      const double efficiency = *many / (c.gpus * *one);
      out.cells.push_back({efficiency, format_fixed(100.0 * efficiency, 1) + "%"});
      auto& line = lines[c.system];
      if (line.empty()) {
        line.assign(counts.size(), std::nullopt);
        line[0] = 1.0;
      }
      line[std::distance(counts.begin(), counts.find(c.gpus))] = efficiency;
    }
    for (auto& [system, values] : lines) {
      chart.series.push_back(
          {system + " " + join(row.labels(), " "), row.labels().front(), std::move(values)});
    }
    table.rows.push_back(std::move(out));
  }
  report.tables.push_back(std::move(table));
  if (!chart.series.empty()) report.charts.push_back(std::move(chart));
}

// A table of one figure of each result that has a throughput (with `failed_too`, of those that
// ran out or failed as well); left out when no cell has one.
void add_figure_table(const Layout& layout, Report& report, std::string id, std::string title,
                      const std::function<std::optional<ReportCell>(const Result&)>& figure,
                      bool failed_too = false) {
  ReportTable table = table_for(layout, std::move(id), std::move(title));
  bool any = false;
  for (const RowKey& row : layout.rows) {
    ReportRow out{row.labels(), {}};
    for (const ColumnKey& c : layout.columns) {
      const Result* r = cell_result(layout, row, c);
      std::optional<ReportCell> cell;
      if (r != nullptr && (failed_too || has_throughput(r->status))) cell = figure(*r);
      any = any || cell.has_value();
      out.cells.push_back(cell.value_or(ReportCell{std::nullopt, "-"}));
    }
    table.rows.push_back(std::move(out));
  }
  if (any) report.tables.push_back(std::move(table));
}

void add_tflops_table(const Layout& layout, Report& report) {
  add_figure_table(
      layout, report, "tflops",
      "Achieved TFLOP/s (training: 3 x forward FLOPs per sample; serving: 1 x; generation: none)",
      [](const Result& r) -> std::optional<ReportCell> {
        if (r.metrics.achieved_tflops <= 0) return std::nullopt;
        return ReportCell{r.metrics.achieved_tflops, format_fixed(r.metrics.achieved_tflops, 2)};
      });
}

// Data-parallel runs only (results written before the `distributed` block have none).
void add_communication_table(const Layout& layout, Report& report) {
  add_figure_table(
      layout, report, "communication",
      "Exposed communication per step: ms the backward pass did not hide (share of the step)",
      [](const Result& r) -> std::optional<ReportCell> {
        const DistributedInfo& d = r.distributed;
        if (d.backend == "none" || d.world_size <= 1) return std::nullopt;
        return ReportCell{d.exposed_communication_ms,
                          format_fixed(d.exposed_communication_ms, 1) + " ms (" +
                              format_fixed(100.0 * d.exposed_communication_share, 1) + "%)"};
      });
}

// Telemetry: energy per sample and samples per joule, from results whose every device was measured.
void add_energy_table(const Layout& layout, Report& report) {
  add_figure_table(layout, report, "energy",
                   "Energy per sample in the timed windows, all devices (samples per joule)",
                   [](const Result& r) -> std::optional<ReportCell> {
                     const TelemetryReport& t = r.telemetry;
                     if (!t.available || t.energy_per_sample_j <= 0) return std::nullopt;
                     const double per_sample = t.energy_per_sample_j;
                     return ReportCell{per_sample,
                                       format_fixed(per_sample, per_sample < 0.1 ? 4 : 3) + " J (" +
                                           format_fixed(t.samples_per_joule, 1) + "/J)"};
                   });
}

// Achieved training FLOP/s over the datasheet's dense peak of the precision that ran.
void add_peak_table(const Layout& layout, Report& report) {
  add_figure_table(layout, report, "peak",
                   "Achieved share of the datasheet's dense peak (precision that ran; entry)",
                   [](const Result& r) -> std::optional<ReportCell> {
                     const double fraction = r.metrics.achieved_fraction_of_peak;
                     if (!r.datasheet.matched || fraction <= 0) return std::nullopt;
                     return ReportCell{100.0 * fraction,
                                       format_fixed(100.0 * fraction, 1) + "% of " +
                                           format_fixed(r.datasheet.peak_tflops, 1) + " (" +
                                           r.datasheet.entry + ")"};
                   });
}

// Peak memory per device and where it went (results/memory_info.h), for runs that ran out too.
void add_memory_table(const Layout& layout, Report& report) {
  add_figure_table(
      layout, report, "memory",
      "Peak memory per device: weights / gradients / optimiser states / activations / other",
      [](const Result& r) -> std::optional<ReportCell> {
        const MemoryReport& m = r.metrics.memory;
        if (!m.present()) return std::nullopt;
        const MemoryBreakdown& b = m.breakdown;
        std::string text = bytes_text(m.peak_bytes) + " (" + bytes_text(b.weights) + " / " +
                           bytes_text(b.gradients) + " / " + bytes_text(b.optimizer_states) +
                           " / " + bytes_text(b.activations) + " / " + bytes_text(b.other) + ")";
        if (m.basis != kMemoryMeasured) text += " " + m.basis;
        return ReportCell{static_cast<double>(m.peak_bytes), text};
      },
      /*failed_too=*/true);
}

// Inference: latency per request, and for generation its time to first token, time per output
// token, rates and key/value cache (results/inference_info.h).
void add_inference_tables(const Layout& layout, Report& report) {
  add_figure_table(layout, report, "latency", "Inference latency per request: p50 / p99 ms",
                   [](const Result& r) -> std::optional<ReportCell> {
                     const InferenceMetrics& m = r.metrics.inference;
                     if (!m.present || m.request_latency_ms.count == 0) return std::nullopt;
                     return ReportCell{m.request_latency_ms.p50,
                                       format_fixed(m.request_latency_ms.p50, 2) + " / " +
                                           format_fixed(m.request_latency_ms.p99, 2)};
                   });
  add_figure_table(
      layout, report, "generation",
      "Generation: time to first token p50 ms / time per output token p50 / p99 ms / prefill "
      "tokens/sec / key/value cache",
      [](const Result& r) -> std::optional<ReportCell> {
        const InferenceMetrics& m = r.metrics.inference;
        if (!m.present || m.kv_cache_bytes == 0) return std::nullopt;
        return ReportCell{m.time_per_output_token_ms.p50,
                          format_fixed(m.time_to_first_token_ms.p50, 2) + " / " +
                              format_fixed(m.time_per_output_token_ms.p50, 2) + " / " +
                              format_fixed(m.time_per_output_token_ms.p99, 2) + " / " +
                              format_fixed(m.prefill_tokens_per_second, 0) + " / " +
                              bytes_text(m.kv_cache_bytes)};
      });
  add_figure_table(layout, report, "decode-weight-bytes",
                   "Decode: bytes of weights read per decoded token (docs/fp8.md)",
                   [](const Result& r) -> std::optional<ReportCell> {
                     const int64_t bytes = r.metrics.inference.weight_bytes_per_decoded_token;
                     if (bytes <= 0) return std::nullopt;
                     return ReportCell{static_cast<double>(bytes), bytes_text(bytes)};
                   });
  add_figure_table(
      layout, report, "decode-ceiling",
      "Decode: share of the memory-bandwidth ceiling reached (ceiling tokens/sec, bandwidth "
      "source, kernels a decode step where its CUDA graph counted them; "
      "docs/inference.md#the-decode-ceiling)",
      [](const Result& r) -> std::optional<ReportCell> {
        const InferenceMetrics& m = r.metrics.inference;
        if (m.decode_ceiling_tokens_per_second <= 0) return std::nullopt;
        const std::string kernels =
            m.kernels_per_decode_step > 0
                ? ", " + std::to_string(m.kernels_per_decode_step) + " kernels a step"
                : "";
        return ReportCell{m.decode_ceiling_fraction,
                          format_fixed(100 * m.decode_ceiling_fraction, 1) + "% of " +
                              format_fixed(m.decode_ceiling_tokens_per_second, 1) + " (" +
                              m.ceiling_bandwidth_source + kernels + ")"};
      });
  add_figure_table(layout, report, "fp8-share", "FP8's share of the products (precision fp8)",
                   [](const Result& r) -> std::optional<ReportCell> {
                     const double share = r.metrics.fp8_matmul_flop_share;
                     if (share <= 0) return std::nullopt;
                     return ReportCell{share, format_fixed(100 * share, 1) + "%"};
                   });
}

// With results from several systems: does each recipe fit each card, with the headroom its
// measured peak left (the card's memory less the allocator's peak reserved bytes, or allocated
// where reserved is not known).
void add_fit_table(const Layout& layout, Report& report) {
  std::set<std::string> systems;
  for (const ColumnKey& c : layout.columns) systems.insert(c.system);
  if (systems.size() < 2) return;
  add_figure_table(
      layout, report, "fit", "Fits the card: headroom at the measured peak, or does not fit",
      [](const Result& r) -> std::optional<ReportCell> {
        if (r.status == RunStatus::kOom) return ReportCell{std::nullopt, "does not fit"};
        if (r.status != RunStatus::kOk || !r.metrics.memory.present()) return std::nullopt;
        const int64_t card = r.system.gpu_memory_bytes;
        if (card <= 0) return ReportCell{std::nullopt, "fits"};
        const MemoryReport& m = r.metrics.memory;
        const int64_t used = m.peak_reserved_bytes > 0 ? m.peak_reserved_bytes : m.peak_bytes;
        return ReportCell{static_cast<double>(card - used),
                          "fits (" + bytes_text(card - used) + " free)"};
      },
      /*failed_too=*/true);
}

}  // namespace

Report build_report(const std::vector<LoadedResult>& results, const ReportOptions& options) {
  Report report;
  report.title = "gpubench report (" + std::to_string(results.size()) + " result files)";
  const Layout layout = layout_of(results, options.across);
  ReportTable throughput =
      table_for(layout, "throughput", "Throughput (global, median trial ± CV of trials)");
  throughput.label_columns = {"model", "precision", "setup", "unit"};
  for (const RowKey& row : layout.rows) {
    ReportRow out{row.labels(), {}};
    out.labels.push_back(layout.units.count(row) ? layout.units.at(row) : "");
    for (const ColumnKey& c : layout.columns) {
      const Result* r = cell_result(layout, row, c);
      out.cells.push_back(layout.across.annotate(throughput_cell(r), r));
    }
    throughput.rows.push_back(std::move(out));
  }
  // One chart per unit: images/sec and tokens/sec do not share an axis.
  std::map<std::string, ReportTable> by_unit;
  for (const ReportRow& row : throughput.rows) {
    ReportTable& part = by_unit[row.labels[3]];
    part.columns = throughput.columns;
    part.rows.push_back({{row.labels[0], row.labels[1], row.labels[2]}, row.cells});
  }
  for (const auto& [unit, part] : by_unit) {
    report.charts.push_back(bar_chart(part, "Throughput per model (" + unit + ")", unit));
  }
  report.tables.push_back(std::move(throughput));
  if (options.normalize_to) add_normalized_tables(layout, results, *options.normalize_to, report);
  add_scaling_table(layout, report);
  add_communication_table(layout, report);
  add_tflops_table(layout, report);
  add_peak_table(layout, report);
  add_energy_table(layout, report);
  add_memory_table(layout, report);
  add_inference_tables(layout, report);
  add_fit_table(layout, report);
  if (!options.history) return report;
  if (Trend history = with_history(build_trend(results, {}, {}), 2); !history.benchmarks.empty()) {
    report.history = std::move(history);
  }
  return report;
}

namespace {

// One compared benchmark apart from the system it ran on: every identity setting (GPU count and
// bucket size included). Each side holds a figure per source: the newest measured result, and
// the newest of each published source, since two publishers' figures for one card are not one
// figure (docs/reports.md#compare).
struct ComparedRow {
  std::string family, model, precision, setup;
  int gpus = 0;
  std::vector<const Result*> a, b;
  std::vector<std::string> labels() const {
    return {model, precision, std::to_string(gpus), setup};
  }
};

const Result* first_of(const std::vector<const Result*>& figures) {
  return figures.empty() ? nullptr : figures.front();
}

std::vector<const Result*> figures_by_source(const std::vector<const Result*>& results) {
  std::map<std::string, std::vector<const Result*>> by_source;  // measured ones under ""
  for (const Result* r : results) {
    by_source[r->status == RunStatus::kPublished ? r->source : std::string()].push_back(r);
  }
  std::vector<const Result*> figures;
  for (const auto& [source, same] : by_source) figures.push_back(newest_result(same));
  return figures;
}

std::vector<ComparedRow> compared_rows(const std::vector<LoadedResult>& a,
                                       const std::vector<LoadedResult>& b, const Across& joined) {
  using Key = std::tuple<std::string, std::string, int, std::string, int, std::string, std::string>;
  const auto key_of = [&joined](const Result& r) -> Key {
    auto [setup, match] = joined.shared_settings(r, {"model", "precision", "gpus", "device"});
    auto [precision, order] = joined.precision_of(r);
    return {r.model_family,   r.benchmark.model, order,           std::move(precision),
            r.benchmark.gpus, std::move(setup),  std::move(match)};
  };
  std::map<Key, std::pair<std::vector<const Result*>, std::vector<const Result*>>> sides;
  for (const LoadedResult& l : a) sides[key_of(l.result)].first.push_back(&l.result);
  for (const LoadedResult& l : b) sides[key_of(l.result)].second.push_back(&l.result);
  std::vector<ComparedRow> rows;
  for (const auto& [key, results] : sides) {
    ComparedRow row;
    row.family = std::get<0>(key);
    row.model = std::get<1>(key);
    row.precision = std::get<3>(key);
    row.gpus = std::get<4>(key);
    row.setup = std::get<5>(key);
    row.a = figures_by_source(results.first);
    row.b = figures_by_source(results.second);
    rows.push_back(std::move(row));
  }
  return rows;
}

// The published sources a comparison cites, numbered in the order met: a cell names its
// figure's publisher (publisher_of) and number; the notes give each in full.
class SourceLegend {
 public:
  std::string label(const Result& r) {
    const auto found = std::find(sources_.begin(), sources_.end(), r.source);
    const size_t number = static_cast<size_t>(found - sources_.begin()) + 1;
    if (found == sources_.end()) sources_.push_back(r.source);
    return publisher_of(r) + " [" + std::to_string(number) + "]";
  }
  std::vector<std::string> notes() const {
    std::vector<std::string> lines;
    for (size_t i = 0; i < sources_.size(); ++i) {
      lines.push_back("[" + std::to_string(i + 1) + "] " + first_line(sources_[i]));
    }
    return lines;
  }

 private:
  std::vector<std::string> sources_;
};

// A side's figures in one cell: each with its source where published; several figures, as
// published figures that disagree, all shown.
ReportCell side_cell(const std::vector<const Result*>& figures, const Across& joined,
                     SourceLegend& legend, const char* missing) {
  if (figures.empty()) return {std::nullopt, missing};
  std::vector<std::string> texts;
  for (const Result* r : figures) {
    ReportCell one = throughput_cell(r);
    if (r->status == RunStatus::kPublished && has_throughput(r->status)) {
      one.text = format_fixed(r->metrics.throughput, 1) + " (published, " + legend.label(*r) + ")";
    }
    texts.push_back(joined.annotate(one, r).text);
  }
  if (figures.size() == 1) {
    const ReportCell one = throughput_cell(figures.front());
    return {one.value, texts.front(), one.spread_pct, one.published};
  }
  return {std::nullopt, join(texts, "; ")};
}

std::vector<double> throughputs_of(const std::vector<const Result*>& figures) {
  std::vector<double> values;
  for (const Result* r : figures) {
    if (const auto value = throughput_of(r)) values.push_back(*value);
  }
  return values;
}

// Where a side's sources disagree: "NVIDIA A40, resnet50 fp16 x1: 653.0 (Lambda [2]) and
// 1262.0 (BIZON [1]) differ 1.93x ...".
std::optional<std::string> disagreement(const ComparedRow& compared,
                                        const std::vector<const Result*>& figures,
                                        const std::string& side_name) {
  const std::vector<double> values = throughputs_of(figures);
  if (values.size() < 2) return std::nullopt;
  const auto [low, high] = std::minmax_element(values.begin(), values.end());
  return side_name + ", " + compared.model + " " + compared.precision + " x" +
         std::to_string(compared.gpus) + ": its " + std::to_string(values.size()) +
         " figures differ up to " + format_fixed(*high / *low, 2) +
         "x (sources that differ in harness, batch and settings); B/A is shown as the range "
         "over them and left out of the family means";
}

// The datasheet's entry for a result's GPU: the one it recorded, else matched now by its name
// (a published figure records no memory size).
DatasheetInfo datasheet_of(const Result* r) {
  if (r == nullptr) return {};
  if (r->datasheet.matched) return r->datasheet;
  Result matched = *r;
  attach_datasheet(matched);
  return matched.datasheet;
}

// A side's card where every result of it ran on one (compare's usual selectors, gpu="...");
// empty otherwise.
std::string sole_card(const std::vector<ComparedRow>& rows,
                      std::vector<const Result*> ComparedRow::*side) {
  std::set<std::string> cards;
  for (const ComparedRow& row : rows) {
    for (const Result* r : row.*side) cards.insert(r->system.gpu_name);
  }
  return cards.size() == 1 ? *cards.begin() : std::string();
}

// The datasheet of a row's side: its figure's card, or where it has none for the row, the side's
// sole card at the other side's settings (precision, so its peak), so that the cards' ratios stand
// beside a figure published for one of them only.
DatasheetInfo row_datasheet(const std::vector<const Result*>& figures,
                            const std::vector<const Result*>& other, const std::string& card) {
  if (!figures.empty()) return datasheet_of(figures.front());
  if (card.empty() || other.empty()) return {};
  Result like = *other.front();
  like.system.gpu_name = card;
  like.system.gpu_memory_bytes = 0;
  like.datasheet = DatasheetInfo{};
  return datasheet_of(&like);
}

// The datasheet's B/A for a figure of the two sides' cards; nothing when either is unmatched.
std::optional<double> datasheet_ratio(const DatasheetInfo& a, const DatasheetInfo& b,
                                      double DatasheetInfo::*figure) {
  if (!a.matched || !b.matched) return std::nullopt;
  const double va = a.*figure, vb = b.*figure;
  if (va <= 0 || vb <= 0) return std::nullopt;
  return vb / va;
}

// The measured B/A beside what the datasheets promise for the same precision; `ratios` gets
// each family's B/A where each side has one figure.
ReportTable throughput_comparison(const std::vector<ComparedRow>& rows, const Across& joined,
                                  const std::string& a_name, const std::string& b_name,
                                  std::map<std::string, std::vector<double>>& ratios) {
  ReportTable table;
  table.id = "comparison";
  table.title = a_name + " vs " + b_name;  // as the report's title has them: A, then B
  table.label_columns = {"model", "precision", "gpus", "setup"};
  table.columns = {a_name, b_name, "B/A", "peak B/A", "bandwidth B/A", "TDP B/A"};
  SourceLegend legend;
  std::vector<std::string> disagreements;
  const std::string card_a = sole_card(rows, &ComparedRow::a),
                    card_b = sole_card(rows, &ComparedRow::b);
  for (const ComparedRow& compared : rows) {
    ReportRow row{compared.labels(), {}};
    row.cells.push_back(side_cell(compared.a, joined, legend, "only in B"));
    row.cells.push_back(side_cell(compared.b, joined, legend, "only in A"));
    std::vector<double> row_ratios;
    for (const double va : throughputs_of(compared.a)) {
      for (const double vb : throughputs_of(compared.b)) row_ratios.push_back(vb / va);
    }
    if (row_ratios.size() == 1) {
      row.cells.push_back({row_ratios.front(), format_fixed(row_ratios.front(), 3)});
      ratios[compared.family].push_back(row_ratios.front());
    } else if (!row_ratios.empty()) {
      const auto [low, high] = std::minmax_element(row_ratios.begin(), row_ratios.end());
      row.cells.push_back({std::nullopt, format_fixed(*low, 3) + " to " + format_fixed(*high, 3)});
    } else {
      row.cells.push_back({std::nullopt, "-"});
    }
    for (const auto& [figures, name] : {std::pair{&compared.a, &a_name}, {&compared.b, &b_name}}) {
      if (auto text = disagreement(compared, *figures, *name)) disagreements.push_back(*text);
    }
    const DatasheetInfo sheet_a = row_datasheet(compared.a, compared.b, card_a),
                        sheet_b = row_datasheet(compared.b, compared.a, card_b);
    for (double DatasheetInfo::*figure :
         {&DatasheetInfo::peak_tflops, &DatasheetInfo::memory_bandwidth_gbs,
          &DatasheetInfo::tdp_w}) {
      const auto ratio = datasheet_ratio(sheet_a, sheet_b, figure);
      row.cells.push_back(ratio ? ReportCell{*ratio, format_fixed(*ratio, 3)}
                                : ReportCell{std::nullopt, "-"});
    }
    table.rows.push_back(std::move(row));
  }
  table.notes = disagreements;
  for (std::string& source : legend.notes()) table.notes.push_back(std::move(source));
  return table;
}

const InferenceMetrics* inference_of(const Result* r) {
  return r != nullptr && r->status == RunStatus::kOk && r->metrics.inference.present
             ? &r->metrics.inference
             : nullptr;
}

ReportCell latency_cell(const InferenceMetrics* m, const LatencySummary InferenceMetrics::*which,
                        double LatencySummary::*figure) {
  if (m == nullptr || (m->*which).count == 0) return ReportCell{std::nullopt, "-"};
  return ReportCell{(m->*which).*figure, format_fixed((m->*which).*figure, 2)};
}

ReportCell ceiling_share_cell(const InferenceMetrics* m) {
  if (m == nullptr || m->decode_ceiling_tokens_per_second <= 0)
    return ReportCell{std::nullopt, "-"};
  return ReportCell{m->decode_ceiling_fraction,
                    format_fixed(100 * m->decode_ceiling_fraction, 1) + "%"};
}

// Inference rows: latency beside throughput (lower is better, so B/A below 1 is B faster), and
// for generation each side's share of its decode ceiling (docs/inference.md#the-decode-ceiling).
ReportTable latency_comparison(const std::vector<ComparedRow>& rows, const std::string& a_name,
                               const std::string& b_name) {
  ReportTable latency;
  latency.id = "latency";
  latency.title =
      "Inference latency, " + a_name + " vs " + b_name + " (ms; B/A below 1: B answers sooner)";
  latency.label_columns = {"model", "precision", "gpus", "setup"};
  latency.columns = {a_name + " p50",          b_name + " p50",         "B/A p50",
                     a_name + " p99",          b_name + " p99",         a_name + " TTFT p50",
                     b_name + " TTFT p50",     a_name + " TPOT p50",    b_name + " TPOT p50",
                     a_name + " % of ceiling", b_name + " % of ceiling"};
  using M = InferenceMetrics;
  using L = LatencySummary;
  for (const ComparedRow& compared : rows) {
    const InferenceMetrics *ia = inference_of(first_of(compared.a)),
                           *ib = inference_of(first_of(compared.b));
    if (ia == nullptr && ib == nullptr) continue;
    ReportRow row{compared.labels(), {}};
    row.cells.push_back(latency_cell(ia, &M::request_latency_ms, &L::p50));
    row.cells.push_back(latency_cell(ib, &M::request_latency_ms, &L::p50));
    if (ia && ib && ia->request_latency_ms.p50 > 0) {
      const double ratio = ib->request_latency_ms.p50 / ia->request_latency_ms.p50;
      row.cells.push_back({ratio, format_fixed(ratio, 3)});
    } else {
      row.cells.push_back({std::nullopt, "-"});
    }
    row.cells.push_back(latency_cell(ia, &M::request_latency_ms, &L::p99));
    row.cells.push_back(latency_cell(ib, &M::request_latency_ms, &L::p99));
    row.cells.push_back(latency_cell(ia, &M::time_to_first_token_ms, &L::p50));
    row.cells.push_back(latency_cell(ib, &M::time_to_first_token_ms, &L::p50));
    row.cells.push_back(latency_cell(ia, &M::time_per_output_token_ms, &L::p50));
    row.cells.push_back(latency_cell(ib, &M::time_per_output_token_ms, &L::p50));
    row.cells.push_back(ceiling_share_cell(ia));
    row.cells.push_back(ceiling_share_cell(ib));
    latency.rows.push_back(std::move(row));
  }
  return latency;
}

ReportTable family_comparison(const std::map<std::string, std::vector<double>>& ratios) {
  ReportTable family;
  family.id = "family";
  family.title = "Geometric-mean B/A per family";
  family.label_columns = {"family"};
  family.columns = {"B/A", "rows"};
  for (const auto& [name, values] : ratios) {
    const double mean = geometric_mean(values);
    family.rows.push_back({{name},
                           {{mean, format_fixed(mean, 3)},
                            {static_cast<double>(values.size()), std::to_string(values.size())}}});
  }
  return family;
}

}  // namespace

Report build_comparison(const std::vector<LoadedResult>& a, const std::vector<LoadedResult>& b,
                        const std::string& a_name, const std::string& b_name,
                        const std::vector<std::string>& across) {
  const Across joined(across);
  const std::vector<ComparedRow> rows = compared_rows(a, b, joined);
  Report report;
  report.title = "gpubench compare: " + a_name + " vs " + b_name;
  std::map<std::string, std::vector<double>> ratios;
  ReportTable table = throughput_comparison(rows, joined, a_name, b_name, ratios);
  ReportTable latency = latency_comparison(rows, a_name, b_name);
  // Bars for A and B; the ratio columns are not throughputs.
  report.charts.push_back(bar_chart(table, table.title, "samples/sec", 2));
  report.tables.push_back(std::move(table));
  if (!latency.rows.empty()) report.tables.push_back(std::move(latency));
  // No row measured on both sides: no ratio, so no table of their means.
  if (!ratios.empty()) report.tables.push_back(family_comparison(ratios));
  return report;
}

}  // namespace gpubench
