// trend: change points on generated series, the history of the fixtures (tests/fixtures/history,
// made by scripts/make-history-fixtures.py), what a history's noise lets regress see, and
// report's history section.
#include "reporting/trend.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "reporting/change_points.h"
#include "reporting/report.h"
#include "results/statistics.h"
#include "test_helpers.h"

namespace gpubench {
namespace {

using testing::run_gpubench;
using testing::ScratchDirectory;

const std::string kHistory = std::string(GPUBENCH_SOURCE_DIR) + "/tests/fixtures/history";

// The CV of ResNet-50's trials on this project's CPU machine (docs/development.md, Measured
// here: 3.0 % fp32).
constexpr double kCpuTrialCv = 0.03;

// Normal noise from mt19937_64's raw output (its sequence is fixed by the standard; the
// library's distributions are not), through Box-Muller.
class Noise {
 public:
  explicit Noise(uint64_t seed) : engine_(seed) {}
  double normal() {
    const auto uniform = [this] {
      return (static_cast<double>(engine_() >> 11) + 0.5) / 9007199254740992.0;  // (0, 1)
    };
    const double u = uniform(), v = uniform();
    return std::sqrt(-2.0 * std::log(u)) * std::cos(2.0 * M_PI * v);
  }

 private:
  std::mt19937_64 engine_;
};

size_t count_of(const std::string& text, const std::string& part) {
  size_t count = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++count;
  return count;
}

std::vector<double> noisy_series(size_t nights, double level, double cv, uint64_t seed) {
  Noise noise(seed);
  std::vector<double> series;
  for (size_t i = 0; i < nights; ++i) series.push_back(level * (1.0 + cv * noise.normal()));
  return series;
}

// At a night-to-night CV of 3 % a 10 % step is 3.3 sigma: a night beside it is on the wrong
// side of the midpoint about one time in twenty, and then no method can place the step exactly.
TEST(ChangePoints, ATenPercentStepIsFoundAtItsNight) {
  size_t exact = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    std::vector<double> series = noisy_series(60, 1000, kCpuTrialCv, seed);
    for (size_t i = 37; i < series.size(); ++i) series[i] *= 0.9;
    const auto points = find_change_points(series, {});
    ASSERT_EQ(points.size(), 1u) << "seed " << seed;
    EXPECT_LE(std::abs(static_cast<int>(points[0].index) - 37), 1) << "seed " << seed;
    exact += points[0].index == 37 ? 1 : 0;
    EXPECT_NEAR(points[0].change, -0.10, 0.03) << "seed " << seed;  // 3 sigma of two medians
    EXPECT_LT(points[0].p_value, 0.01);
  }
  std::printf("10 %% step at 3 %% noise: on its night in %zu of 20 series\n", exact);
  EXPECT_GE(exact, 18u);
  // With the noise of a GPU run (0.5 %) the night is always exact.
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    std::vector<double> series = noisy_series(60, 1000, 0.005, seed);
    for (size_t i = 37; i < series.size(); ++i) series[i] *= 0.9;
    const auto points = find_change_points(series, {});
    ASSERT_EQ(points.size(), 1u) << "seed " << seed;
    EXPECT_EQ(points[0].index, 37u) << "seed " << seed;
  }
}

TEST(ChangePoints, PureNoiseAtTheCpuRunsCvHasNone) {
  // Bonferroni over the candidate splits keeps the false-alarm rate of a series under alpha
  // (0.01): over 200 series of 60 nights none or a few may alarm, not more.
  size_t alarms = 0;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    alarms += find_change_points(noisy_series(60, 1000, kCpuTrialCv, seed), {}).empty() ? 0 : 1;
  }
  std::printf("pure noise at 3 %%: %zu alarms in 200 series\n", alarms);
  EXPECT_LE(alarms, 2u);
  EXPECT_TRUE(find_change_points(noisy_series(365, 1000, kCpuTrialCv, 7), {}).empty());
}

TEST(ChangePoints, ASingleOutlierNightIsNotAChangePoint) {
  for (size_t at : {0u, 1u, 2u, 20u, 37u, 57u, 58u, 59u}) {
    for (double outlier : {0.6, 1.5}) {  // a night at -40 % or +50 %
      std::vector<double> series = noisy_series(60, 1000, kCpuTrialCv, at + 1);
      series[at] *= outlier;
      EXPECT_TRUE(find_change_points(series, {}).empty()) << "outlier x" << outlier << " at " << at;
    }
  }
}

