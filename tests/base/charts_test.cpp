// The charts' axes, colours and layouts (src/charts/), and the report's and trend's use of them.
#include <algorithm>
#include <regex>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "charts/axis.h"
#include "charts/bar_chart.h"
#include "charts/line_chart.h"
#include "charts/palette.h"
#include "charts/svg_elements.h"

namespace gpubench::charts {
namespace {

size_t count_of(const std::string& text, const std::string& part) {
  size_t count = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++count;
  return count;
}

// The values of attribute `name` of every element `tag` whose class contains `cls`.
std::vector<std::string> attributes(const std::string& svg, const std::string& cls,
                                    const std::string& name) {
  std::vector<std::string> values;
  const std::regex element("<[a-z]+ [^>]*class=\"" + cls + "( [^\"]*)?\"[^>]*>");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), element);
       it != std::sregex_iterator(); ++it) {
    const std::string tag = it->str();
    std::smatch value;
    if (std::regex_search(tag, value, std::regex(" " + name + "=\"([^\"]*)\""))) {
      values.push_back(value[1]);
    }
  }
  return values;
}

TEST(ChartAxis, TicksFallOnRoundNumbersCoveringTheValues) {
  const Axis efficiency = linear_axis(0.79, 1.36, true);  // 0.34, 0.68, ... before
  EXPECT_EQ(efficiency.ticks, (std::vector<double>{0, 0.5, 1.0, 1.5}));
  EXPECT_EQ(efficiency.label(0.5), "0.5");
  const Axis quarters = linear_axis(0, 0.9, true);
  EXPECT_EQ(quarters.step, 0.25);
  EXPECT_EQ(quarters.label(0.25), "0.25");
  EXPECT_EQ(quarters.label(0), "0.00");
  const Axis trend = linear_axis(1129.4, 1272.1, false);  // 1106, 1154, ... before
  EXPECT_EQ(trend.low, 1100);
  EXPECT_EQ(trend.high, 1300);
  EXPECT_EQ(trend.step, 50);
  EXPECT_EQ(trend.label(1250), "1250");
  EXPECT_EQ(linear_axis(20000, 40000, true).label(40000), "40k");
}

TEST(ChartAxis, PositiveValuesNeverGetANegativeAxis) {
  // The trend's axis had started at -493 images/sec for throughputs near zero with a wide spread.
  for (const auto& [low, high] :
       std::vector<std::pair<double, double>>{{0.4, 2900}, {3, 5}, {0, 0}, {7, 7}, {1e-3, 1e-3}}) {
    const Axis axis = linear_axis(low, high, false);
    EXPECT_GE(axis.low, 0) << low << " " << high;
    EXPECT_LE(axis.low, low);
    EXPECT_GE(axis.high, high);
    EXPECT_GT(axis.high, axis.low);
  }
}

// Values far above their spread (a throughput of 10^15 that moved by one) still get a few ticks,
// and the axis ends: ticks are counted, never stepped past the values' resolution.
TEST(ChartAxis, AHugeValueWithATinySpreadStillEnds) {
  for (const auto& [low, high] : std::vector<std::pair<double, double>>{
           {1e15, 1e15 + 1}, {1e300, 1.0000001e300}, {-5e17, -5e17 + 3}}) {
    const Axis axis = linear_axis(low, high, false);
    EXPECT_GE(axis.ticks.size(), 2u) << low;
    EXPECT_LE(axis.ticks.size(), 1001u) << low;
    EXPECT_LE(axis.low, low);
    EXPECT_GE(axis.high, high);
  }
}

TEST(ChartAxis, ValuesSpanningDecadesReadOnALogAxis) {
  EXPECT_FALSE(spans_decades(122, 9000));
  EXPECT_TRUE(spans_decades(122, 18283));
  const Axis images = value_axis(122, 18283);
  ASSERT_TRUE(images.log);
  EXPECT_EQ(images.ticks, (std::vector<double>{100, 1000, 10000, 100000}));
  EXPECT_EQ(images.label(10000), "10k");
  EXPECT_DOUBLE_EQ(images.fraction(1000), 1.0 / 3);
  const Axis two = log_axis(3, 250);  // two decades: 2 and 5 between
  EXPECT_EQ(two.ticks, (std::vector<double>{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000}));
  const Axis linear = value_axis(450, 4543);
  EXPECT_FALSE(linear.log);
  EXPECT_EQ(linear.low, 0);
}

TEST(ChartPalette, EachSeriesHasItsOwnColourUpToTheLimit) {
  std::set<std::string> colours;
  for (size_t i = 0; i < kColouredSeries; ++i) colours.insert(series_colour(i));
  EXPECT_EQ(colours.size(), kColouredSeries);
  EXPECT_EQ(std::string(series_colour(kColouredSeries)), kOneColour);
}

BarChart chart_of(size_t systems, bool published = false) {
  BarChart chart{"throughput", "images/sec", {}, {}};
  for (size_t g = 0; g < 3; ++g) {
    BarGroup group{"model " + std::to_string(g) + " fp16 batch 64", {}};
    for (size_t s = 0; s < systems; ++s) {
      group.bars.push_back({"system " + std::to_string(s), 100.0 + 10 * s + g, 2.0, published});
    }
    chart.groups.push_back(group);
  }
  return chart;
}

