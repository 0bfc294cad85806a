// `run`'s subcommand and its suite, read and checked: LibTorch-free, so that `gpubench` refuses a
// bad suite itself before it becomes gpubench-train (main.cpp). Resolving the entries (models,
// devices) is gpubench-train's.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "settings/suite_file.h"

namespace gpubench::cli {

struct RunOptions {
  std::string suite;
  std::string output_directory = "results";
  double timeout_seconds = kDefaultSuiteTimeoutSeconds;  // per benchmark; 0: none
  int64_t max_benchmarks = kDefaultMaxBenchmarks;
  bool skip_unavailable = false;
  bool rehearsal = false;
  std::vector<std::string> overrides;  // --set KEY=VALUE
  std::string format = "table";        // set_results_format
};

CLI::App* add_run_subcommand(CLI::App& app, const std::shared_ptr<RunOptions>& options);

// The suite's entries, as --max-benchmarks, --rehearsal and --set take them; throws UsageError.
std::vector<SuiteEntry> suite_entries(const RunOptions& options);

// Whether gpubench may read the suite before gpubench-train does: not a pipe or a socket, which
// can be read once only (`run <(...)`).
bool suite_can_be_read_twice(const RunOptions& options);

}  // namespace gpubench::cli
