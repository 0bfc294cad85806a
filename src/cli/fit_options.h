// `fit`'s subcommand and what it checks before any probe: LibTorch-free, so that `gpubench`
// refuses a bad value itself before it becomes gpubench-train (main.cpp).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "benchmark_options.h"
#include "reporting/fit_verdicts.h"

namespace gpubench::cli {

struct FitCommandOptions {
  std::shared_ptr<BenchmarkOptions> settings = std::make_shared<BenchmarkOptions>();
  std::string memory;
  std::string reserve = "1GiB";
  std::string format;  // reading_output: table on a terminal, else markdown
  std::string probe = "auto";
  std::string task = "train";
  std::string output;
};

CLI::App* add_fit_subcommand(CLI::App& app, const std::shared_ptr<FitCommandOptions>& options);

// The settings fit runs with, every one checked; throws UsageError for a bad one.
struct FitSettings {
  BenchmarkRequest request;
  int64_t reserve = 0;
  std::vector<CardMemory> cards;
};
FitSettings checked_fit_settings(const FitCommandOptions& options);

}  // namespace gpubench::cli