TEST(BarChartLayout, ColoursAreNeverRepeatedAndEveryBarIsLabelled) {
  for (size_t systems : {3, 8, 13}) {
    const std::string svg = render_bar_chart(chart_of(systems), "c");
    const std::vector<std::string> fills = attributes(svg, "bar", "fill");
    ASSERT_EQ(fills.size(), 3 * systems);
    std::set<std::string> distinct(fills.begin(), fills.end());
    EXPECT_EQ(distinct.size(), systems <= kColouredSeries ? systems : 1) << systems;
    for (size_t s = 0; s < systems; ++s) {
      // Each bar's row label names its system, as does the legend where there is one.
      EXPECT_EQ(count_of(svg, ">system " + std::to_string(s) + "</text>"),
                systems <= kColouredSeries ? 4u : 3u);
    }
    // A legend of colours only where colours tell the systems apart.
    EXPECT_EQ(count_of(svg, "class=\"swatch\""), (systems <= kColouredSeries ? systems : 0) + 1);
  }
}

TEST(BarChartLayout, BarsKeepTheirThicknessHoweverManySeries) {
  const auto heights = attributes(render_bar_chart(chart_of(14), "c"), "bar", "height");
  for (const std::string& height : heights) EXPECT_EQ(height, "12.0");
}

TEST(BarChartLayout, ErrorBarsSpanTheTrialsSpreadAndPublishedBarsAreHatched) {
  BarChart chart{"t",
                 "images/sec",
                 {{"resnet50",
                   {{"A40", 1000, 10.0, false},
                    {"L40S", 500, 171.0, false},
                    {"H100 (Lambda)", 900, std::nullopt, true}}}},
                 {}};
  const std::string svg = render_bar_chart(chart, "c0");
  // A40: a line from 900 to 1100 and two caps; L40S's low end runs off the axis: no cap there.
  EXPECT_EQ(count_of(svg, "class=\"error-bar\""), 2u + 1 + 1 + 1);
  EXPECT_NE(svg.find("1,000 \xC2\xB1"
                     "10.0%"),
            std::string::npos);
  EXPECT_NE(svg.find("class=\"bar published\""), std::string::npos);
  EXPECT_NE(svg.find("fill=\"url(#c0-hatch-2)\""), std::string::npos);
  EXPECT_NE(svg.find("<pattern id=\"c0-hatch-2\""), std::string::npos);
  EXPECT_NE(svg.find("900.0 (published)"), std::string::npos);
  EXPECT_NE(svg.find("published figure (not measured here)"), std::string::npos);
}

TEST(BarChartLayout, LongLabelsAreCutToTheirColumnWithTheWholeInATooltip) {
  const std::string name(200, 'x');
  BarChart chart{"t", "u", {{"g", {{name, 10, std::nullopt, false}}}}, {}};
  const std::string svg = render_bar_chart(chart, "c");
  EXPECT_NE(svg.find("<title>" + name + "</title>"), std::string::npos);
  EXPECT_NE(svg.find("...</text>"), std::string::npos);
  EXPECT_LE(text_width(fitted_text(name, 300)), 300);
}

LineChart lines_of(size_t series, size_t per_panel) {
  LineChart chart{"Scaling efficiency",          "efficiency", "GPUs",
                  {"1 GPU", "4 GPUs", "8 GPUs"}, {},           true};
  for (size_t s = 0; s < series; ++s) {
    chart.series.push_back({"line " + std::to_string(s),
                            "model " + std::to_string(s / per_panel),
                            {1.0, 0.9, std::nullopt}});
  }
  return chart;
}

TEST(LineChartLayout, ManySeriesBecomeSmallMultiplesEachInItsOwnColours) {
  EXPECT_EQ(count_of(render_line_chart(lines_of(8, 2)), "<svg"), 1u);
  const std::string panels = render_line_chart(lines_of(13, 2));  // 13 lines: 7 models
  EXPECT_EQ(count_of(panels, "<svg"), 7u);
  EXPECT_EQ(count_of(panels, "class=\"line\""), 13u);
  const std::string one_model = render_line_chart(lines_of(10, 10));  // 10 in one panel: 8 + 2
  EXPECT_EQ(count_of(one_model, "<svg"), 2u);
  for (const std::string& svg : {panels, one_model}) {
    size_t start = 0;
    while ((start = svg.find("<svg", start)) != std::string::npos) {
      const std::string panel = svg.substr(start, svg.find("</svg>", start) - start);
      const auto strokes = attributes(panel, "line", "stroke");
      EXPECT_EQ(std::set<std::string>(strokes.begin(), strokes.end()).size(), strokes.size());
      ++start;
    }
  }
}

TEST(LineChartLayout, CategoryLabelsThatWouldCollideAreThinned) {
  LineChart chart{"t", "y", "batch", {}, {{"s", "", {}}}, true};
  for (int i = 0; i < 60; ++i) {
    chart.categories.push_back("batch " + std::to_string(1000 + i));
    chart.series[0].values.push_back(i);
  }
  const std::string svg = render_line_chart(chart);
  const size_t shown = count_of(svg, ">batch 10");
  EXPECT_GT(shown, 3u);
  EXPECT_LT(shown, 20u);  // 60 labels of ~70 px do not fit 850 px
}

}  // namespace
}  // namespace gpubench::charts
