// Tables and charts built from result files (never re-running anything), and their renderings.
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "charts/bar_chart.h"
#include "charts/line_chart.h"
#include "reporting/trend.h"
#include "results/result_set.h"

namespace gpubench {

struct ReportCell {
  std::optional<double> value;
  std::string text;  // the value as shown, or why there is none ("oom: ...", "not run")
  // The spread of the trials the value is the median of (their coefficient of variation, %),
  // where the cell is one measured result's.
  std::optional<double> spread_pct = std::nullopt;
  bool published = false;  // a published figure's, not measured by gpubench
};

struct ReportRow {
  std::vector<std::string> labels;
  std::vector<ReportCell> cells;
};

struct ReportTable {
  std::string id;  // throughput, normalized, scaling, family, tflops, comparison, ...
  std::string title;
  std::vector<std::string> label_columns;
  std::vector<std::string> columns;
  std::vector<ReportRow> rows;
  // Lines shown under the table: what a cell's figures mean where the cells cannot say it
  // (sources that disagree, the sources themselves).
  std::vector<std::string> notes;
};

// A chart HTML draws above the tables.
using ReportChart = std::variant<charts::BarChart, charts::LineChart>;

struct Report {
  std::string title;
  std::vector<ReportTable> tables;
  std::vector<ReportChart> charts;
  // Benchmarks with several runs among the results: HTML adds their trend charts ("History").
  std::optional<Trend> history;
};

struct ReportOptions {
  std::optional<std::string> normalize_to;  // a ResultSelector
  // Identity settings rows may join across (as compare's): each cell then names its own.
  std::vector<std::string> across;
  // The history of benchmarks with several runs; only HTML draws it, so others may skip it.
  bool history = true;
};

// Rows: model and precision; columns: system x GPU count. Adds normalised, scaling-efficiency,
// per-family and TFLOP/s tables where the results allow, and the history of every benchmark
// with several runs. Throws UsageError for a bad selector
// or a baseline that matches no result.
Report build_report(const std::vector<LoadedResult>& results, const ReportOptions& options);

// Side-by-side of two result sets with B/A per row and the geometric-mean ratio per family.
// Rows match on the identity without the system; `across` names identity settings the two
// sides may differ in (each cell then says its own). Throws UsageError for a key in `across`
// that is not an identity setting.
Report build_comparison(const std::vector<LoadedResult>& a, const std::vector<LoadedResult>& b,
                        const std::string& a_name, const std::string& b_name,
                        const std::vector<std::string>& across = {});

std::string render_markdown(const Report& report);
// Tidy: one header and one record per cell of every table (a throughput table's cell is one
// benchmark's result): the table's id, each table's row labels under their column names (empty
// where a table has no such label), the cell's column, its value in full precision, its
// trials' spread and its text; a table's notes as records of column "note".
std::string render_csv(const Report& report);
// {"schema": kReportSchema, "title", "tables"}: a folder's reader passes over it.
inline constexpr const char* kReportSchema = "gpubench.report/1";
std::string render_json(const Report& report);
// One self-contained file: inline CSS and SVG, no scripts, fonts or network.
std::string render_html(const Report& report);
// One table as aligned text narrowed to `max_width` (0: its full width), cut into parts that
// repeat the label columns where too wide with its words whole (TextTable::render_in_parts).
std::string render_text_table(const ReportTable& table, size_t max_width);
// Aligned text for the terminal: each table as render_text_table, titles and notes wrapped.
std::string render_text(const Report& report, size_t max_width);
// `format`: table (render_text at `max_width`), markdown, csv, json or html. UsageError.
std::string render_report(const Report& report, const std::string& format, size_t max_width = 0);
void check_report_format(const std::string& format);  // UsageError naming the allowed formats

}  // namespace gpubench
