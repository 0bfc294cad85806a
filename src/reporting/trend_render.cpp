// trend's renderings: tables (Markdown, CSV), JSON for scripts and dashboards, and HTML with one
// inline-SVG line chart per benchmark (also report's history section).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>
#include <sstream>

#include "charts/axis.h"
#include "charts/svg_elements.h"
#include "common/errors.h"
#include "common/json_text.h"
#include "common/text_table.h"
#include "reporting/report.h"
#include "reporting/trend.h"

namespace gpubench {
namespace {

std::string number(double value) {
  return std::isfinite(value) ? format_fixed(value, 1) : "-";
}

std::string percent(double fraction, bool sign = false) {
  if (!std::isfinite(fraction)) return "-";
  return (sign && fraction >= 0 ? "+" : "") + format_fixed(100.0 * fraction, 1) + "%";
}

nlohmann::json finite_or_null(double value) {
  return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(nullptr);
}

std::string detectable_text(const TrendNoise& noise) {
  if (!noise.detectable.known()) return "- (fewer than 2 trials)";
  return noise.detectable.text() + " (" + std::to_string(noise.trials) + " vs " +
         std::to_string(noise.trials) + " trials)";
}

std::string trials_needed_text(const TrendNoise& noise) {
  if (!noise.detectable.known()) return "-";
  return noise.detectable.trials_needed > 0 ? std::to_string(noise.detectable.trials_needed)
                                            : "> 1000";
}

Report trend_tables(const Trend& trend) {
  size_t runs = 0;
  for (const BenchmarkTrend& b : trend.benchmarks) runs += b.points.size() + b.failures.size();
  Report report;
  report.title = "gpubench trend (" + std::to_string(trend.benchmarks.size()) + " benchmarks, " +
                 std::to_string(runs) + " runs)";
  const std::string threshold = percent(trend.options.gate.threshold);
  ReportTable history{
      "history",
      "History per benchmark: median-trial throughput per run; what one night against another "
      "can detect (one-sided Welch, alpha " +
          format_fixed(trend.options.gate.alpha, 3) + ", power " +
          format_fixed(100.0 * trend.options.gate.power, 0) + "%)",
      {"benchmark", "unit"},
      {"runs", "failed", "first", "last", "latest", "baseline", "change points", "trial CV",
       "night-to-night CV", "detectable", "trials a side for " + threshold},
      {},
      {}};
  ReportTable changes{"change_points",
                      "Change points (binary segmentation, rank-sum test; p Bonferroni-adjusted)",
                      {"benchmark", "night"},
                      {"before", "after", "change", "p"},
                      {},
                      {}};
  const auto cell = [](const std::string& text) { return ReportCell{std::nullopt, text}; };
  for (const BenchmarkTrend& b : trend.benchmarks) {
    const std::string label = b.identity.text();
    const bool any = !b.points.empty();
    history.rows.push_back(
        {{label, b.unit},
         {cell(std::to_string(b.points.size())), cell(std::to_string(b.failures.size())),
          cell(any ? b.points.front().started_at : "-"),
          cell(any ? b.points.back().started_at : "-"),
          cell(any ? number(b.points.back().throughput) : "-"),
          cell(b.baseline ? number(b.baseline->throughput) : "-"),
          cell(std::to_string(b.change_points.size())), cell(percent(b.noise.trial_cv)),
          cell(percent(b.noise.night_cv)), cell(detectable_text(b.noise)),
          cell(trials_needed_text(b.noise))}});
    for (const TrendChange& c : b.change_points) {
      changes.rows.push_back({{label, c.started_at},
                              {cell(number(c.before)), cell(number(c.after)),
                               cell(percent(c.change, true)), cell(format_fixed(c.p_value, 6))}});
    }
  }
  report.tables.push_back(std::move(history));
  if (!changes.rows.empty()) report.tables.push_back(std::move(changes));
  return report;
}

std::string render_trend_json(const Trend& trend) {
  nlohmann::json benchmarks = nlohmann::json::array();
  for (const BenchmarkTrend& b : trend.benchmarks) {
    nlohmann::json points = nlohmann::json::array();
    for (const TrendPoint& p : b.points) {
      points.push_back(
          {{"started_at", p.started_at}, {"throughput", p.throughput}, {"trials", p.trials}});
    }
    nlohmann::json changes = nlohmann::json::array();
    for (const TrendChange& c : b.change_points) {
      changes.push_back({{"started_at", c.started_at},
                         {"before", c.before},
                         {"after", c.after},
                         {"change", c.change},
                         {"p_value", c.p_value}});
    }
    nlohmann::json failures = nlohmann::json::array();
    for (const TrendFailure& f : b.failures) {
      failures.push_back({{"started_at", f.started_at}, {"status", f.status}, {"error", f.error}});
    }
    nlohmann::json entry = {
        {"identity", b.identity_json},
        {"benchmark", b.identity.text()},
        {"unit", b.unit},
        {"points", points},
        {"change_points", changes},
        {"failures", failures},
        {"noise",
         {{"trials", b.noise.trials},
          {"trial_cv", finite_or_null(b.noise.trial_cv)},
          {"night_cv", finite_or_null(b.noise.night_cv)},
          {"detectable_slowdown", finite_or_null(b.noise.detectable.slowdown)},
          {"trials_needed", b.noise.detectable.known()
                                ? nlohmann::json(b.noise.detectable.trials_needed)
                                : nlohmann::json(nullptr)}}}};
    entry["baseline"] = b.baseline ? nlohmann::json{{"started_at", b.baseline->started_at},
                                                    {"throughput", b.baseline->throughput},
                                                    {"trials", b.baseline->trials}}
                                   : nlohmann::json(nullptr);
    benchmarks.push_back(std::move(entry));
  }
  const TrendOptions& o = trend.options;
  return json_text(nlohmann::json{
             {"schema", kTrendSchema},
             {"benchmarks", benchmarks},
             {"rule",
              {{"method",
                "binary segmentation; two-sided rank-sum test of the nights' trials with the "
                "design effect of their clustering, every one night left out"},
               {"alpha", o.change_points.alpha},
               {"min_segment", o.change_points.min_segment},
               {"min_change", o.change_points.min_change},
               {"threshold", o.gate.threshold},
               {"detect_alpha", o.gate.alpha},
               {"power", o.gate.power}}}}) +
         "\n";
}

// One row per run: the series a spreadsheet plots.
std::string render_trend_csv(const Trend& trend) {
  std::string out = "benchmark,unit,started_at,status,throughput,trials,trial_cv,change\n";
  for (const BenchmarkTrend& b : trend.benchmarks) {
    const std::string label = csv_field(b.identity.text());
    std::vector<std::string> changes(b.points.size());
    for (const TrendChange& c : b.change_points) changes[c.index] = format_fixed(c.change, 4);
    for (size_t i = 0; i < b.points.size(); ++i) {
      const TrendPoint& p = b.points[i];
      const double trial_cv = coefficient_of_variation(p.trials);
      const std::string cv = std::isfinite(trial_cv) ? format_fixed(trial_cv, 4) : "";
      out += label + "," + csv_field(b.unit) + "," + csv_field(p.started_at) + ",ok," +
             format_fixed(p.throughput, 3) + "," + std::to_string(p.trials.size()) + "," + cv +
             "," + changes[i] + "\n";
    }
    for (const TrendFailure& f : b.failures) {
      out += label + "," + csv_field(b.unit) + "," + csv_field(f.started_at) + "," + f.status +
             ",,,,\n";
    }
  }
  return out;
}

// Seconds since the epoch of "2026-11-29T16:40:21Z"; NaN when it is not in that form.
double epoch_seconds(const std::string& text) {
  std::tm tm{};
  char zone = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%c", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &zone) != 7 ||
      zone != 'Z') {
    return NAN;
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<double>(timegm(&tm));
}

// x positions in nights: a run's UTC day, counted from the first run's, with runs of one day
// spread across it in order; by order when a time cannot be read. `nights` gets each day's
// label where the times are read (empty otherwise).
std::vector<double> night_axis(const std::vector<std::string>& times,
                               std::vector<std::string>& nights) {
  std::vector<double> seconds;
  for (const std::string& t : times) seconds.push_back(epoch_seconds(t));
  std::vector<double> x(times.size());
  nights.clear();
  if (std::any_of(seconds.begin(), seconds.end(), [](double v) { return !std::isfinite(v); })) {
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i);
    return x;
  }
  if (seconds.empty()) return x;
  const double first_day = std::floor(*std::min_element(seconds.begin(), seconds.end()) / 86400);
  std::map<double, std::vector<size_t>> by_day;  // day -> runs, in time order
  std::vector<size_t> order(times.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return seconds[a] < seconds[b]; });
  for (size_t i : order) by_day[std::floor(seconds[i] / 86400) - first_day].push_back(i);
  for (const auto& [day, runs] : by_day) {
    for (size_t k = 0; k < runs.size(); ++k) {
      x[runs[k]] = day + (static_cast<double>(k) + 0.5) / static_cast<double>(runs.size()) - 0.5;
    }
  }
  const double last_day = by_day.rbegin()->first;
  for (double day = 0; day <= last_day; ++day) {
    const auto at = static_cast<time_t>((first_day + day) * 86400);
    std::tm tm{};
    gmtime_r(&at, &tm);
    char text[16];
    std::strftime(text, sizeof text, "%Y-%m-%d", &tm);
    nights.push_back(text);
  }
  return x;
}

