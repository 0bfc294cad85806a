// The nightly regression check: a current set of results against a stored baseline.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "results/result_set.h"
#include "results/statistics.h"

namespace gpubench {

struct RegressOptions {
  double threshold = 0.05;  // a change smaller than this fraction is never flagged
  double alpha = 0.05;      // significance level of the one-sided Welch t-test on trials
  double power = 0.8;       // for what the trials can detect (DetectableSlowdown)
  // Whether a baseline benchmark missing from the current results, and a benchmark whose trials
  // cannot detect the threshold, pass the gate (regress --allow-missing, --allow-inconclusive).
  bool allow_missing = false;
  bool allow_inconclusive = false;
};

// What a comparison of two sides' trials can see: the smallest slowdown (a fraction of the
// baseline) the Welch test at alpha flags with probability `power` (detectable_difference in
// statistics.h, on spreads relative to the baseline's mean), and the trials a side, at the same
// spreads, that would bring it down to the threshold.
struct DetectableSlowdown {
  // A fraction of the baseline, at most 1 (a halt: the trials cannot even see that); NaN when a
  // side has fewer than two trials.
  double slowdown = 0;
  size_t trials_needed = 0;  // 0: more than 1000
  bool known() const;
  std::string text() const;  // as a change: "-3.2%"
  // The threshold means nothing: a slowdown of its size would mostly go unflagged.
  bool too_noisy(double threshold) const;
  // "noise too high for the 5.0% threshold: sees -7.2% at best; 9 trials a side would see 5.0%"
  std::string note(double threshold) const;
};
// Spreads as fractions of the baseline's mean (a coefficient of variation), with trial counts.
DetectableSlowdown detectable_slowdown(const Sample& baseline, const Sample& current,
                                       const RegressOptions& options);
// The same for two sets of trial throughputs.
DetectableSlowdown detectable_slowdown(const std::vector<double>& baseline_trials,
                                       const std::vector<double>& current_trials,
                                       const RegressOptions& options);

// kCannotJudge: a statistic came out non-finite; the gate fails closed on it, as on a regression.
// kInconclusive: no change the trials flag, but they could not have flagged one of the threshold's
// size (their detectable slowdown is larger): the gate cannot say the benchmark held.
enum class Verdict {
  kRegression,
  kFailed,
  kCannotJudge,
  kInconclusive,
  kImprovement,
  kUnchanged,
  kNew,
  kMissing
};
// Whether the verdict fails the gate (regress exits 1): a regression, a failed benchmark, one
// that cannot be judged; a missing and an inconclusive one unless the options allow them.
bool fails_gate(Verdict verdict, const RegressOptions& options);
std::string to_string(Verdict verdict);

struct RegressionRow {
  std::string benchmark;  // "resnet50 fp16 x4 batch 256 on NVIDIA A40"
  Verdict verdict = Verdict::kUnchanged;
  std::optional<double> baseline;
  std::optional<double> current;
  std::optional<double> change;                  // current / baseline - 1
  std::optional<double> p_value;                 // of the test in the direction of the change
  std::optional<DetectableSlowdown> detectable;  // with two or more trials on both sides
  std::string note;
};

struct RegressionReport {
  RegressOptions options;
  std::vector<RegressionRow> rows;
  bool failed() const;  // any row that fails the gate (fails_gate)
};

// Benchmarks are matched by identity_key (result_set.h): every setting that changes the
// work, and the system.
// A slowdown is a regression only when it exceeds the threshold AND the trials of both sides
// show it is larger than their run-to-run noise (Welch's t-test, one-sided, at alpha). With
// fewer than two trials on a side the noise cannot be judged and the threshold alone decides.
// Every row with two or more trials on both sides says what slowdown its trials could detect.
RegressionReport check_regressions(const std::vector<LoadedResult>& baseline,
                                   const std::vector<LoadedResult>& current,
                                   const RegressOptions& options);

// The verdicts for the terminal, each table narrowed to `max_width` (0: its full width).
std::string render_regression_table(const RegressionReport& report, size_t max_width = 0);
// table (render_regression_table), markdown, csv (one record per figure, as report's) or json
// (report's document). UsageError for another.
std::string render_regression(const RegressionReport& report, const std::string& format,
                              size_t max_width = 0);
std::string render_junit(const RegressionReport& report);

}  // namespace gpubench
