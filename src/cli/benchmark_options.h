// The benchmark settings as command-line options, from the field table (spec/benchmark_fields.h):
// what `train` and `fit` both take. LibTorch-free: `gpubench` checks train's values with them
// before it becomes gpubench-train (main.cpp).
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

struct TrainOptions {
  std::shared_ptr<BenchmarkOptions> settings = std::make_shared<BenchmarkOptions>();
  std::string output = "results";
};

// The `train` subcommand with its options, the benchmark settings and --output: one definition
// for gpubench-train's train and for gpubench's check of its values.
CLI::App* add_train_subcommand(CLI::App& app, const std::shared_ptr<TrainOptions>& options);

}  // namespace gpubench::cli
