#include "reporting/regression.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "common/enum_names.h"
#include "common/errors.h"
#include "common/input_limits.h"
#include "common/text_table.h"
#include "reporting/report.h"
#include "results/statistics.h"

namespace gpubench {
namespace {

const EnumNames<Verdict> kVerdicts = {{Verdict::kRegression, "REGRESSION"},
                                      {Verdict::kFailed, "FAILED"},
                                      {Verdict::kCannotJudge, "CANNOT JUDGE"},
                                      {Verdict::kInconclusive, "INCONCLUSIVE"},
                                      {Verdict::kImprovement, "improved"},
                                      {Verdict::kUnchanged, "unchanged"},
                                      {Verdict::kNew, "new"},
                                      {Verdict::kMissing, "MISSING"}};

std::map<IdentityKey, const Result*> by_identity(const std::vector<LoadedResult>& results) {
  std::map<IdentityKey, std::vector<const Result*>> groups;
  for (const LoadedResult& l : results) groups[identity_key(l.result)].push_back(&l.result);
  std::map<IdentityKey, const Result*> out;
  for (const auto& [key, group] : groups) out[key] = newest_result(group);
  return out;
}

std::string percent(double fraction) {
  return (fraction >= 0 ? "+" : "") + format_fixed(100.0 * fraction, 1) + "%";
}

// Trials divided by `scale`: the statistics are computed on values near 1, so that neither
// throughputs of 1e300 (whose squares overflow) nor of 1e-300 change a verdict.
std::vector<double> scaled(const std::vector<double>& trials, double scale) {
  std::vector<double> out;
  out.reserve(trials.size());
  for (double trial : trials) out.push_back(trial / scale);
  return out;
}

// The logarithms of scaled trials, or nothing when one is not positive. A change of throughput is
// a ratio and trial noise is multiplicative (one trial slowed threefold by a neighbour): on logs
// a 400-fold change with a 60 % trial spread is not "within noise", as it is on the throughputs.
std::optional<std::vector<double>> logarithms(const std::vector<double>& trials) {
  std::vector<double> out;
  out.reserve(trials.size());
  for (double trial : trials) {
    if (!(trial > 0)) return std::nullopt;
    out.push_back(std::log(trial));
  }
  return out;
}

// A missing or an inconclusive benchmark that the options let pass: not judged to have held.
bool passes_unjudged(Verdict verdict) {
  return verdict == Verdict::kMissing || verdict == Verdict::kInconclusive;
}

RegressionRow cannot_judge(RegressionRow row, const std::string& what,
                           const std::string& why = "is not a finite number") {
  row.verdict = Verdict::kCannotJudge;
  row.note = "cannot judge: " + what + " " + why;
  return row;
}

// The verdict of the trials; the note says why.
RegressionRow judge(const Result& base, const Result& cur, const RegressOptions& options) {
  RegressionRow row;
  row.baseline = base.metrics.throughput;
  if (!has_throughput(cur.status)) {
    row.verdict = Verdict::kFailed;
    row.note = to_string(cur.status) + (cur.error.empty() ? "" : ": " + cur.error);
    return row;
  }
  row.current = cur.metrics.throughput;
  const double scale = base.metrics.throughput;
  if (!(std::isfinite(scale) && scale > 0)) return cannot_judge(row, "the baseline's throughput");
  const std::vector<double> bt = scaled(base.metrics.trials, scale);
  const std::vector<double> ct = scaled(cur.metrics.trials, scale);
  const DetectableSlowdown detectable = detectable_slowdown(bt, ct, options);
  if (detectable.known()) row.detectable = detectable;
  const double change = cur.metrics.throughput / scale - 1.0;
  if (!std::isfinite(change)) return cannot_judge(row, "the change");
  row.change = change;
  const bool slower = change < 0;
  if (std::abs(change) <= options.threshold) {
    row.note = "within the " + format_fixed(100.0 * options.threshold, 1) + "% threshold";
    return row;
  }
  if (bt.size() < 2 || ct.size() < 2) {
    row.verdict = slower ? Verdict::kRegression : Verdict::kImprovement;
    row.note = "fewer than 2 trials on a side: noise not judged";
    return row;
  }
  const auto log_bt = logarithms(bt), log_ct = logarithms(ct);
  if (!log_bt || !log_ct) return cannot_judge(row, "a trial's throughput", "is not positive");
  const WelchTest test =
      slower ? welch_t_test_greater(*log_bt, *log_ct) : welch_t_test_greater(*log_ct, *log_bt);
  if (!std::isfinite(test.p_value)) return cannot_judge(row, "the Welch test's p-value");
  row.p_value = test.p_value;
  if (test.p_value < options.alpha) {
    row.verdict = slower ? Verdict::kRegression : Verdict::kImprovement;
    row.note = "beyond threshold and noise (p=" + format_fixed(test.p_value, 4) + ")";
  } else {
    row.note =
        "beyond threshold but within run-to-run noise (p=" + format_fixed(test.p_value, 3) + ")";
  }
  return row;
}

// The verdict's note, then what the noise lets the trials see when that is less than asked: a
// benchmark that shows no change it could have shown is inconclusive, not unchanged.
RegressionRow judged(const Result& base, const Result& cur, const RegressOptions& options) {
  RegressionRow row = judge(base, cur, options);
  if (row.detectable && row.detectable->too_noisy(options.threshold)) {
    row.note += "; " + row.detectable->note(options.threshold);
    if (row.verdict == Verdict::kUnchanged) row.verdict = Verdict::kInconclusive;
  }
  return row;
}

}  // namespace

bool DetectableSlowdown::known() const {
  return std::isfinite(slowdown);
}

std::string DetectableSlowdown::text() const {
  return "-" + format_fixed(100.0 * slowdown, 1) + "%";
}

bool DetectableSlowdown::too_noisy(double threshold) const {
  return known() && slowdown > threshold;
}

std::string DetectableSlowdown::note(double threshold) const {
  const std::string asked = format_fixed(100.0 * threshold, 1) + "%";
  const std::string sees = slowdown >= 1 ? "not even a halt" : text() + " at best";
  return "noise too high for the " + asked + " threshold: sees " + sees + "; " +
         (trials_needed > 0 ? std::to_string(trials_needed) + " trials a side would see " + asked
                            : "not even 1000 trials a side would see " + asked);
}

DetectableSlowdown detectable_slowdown(const Sample& baseline, const Sample& current,
                                       const RegressOptions& options) {
  DetectableSlowdown d;
  // A throughput cannot fall by more than all of it: past 1 the trials cannot see a halt.
  d.slowdown =
      std::clamp(detectable_difference(baseline, current, options.alpha, options.power), 0.0, 1.0);
  if (d.known()) {
    d.trials_needed = trials_to_detect(options.threshold, baseline.stdev, current.stdev,
                                       options.alpha, options.power);
  }
  return d;
}

DetectableSlowdown detectable_slowdown(const std::vector<double>& baseline_trials,
                                       const std::vector<double>& current_trials,
                                       const RegressOptions& options) {
  const Summary b = summarize(baseline_trials), c = summarize(current_trials);
  if (baseline_trials.size() < 2 || current_trials.size() < 2 || b.mean <= 0) return {NAN, 0};
  const Sample baseline{b.stdev / b.mean, baseline_trials.size()};
  const Sample current{c.stdev / b.mean, current_trials.size()};
  return detectable_slowdown(baseline, current, options);
}

std::string to_string(Verdict verdict) {
  return name_of(kVerdicts, verdict);
}

bool fails_gate(Verdict verdict, const RegressOptions& options) {
  switch (verdict) {
    case Verdict::kRegression:
    case Verdict::kFailed:
    case Verdict::kCannotJudge:
      return true;
    case Verdict::kMissing:
      return !options.allow_missing;
    case Verdict::kInconclusive:
      return !options.allow_inconclusive;
    default:
      return false;
  }
}

bool RegressionReport::failed() const {
  for (const RegressionRow& row : rows) {
    if (fails_gate(row.verdict, options)) return true;
  }
  return false;
}

RegressionReport check_regressions(const std::vector<LoadedResult>& baseline,
                                   const std::vector<LoadedResult>& current,
                                   const RegressOptions& options) {
  const auto base = by_identity(baseline);
  const auto cur = by_identity(current);
  RegressionReport report;
  report.options = options;
  for (const auto& [key, b] : base) {
    const auto it = cur.find(key);
    RegressionRow row;
    if (it == cur.end()) {
      row.verdict = Verdict::kMissing;
      row.note = "in the baseline, not in the current results" +
                 std::string(options.allow_missing ? " (allowed)" : "");
      if (has_throughput(b->status)) row.baseline = b->metrics.throughput;
    } else if (!has_throughput(b->status)) {
      // A benchmark that failed in the baseline cannot regress; it can start to run again.
      const bool runs_now = has_throughput(it->second->status);
      row.verdict = runs_now ? Verdict::kImprovement : Verdict::kUnchanged;
      row.note = runs_now ? "failed in the baseline (" + to_string(b->status) + "), runs now"
                          : "fails in both (" + to_string(it->second->status) + ")";
      if (runs_now) row.current = it->second->metrics.throughput;
    } else {
      row = judged(*b, *it->second, options);
    }
    row.benchmark = key.text;
    report.rows.push_back(std::move(row));
  }
  for (const auto& [key, c] : cur) {
    if (base.count(key) > 0) continue;
    RegressionRow row;
    row.benchmark = key.text;
    row.verdict = has_throughput(c->status) ? Verdict::kNew : Verdict::kFailed;
    row.note = "not in the baseline";
    if (has_throughput(c->status)) row.current = c->metrics.throughput;
    report.rows.push_back(std::move(row));
  }
  return report;
}

namespace {

std::string detectable_line(const RegressionReport& report) {
  return "detectable: the smallest slowdown the trials flag " +
         format_fixed(100.0 * report.options.power, 0) + "% of the time (one-sided Welch, alpha " +
         format_fixed(report.options.alpha, 3) + ")";
}

std::vector<std::string> too_noisy_of(const RegressionReport& report) {
  std::vector<std::string> too_noisy;
  for (const RegressionRow& row : report.rows) {
    if (row.detectable && row.detectable->too_noisy(report.options.threshold)) {
      too_noisy.push_back(row.benchmark);
    }
  }
  return too_noisy;
}

std::string too_noisy_line(const RegressionReport& report,
                           const std::vector<std::string>& too_noisy) {
  return std::to_string(too_noisy.size()) + " of " + std::to_string(report.rows.size()) +
         " benchmarks are too noisy for the " + format_fixed(100.0 * report.options.threshold, 1) +
         "% threshold to mean anything: " + join(too_noisy, "; ");
}

// The verdicts as a Report (report.h): markdown, tidy CSV (each figure its own record, in full)
// and JSON as report's.
Report regression_tables(const RegressionReport& report) {
  const auto figure = [](const std::optional<double>& value, int decimals) {
    if (!value || !std::isfinite(*value)) return ReportCell{std::nullopt, "-"};
    return ReportCell{*value, format_fixed(*value, decimals)};
  };
  ReportTable table{
      "regress",
      "Regressions against the baseline",
      {"benchmark"},
      {"verdict", "baseline", "current", "change", "p", "detectable", "trials needed", "note"},
      {},
      {detectable_line(report)}};
  for (const RegressionRow& row : report.rows) {
    ReportCell change = figure(row.change, 4), detectable{std::nullopt, "-"}, needed = detectable;
    if (row.change) change.text = percent(*row.change);
    if (row.detectable && row.detectable->known()) {
      detectable = {-row.detectable->slowdown, row.detectable->text()};
      const size_t trials = row.detectable->trials_needed;
      needed = trials > 0 ? ReportCell{static_cast<double>(trials), std::to_string(trials)}
                          : ReportCell{std::nullopt, "> 1000"};
    }
    table.rows.push_back({{row.benchmark},
                          {{std::nullopt, to_string(row.verdict)},
                           figure(row.baseline, 1),
                           figure(row.current, 1),
                           change,
                           figure(row.p_value, 6),
                           detectable,
                           needed,
                           {std::nullopt, row.note}}});
  }
  if (const auto too_noisy = too_noisy_of(report); !too_noisy.empty()) {
    table.notes.push_back(too_noisy_line(report, too_noisy));
  }
  Report out;
  out.title = "gpubench regress: " + std::string(report.failed() ? "FAILED" : "passed");
  out.tables.push_back(std::move(table));
  return out;
}

}  // namespace

std::string render_regression(const RegressionReport& report, const std::string& format,
                              size_t max_width) {
  if (format == "table") return render_regression_table(report, max_width);
  if (format == "markdown") return render_markdown(regression_tables(report));
  if (format == "csv") return render_csv(regression_tables(report));
  if (format == "json") return render_json(regression_tables(report));
  throw UsageError("--format '" + echoed(format) + "' is not one of table, markdown, csv, json");
}

std::string render_regression_table(const RegressionReport& report, size_t max_width) {
  TextTable table({"verdict", "benchmark", "baseline", "current", "change", "detectable", "note"});
  const auto number = [](const std::optional<double>& v) { return v ? format_fixed(*v, 1) : "-"; };
  for (const RegressionRow& row : report.rows) {
    table.add_row({to_string(row.verdict), row.benchmark, number(row.baseline), number(row.current),
                   row.change ? percent(*row.change) : "-",
                   row.detectable ? row.detectable->text() : "-", row.note});
  }
  std::string out = table.render(max_width);
  out += "\n" + detectable_line(report) + "\n";
  if (const auto too_noisy = too_noisy_of(report); !too_noisy.empty()) {
    out += too_noisy_line(report, too_noisy) + "\n";
  }
  return out;
}

std::string render_junit(const RegressionReport& report) {
  size_t failures = 0, skipped = 0;
  for (const RegressionRow& row : report.rows) {
    failures += fails_gate(row.verdict, report.options) ? 1 : 0;
    skipped += !fails_gate(row.verdict, report.options) && passes_unjudged(row.verdict) ? 1 : 0;
  }
  std::string xml =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuite name=\"gpubench.regress\" tests=\"" +
      std::to_string(report.rows.size()) + "\" failures=\"" + std::to_string(failures) +
      "\" skipped=\"" + std::to_string(skipped) + "\">\n";
  for (const RegressionRow& row : report.rows) {
    xml += "  <testcase classname=\"gpubench\" name=\"" + escape_markup(row.benchmark) + "\">";
    const std::string detail =
        to_string(row.verdict) + (row.change ? " " + percent(*row.change) : "") + ": " + row.note +
        (row.detectable ? " (detectable " + row.detectable->text() + ")" : "");
    if (fails_gate(row.verdict, report.options)) {
      xml += "<failure message=\"" + escape_markup(detail) + "\"/>";
    } else if (passes_unjudged(row.verdict)) {  // allowed: neither a pass nor a failure
      xml += "<skipped message=\"" + escape_markup(detail) + "\"/>";
    } else {
      xml += "<system-out>" + escape_markup(detail) + "</system-out>";
    }
    xml += "</testcase>\n";
  }
  return xml + "</testsuite>\n";
}

}  // namespace gpubench
