// `infer`'s subcommand, its batch list and its request: LibTorch-free, so that `gpubench` refuses
// a bad value itself before it becomes gpubench-train (main.cpp).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "benchmark_options.h"

namespace gpubench::cli {

struct InferOptions {
  std::shared_ptr<BenchmarkOptions> settings = std::make_shared<BenchmarkOptions>();
  std::string output = "results";
  std::string format = "table";  // set_results_format
  // --tpot-target-ms (reporting/tpot_target.h); 0: none. Checked as parsed: above 0, finite.
  double tpot_target_ms = 0;
};

CLI::App* add_infer_subcommand(CLI::App& app, const std::shared_ptr<InferOptions>& options);

// --batch-size 1,8,32: each entry checked as a batch size; empty: the model's default.
std::vector<int64_t> batch_sizes(const BenchmarkOptions& options);

// The options as an infer request, its batch size the list's first.
BenchmarkRequest infer_request(InferOptions& options, const std::vector<int64_t>& sizes);

}  // namespace gpubench::cli
