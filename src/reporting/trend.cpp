#include "reporting/trend.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "results/start_time.h"
#include "results/statistics.h"
#include "settings/benchmark_fields.h"

namespace gpubench {
namespace {

bool is_run(const Result& result) {
  return result.status != RunStatus::kPublished;
}

nlohmann::json identity_json(const Result& result) {
  const nlohmann::json settings = benchmark_to_json(result.benchmark);
  nlohmann::json identity = nlohmann::json::object();
  for (const BenchmarkField& field : benchmark_fields()) {
    if (field.identity && settings.contains(field.result_key)) {
      identity[field.result_key] = settings[field.result_key];
    }
  }
  identity["system"] = system_name(result);
  return identity;
}

TrendNoise noise_of(const BenchmarkTrend& trend, const RegressOptions& gate) {
  TrendNoise noise;
  std::vector<double> counts, cvs;
  for (const TrendPoint& point : trend.points) {
    counts.push_back(static_cast<double>(point.trials.size()));
    if (const double cv = coefficient_of_variation(point.trials); std::isfinite(cv))
      cvs.push_back(cv);
  }
  noise.trials = static_cast<size_t>(median(counts));
  noise.trial_cv = cvs.empty() ? NAN : median(cvs);
  std::vector<double> since_last_change;
  const size_t since = trend.change_points.empty() ? 0 : trend.change_points.back().index;
  for (size_t i = since; i < trend.points.size(); ++i) {
    since_last_change.push_back(trend.points[i].throughput);
  }
  noise.night_cv = coefficient_of_variation(since_last_change);
  if (cvs.empty() || noise.trials < 2) {
    noise.detectable = {NAN, 0};
  } else {
    const Sample night{noise.trial_cv, noise.trials};
    noise.detectable = detectable_slowdown(night, night, gate);
  }
  return noise;
}

}  // namespace

Trend build_trend(const std::vector<LoadedResult>& results,
                  const std::vector<LoadedResult>& baseline, const TrendOptions& options) {
  std::map<IdentityKey, std::vector<const Result*>> groups;
  for (const LoadedResult& l : results) {
    if (is_run(l.result)) groups[identity_key(l.result)].push_back(&l.result);
  }
  std::map<IdentityKey, std::vector<const Result*>> baselines;
  for (const LoadedResult& l : baseline) {
    if (is_run(l.result)) baselines[identity_key(l.result)].push_back(&l.result);
  }
  Trend trend;
  trend.options = options;
  for (auto& [key, group] : groups) {
    std::sort(group.begin(), group.end(),
              [](const Result* a, const Result* b) { return started_before(*a, *b); });
    for (size_t i = 1; i < group.size(); ++i) warn_if_tied(*group[i - 1], *group[i]);
    BenchmarkTrend benchmark;
    benchmark.identity = identity_of(*group.front());
    benchmark.identity_json = identity_json(*group.front());
    for (const Result* r : group) {
      if (has_throughput(r->status)) {
        if (benchmark.unit.empty()) benchmark.unit = r->metrics.throughput_unit;
        benchmark.points.push_back({r->started_at, r->metrics.throughput, r->metrics.trials});
      } else {
        benchmark.failures.push_back({r->started_at, to_string(r->status), r->error});
      }
    }
    // Each night's trials (its throughput alone where it has none): the test uses them all.
    std::vector<std::vector<double>> nights;
    for (const TrendPoint& point : benchmark.points) {
      nights.push_back(point.trials.empty() ? std::vector<double>{point.throughput} : point.trials);
    }
    for (const ChangePoint& c : find_night_change_points(nights, options.change_points)) {
      benchmark.change_points.push_back(
          {c.index, benchmark.points[c.index].started_at, c.before, c.after, c.change, c.p_value});
    }
    if (const auto it = baselines.find(key); it != baselines.end()) {
      const Result* b = newest_result(it->second);
      if (b != nullptr && has_throughput(b->status)) {
        benchmark.baseline = TrendPoint{b->started_at, b->metrics.throughput, b->metrics.trials};
      }
    }
    benchmark.noise = noise_of(benchmark, options.gate);
    trend.benchmarks.push_back(std::move(benchmark));
  }
  return trend;
}

Trend with_history(Trend trend, size_t min_points) {
  auto& b = trend.benchmarks;
  b.erase(std::remove_if(b.begin(), b.end(),
                         [&](const BenchmarkTrend& t) { return t.points.size() < min_points; }),
          b.end());
  return trend;
}

}  // namespace gpubench