// A chart's geometry: the plot area, the runs' times (points, then failures) and the scales.
struct ChartFrame {
  double width = 900, height = 270, left = 80, right = 20, top = 16, bottom = 54;
  double plot_w = 0, plot_h = 0;
  std::vector<std::string> times;
  std::vector<std::string> nights;  // each night's date from the first run's on, where read
  std::vector<double> t;            // runs as x values, in nights
  double t_min = 0, t_max = 1;
  charts::Axis y;
  double x_of(double v) const { return left + plot_w * (v - t_min) / (t_max - t_min); }
  double y_of(double v) const { return top + plot_h - plot_h * y.fraction(v); }
};

std::string f(double v) {
  return format_fixed(v, 1);
}

ChartFrame frame_for(const BenchmarkTrend& b, double threshold) {
  ChartFrame frame;
  frame.plot_w = frame.width - frame.left - frame.right;
  frame.plot_h = frame.height - frame.top - frame.bottom;
  for (const TrendPoint& p : b.points) frame.times.push_back(p.started_at);
  for (const TrendFailure& failure : b.failures) frame.times.push_back(failure.started_at);
  frame.t = night_axis(frame.times, frame.nights);
  const std::vector<double>& t = frame.t;
  frame.t_min = (t.empty() ? 0 : *std::min_element(t.begin(), t.end())) - 0.5;
  frame.t_max = (t.empty() ? 0 : *std::max_element(t.begin(), t.end())) + 0.5;
  double y_min = INFINITY, y_max = -INFINITY;
  const auto widen = [&](double v) {
    y_min = std::min(y_min, v);
    y_max = std::max(y_max, v);
  };
  for (const TrendPoint& p : b.points) {
    widen(p.throughput);
    for (double v : p.trials) widen(v);
  }
  if (b.baseline) {
    widen(b.baseline->throughput * (1 - threshold));
    widen(b.baseline->throughput * (1 + threshold));
  }
  if (!std::isfinite(y_min)) y_min = 0, y_max = 1;
  frame.y = charts::linear_axis(y_min, y_max, false);
  return frame;
}

