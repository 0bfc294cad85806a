#include "reporting/specs_table.h"

#include <cstdio>
#include <optional>

#include "common/errors.h"
#include "common/input_limits.h"
#include "common/text_table.h"

namespace gpubench {
namespace {

struct Column {
  const Accelerator* entry = nullptr;
  const Quantity* pin = nullptr;  // the one peak rate asked for; nullptr: not pinned
};

std::string pin_text(const Quantity& rate) {
  return rate.precision + (rate.sparse ? "-sparse" : "");
}

Column parse_request(const DatasheetDatabase& database, const std::string& request) {
  const size_t colon = request.find(':');
  const std::string name = request.substr(0, colon);
  Column column;
  column.entry = database.find(name);
  if (column.entry == nullptr) {
    throw UsageError("unknown accelerator '" + echoed(name) +
                     "'; known: " + join(database.names()));
  }
  if (colon == std::string::npos) return column;
  std::string precision = request.substr(colon + 1);
  const std::string suffix = "-sparse";
  const bool sparse =
      precision.size() > suffix.size() &&
      precision.compare(precision.size() - suffix.size(), suffix.size(), suffix) == 0;
  if (sparse) precision.resize(precision.size() - suffix.size());
  column.pin = peak_rate_quantity(precision, sparse);
  if (column.pin == nullptr) {
    throw UsageError("unknown precision '" + echoed(request.substr(colon + 1)) + "' in '" +
                     echoed(request) + "'; allowed: " + join(peak_rate_precisions()) +
                     ", each with -sparse for the 2:4 sparse rate");
  }
  return column;
}

// Pins must agree, and columns without one take it: a ratio between unlike rates is what the
// spec-sheet comparisons get wrong (an FP8 figure divided by a BF16 one).
void check_pins(std::vector<Column>& columns) {
  const Column* first_pinned = nullptr;
  for (const Column& c : columns) {
    if (c.pin == nullptr) continue;
    if (first_pinned == nullptr) {
      first_pinned = &c;
      continue;
    }
    if (c.pin != first_pinned->pin) {
      const Quantity& a = *first_pinned->pin;
      const Quantity& b = *c.pin;
      throw UsageError("refusing to compare " + first_pinned->entry->name + " " + a.label +
                       " with " + c.entry->name + " " + b.label +
                       ": a ratio needs the same precision and sparsity on both sides (ask for " +
                       first_pinned->entry->name + ":" + pin_text(a) + " " + c.entry->name + ":" +
                       pin_text(a) + ")");
    }
  }
  if (first_pinned == nullptr) return;
  const Quantity* rate = first_pinned->pin;
  for (Column& c : columns) {
    c.pin = rate;
    if (!c.entry->number(rate->key)) {
      std::vector<std::string> given;
      for (const Quantity& q : datasheet_quantities()) {
        if (q.kind == QuantityKind::kPeakRate && c.entry->figure(q.key))
          given.push_back(pin_text(q));
      }
      throw UsageError(c.entry->name + " gives no " + pin_text(*rate) +
                       " figure; it gives: " + join(given));
    }
  }
}

class SourceIndex {
 public:
  explicit SourceIndex(const DatasheetDatabase& database) : database_(database) {}
  std::string cite(const std::string& id) {
    for (size_t i = 0; i < cited_.size(); ++i) {
      if (cited_[i] == id) return "[" + std::to_string(i + 1) + "]";
    }
    cited_.push_back(id);
    return "[" + std::to_string(cited_.size()) + "]";
  }
  ReportTable table() const {
    ReportTable t;
    t.id = "sources";
    t.title = "Sources";
    t.label_columns = {"ref"};
    t.columns = {"source", "url"};
    for (size_t i = 0; i < cited_.size(); ++i) {
      const DatasheetSource& s = database_.sources.at(cited_[i]);
      t.rows.push_back(
          {{"[" + std::to_string(i + 1) + "]"}, {{std::nullopt, s.title}, {std::nullopt, s.url}}});
    }
    return t;
  }

