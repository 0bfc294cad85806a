// The benchmark settings as command-line options, from the field table (spec/benchmark_fields.h):
// what `train` and `fit` both take.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "spec/benchmark.h"

namespace gpubench::cli {

struct BenchmarkOptions {
  std::map<std::string, std::string> texts;  // field key -> the option's text
  std::map<std::string, CLI::Option*> options;
  std::map<std::string, std::optional<bool>> flags;  // flag field key -> --key / --no-key
  std::string benchmark_file;                        // --benchmark-file
};

// One option per field (--batch-size, -b, ...), flags as --key and --no-key, and
// --benchmark-file.
void add_benchmark_options(CLI::App& command, const std::shared_ptr<BenchmarkOptions>& options);
// What the command line asked for; throws UsageError for a bad value.
BenchmarkRequest requested(const BenchmarkOptions& options);
bool any_setting_given(const BenchmarkOptions& options);
// What runs: the benchmark file given (checked against this machine), or the options resolved
// here (runner/runner.h, resolve_here).
ResolvedBenchmark benchmark_to_run(const BenchmarkOptions& options, const BenchmarkRequest& request,
                                   bool warn_on_cpu_fallback = true);

}  // namespace gpubench::cli
