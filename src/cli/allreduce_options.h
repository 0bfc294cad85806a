// `allreduce`'s subcommand and its sweep, checked: LibTorch-free, so that `gpubench` refuses a
// bad value itself before it becomes gpubench-train (main.cpp). The device and the ranks are
// gpubench-train's.
#pragma once

#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "settings/allreduce_sweep.h"
#include "settings/benchmark_fields.h"

namespace gpubench::cli {

struct AllreduceOptions {
  std::string device = "auto";
  int gpus = 1;
  std::string min_bytes = "8";
  std::string max_bytes = "128M";
  AllreduceSweep sweep;
  // The same default as a training benchmark's timeout_s.
  int timeout_seconds = find_benchmark_field("timeout")->default_value.get<int>();
  std::string output;
  std::string format = "table";  // kTableCommandFormats, on standard output
};

CLI::App* add_allreduce_subcommand(CLI::App& app, const std::shared_ptr<AllreduceOptions>& options);

// The sweep the options ask for, every value checked; throws UsageError.
AllreduceSweep checked_sweep(const AllreduceOptions& options);

}  // namespace gpubench::cli
