// Markdown, CSV, JSON and self-contained HTML (inline SVG charts) renderings of a Report.
#include <algorithm>
#include <cmath>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "common/input_limits.h"
#include "common/json_text.h"
#include "common/text_table.h"
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

const char* const kPalette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};

std::string color(size_t i) {
  return kPalette[i % (sizeof(kPalette) / sizeof(kPalette[0]))];
}

double chart_max(const ReportChart& chart) {
  double top = 0;
  for (const auto& series : chart.values) {
    for (const auto& v : series) {
      if (v && std::isfinite(*v)) top = std::max(top, *v);
    }
  }
  return top > 0 && std::isfinite(top * 1.1) ? top * 1.1 : top > 0 ? top : 1.0;
}

std::string svg_chart(const ReportChart& chart) {
  const double width = 900, height = 360, left = 70, right = 20, top = 30, bottom = 90;
  const double plot_w = width - left - right, plot_h = height - top - bottom;
  const double y_max = chart_max(chart);
  std::ostringstream svg;
  svg << "<svg class=\"chart\" width=\"" << width << "\" height=\""
      << height + 20.0 * chart.series.size() << "\" role=\"img\">\n";
  svg << "<title>" << escape_markup(chart.title) << "</title>\n";
  for (int tick = 0; tick <= 4; ++tick) {
    const double value = y_max * tick / 4, y = top + plot_h - plot_h * tick / 4;
    svg << "<line x1=\"" << left << "\" y1=\"" << y << "\" x2=\"" << left + plot_w << "\" y2=\""
        << y << "\" stroke=\"#ddd\"/><text x=\"" << left - 6 << "\" y=\"" << y + 4
        << "\" text-anchor=\"end\" font-size=\"11\">" << format_fixed(value, y_max < 10 ? 2 : 0)
        << "</text>\n";
  }
  svg << "<text x=\"14\" y=\"" << top + plot_h / 2 << "\" transform=\"rotate(-90 14 "
      << top + plot_h / 2 << ")\" text-anchor=\"middle\" font-size=\"12\">"
      << escape_markup(chart.y_label) << "</text>\n";
  const size_t groups = std::max<size_t>(chart.groups.size(), 1);
  const double group_w = plot_w / static_cast<double>(groups);
  for (size_t g = 0; g < chart.groups.size(); ++g) {
    const double x = left + group_w * (static_cast<double>(g) + 0.5);
    svg << "<text x=\"" << x << "\" y=\"" << top + plot_h + 14
        << "\" text-anchor=\"end\" font-size=\"11\" transform=\"rotate(-30 " << x << " "
        << top + plot_h + 14 << ")\">" << escape_markup(chart.groups[g]) << "</text>\n";
  }
  // Charts never carry nan or inf: values are checked where results are read, and clamped here.
  const auto y_of = [&](double v) {
    return top + plot_h - plot_h * std::clamp(v / y_max, 0.0, 1.0);
  };
  const size_t series = std::max<size_t>(chart.series.size(), 1);
  for (size_t s = 0; s < chart.series.size(); ++s) {
    if (chart.kind == ReportChart::Kind::kBars) {
      const double bar_w = group_w * 0.8 / static_cast<double>(series);
      for (size_t g = 0; g < chart.values[s].size(); ++g) {
        const auto& v = chart.values[s][g];
        if (!v || !std::isfinite(*v)) continue;
        const double x = left + group_w * static_cast<double>(g) + group_w * 0.1 +
                         bar_w * static_cast<double>(s);
        svg << "<rect class=\"bar\" x=\"" << x << "\" y=\"" << y_of(*v) << "\" width=\"" << bar_w
            << "\" height=\"" << top + plot_h - y_of(*v) << "\" fill=\"" << color(s) << "\"><title>"
            << escape_markup(chart.series[s] + ", " + chart.groups[g] + ": " + format_fixed(*v, 2))
            << "</title></rect>\n";
      }
    } else {
      std::string points;
      for (size_t g = 0; g < chart.values[s].size(); ++g) {
        const auto& v = chart.values[s][g];
        if (!v || !std::isfinite(*v)) continue;
        const double x = left + group_w * (static_cast<double>(g) + 0.5);
        points += format_fixed(x, 1) + "," + format_fixed(y_of(*v), 1) + " ";
        svg << "<circle cx=\"" << x << "\" cy=\"" << y_of(*v) << "\" r=\"4\" fill=\"" << color(s)
            << "\"/>\n";
      }
      svg << "<polyline class=\"line\" fill=\"none\" stroke-width=\"3\" stroke=\"" << color(s)
          << "\" points=\"" << points << "\"/>\n";
    }
  }
  for (size_t s = 0; s < chart.series.size(); ++s) {
    const double y = height + 20.0 * static_cast<double>(s) - 6;
    svg << "<rect x=\"" << left << "\" y=\"" << y - 10 << "\" width=\"12\" height=\"12\" fill=\""
        << color(s) << "\"/><text x=\"" << left + 18 << "\" y=\"" << y << "\" font-size=\"12\">"
        << escape_markup(chart.series[s]) << "</text>\n";
  }
  svg << "</svg>\n";
  return svg.str();
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
       << "table{border-collapse:collapse;margin:8px 0 24px}"
       << "th,td{border:1px solid #ccc;padding:4px 8px;text-align:right}"
       << "th{background:#f3f3f3}td.label{text-align:left}\n</style></head><body>\n";
  html << "<h1>" << escape_markup(report.title) << "</h1>\n";
  for (const ReportChart& chart : report.charts) {
    html << "<h2>" << escape_markup(chart.title) << "</h2>\n" << svg_chart(chart);
  }
  for (const ReportTable& table : report.tables) {
    html << "<h2>" << escape_markup(table.title) << "</h2>\n<table><tr>";
    for (const auto& h : header_of(table)) html << "<th>" << escape_markup(h) << "</th>";
    html << "</tr>\n";
    for (const ReportRow& row : table.rows) {
      html << "<tr>";
      for (const auto& label : row.labels)
        html << "<td class=\"label\">" << escape_markup(label) << "</td>";
      for (const auto& cell : row.cells) html << "<td>" << escape_markup(cell.text) << "</td>";
      html << "</tr>\n";
    }
    html << "</table>\n";
    for (const std::string& note : table.notes) html << "<p>" << escape_markup(note) << "</p>\n";
  }
  if (report.history && !report.history->benchmarks.empty()) {
    html << "<h2>History</h2>\n" << render_trend_charts(*report.history);
  }
  html << "</body></html>\n";
  return html.str();
}

void check_report_format(const std::string& format) {
  for (const char* known : {"markdown", "md", "csv", "json", "html"}) {
    if (format == known) return;
  }
  throw UsageError("unknown format '" + echoed(format) + "'; allowed: markdown, csv, json, html");
}

std::string render_report(const Report& report, const std::string& format) {
  check_report_format(format);
  if (format == "csv") return render_csv(report);
  if (format == "json") return render_json(report);
  if (format == "html") return render_html(report);
  return render_markdown(report);
}

}  // namespace gpubench
