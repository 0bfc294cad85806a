// Markdown, CSV, JSON and self-contained HTML (inline SVG charts) renderings of a Report.
#include <algorithm>
#include <cmath>
#include <sstream>

#include <nlohmann/json.hpp>

#include "charts/bar_chart.h"
#include "charts/line_chart.h"
#include "common/errors.h"
#include "common/input_limits.h"
#include "common/json_text.h"
#include "common/text_table.h"
#include "reporting/markdown_text.h"
#include "reporting/report.h"

namespace gpubench {
namespace {

std::vector<std::string> header_of(const ReportTable& table) {
  std::vector<std::string> header = table.label_columns;
  header.insert(header.end(), table.columns.begin(), table.columns.end());
  return header;
}

std::vector<std::string> cells_of(const ReportRow& row) {
  std::vector<std::string> cells = row.labels;
  for (const ReportCell& cell : row.cells) cells.push_back(cell.text);
  return cells;
}

std::string chart_html(const ReportChart& chart, size_t index) {
  if (const auto* bars = std::get_if<charts::BarChart>(&chart)) {
    return "<h2>" + escape_markup(bars->title) + "</h2>\n" +
           charts::render_bar_chart(*bars, "chart" + std::to_string(index));
  }
  const auto& lines = std::get<charts::LineChart>(chart);
  return "<h2>" + escape_markup(lines.title) + "</h2>\n<div class=\"panels\">" +
         charts::render_line_chart(lines) + "</div>\n";
}

// A table with more value columns than a page shows side by side is cut into parts, each with
// the label columns, so the page never scrolls sideways.
constexpr size_t kHtmlValueColumns = 5;

void table_html(std::ostringstream& html, const ReportTable& table) {
  const size_t parts =
      std::max<size_t>((table.columns.size() + kHtmlValueColumns - 1) / kHtmlValueColumns, 1);
  for (size_t part = 0; part < parts; ++part) {
    const size_t first = part * kHtmlValueColumns;
    const size_t last = std::min(first + kHtmlValueColumns, table.columns.size());
    html << "<h2>" << escape_markup(table.title);
    if (parts > 1) {
      html << " <small>(columns " << first + 1 << "-" << last << " of " << table.columns.size()
           << ")</small>";
    }
    html << "</h2>\n<table><tr>";
    for (const auto& h : table.label_columns) html << "<th>" << escape_markup(h) << "</th>";
    for (size_t c = first; c < last; ++c)
      html << "<th>" << escape_markup(table.columns[c]) << "</th>";
    html << "</tr>\n";
    for (const ReportRow& row : table.rows) {
      html << "<tr>";
      for (const auto& label : row.labels)
        html << "<td class=\"label\">" << escape_markup(label) << "</td>";
      for (size_t c = first; c < last && c < row.cells.size(); ++c) {
        html << "<td>" << escape_markup(row.cells[c].text) << "</td>";
      }
      html << "</tr>\n";
    }
    html << "</table>\n";
  }
  for (const std::string& note : table.notes) html << "<p>" << escape_markup(note) << "</p>\n";
}

}  // namespace

std::string render_markdown(const Report& report) {
  std::string out = "# " + terminal_safe(report.title) + "\n";
  for (const ReportTable& table : report.tables) {
    out += "\n## " + terminal_safe(table.title) + "\n\n";
    const std::vector<std::string> header = header_of(table);
    out += markdown_row(header);
    out += markdown_row(std::vector<std::string>(header.size(), "---"));
    for (const ReportRow& row : table.rows) out += markdown_row(cells_of(row));
    if (!table.notes.empty()) out += "\n";
    for (const std::string& note : table.notes) out += "- " + terminal_safe(note) + "\n";
  }
  return out;
}

std::string render_text_table(const ReportTable& table, size_t max_width) {
  TextTable text(header_of(table));
  for (const ReportRow& row : table.rows) text.add_row(cells_of(row));
  return text.render_in_parts(max_width, table.label_columns.size());
}

std::string render_text(const Report& report, size_t max_width) {
  std::string out = wrapped_line(terminal_safe(report.title), max_width);
  for (const ReportTable& table : report.tables) {
    out += "\n" + wrapped_line(terminal_safe(table.title), max_width) + "\n" +
           render_text_table(table, max_width);
    if (!table.notes.empty()) out += "\n";
    for (const std::string& note : table.notes) {
      out += wrapped_line("- " + terminal_safe(note), max_width);
    }
  }
  return out;
}

std::string render_csv(const Report& report) {
  std::vector<std::string> labels;  // every table's label columns, in the order first met
  for (const ReportTable& table : report.tables) {
    for (const std::string& label : table.label_columns) {
      if (std::find(labels.begin(), labels.end(), label) == labels.end()) labels.push_back(label);
    }
  }
  const auto number = [](const std::optional<double>& value) {
    if (!value || !std::isfinite(*value)) return std::string();
    if (std::abs(*value) < 9e15 && *value == std::trunc(*value)) {  // bytes, counts
      return std::to_string(static_cast<int64_t>(*value));
    }
    return nlohmann::json(*value).dump();  // the shortest text that reads back the same
  };
  std::vector<std::string> header = {"table"};
  header.insert(header.end(), labels.begin(), labels.end());
  header.insert(header.end(), {"column", "value", "spread_pct", "text"});
  std::string out = csv_record(header);
  for (const ReportTable& table : report.tables) {
    const auto fields_of = [&](const std::vector<std::string>& row_labels) {
      std::vector<std::string> fields = {table.id};
      for (const std::string& label : labels) {
        const auto at = std::find(table.label_columns.begin(), table.label_columns.end(), label);
        const auto index = static_cast<size_t>(at - table.label_columns.begin());
        fields.push_back(index < row_labels.size() ? row_labels[index] : "");
      }
      return fields;
    };
    for (const ReportRow& row : table.rows) {
      for (size_t c = 0; c < row.cells.size() && c < table.columns.size(); ++c) {
        const ReportCell& cell = row.cells[c];
        std::vector<std::string> fields = fields_of(row.labels);
        fields.insert(fields.end(), {table.columns[c], number(cell.value), number(cell.spread_pct),
                                     terminal_safe(cell.text)});
        out += csv_record(fields);
      }
    }
    for (const std::string& note : table.notes) {
      std::vector<std::string> fields = fields_of({});
      fields.insert(fields.end(), {"note", "", "", terminal_safe(note)});
      out += csv_record(fields);
    }
  }
  return out;
}

std::string render_json(const Report& report) {
  nlohmann::json tables = nlohmann::json::array();
  for (const ReportTable& table : report.tables) {
    nlohmann::json rows = nlohmann::json::array();
    for (const ReportRow& row : table.rows) {
      nlohmann::json cells = nlohmann::json::array();
      for (const ReportCell& cell : row.cells) {
        cells.push_back(
            {{"value", cell.value && std::isfinite(*cell.value) ? nlohmann::json(*cell.value)
                                                                : nlohmann::json(nullptr)},
             {"text", cell.text}});
      }
      rows.push_back({{"labels", row.labels}, {"cells", cells}});
    }
    tables.push_back({{"id", table.id},
                      {"title", table.title},
                      {"label_columns", table.label_columns},
                      {"columns", table.columns},
                      {"rows", rows},
                      {"notes", table.notes}});
  }
  return json_text(nlohmann::json{
             {"schema", kReportSchema}, {"title", report.title}, {"tables", tables}}) +
         "\n";
}

std::string render_html(const Report& report) {
  std::ostringstream html;
  html << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>"
       << escape_markup(report.title) << "</title>\n<style>\n"
       << "body{font-family:sans-serif;margin:24px;color:#222}"
       << "table{border-collapse:collapse;margin:8px 0 24px;font-size:14px}"
       << "th,td{border:1px solid #ccc;padding:4px 8px;text-align:right}"
       << "th{background:#f3f3f3}td.label{text-align:left}"
       << "svg.chart{display:block;margin:8px 0 24px}"
       << "div.panels svg{display:inline-block;vertical-align:top;margin:0 12px 16px 0}"
       << "\n</style></head><body>\n";
  html << "<h1>" << escape_markup(report.title) << "</h1>\n";
  for (size_t i = 0; i < report.charts.size(); ++i) html << chart_html(report.charts[i], i);
  for (const ReportTable& table : report.tables) table_html(html, table);
  if (report.history && !report.history->benchmarks.empty()) {
    html << "<h2>History</h2>\n" << render_trend_charts(*report.history);
  }
  html << "</body></html>\n";
  return html.str();
}

void check_report_format(const std::string& format) {
  for (const char* known : {"table", "markdown", "md", "csv", "json", "html"}) {
    if (format == known) return;
  }
  throw UsageError("unknown format '" + echoed(format) +
                   "'; allowed: table, markdown, csv, json, html");
}

std::string render_report(const Report& report, const std::string& format, size_t max_width) {
  check_report_format(format);
  if (format == "table") return render_text(report, max_width);
  if (format == "csv") return render_csv(report);
  if (format == "json") return render_json(report);
  if (format == "html") return render_html(report);
  return render_markdown(report);
}

}  // namespace gpubench
