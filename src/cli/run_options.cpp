#include "run_options.h"

#include <sys/stat.h>

#include "benchmark_options.h"
#include "commands.h"

namespace gpubench::cli {
namespace {

constexpr double kMaxSuiteTimeoutSeconds = 7 * 24 * 3600;  // a week: longer is a mistake
constexpr double kMaxBenchmarksLimit = 1000000;

}  // namespace

CLI::App* add_run_subcommand(CLI::App& app, const std::shared_ptr<RunOptions>& options) {
  CLI::App* cmd = app.add_subcommand("run", torch_command_description("run"));
  cmd->add_option("suite", options->suite, "Suite file")->required();
  cmd->add_option("--output,-o", options->output_directory, "Directory for the result files")
      ->capture_default_str();
  cmd->add_option("--timeout", options->timeout_seconds,
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
  cmd->add_option("--set", options->overrides,
                  "KEY=VALUE: a suite setting over every entry, after the file's own (repeatable; "
                  "--set device=cpu, --set batch_size=[1,4])")
      ->type_name("KEY=VALUE");
  add_results_format_option(*cmd, options->format);
  return cmd;
}

std::vector<SuiteEntry> suite_entries(const RunOptions& options) {
  return load_suite_file(options.suite, options.max_benchmarks, options.rehearsal,
                         options.overrides);
}

bool suite_can_be_read_twice(const RunOptions& options) {
  struct stat info {};
  if (::stat(options.suite.c_str(), &info) != 0) return true;  // the read names the error
  return !S_ISFIFO(info.st_mode) && !S_ISSOCK(info.st_mode);
}

}  // namespace gpubench::cli
