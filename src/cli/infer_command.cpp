// gpubench infer: inference throughput and latency (docs/inference.md). The benchmark options of
// train, with --batch-size taking a list (one result per batch) and, for the models that
// generate text, --prompt-len and --gen-len. --gpus N runs N data-parallel replicas through the
// runner's rank path (throughput summed, latency per replica), as does a launcher's run.
#include <algorithm>

#include "benchmark_options.h"
#include "benchmark_to_run.h"
#include "benchmark_run.h"
#include "commands.h"
#include "common/errors.h"
#include "common/input_limits.h"
#include "reporters.h"
#include "results/result_path.h"
#include "runner/runner.h"
#include "spec/benchmark_fields.h"

namespace gpubench::cli {
namespace {

struct InferOptions {
  std::shared_ptr<BenchmarkOptions> settings = std::make_shared<BenchmarkOptions>();
  std::string output = "results";
};

// --batch-size 1,8,32: each entry checked as a batch size; empty: the model's default.
std::vector<int64_t> batch_sizes(const BenchmarkOptions& options) {
  if (options.options.at("batch_size")->count() == 0) return {};
  const std::string& text = options.texts.at("batch_size");
  const BenchmarkField& field = *find_benchmark_field("batch_size");
  std::vector<int64_t> sizes;
  for (const std::string& entry : split_list(text, "--batch-size", "1,8,32")) {
    sizes.push_back(field_value_from_text(field, entry).get<int64_t>());
  }
  return sizes;
}

// The options as an infer request, its batch size the list's first.
BenchmarkRequest infer_request(InferOptions& options, const std::vector<int64_t>& sizes) {
  if (!sizes.empty()) options.settings->texts["batch_size"] = std::to_string(sizes.front());
  BenchmarkRequest request = requested(*options.settings);
  request.task = Task::kInfer;
  return request;
}

// One benchmark per batch size, every one resolved before the first runs: a bad entry is exit 2
// before any work.
std::vector<ResolvedBenchmark> benchmarks_to_run(InferOptions& options,
                                                 const std::vector<int64_t>& sizes) {
  BenchmarkRequest request = infer_request(options, sizes);
  if (!options.settings->benchmark_file.empty()) {
    const ResolvedBenchmark given = benchmark_to_run(*options.settings, request);
    if (given.task != Task::kInfer) {
      throw UsageError("--benchmark-file holds a training benchmark; run it with gpubench train");
    }
    return {given};
  }
  std::vector<BenchmarkRequest> requests;
  for (size_t i = 0; i < std::max<size_t>(1, sizes.size()); ++i) {
    if (!sizes.empty()) request.batch_size = sizes[i];
    requests.push_back(request);
  }
  return resolve_here(requests);
}

int run_infer(InferOptions& options, const GlobalOptions& global) {
  const std::vector<int64_t> sizes = batch_sizes(*options.settings);
  if (const auto launch = launched_by()) {
    if (!options.settings->benchmark_file.empty() || sizes.size() > 1) {
      throw UsageError("under " + launch->launcher +
                       ", infer runs one batch size from its options (no list, no benchmark file)");
    }
    run_launched_rank(resolve_as_launched_rank(infer_request(options, sizes), *launch),
                      options.output, global);
  }
  const std::vector<ResolvedBenchmark> benchmarks = benchmarks_to_run(options, sizes);
  if (benchmarks.size() > 1 && names_result_file(options.output)) {
    throw UsageError("--output '" + echoed(options.output) + "' names one file; with " +
                     std::to_string(benchmarks.size()) + " batch sizes give a directory");
  }
  int code = kExitOk;
  for (const ResolvedBenchmark& benchmark : benchmarks) {
    code = std::max(code, run_and_report(benchmark, options.output, global));
  }
  return code;
}

}  // namespace

void add_infer_command(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  auto options = std::make_shared<InferOptions>();
  CLI::App* cmd = app.add_subcommand("infer", torch_command_description("infer"));
  add_benchmark_options(*cmd, options->settings);
  options->settings->options.at("batch_size")
      ->description(
          "Per-device batch size, or a list such as 1,8,32: one result per batch "
          "(default: the model's)");
  cmd->add_option("--output,-o", options->output,
                  "Result file (.json, one batch size) or directory")
      ->capture_default_str();
  cmd->callback([options, &global, &exit_code] { exit_code = run_infer(*options, global); });
}

}  // namespace gpubench::cli
