// The nightly regression check: a current set of results against a stored baseline.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "results/result_set.h"

namespace gpubench {

struct RegressOptions {
  double threshold = 0.05;  // a change smaller than this fraction is never flagged
  double alpha = 0.05;      // significance level of the one-sided Welch t-test on trials
};

enum class Verdict { kRegression, kFailed, kImprovement, kUnchanged, kNew, kMissing };
std::string to_string(Verdict verdict);

struct RegressionRow {
  std::string benchmark;  // "resnet50 fp16 x4 batch 256 on NVIDIA A40"
  Verdict verdict = Verdict::kUnchanged;
  std::optional<double> baseline;
  std::optional<double> current;
  std::optional<double> change;   // current / baseline - 1
  std::optional<double> p_value;  // of the test in the direction of the change
  std::string note;
};

struct RegressionReport {
  std::vector<RegressionRow> rows;
  bool failed() const;  // any regression or failed benchmark
};

// Benchmarks are matched by benchmark_identity (result_set.h): every setting that changes the
// work, and the system.
// A slowdown is a regression only when it exceeds the threshold AND the trials of both sides
// show it is larger than their run-to-run noise (Welch's t-test, one-sided, at alpha). With
// fewer than two trials on a side the noise cannot be judged and the threshold alone decides.
RegressionReport check_regressions(const std::vector<LoadedResult>& baseline,
                                   const std::vector<LoadedResult>& current,
                                   const RegressOptions& options);

std::string render_regression_table(const RegressionReport& report);
std::string render_junit(const RegressionReport& report);

}  // namespace gpubench
