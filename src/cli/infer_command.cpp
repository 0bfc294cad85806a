// gpubench infer: inference throughput and latency (docs/inference.md). The benchmark options of
// train, with --batch-size taking a list (one result per batch) and, for the models that
// generate text, --prompt-len and --gen-len. --gpus N runs N data-parallel replicas through the
// launcher's rank path (throughput summed, latency per replica), as does a launcher's run.
#include <algorithm>

#include "benchmark_command.h"
#include "benchmark_options.h"
#include "benchmark_to_run.h"
#include "commands.h"
#include "common/errors.h"
#include "common/input_limits.h"
#include "common/standard_streams.h"
#include "infer_options.h"
#include "launcher/launch.h"
#include "reporters.h"
#include "reporting/results_table.h"
#include "reporting/tpot_target.h"
#include "results/result_path.h"
#include "terminal_width.h"

namespace gpubench::cli {
namespace {

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
    run_launched_rank(launch_as_rank(infer_request(options, sizes), *launch), options.output,
                      global);
  }
  const std::vector<ResolvedBenchmark> benchmarks = benchmarks_to_run(options, sizes);
  if (benchmarks.size() > 1 && names_result_file(options.output)) {
    throw UsageError("--output '" + echoed(options.output) + "' names one file; with " +
                     std::to_string(benchmarks.size()) + " batch sizes give a directory");
  }
  if (options.tpot_target_ms > 0 && benchmarks.front().gen_len == 0) {
    throw UsageError("--tpot-target-ms applies to the models that generate text; " +
                     benchmarks.front().model + " runs forward passes");
  }
  int code = kExitOk;
  std::vector<Result> results;
  const bool sweep = benchmarks.size() > 1;  // one table for all its batches, after them
  for (const ResolvedBenchmark& benchmark : benchmarks) {
    results.emplace_back();
    code =
        std::max(code, run_and_report(benchmark, options.output, global, &results.back(), !sweep));
  }
  if (sweep) write_standard_output(render_results(results));
  if (options.tpot_target_ms > 0) {
    write_standard_output(tpot_target_verdict(results, options.tpot_target_ms) + "\n");
  }
  return code;
}

}  // namespace

void add_infer_command(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  auto options = std::make_shared<InferOptions>();
  CLI::App* cmd = add_infer_subcommand(app, options);
  cmd->callback([options, &global, &exit_code] {
    set_results_format(options->format);
    exit_code = naming_options([&] { return run_infer(*options, global); });
  });
}

}  // namespace gpubench::cli
