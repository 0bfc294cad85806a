#include "charts/bar_chart.h"

#include <algorithm>
#include <cmath>

#include "charts/axis.h"
#include "charts/palette.h"
#include "charts/svg_elements.h"
#include "common/text_table.h"

namespace gpubench::charts {
namespace {

constexpr double kWidth = 900, kRow = 18, kBarHeight = 12, kHeading = 22, kLegendRow = 18;

std::vector<std::string> series_of(const BarChart& chart) {
  std::vector<std::string> series = chart.series;
  for (const BarGroup& group : chart.groups) {
    for (const Bar& bar : group.bars) {
      if (std::find(series.begin(), series.end(), bar.series) == series.end()) {
        series.push_back(bar.series);
      }
    }
  }
  return series;
}

std::string value_text(const Bar& bar) {
  std::string text = grouped_number(bar.value, bar.value < 10 ? 2 : bar.value < 1000 ? 1 : 0);
  if (bar.published) return text + " (published)";
  if (bar.spread_pct) text += " \xC2\xB1" + format_fixed(*bar.spread_pct, 1) + "%";
  return text;
}

// The bar's error bar ends, as values: the median less and plus the trials' spread.
std::pair<double, double> error_range(const Bar& bar) {
  if (!bar.spread_pct || bar.published) return {bar.value, bar.value};
  const double half = bar.value * *bar.spread_pct / 100.0;
  return {bar.value - half, bar.value + half};
}

struct Layout {
  std::vector<std::string> series;
  bool coloured = false;
  Axis axis;
  double label_w = 0, value_w = 0, plot_left = 0, plot_right = 0, legend_h = 0, top = 0;
  double x_of(double value) const {
    return plot_left + (plot_right - plot_left) * axis.fraction(value);
  }
  size_t series_index(const std::string& name) const {
    return static_cast<size_t>(std::find(series.begin(), series.end(), name) - series.begin());
  }
};

struct LegendEntry {
  std::string text, swatch;  // swatch: a fill
};

std::vector<LegendEntry> legend_of(const BarChart& chart, const Layout& layout,
                                   const std::string& id) {
  std::vector<LegendEntry> entries;
  if (layout.coloured) {
    for (size_t s = 0; s < layout.series.size(); ++s) {
      entries.push_back({layout.series[s], series_colour(s)});
    }
  }
  bool published = false, spread = false;
  for (const BarGroup& group : chart.groups) {
    for (const Bar& bar : group.bars) {
      published = published || bar.published;
      spread = spread || (bar.spread_pct && !bar.published);
    }
  }
  if (published)
    entries.push_back({"published figure (not measured here)", "url(#" + id + "-hatch-legend)"});
  if (spread) entries.push_back({"error bar: \xC2\xB1 the trials' CV", kErrorBarColour});
  return entries;
}

// Legend entries flowed into rows across the width; returns the rows' height.
double draw_legend(std::string& svg, const std::vector<LegendEntry>& entries, double top) {
  double x = 4, y = top;
  for (const LegendEntry& entry : entries) {
    const std::string text = fitted_text(entry.text, kWidth - 30);
    const double w = 18 + text_width(text) + 16;
    if (x > 4 && x + w > kWidth) x = 4, y += kLegendRow;
    svg += svg_rect(x, y, 12, 12, entry.swatch, "class=\"swatch\"");
    svg += svg_text(x + 18, y + 10.5, text);
    x += w;
  }
  return entries.empty() ? 0 : y - top + kLegendRow + 6;
}

Layout layout_of(const BarChart& chart) {
  Layout layout;
  layout.series = series_of(chart);
  layout.coloured = layout.series.size() <= kColouredSeries;
  double low = INFINITY, high = 0;
  for (const BarGroup& group : chart.groups) {
    for (const Bar& bar : group.bars) {
      layout.label_w = std::max(layout.label_w, text_width(bar.series));
      layout.value_w = std::max(layout.value_w, text_width(value_text(bar)));
      if (bar.value > 0) low = std::min(low, bar.value);
      high = std::max({high, bar.value, error_range(bar).second});
    }
  }
  layout.axis = value_axis(std::isfinite(low) ? low : 1, high > 0 ? high : 1);
  layout.label_w = std::min(layout.label_w, kWidth * 0.36);
  layout.plot_left = 8 + layout.label_w + 8;
  layout.plot_right = kWidth - layout.value_w - 12;
  return layout;
}

void draw_axis(std::string& svg, const Layout& layout, double plot_top, double plot_bottom,
               const std::string& unit) {
  for (double tick : layout.axis.ticks) {
    const double x = layout.x_of(tick);
    svg += svg_line(x, plot_top, x, plot_bottom, "#dddddd");
    svg += svg_text(x, plot_bottom + 14, layout.axis.label(tick), {"middle", 11});
  }
  svg += svg_line(layout.plot_left, plot_top, layout.plot_left, plot_bottom, "#888888");
  svg += svg_text((layout.plot_left + layout.plot_right) / 2, plot_bottom + 32,
                  unit + (layout.axis.log ? " (log scale)" : ""), {"middle"});
}

void draw_bar(std::string& svg, const Layout& layout, const Bar& bar, const std::string& group,
              double y, const std::string& id) {
  const size_t s = layout.series_index(bar.series);
  const std::string colour = layout.coloured ? series_colour(s) : kOneColour;
  svg += svg_text(layout.plot_left - 8, y + kBarHeight - 1.5,
                  fitted_text(bar.series, layout.label_w), {"end"}, bar.series);
  const double x0 = layout.plot_left, x1 = layout.x_of(bar.value);
  const std::string fill =
      bar.published ? "url(#" + id + "-hatch-" + std::to_string(s) + ")" : colour;
  svg += svg_rect(x0, y, x1 - x0, kBarHeight, fill,
                  std::string("class=\"bar") + (bar.published ? " published" : "") +
                      "\" stroke=\"" + colour + "\"",
                  bar.series + ", " + group + ": " + value_text(bar));
  double end = x1;
  if (const auto [lo, hi] = error_range(bar); hi > lo) {
    const double xl = layout.x_of(lo), xh = layout.x_of(hi), mid = y + kBarHeight / 2;
    svg += svg_line(xl, mid, xh, mid, kErrorBarColour, 1.5, "class=\"error-bar\"");
    for (const double at : {lo, hi}) {  // a cap only where the end lies on the axis
      if (at > layout.axis.low && at < layout.axis.high) {
        svg += svg_line(layout.x_of(at), y + 1, layout.x_of(at), y + kBarHeight - 1,
                        kErrorBarColour, 1.5, "class=\"error-bar\"");
      }
    }
    end = std::max(end, xh);
  }
  svg += svg_text(end + 5, y + kBarHeight - 1.5, value_text(bar), {"start", 11});
}

}  // namespace

std::string render_bar_chart(const BarChart& chart, const std::string& id) {
  const Layout layout = layout_of(chart);
  std::string legend, grid, bars, defs = "<defs>\n";
  for (size_t s = 0; s < layout.series.size(); ++s) {
    defs += hatch_pattern(id + "-hatch-" + std::to_string(s),
                          layout.coloured ? series_colour(s) : kOneColour);
  }
  defs += hatch_pattern(id + "-hatch-legend", "#888888") + "</defs>\n";
  double y = 4;
  y += draw_legend(legend, legend_of(chart, layout, id), y);
  const double plot_top = y;
  for (const BarGroup& group : chart.groups) {
    if (group.bars.empty()) continue;
    bars += svg_text(4, y + 15, fitted_text(group.label, kWidth - 8), {"start", 12, "bold"},
                     group.label);
    y += kHeading;
    for (const Bar& bar : group.bars) {
      draw_bar(bars, layout, bar, group.label, y, id);
      y += kRow;
    }
    y += 4;
  }
  draw_axis(grid, layout, plot_top, y, chart.value_label);  // under the bars
  const double height = y + 40;
  return svg_open("chart bars", kWidth, height, chart.title) + defs + legend + grid + bars +
         svg_close();
}

}  // namespace gpubench::charts
