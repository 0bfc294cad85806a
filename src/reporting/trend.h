// The history of each benchmark over many runs (nightly results): its series of median-trial
// throughputs, the nights it stepped up or down, and what its noise lets a night's trials see.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reporting/change_points.h"
#include "reporting/regression.h"
#include "results/result_set.h"

namespace gpubench {

struct TrendOptions {
  ChangePointOptions change_points;
  // regress's rule: the baseline band is its median +- threshold; alpha and power say what a
  // night's trials could detect.
  RegressOptions gate;
};

struct TrendPoint {
  std::string started_at;
  double throughput = 0;  // the median trial
  std::vector<double> trials;
};

struct TrendFailure {
  std::string started_at;
  std::string status;  // "oom", "failed"
  std::string error;
};

struct TrendChange {
  size_t index = 0;        // in the benchmark's points: the first run after the step
  std::string started_at;  // that run's
  double before = 0, after = 0, change = 0, p_value = 1;
};

// The noise of a history, and what it lets regress see.
struct TrendNoise {
  size_t trials = 0;              // per night (the median over nights)
  double trial_cv = 0;            // the trials' coefficient of variation, median over nights
  double night_cv = 0;            // of the nights since the last change point
  DetectableSlowdown detectable;  // one night against another at trial_cv and `trials`
};

struct BenchmarkTrend {
  BenchmarkIdentity identity;
  nlohmann::json identity_json;  // the result's identity settings by result key, and "system"
  std::string unit;
  std::vector<TrendPoint> points;  // by started_at
  std::vector<TrendFailure> failures;
  std::vector<TrendChange> change_points;
  std::optional<TrendPoint> baseline;  // the baseline's result of the same identity
  TrendNoise noise;
};

struct Trend {
  TrendOptions options;
  std::vector<BenchmarkTrend> benchmarks;  // by identity text
};

// Groups by benchmark identity (published figures are not runs and are left out) and orders
// each group by started_at. `baseline` may be empty.
Trend build_trend(const std::vector<LoadedResult>& results,
                  const std::vector<LoadedResult>& baseline, const TrendOptions& options);

// The benchmarks with at least `min_points` runs.
Trend with_history(Trend trend, size_t min_points);

// JSON's schema: a folder's reader passes over the trend.json the nightly job writes.
inline constexpr const char* kTrendSchema = "gpubench.trend/1";
// As render_report; `max_width` for the table format.
std::string render_trend(const Trend& trend, const std::string& format,
                         size_t max_width = 0);  // UsageError
// One line chart per benchmark, inline SVG: the series, its trial spread, the baseline band,
// change points marked. The HTML of `trend` and report's history section.
std::string render_trend_charts(const Trend& trend);

}  // namespace gpubench
