// gpubench trend: the history of each benchmark over many runs, with its change points.
#include "commands.h"
#include "reporting/report.h"
#include "reporting/trend.h"
#include "results/result_set.h"
#include "terminal_width.h"

namespace gpubench::cli {

void add_trend_command(CLI::App& app, int& exit_code) {
  struct Options {
    std::vector<std::string> inputs, baseline;
    std::string format;  // reading_output
    std::string output;
    TrendOptions trend;
    std::string select;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "trend", "Each benchmark's history over many runs: change points, and what its noise hides");
  cmd->add_option("results", o->inputs, "Result files or directories (e.g. results/nightly)")
      ->required();
  cmd->add_option("--format,-f", o->format, kReadingFormatHelp);
  cmd->add_option("--output,-o", o->output, "Write here instead of standard output");
  cmd->add_option("--baseline", o->baseline,
                  "Baseline result files or directories: drawn as the band regress accepts");
  add_gate_options(*cmd, o->trend.gate);
  cmd->add_option("--change-alpha", o->trend.change_points.alpha,
                  "Significance of a change point (Bonferroni-adjusted rank-sum test)")
      ->check(number_in_range(1e-9, 0.5, false))
      ->capture_default_str();
  cmd->add_option("--min-change", o->trend.change_points.min_change,
                  "Smallest step reported as a change point (fraction)")
      ->check(number_in_range(0.0, 1.0, false))
      ->capture_default_str();
  cmd->add_option("--min-runs", o->trend.change_points.min_segment,
                  "Runs each side of a change point must have")
      ->check(number_in_range(2, 1000))
      ->capture_default_str();
  add_select_option(*cmd, o->select);
  cmd->callback([o, &exit_code] {
    const ReadingOutput out = reading_output(o->format, o->output);
    o->format = out.format;
    check_report_format(o->format);
    const std::vector<LoadedResult> baseline =
        o->baseline.empty() ? std::vector<LoadedResult>{}
                            : select_results(load_results(o->baseline), o->select);
    const Trend trend =
        build_trend(select_results(load_results(o->inputs), o->select), baseline, o->trend);
    write_output(o->output, render_trend(trend, o->format, out.table_width));
    exit_code = kExitOk;
  });
}

}  // namespace gpubench::cli