 private:
  const DatasheetDatabase& database_;
  std::vector<std::string> cited_;
};

std::string format_figure(const Quantity& quantity, const FigureValue& value) {
  return quantity.kind == QuantityKind::kText ? value.text : format_significant(value.number, 6);
}

ReportCell figure_cell(const Accelerator& a, const Quantity& q, SourceIndex& sources) {
  const Figure* f = a.figure(q.key);
  if (f == nullptr) return {std::nullopt, "-"};
  std::string text = format_figure(q, f->used) + " " + sources.cite(f->used.source);
  for (const FigureValue& alt : f->alternatives) {
    text += " (alt. " + format_figure(q, alt) + " " + sources.cite(alt.source) + ")";
  }
  std::optional<double> value;
  if (q.kind != QuantityKind::kText) value = f->used.number;
  return {value, text};
}

struct DerivedRow {
  std::string label;
  std::string unit;
  std::vector<std::optional<double>> values;
};

void add_ratio_cells(const std::vector<std::optional<double>>& values, ReportRow& row) {
  for (size_t i = 1; i < values.size(); ++i) {
    if (values[0] && values[i] && *values[0] > 0) {
      const double ratio = *values[i] / *values[0];
      row.cells.push_back({ratio, format_significant(ratio, 3) + "x"});
    } else {
      row.cells.push_back({std::nullopt, "-"});
    }
  }
}

std::vector<const Quantity*> rate_rows(const std::vector<Column>& columns) {
  std::vector<const Quantity*> rows;
  if (columns.front().pin != nullptr) return {columns.front().pin};
  for (const Quantity& q : datasheet_quantities()) {  // dense only, unless pinned
    if (q.kind == QuantityKind::kPeakRate && !q.sparse) rows.push_back(&q);
  }
  return rows;
}

Report side_by_side(const DatasheetDatabase& database, const std::vector<Column>& columns) {
  SourceIndex sources(database);
  ReportTable table;
  table.id = "specs";
  table.title = "Datasheet figures (dense unless marked sparse; ratios only within a row)";
  table.label_columns = {"figure", "unit"};
  for (const Column& c : columns) table.columns.push_back(c.entry->name);
  for (size_t i = 1; i < columns.size(); ++i) {
    table.columns.push_back(columns[i].entry->name + " / " + columns[0].entry->name);
  }
  const bool pinned = columns.front().pin != nullptr;
  ReportTable notes;
  notes.id = "notes";
  notes.title = "Notes on figures";
  notes.label_columns = {"accelerator", "figure"};
  notes.columns = {"note"};
  const auto add_row = [&](const Quantity& q) {
    ReportRow row{{q.label, q.unit}, {}};
    std::vector<std::optional<double>> values;
    bool any = false;
    for (const Column& c : columns) {
      ReportCell cell = figure_cell(*c.entry, q, sources);
      any = any || cell.text != "-";
      values.push_back(cell.value);
      row.cells.push_back(std::move(cell));
      const Figure* f = c.entry->figure(q.key);
      if (f == nullptr) continue;
      std::string note = f->used.note;
      for (const FigureValue& alt : f->alternatives) {
        if (!alt.note.empty()) note += (note.empty() ? "" : "; ") + ("alt.: " + alt.note);
      }
      if (!note.empty()) notes.rows.push_back({{c.entry->name, q.label}, {{std::nullopt, note}}});
    }
    if (!any) return;
    if (q.kind == QuantityKind::kText) {
      row.cells.resize(row.cells.size() + columns.size() - 1, {std::nullopt, ""});
    } else {
      add_ratio_cells(values, row);
    }
    table.rows.push_back(std::move(row));
  };
  for (const Quantity& q : datasheet_quantities()) {
    const bool is_rate = q.kind == QuantityKind::kPeakRate;
    if (pinned && is_rate && &q != columns.front().pin) continue;
    if (pinned && q.kind == QuantityKind::kText) continue;
    add_row(q);
  }
  // Derived: per watt and bytes per FLOP, each from one precision's rate.
  for (const Quantity* rate : rate_rows(columns)) {
    DerivedRow per_watt{"per watt: " + rate->label, rate->unit + "/W", {}};
    DerivedRow per_flop{
        "memory bytes per op: " + rate->label, rate->unit == "TOPS" ? "B/op" : "B/FLOP", {}};
    bool any = false;
    for (const Column& c : columns) {
      const auto peak = c.entry->number(rate->key);
      const auto tdp = c.entry->number("tdp_w");
      const auto bandwidth = c.entry->number("memory_bandwidth_gbs");
      any = any || peak.has_value();
      per_watt.values.push_back(peak && tdp ? std::optional<double>(*peak / *tdp) : std::nullopt);
      per_flop.values.push_back(
          peak && bandwidth ? std::optional<double>(*bandwidth / (*peak * 1e3)) : std::nullopt);
    }
    if (!any) continue;
    for (const DerivedRow* derived : {&per_watt, &per_flop}) {
      ReportRow row{{derived->label, derived->unit}, {}};
      for (const auto& v : derived->values) {
        row.cells.push_back(v ? ReportCell{*v, format_significant(*v, 3)}
                              : ReportCell{std::nullopt, "-"});
      }
      add_ratio_cells(derived->values, row);
      table.rows.push_back(std::move(row));
    }
  }
  Report report;
  report.title = "gpubench specs (" + database.origin + ")";
  report.tables.push_back(std::move(table));
  if (!notes.rows.empty()) report.tables.push_back(std::move(notes));
  report.tables.push_back(sources.table());
  return report;
}

Report overview(const DatasheetDatabase& database) {
  SourceIndex sources(database);
  ReportTable table;
  table.id = "accelerators";
  table.title = "Accelerators in the datasheet database (dense peak rates)";
  table.label_columns = {"name", "full name"};
  const std::vector<std::string> keys = {"memory_gb",   "memory_bandwidth_gbs", "tdp_w",
                                         "fp32_tflops", "tf32_tflops",          "bf16_tflops",
                                         "fp8_tflops"};
  for (const std::string& key : keys) {
    const Quantity& q = *find_quantity(key);
    table.columns.push_back(q.label + " (" + q.unit + ")");
  }
  for (const Accelerator& a : database.accelerators) {
    ReportRow row{{a.name, a.full_name}, {}};
    for (const std::string& key : keys)
      row.cells.push_back(figure_cell(a, *find_quantity(key), sources));
    table.rows.push_back(std::move(row));
  }
  Report report;
  report.title = "gpubench specs (" + database.origin + ")";
  report.tables.push_back(std::move(table));
  report.tables.push_back(sources.table());
  return report;
}

}  // namespace

std::string format_significant(double value, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*g", digits, value);
  return buffer;
}

Report build_specs_report(const DatasheetDatabase& database,
                          const std::vector<std::string>& requests) {
  if (requests.empty()) return overview(database);
  std::vector<Column> columns;
  for (const std::string& request : requests) columns.push_back(parse_request(database, request));
  check_pins(columns);
  return side_by_side(database, columns);
}

}  // namespace gpubench