void draw_axes(std::ostringstream& svg, const ChartFrame& c, const BenchmarkTrend& b) {
  for (const double value : c.y.ticks) {
    const double y = c.y_of(value);
    svg << "<line x1=\"" << c.left << "\" y1=\"" << f(y) << "\" x2=\"" << c.left + c.plot_w
        << "\" y2=\"" << f(y) << "\" stroke=\"#ddd\"/><text x=\"" << c.left - 6 << "\" y=\""
        << f(y + 4) << "\" text-anchor=\"end\" font-size=\"11\">" << c.y.label(value)
        << "</text>\n";
  }
  svg << "<text x=\"14\" y=\"" << c.top + c.plot_h / 2 << "\" transform=\"rotate(-90 14 "
      << c.top + c.plot_h / 2 << ")\" text-anchor=\"middle\" font-size=\"12\">"
      << escape_markup(b.unit) << "</text>\n";
}

void draw_baseline(std::ostringstream& svg, const ChartFrame& c, const BenchmarkTrend& b,
                   double threshold) {
  if (!b.baseline) return;
  const double high = c.y_of(b.baseline->throughput * (1 + threshold));
  const double low = c.y_of(b.baseline->throughput * (1 - threshold));
  svg << "<rect class=\"baseline-band\" x=\"" << c.left << "\" y=\"" << f(high) << "\" width=\""
      << c.plot_w << "\" height=\"" << f(low - high) << "\" fill=\"#59a14f\" fill-opacity=\"0.18\">"
      << "<title>baseline " << number(b.baseline->throughput) << " +- " << percent(threshold)
      << "</title></rect>\n<line class=\"baseline\" x1=\"" << c.left << "\" y1=\""
      << f(c.y_of(b.baseline->throughput)) << "\" x2=\"" << c.left + c.plot_w << "\" y2=\""
      << f(c.y_of(b.baseline->throughput)) << "\" stroke=\"#59a14f\" stroke-dasharray=\"6 4\"/>\n";
}

