// Lines over categories (GPU counts, batches): a colour per series; past kColouredSeries series,
// small multiples, one panel per series' panel name, each panel with its own few colours on a
// shared value axis.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gpubench::charts {

struct LineSeries {
  std::string name;
  std::string panel;  // the small multiple it is drawn in when there are too many for one
  std::vector<std::optional<double>> values;  // one per category, none where it was not run
};

struct LineChart {
  std::string title;
  std::string y_label;
  std::string x_label;
  std::vector<std::string> categories;
  std::vector<LineSeries> series;
  bool from_zero = true;
};

// One inline <svg>, or one per panel.
std::string render_line_chart(const LineChart& chart);

}  // namespace gpubench::charts