TEST(ChangePoints, TwoStepsAreBothFound) {
  // Down 10 % on night 30, back up 8 % on night 70 (a driver bug, then its fix).
  std::vector<double> series = noisy_series(100, 1000, kCpuTrialCv, 11);
  for (size_t i = 30; i < 70; ++i) series[i] *= 0.90;
  for (size_t i = 70; i < 100; ++i) series[i] *= 0.97;
  const auto points = find_change_points(series, {});
  ASSERT_EQ(points.size(), 2u);
  EXPECT_LE(std::abs(static_cast<int>(points[0].index) - 30), 1);  // as above: 3 % noise
  EXPECT_LE(std::abs(static_cast<int>(points[1].index) - 70), 1);
  EXPECT_LT(points[0].change, -0.07);
  EXPECT_GT(points[1].change, 0.05);
}

// Nights of several trials: each night's trials around its level, the level with a
// night-to-night wobble of its own.
std::vector<std::vector<double>> noisy_nights(size_t nights, double trial_cv, double night_cv,
                                              uint64_t seed, size_t trials = 3) {
  Noise noise(seed);
  std::vector<std::vector<double>> out;
  for (size_t i = 0; i < nights; ++i) {
    const double level = 1000.0 * (1.0 + night_cv * noise.normal());
    std::vector<double> night;
    for (size_t t = 0; t < trials; ++t) night.push_back(level * (1.0 + trial_cv * noise.normal()));
    out.push_back(night);
  }
  return out;
}

void step_from(std::vector<std::vector<double>>& nights, size_t from, double factor) {
  for (size_t i = from; i < nights.size(); ++i) {
    for (double& trial : nights[i]) trial *= factor;
  }
}

// How many nights after a step (7 nights before it) it takes to find it, within two nights of
// its night, in at least 17 of 20 series: the smallest n from 3 (min_segment) to 20; 21 when
// not by 20.
size_t nights_to_find(double step, double trial_cv, double night_cv, size_t before = 7) {
  for (size_t after = 3; after <= 20; ++after) {
    size_t found = 0;
    for (uint64_t seed = 1; seed <= 20; ++seed) {
      auto nights = noisy_nights(before + after, trial_cv, night_cv, seed);
      step_from(nights, before, 1.0 - step);
      const auto points = find_night_change_points(nights, {});
      const int off = points.size() == 1 ? static_cast<int>(points[0].index - before) : 99;
      found += std::abs(off) <= 2 ? 1 : 0;
    }
    if (found >= 17) return after;
  }
  return 21;
}

// The trials give the power that the nights' medians alone cannot: with 12 nights the rank test
// of medians cannot reach alpha 0.01 after Bonferroni (2 / C(12, 5) x 7 = 0.018 at best).
TEST(NightChangePoints, AStepIsFoundWithinAFewNightsOfIt) {
  auto clean = noisy_nights(12, 0.01, 0.0, 3);
  step_from(clean, 7, 0.9);
  const auto points = find_night_change_points(clean, {});
  ASSERT_EQ(points.size(), 1u);
  EXPECT_EQ(points[0].index, 7u);
  std::vector<double> medians;
  for (const auto& night : clean) medians.push_back(median(night));
  EXPECT_TRUE(find_change_points(medians, {}).empty()) << "the medians alone cannot";
  // Nights after the step until it is found (docs/reports.md, trend): 3 trials a night,
  // night-to-night noise half the trials'; 7 nights of history before it (30 for the faintest).
  struct Expected {
    double step, trial_cv;
    size_t before, within;
  };
  for (const Expected& e : std::vector<Expected>{{0.05, 0.01, 7, 5},
                                                 {0.10, 0.01, 7, 5},
                                                 {0.20, 0.01, 7, 5},
                                                 {0.05, 0.03, 30, 7},
                                                 {0.10, 0.03, 7, 6},
                                                 {0.20, 0.03, 7, 5}}) {
    const size_t n = nights_to_find(e.step, e.trial_cv, e.trial_cv / 2, e.before);
    std::printf("%.0f %% step at %.0f %% trial noise, %zu nights before: found %zu nights after\n",
                100 * e.step, 100 * e.trial_cv, e.before, n);
    EXPECT_LE(n, e.within) << e.step << " at " << e.trial_cv;
  }
}

