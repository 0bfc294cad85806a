// gpubench infer: inference throughput and latency (docs/inference.md). The benchmark options of
// train, with --batch-size taking a list (one result per batch) and, for the models that
// generate text, --prompt-len and --gen-len.
#include <algorithm>

#include "benchmark_options.h"
#include "cli/progress_printer.h"
#include "commands.h"
#include "common/environment.h"
#include "common/errors.h"
#include "common/input_limits.h"
#include "common/log.h"
#include "distributed/launch_environment.h"
#include "modeling/model_registry.h"
#include "result_output.h"
#include "results/result_path.h"
#include "run/benchmark_runner.h"
#include "run/resolve_benchmark.h"
#include "spec/benchmark_fields.h"
#include "system/machine.h"

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
    const int64_t size = field_value_from_text(field, entry).get<int64_t>();
    if (size == kSearchBatchSize) {
      throw UsageError(
          "--batch-size max searches for the largest batch that trains; infer "
          "takes batch sizes, such as 1,8,32");
    }
    sizes.push_back(size);
  }
  return sizes;
}

int run_infer(InferOptions& options) {
  if (const auto launch = detect_launch_environment(process_environment())) {
    throw UsageError("infer runs one process on one device; start it without " + launch->launcher);
  }
  const std::vector<int64_t> sizes = batch_sizes(*options.settings);
  if (!sizes.empty()) options.settings->texts["batch_size"] = std::to_string(sizes.front());
  BenchmarkRequest request = requested(*options.settings);
  request.task = Task::kInfer;
  const MachineFacts machine = read_machine_facts();
  // Every benchmark resolved before the first runs: a bad entry is exit 2 before any work.
  std::vector<ResolvedBenchmark> benchmarks;
  for (size_t i = 0; i < std::max<size_t>(1, sizes.size()); ++i) {
    if (!sizes.empty()) request.batch_size = sizes[i];
    benchmarks.push_back(benchmark_to_run(*options.settings, request, machine));
    if (benchmarks.back().task != Task::kInfer) {
      throw UsageError("--benchmark-file holds a training benchmark; run it with gpubench train");
    }
  }
  if (benchmarks.size() > 1 && names_result_file(options.output)) {
    throw UsageError("--output '" + echoed(options.output) + "' names one file; with " +
                     std::to_string(benchmarks.size()) + " batch sizes give a directory");
  }
  if (request.device.value_or(DeviceKind::kAuto) == DeviceKind::kAuto &&
      benchmarks.front().device == DeviceKind::kCpu) {
    log::warn("no CUDA device found: running on the CPU");
  }
  int code = kExitOk;
  for (const ResolvedBenchmark& benchmark : benchmarks) {
    const std::string path = prepare_result_path(options.output, benchmark);
    log::info("infer {} {} on {}, batch {}{}, {} warm-up + {} x {} {}", benchmark.model,
              to_string(benchmark.precision), to_string(benchmark.device), benchmark.batch_size,
              benchmark.gen_len > 0 ? ", prompt " + std::to_string(benchmark.prompt_len) + " + " +
                                          std::to_string(benchmark.gen_len) + " generated"
                                    : "",
              benchmark.warmup_steps, benchmark.repeat, benchmark.steps,
              benchmark.gen_len > 0 ? "generations" : "forward passes");
    const ModelInfo& info = ModelRegistry::instance().get(benchmark.model);
    ProgressPrinter progress(benchmark.model,
                             info.generates_text ? "tokens/sec" : info.sample_unit + "/sec");
    RunContext context;
    context.progress = std::ref(progress);
    code = std::max(code, report_result(run_benchmark(benchmark, context), path,
                                        !names_result_file(options.output)));
  }
  return code;
}

}  // namespace

void add_infer_command(CLI::App& app, int& exit_code) {
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
  cmd->callback([options, &exit_code] { exit_code = run_infer(*options); });
}

}  // namespace gpubench::cli
