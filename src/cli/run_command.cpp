// gpubench run: every benchmark of a suite file, each in its own process.
#include <cstdio>

#include "common/log.h"

#include "commands.h"
#include "common/environment.h"
#include "common/errors.h"
#include "common/standard_streams.h"
#include "reporting/results_table.h"
#include "runner/runner.h"
#include "runner/suite_runner.h"
#include "spec/suite_file.h"

namespace gpubench::cli {
namespace {

constexpr double kMaxSuiteTimeoutSeconds = 7 * 24 * 3600;  // a week: longer is a mistake
constexpr double kMaxBenchmarksLimit = 1000000;

}  // namespace

void add_run_command(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  struct RunOptions {
    std::string suite;
    SuiteRunOptions run;
    int64_t max_benchmarks = kDefaultMaxBenchmarks;
    bool skip_unavailable = false;
    bool rehearsal = false;
  };
  auto options = std::make_shared<RunOptions>();
  options->run.output_directory = "results";
  CLI::App* cmd = app.add_subcommand("run", torch_command_description("run"));
  cmd->add_option("suite", options->suite, "Suite file")->required();
  cmd->add_option("--output,-o", options->run.output_directory, "Directory for the result files")
      ->capture_default_str();
  cmd->add_option("--timeout", options->run.timeout_seconds,
                  "Seconds before a benchmark is killed and recorded as failed (0: none)")
      ->check(number_in_range(0, kMaxSuiteTimeoutSeconds, false))
      ->capture_default_str();
  cmd->add_option("--max-benchmarks", options->max_benchmarks,
                  "Refuse a suite that expands to more benchmarks than this (lists multiply)")
      ->check(number_in_range(1, kMaxBenchmarksLimit))
      ->capture_default_str();
  cmd->add_flag("--skip-unavailable", options->skip_unavailable,
                "Record a benchmark this machine or build cannot run (no CUDA device, no FP8, ...) "
                "as skipped, naming what it lacks, instead of refusing the suite");
  cmd->add_flag(
      "--rehearsal", options->rehearsal,
      "Run the suite as its 'rehearsal' section rewrites it (another device, tiny sizes); "
      "implies --skip-unavailable");
  cmd->callback([options, &global, &exit_code] {
    if (const auto launch = launched_by()) {
      throw UsageError("gpubench run starts each benchmark's ranks itself; under " +
                       launch->launcher + " launch `gpubench train` for each benchmark instead");
    }
    const std::vector<SuiteEntry> entries =
        load_suite_file(options->suite, options->max_benchmarks, options->rehearsal);
    log::info("{}: {} benchmark(s)", options->suite, entries.size());
    const std::vector<SuiteBenchmark> benchmarks =
        resolve_suite_entries(entries, options->skip_unavailable || options->rehearsal);
    SuiteRunOptions run = options->run;
    run.log_level = global.log_level;
    const std::vector<Result> results = run_suite(benchmarks, run);
    write_standard_output(render_results_table(results));
    size_t failed = 0, skipped = 0;
    for (const Result& r : results) {
      skipped += r.status == RunStatus::kSkipped ? 1 : 0;
      failed += r.status == RunStatus::kOk || r.status == RunStatus::kSkipped ? 0 : 1;
    }
    std::printf("%zu benchmark(s), %zu failed, %zu skipped; results in %s\n", results.size(),
                failed, skipped, run.output_directory.c_str());
    exit_code = failed == 0 ? kExitOk : kExitBenchmarkFailed;
  });
}

}  // namespace gpubench::cli