// Pure noise stays quiet, also when nights differ from each other more than their trials do
// (the design effect), and one outlier night is never a step (it is left out in turn).
TEST(NightChangePoints, PureNoiseAndOneOutlierNightGiveNone) {
  for (const auto& [trial_cv, night_cv] : {std::pair{0.03, 0.015}, std::pair{0.01, 0.03}}) {
    size_t alarms = 0;
    for (uint64_t seed = 1; seed <= 200; ++seed) {
      alarms +=
          find_night_change_points(noisy_nights(60, trial_cv, night_cv, seed), {}).empty() ? 0 : 1;
    }
    std::printf("pure noise, trials %.1f %%, nights %.1f %%: %zu alarms in 200 series\n",
                100 * trial_cv, 100 * night_cv, alarms);
    EXPECT_LE(alarms, 4u) << trial_cv << " " << night_cv;
  }
  for (size_t at : {0u, 1u, 2u, 20u, 37u, 57u, 58u, 59u}) {
    for (double outlier : {0.6, 1.5}) {
      auto nights = noisy_nights(60, 0.01, 0.005, at + 1);
      for (double& trial : nights[at]) trial *= outlier;
      EXPECT_TRUE(find_night_change_points(nights, {}).empty())
          << "outlier x" << outlier << " at " << at;
    }
  }
}

TEST(ChangePoints, ShortSeriesAndSmallStepsAreLeftAlone) {
  EXPECT_TRUE(find_change_points({}, {}).empty());
  EXPECT_TRUE(find_change_points({1000, 900}, {}).empty());
  EXPECT_TRUE(find_change_points({1000, 1000, 1000, 900, 900}, {}).empty());  // < 3 a side
  // A clean 1 % step is significant but under min_change (2 %); with min_change 0 it is found.
  std::vector<double> series(20, 1000.0);
  for (size_t i = 0; i < series.size(); ++i)
    series[i] += (i % 2 == 0 ? 1 : -1) + (i >= 10 ? -10 : 0);
  EXPECT_TRUE(find_change_points(series, {}).empty());
  ChangePointOptions sensitive;
  sensitive.min_change = 0;
  ASSERT_EQ(find_change_points(series, sensitive).size(), 1u);
  EXPECT_EQ(find_change_points(series, sensitive)[0].index, 10u);
}

TEST(Trend, FixtureHistoryHasItsStepItsFailureAndItsBaselineBand) {
  const Trend trend =
      build_trend(load_results({kHistory}), load_results({kHistory + "/2026-11-01"}), {});
  ASSERT_EQ(trend.benchmarks.size(), 2u);
  const BenchmarkTrend& resnet = trend.benchmarks[0];
  EXPECT_EQ(resnet.identity.text(), "resnet50 fp16 x1 batch 64 on NVIDIA A40");
  ASSERT_EQ(resnet.points.size(), 15u);
  EXPECT_EQ(resnet.points.front().started_at, "2026-11-01T02:00:00Z");
  ASSERT_EQ(resnet.failures.size(), 1u);
  EXPECT_EQ(resnet.failures[0].status, "oom");
  EXPECT_EQ(resnet.failures[0].started_at, "2026-11-14T02:00:00Z");
  ASSERT_EQ(resnet.change_points.size(), 1u);
  EXPECT_EQ(resnet.change_points[0].started_at, "2026-11-11T02:00:00Z");
  EXPECT_NEAR(resnet.change_points[0].change, -0.10, 0.01);
  ASSERT_TRUE(resnet.baseline.has_value());
  EXPECT_DOUBLE_EQ(resnet.baseline->throughput, 1262.0);
  EXPECT_TRUE(trend.benchmarks[1].change_points.empty());  // vgg16 stays level
  // Trials at -1 %, 0, +1 %: CV 1.0 %; 3 trials against 3 at that CV detect 2.5 %
  // ((t[0.95, 4] + t[0.8, 4]) x sqrt(2 x 0.01^2 / 3) = (2.1318 + 0.9410) x 0.008165).
  EXPECT_EQ(resnet.noise.trials, 3u);
  EXPECT_NEAR(resnet.noise.trial_cv, 0.01, 1e-4);
  EXPECT_NEAR(resnet.noise.detectable.slowdown, 0.02509, 2e-4);
  EXPECT_EQ(resnet.noise.detectable.trials_needed, 2u);
}