// The first run of each segment between change points, and one past the last run.
std::vector<size_t> segment_starts(const BenchmarkTrend& b) {
  std::vector<size_t> starts = {0};
  for (const TrendChange& change : b.change_points) starts.push_back(change.index);
  starts.push_back(b.points.size());
  return starts;
}

// The level of each segment between change points, and the change points themselves.
void draw_changes(std::ostringstream& svg, const ChartFrame& c, const BenchmarkTrend& b) {
  const std::vector<size_t> starts = segment_starts(b);
  const std::vector<double>& t = c.t;
  for (size_t s = 0; s + 1 < starts.size() && !b.points.empty(); ++s) {
    const size_t first = starts[s], last = starts[s + 1] - 1;
    if (last < first || last >= b.points.size()) continue;
    std::vector<double> level;
    for (size_t i = first; i <= last; ++i) level.push_back(b.points[i].throughput);
    const double y = c.y_of(median(level));
    svg << "<line class=\"level\" x1=\"" << f(c.x_of(t[first])) << "\" y1=\"" << f(y) << "\" x2=\""
        << f(c.x_of(t[last])) << "\" y2=\"" << f(y)
        << "\" stroke=\"#f28e2b\" stroke-width=\"4\"/>\n";
  }
  for (size_t i = 0; i < b.change_points.size(); ++i) {
    const size_t at = starts[i + 1];
    const double x = std::round(0.5 * (c.x_of(t[at - 1]) + c.x_of(t[at])));  // crisp on pixels
    const TrendChange& change = b.change_points[i];
    svg << "<line class=\"change-point\" x1=\"" << f(x) << "\" y1=\"" << c.top << "\" x2=\"" << f(x)
        << "\" y2=\"" << c.top + c.plot_h << "\" stroke=\"#e15759\" stroke-width=\"4\"><title>"
        << escape_markup(change.started_at + ": " + number(change.before) + " -> " +
                         number(change.after) + " (" + percent(change.change, true) +
                         ", p=" + format_fixed(change.p_value, 6) + ")")
        << "</title></line>\n<text x=\"" << f(x + 4) << "\" y=\"" << c.top + 12
        << "\" font-size=\"11\" fill=\"#e15759\">" << percent(change.change, true) << "</text>\n";
  }
}

