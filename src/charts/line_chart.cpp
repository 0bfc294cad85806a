#include "charts/line_chart.h"

#include <algorithm>
#include <cmath>

#include "charts/axis.h"
#include "charts/palette.h"
#include "charts/svg_elements.h"
#include "common/text_table.h"

namespace gpubench::charts {
namespace {

constexpr double kFullWidth = 900, kPanelWidth = 440;

struct Panel {
  std::string title;
  std::vector<const LineSeries*> series;
};

// One panel when the series can each have a colour; else a panel per panel name, cut into
// parts of at most kColouredSeries.
std::vector<Panel> panels_of(const LineChart& chart) {
  if (chart.series.size() <= kColouredSeries) {
    Panel one;
    for (const LineSeries& s : chart.series) one.series.push_back(&s);
    return {one};
  }
  std::vector<Panel> panels;
  for (const LineSeries& s : chart.series) {
    auto at = std::find_if(panels.begin(), panels.end(), [&](const Panel& p) {
      return p.title == s.panel && p.series.size() < kColouredSeries;
    });
    if (at == panels.end()) at = panels.insert(panels.end(), Panel{s.panel, {}});
    at->series.push_back(&s);
  }
  return panels;
}

Axis y_axis_of(const LineChart& chart) {
  double low = INFINITY, high = -INFINITY;
  for (const LineSeries& s : chart.series) {
    for (const auto& v : s.values) {
      if (v && std::isfinite(*v)) low = std::min(low, *v), high = std::max(high, *v);
    }
  }
  if (!std::isfinite(low)) low = 0, high = 1;
  return linear_axis(low, high, chart.from_zero);
}

std::string draw_panel(const LineChart& chart, const Panel& panel, const Axis& axis, double width) {
  const double plot_height = width == kFullWidth ? 240 : 160;
  double label_w = 0;
  for (double tick : axis.ticks) label_w = std::max(label_w, text_width(axis.label(tick), 11));
  const double left = 22 + label_w + 8, right = width - 16;
  const double top = panel.title.empty() ? 10 : 30, bottom = top + plot_height;
  const auto y_of = [&](double v) { return bottom - plot_height * axis.fraction(v); };
  const size_t n = std::max<size_t>(chart.categories.size(), 1);
  const double step = (right - left) / static_cast<double>(n);
  const auto x_of = [&](size_t i) { return left + step * (static_cast<double>(i) + 0.5); };
  std::string svg;
  if (!panel.title.empty()) {
    svg += svg_text(4, 16, fitted_text(panel.title, width - 8), {"start", 12, "bold"}, panel.title);
  }
  for (double tick : axis.ticks) {
    svg += svg_line(left, y_of(tick), right, y_of(tick), "#dddddd");
    svg += svg_text(left - 6, y_of(tick) + 4, axis.label(tick), {"end", 11});
  }
  svg += "<text x=\"12\" y=\"" + svg_number((top + bottom) / 2) + "\" transform=\"rotate(-90 12 " +
         svg_number((top + bottom) / 2) + ")\" text-anchor=\"middle\" font-size=\"12\">" +
         escape_markup(chart.y_label) + "</text>\n";
  double shown_until = -INFINITY;  // categories' labels thinned where they would collide
  for (size_t i = 0; i < chart.categories.size(); ++i) {
    const double w = text_width(chart.categories[i], 11);
    if (x_of(i) - w / 2 < shown_until + 6) continue;
    svg += svg_text(x_of(i), bottom + 15, chart.categories[i], {"middle", 11});
    shown_until = x_of(i) + w / 2;
  }
  svg += svg_text((left + right) / 2, bottom + 32, chart.x_label, {"middle"});
  double legend_y = bottom + 44;
  for (size_t s = 0; s < panel.series.size(); ++s) {
    const LineSeries& series = *panel.series[s];
    const std::string colour = series_colour(s);
    std::string points;
    for (size_t i = 0; i < series.values.size() && i < chart.categories.size(); ++i) {
      if (!series.values[i] || !std::isfinite(*series.values[i])) continue;
      points += svg_number(x_of(i)) + "," + svg_number(y_of(*series.values[i])) + " ";
      svg += "<circle cx=\"" + svg_number(x_of(i)) + "\" cy=\"" +
             svg_number(y_of(*series.values[i])) + "\" r=\"4\" fill=\"" + colour + "\"><title>" +
             escape_markup(series.name + ", " + chart.categories[i] + ": " +
                           axis.label(*series.values[i])) +
             "</title></circle>\n";
    }
    svg += "<polyline class=\"line\" fill=\"none\" stroke-width=\"2.5\" stroke=\"" + colour +
           "\" points=\"" + points + "\"/>\n";
    svg += svg_rect(4, legend_y, 12, 12, colour, "class=\"swatch\"");
    svg += svg_text(22, legend_y + 10.5, fitted_text(series.name, width - 26), {}, series.name);
    legend_y += 18;
  }
  const std::string title = panel.title.empty() ? chart.title : chart.title + ": " + panel.title;
  return svg_open("chart lines", width, legend_y + 6, title) + svg + svg_close();
}

}  // namespace

std::string render_line_chart(const LineChart& chart) {
  const Axis axis = y_axis_of(chart);
  const std::vector<Panel> panels = panels_of(chart);
  const double width = panels.size() == 1 ? kFullWidth : kPanelWidth;
  std::string html;
  for (const Panel& panel : panels) html += draw_panel(chart, panel, axis, width);
  return html;
}

}  // namespace gpubench::charts