// A history folder holding the trend and report JSON written beside it, and another of gpubench's
// own documents, reads its results as before; a result of a major version this gpubench does not
// read is still refused (the nightly's published folder once could not be read back).
TEST(Trend, AFolderReaderPassesOverGpubenchsOwnDocuments) {
  const std::filesystem::path copy = std::filesystem::temp_directory_path() /
                                     ("gpubench-trend-own-docs-" + std::to_string(::getpid()));
  std::filesystem::remove_all(copy);
  std::filesystem::copy(kHistory, copy, std::filesystem::copy_options::recursive);
  const std::vector<LoadedResult> results = load_results({kHistory});
  std::ofstream(copy / "trend.json") << render_trend(build_trend(results, {}, {}), "json");
  std::ofstream(copy / "report.json") << render_report(build_report(results, {}), "json");
  std::ofstream(copy / "tp.json") << R"({"schema": "gpubench.scale-tp/1", "basis": "predicted"})";
  EXPECT_EQ(load_results({copy.string()}).size(), results.size());
  std::ofstream(copy / "newer.json") << R"({"schema": "gpubench.result/2"})";
  try {
    load_results({copy.string()});
    ADD_FAILURE() << "a result of another major version was passed over";
  } catch (const UsageError& error) {
    EXPECT_NE(std::string(error.what()).find("newer than this gpubench reads"), std::string::npos)
        << error.what();
  }
  std::filesystem::remove_all(copy);
}

TEST(Trend, JsonHasTheDocumentedShape) {
  const auto doc =
      nlohmann::json::parse(render_trend(build_trend(load_results({kHistory}), {}, {}), "json"));
  EXPECT_EQ(doc["schema"], "gpubench.trend/1");
  ASSERT_EQ(doc["benchmarks"].size(), 2u);
  const auto& resnet = doc["benchmarks"][0];
  EXPECT_EQ(resnet["identity"]["model"], "resnet50");
  EXPECT_EQ(resnet["identity"]["precision"], "fp16");
  EXPECT_EQ(resnet["identity"]["system"], "NVIDIA A40");
  EXPECT_EQ(resnet["points"].size(), 15u);
  EXPECT_EQ(resnet["points"][0]["started_at"], "2026-11-01T02:00:00Z");
  EXPECT_TRUE(resnet["points"][0]["throughput"].is_number());
  EXPECT_EQ(resnet["points"][0]["trials"].size(), 3u);
  ASSERT_EQ(resnet["change_points"].size(), 1u);
  // The fixture's 10 % step on the 11th night: the medians before and after it, their change,
  // and a p-value under the rule's alpha.
  const auto& change_point = resnet["change_points"][0];
  EXPECT_EQ(change_point["started_at"], "2026-11-11T02:00:00Z");
  EXPECT_DOUBLE_EQ(change_point["before"].get<double>(), 1263.25);
  EXPECT_DOUBLE_EQ(change_point["after"].get<double>(), 1133.5);
  EXPECT_NEAR(change_point["change"].get<double>(), 1133.5 / 1263.25 - 1, 1e-12);
  EXPECT_LT(change_point["p_value"].get<double>(), doc["rule"]["alpha"].get<double>());
  EXPECT_EQ(doc["rule"]["min_segment"], 3);
}

TEST(Trend, CsvHasARowPerRunAndHtmlAChartPerBenchmark) {
  const Trend trend =
      build_trend(load_results({kHistory}), load_results({kHistory + "/2026-11-01"}), {});
  const std::string csv = render_trend(trend, "csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 32);
  EXPECT_NE(csv.find("2026-11-14T02:00:00Z,oom"), std::string::npos) << csv;
  const std::string html = render_trend(trend, "html");
  EXPECT_EQ(count_of(html, "<svg class=\"trend\""), 2u);
  EXPECT_EQ(count_of(html, "class=\"change-point\""), 1u);
  EXPECT_EQ(count_of(html, "class=\"baseline-band\""), 2u);
  EXPECT_EQ(count_of(html, "class=\"failure\""), 1u);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("href"), std::string::npos);
  // The x axis in nights: a tick a night from 2026-11-01 to 11-16, every other one dated (the
  // ends had both read the first run's date); the y axis at round numbers, none below zero.
  EXPECT_EQ(count_of(html, "stroke=\"#888\""), 2u * 16);
  EXPECT_EQ(count_of(html, ">2026-11-01</text>"), 2u);
  EXPECT_EQ(count_of(html, ">2026-11-15</text>"), 2u);
  EXPECT_EQ(count_of(html, ">2026-11-16</text>"), 0u);
  EXPECT_EQ(count_of(html, ">night (UTC date)</text>"), 2u);
  EXPECT_NE(html.find(">1100</text>"), std::string::npos);
  EXPECT_NE(html.find(">1300</text>"), std::string::npos);
  EXPECT_EQ(html.find("text-anchor=\"end\" font-size=\"11\">-"), std::string::npos);
  EXPECT_NE(render_trend(trend, "markdown")
                .find("| resnet50 fp16 x1 batch 64 on NVIDIA A40 | "
                      "2026-11-11T02:00:00Z | 1263.2 | 1133.5 | -10.3% |"),
            std::string::npos);
}

