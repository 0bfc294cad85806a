// Horizontal bars, one group (a benchmark) after another, each bar labelled with its series (a
// system): labels never cross, bars keep their thickness however many there are, and a value
// axis that is logarithmic where the values span decades. Bars carry the trials' spread as error
// bars; a published figure's bar is hatched.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gpubench::charts {

struct Bar {
  std::string series;
  double value = 0;
  std::optional<double> spread_pct;  // the trials' coefficient of variation, %
  bool published = false;
};

struct BarGroup {
  std::string label;
  std::vector<Bar> bars;
};

struct BarChart {
  std::string title;
  std::string value_label;  // the unit
  std::vector<BarGroup> groups;
  // Every series in colour order, so that a system keeps its colour from chart to chart; those
  // of the bars, in order met, where empty.
  std::vector<std::string> series = {};
};

// One inline <svg>; `id` prefixes its pattern ids, unique within a page.
std::string render_bar_chart(const BarChart& chart, const std::string& id);

}  // namespace gpubench::charts