// Each run's trials as a spread, the medians as a line with a dot per run, failures as crosses.
void draw_runs(std::ostringstream& svg, const ChartFrame& c, const BenchmarkTrend& b) {
  std::string line;
  for (size_t i = 0; i < b.points.size(); ++i) {
    const TrendPoint& p = b.points[i];
    const double x = c.x_of(c.t[i]);
    if (p.trials.size() > 1) {
      const auto [lo, hi] = std::minmax_element(p.trials.begin(), p.trials.end());
      svg << "<line class=\"spread\" x1=\"" << f(x) << "\" y1=\"" << f(c.y_of(*hi)) << "\" x2=\""
          << f(x) << "\" y2=\"" << f(c.y_of(*lo)) << "\" stroke=\"#9c755f\"/>\n";
    }
    line += f(x) + "," + f(c.y_of(p.throughput)) + " ";
  }
  svg << "<polyline class=\"series\" fill=\"none\" stroke=\"#4e79a7\" stroke-width=\"2\" points=\""
      << line << "\"/>\n";
  for (size_t i = 0; i < b.points.size(); ++i) {
    svg << "<circle cx=\"" << f(c.x_of(c.t[i])) << "\" cy=\"" << f(c.y_of(b.points[i].throughput))
        << "\" r=\"3\" fill=\"#4e79a7\"><title>" << escape_markup(b.points[i].started_at) << ": "
        << number(b.points[i].throughput) << "</title></circle>\n";
  }
  for (size_t j = 0; j < b.failures.size(); ++j) {
    const double x = c.x_of(c.t[b.points.size() + j]), y = c.top + c.plot_h - 6;
    svg << "<path class=\"failure\" d=\"M" << f(x - 5) << " " << f(y - 5)
        << " l10 10 m0 -10 l-10 10\""
        << " stroke=\"#e15759\" stroke-width=\"2\"><title>"
        << escape_markup(b.failures[j].started_at + ": " + b.failures[j].status + " " +
                         b.failures[j].error)
        << "</title></path>\n";
  }
}

// The x axis in nights: a tick per night, labelled with its date as often as the labels fit (by
// run where the times could not be read).
void draw_nights(std::ostringstream& svg, const ChartFrame& c) {
  const bool dated = !c.nights.empty();
  const size_t count = dated ? c.nights.size() : c.t.size();
  if (count == 0) return;
  const double label_w =
      charts::text_width(dated ? c.nights.front() : "run " + std::to_string(count), 11) + 12;
  const double spacing = c.plot_w / static_cast<double>(count);
  const size_t every = std::max<size_t>(1, static_cast<size_t>(std::ceil(label_w / spacing)));
  const double y = c.top + c.plot_h;
  for (size_t night = 0; night < count; ++night) {
    const double x = c.x_of(static_cast<double>(night));
    svg << "<line x1=\"" << f(x) << "\" y1=\"" << f(y) << "\" x2=\"" << f(x) << "\" y2=\""
        << f(y + 4) << "\" stroke=\"#888\"/>\n";
    if (night % every != 0) continue;
    svg << "<text x=\"" << f(x) << "\" y=\"" << f(y + 16)
        << "\" text-anchor=\"middle\" font-size=\"11\">"
        << escape_markup(dated ? c.nights[night] : "run " + std::to_string(night + 1))
        << "</text>\n";
  }
  svg << "<text x=\"" << f(c.left + c.plot_w / 2) << "\" y=\"" << f(y + 34)
      << "\" text-anchor=\"middle\" font-size=\"12\">" << (dated ? "night (UTC date)" : "run")
      << "</text>\n";
}

std::string svg_trend_chart(const BenchmarkTrend& b, double threshold) {
  const ChartFrame frame = frame_for(b, threshold);
  std::ostringstream svg;
  svg << "<svg class=\"trend\" width=\"" << frame.width << "\" height=\"" << frame.height
      << "\" role=\"img\">\n<title>" << escape_markup(b.identity.text()) << "</title>\n";
  draw_axes(svg, frame, b);
  draw_baseline(svg, frame, b, threshold);
  draw_changes(svg, frame, b);
  draw_runs(svg, frame, b);
  draw_nights(svg, frame);
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace

std::string render_trend_charts(const Trend& trend) {
  std::string html;
  for (const BenchmarkTrend& b : trend.benchmarks) {
    html += "<h3>" + escape_markup(b.identity.text()) + "</h3>\n<p>" +
            std::to_string(b.points.size()) + " runs, " + std::to_string(b.failures.size()) +
            " failed, " + std::to_string(b.change_points.size()) + " change points; trial CV " +
            percent(b.noise.trial_cv) + ", detectable " + escape_markup(detectable_text(b.noise)) +
            "</p>\n" + svg_trend_chart(b, trend.options.gate.threshold);
  }
  return html;
}

std::string render_trend(const Trend& trend, const std::string& format, size_t max_width) {
  check_report_format(format);
  if (format == "json") return render_trend_json(trend);
  if (format == "csv") return render_trend_csv(trend);
  Report report = trend_tables(trend);
  if (format == "table") return render_text(report, max_width);
  if (format != "html") return render_markdown(report);
  report.history = trend;
  return render_html(report);
}

}  // namespace gpubench