TEST(Report, HtmlHasAHistorySectionOnlyWhenABenchmarkRanSeveralTimes) {
  const std::string once = render_html(build_report(load_results({kHistory + "/2026-11-01"}), {}));
  EXPECT_EQ(once.find("<h2>History</h2>"), std::string::npos);
  const Report report = build_report(load_results({kHistory}), {});
  const std::string html = render_html(report);
  EXPECT_NE(html.find("<h2>History</h2>"), std::string::npos);
  EXPECT_EQ(count_of(html, "<svg class=\"trend\""), 2u);
  EXPECT_EQ(html.find("href"), std::string::npos);
  // Markdown keeps today's tables only.
  EXPECT_EQ(render_markdown(report).find("History"), std::string::npos);
}

// A year of nights of a 28-benchmark suite (10,220 result files) through the binary: the scale
// a lab reaches. Each series has a 5 % step on day 200; trend must find every one.
TEST(Trend, AYearOfNightsOfTheNightlySuite) {
  ScratchDirectory dir("trend-year");
  const char* models[] = {"resnet50",   "resnet101", "resnet152", "inception3",
                          "inception4", "vgg16",     "googlenet"};
  const char* precisions[] = {"fp32", "tf32", "fp16", "bf16"};
  Noise noise(3);
  for (int day = 0; day < 365; ++day) {
    char date[16];
    std::snprintf(date, sizeof(date), "2027-%03d", day + 1);
    const std::string night = dir.file(date);
    std::filesystem::create_directories(night);
    const std::time_t at = 1798761600 + 7200 + day * 86400;  // 2027-01-01T02:00:00Z onwards
    char started[32];
    std::strftime(started, sizeof(started), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&at));
    for (const char* model : models) {
      for (const char* precision : precisions) {
        const double level = 1000.0 * (day >= 200 ? 0.95 : 1.0) * (1 + 0.005 * noise.normal());
        const std::vector<double> trials = {level * 0.995, level, level * 1.005};
        const nlohmann::json doc = {
            {"schema", "gpubench.result/1"},
            {"status", "ok"},
            {"benchmark",
             {{"model", model},
              {"precision", precision},
              {"device", "cuda"},
              {"gpus", 1},
              {"batch_size_per_device", 256}}},
            {"metrics",
             {{"throughput", level}, {"throughput_unit", "images/sec"}, {"trials", trials}}},
            {"system", {{"gpu_name", "NVIDIA H200"}, {"gpu_count", 1}}},
            {"started_at", started}};
        std::ofstream(night + "/" + model + "_" + precision + ".json") << doc.dump();
      }
    }
  }
  const auto start = std::chrono::steady_clock::now();
  const auto run = run_gpubench("trend " + dir.path() + " --format json -o " + dir.file("t.json"));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(run.exit_code, 0) << run.output;
  std::printf("trend over %d result files: %.2f s\n", 365 * 28, seconds);
  const auto doc = nlohmann::json::parse(std::ifstream(dir.file("t.json")));
  ASSERT_EQ(doc["benchmarks"].size(), 28u);
  for (const auto& b : doc["benchmarks"]) {
    EXPECT_EQ(b["points"].size(), 365u);
    ASSERT_EQ(b["change_points"].size(), 1u) << b["benchmark"];
    EXPECT_EQ(b["change_points"][0]["started_at"], "2027-07-20T02:00:00Z") << b["benchmark"];
  }
}

}  // namespace
}  // namespace gpubench
