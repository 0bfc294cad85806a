// gpubench report, compare and regress: they read result files and never run a benchmark.
#include <algorithm>
#include <cstdio>

#include "commands.h"
#include "common/atomic_file.h"
#include "common/errors.h"
#include "common/input_limits.h"
#include "common/text_table.h"
#include "reporting/predicted_scaling.h"
#include "reporting/regression.h"
#include "reporting/report.h"
#include "results/result_set.h"
#include "terminal_width.h"

namespace gpubench::cli {
namespace {

// A compare side: a file or directory, or a selector over the --results pool.
std::vector<LoadedResult> side(const std::string& spec, const std::vector<LoadedResult>& pool) {
  if (!looks_like_selector(spec)) return load_results({spec});
  const ResultSelector selector = ResultSelector::parse(spec);
  std::vector<LoadedResult> out;
  for (const LoadedResult& l : pool) {
    if (selector.matches(l.result)) out.push_back(l);
  }
  if (out.empty()) throw UsageError("selector '" + echoed(spec) + "' matches no result");
  return out;
}

// What both sides' selectors pin to different values (precision=bf16 against precision=fp8) is
// each side's own, as --across makes it: rows join across those settings.
std::vector<std::string> with_settings_both_sides_pin(std::vector<std::string> across,
                                                      const std::string& a, const std::string& b) {
  if (!looks_like_selector(a) || !looks_like_selector(b)) return across;
  const ResultSelector sa = ResultSelector::parse(a), sb = ResultSelector::parse(b);
  for (const std::string& key : selector_keys()) {
    if (key == "gpu" || key == "hostname" || key == "model") continue;
    if (sa.constrains(key) && sb.constrains(key) && sa.value_of(key) != sb.value_of(key) &&
        std::find(across.begin(), across.end(), key) == across.end()) {
      across.push_back(key);
    }
  }
  return across;
}

void add_across_option(CLI::App& cmd, std::vector<std::string>& across) {
  cmd.add_option_function<std::string>(
      "--across",
      [&across](const std::string& text) {
        across = split_list(text, "--across", "batch_size,precision");
      },
      "Identity settings rows may differ in, comma-separated (e.g. batch_size: each "
      "SKU at its own best batch); each cell then names its own");
}

void add_prediction_options(CLI::App& cmd, PredictionOptions& prediction) {
  CLI::Option* gpus =
      cmd.add_option("--predict-gpus", prediction.gpus,
                     "Add predicted N-GPU figures beside each single-device training result "
                     "(docs/scaling.md), marked predicted")
          ->check(number_in_range(2, 1 << 20));
  cmd.add_option("--predict-fabric", prediction.fabric,
                 "The fabric for --predict-gpus, as `gpubench scale --fabric`; default: each "
                 "result's own GPU")
      ->check(not_empty("name a fabric"))
      ->needs(gpus);
}

}  // namespace

void add_select_option(CLI::App& cmd, std::string& selector) {
  cmd.add_option("--select", selector,
                 "Only the results this selector matches, e.g. model=resnet50,precision=fp16 "
                 "(keys: gpu, hostname and every identity setting)");
}

void add_gate_options(CLI::App& cmd, RegressOptions& gate) {
  cmd.add_option("--threshold", gate.threshold,
                 "Smallest slowdown flagged (fraction); trend: also the baseline band")
      ->check(number_in_range(0.0, 1.0, false))
      ->capture_default_str();
  cmd.add_option("--alpha", gate.alpha,
                 "Significance level of the noise test; also what the trials can detect")
      ->check(number_in_range(1e-9, 0.5, false))
      ->capture_default_str();
}

void add_report_command(CLI::App& app, int& exit_code) {
  struct Options {
    std::vector<std::string> inputs;
    std::string format;  // reading_output
    std::string output;
    std::string normalize_to;
    std::vector<std::string> across;
    std::string select;
    PredictionOptions prediction;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("report", "Tables (and charts in HTML) from result files");
  cmd->add_option("results", o->inputs, "Result files or directories")->required();
  cmd->add_option("--format,-f", o->format, kReadingFormatHelp);
  cmd->add_option("--output,-o", o->output, "Write here instead of standard output");
  cmd->add_option(
      "--normalize-to", o->normalize_to,
      "Divide by this baseline, e.g. gpu=\"NVIDIA GeForce RTX 3090\",gpus=1,precision=tf32");
  add_across_option(*cmd, o->across);
  add_select_option(*cmd, o->select);
  add_prediction_options(*cmd, o->prediction);
  cmd->callback([o, &exit_code] {
    const ReadingOutput out = reading_output(o->format, o->output);
    o->format = out.format;
    ReportOptions options;
    if (!o->normalize_to.empty()) options.normalize_to = o->normalize_to;
    options.across = o->across;
    options.history = o->format == "html";  // the only rendering that draws it
    check_report_format(o->format);
    const std::vector<LoadedResult> results = select_results(load_results(o->inputs), o->select);
    Report report = build_report(results, options);
    add_predicted_scaling_table(results, o->prediction, report);
    write_output(o->output, render_report(report, o->format, out.table_width));
    exit_code = kExitOk;
  });
}

void add_compare_command(CLI::App& app, int& exit_code) {
  struct Options {
    std::string a, b, format, output;  // format: reading_output
    std::vector<std::string> pool = {"results"};
    std::vector<std::string> across;
    PredictionOptions prediction;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("compare", "Two systems side by side with B/A per row");
  cmd->add_option("A", o->a, "Baseline side: a file, a directory or a selector")->required();
  cmd->add_option("B", o->b, "Other side: a file, a directory or a selector")->required();
  // Its default spelled out: CLI11 prints a vector's default as "[results]" or "results" as the
  // translation unit that instantiates it sees LibTorch's operator<< for vectors or not.
  cmd->add_option("--results", o->pool, "Where selectors look (files or directories)")
      ->default_str(o->pool.front());
  cmd->add_option("--format,-f", o->format, kReadingFormatHelp);
  cmd->add_option("--output,-o", o->output, "Write here instead of standard output");
  add_across_option(*cmd, o->across);
  add_prediction_options(*cmd, o->prediction);
  cmd->callback([o, &exit_code] {
    const ReadingOutput out = reading_output(o->format, o->output);
    o->format = out.format;
    check_report_format(o->format);
    std::vector<LoadedResult> pool;
    if (looks_like_selector(o->a) || looks_like_selector(o->b)) pool = load_results(o->pool);
    std::vector<LoadedResult> both = side(o->a, pool);
    const std::vector<LoadedResult> b = side(o->b, pool);
    Report report =
        build_comparison(both, b, o->a, o->b, with_settings_both_sides_pin(o->across, o->a, o->b));
    both.insert(both.end(), b.begin(), b.end());
    add_predicted_scaling_table(both, o->prediction, report);
    write_output(o->output, render_report(report, o->format, out.table_width));
    exit_code = kExitOk;
  });
}

void add_regress_command(CLI::App& app, int& exit_code) {
  struct Options {
    std::vector<std::string> baseline, current;
    RegressOptions check;
    std::string junit;
    std::string select;
    std::string format;  // table (the default)
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "regress", "Exit 1 when the current results are slower than the baseline beyond noise");
  cmd->add_option("--baseline", o->baseline, "Baseline result files or directories")->required();
  cmd->add_option("--current", o->current, "Current result files or directories")->required();
  add_gate_options(*cmd, o->check);
  cmd->add_flag("--allow-missing", o->check.allow_missing,
                "Pass a baseline benchmark that the current results lack (MISSING fails by "
                "default: a benchmark that did not run did not hold)");
  cmd->add_flag("--allow-inconclusive", o->check.allow_inconclusive,
                "Pass a benchmark whose trials cannot detect a slowdown of the threshold's size "
                "(INCONCLUSIVE fails by default)");
  cmd->add_option("--junit", o->junit, "Also write JUnit XML here");
  cmd->add_option("--format,-f", o->format,
                  "table (the default: fitted to the terminal, or to 100 columns where asked "
                  "for), markdown, csv (one record per figure) or json")
      ->check(CLI::IsMember(kTableCommandFormats));
  add_select_option(*cmd, o->select);
  cmd->callback([o, &exit_code] {
    const RegressionReport report =
        check_regressions(select_results(load_results(o->baseline), o->select),
                          select_results(load_results(o->current), o->select), o->check);
    const ReadingOutput out = reading_output(o->format, "", "table");
    write_output("", render_regression(report, out.format, out.table_width));
    if (!o->junit.empty()) write_text_atomically(o->junit, render_junit(report));
    exit_code = report.failed() ? kExitBenchmarkFailed : kExitOk;
  });
}

}  // namespace gpubench::cli
