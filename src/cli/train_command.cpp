// gpubench train: one benchmark in this process, one result file.
#include <cstdio>

#include "gpubench/log.h"

#include "commands.h"
#include "cuda_devices.h"
#include "gpubench/benchmark_runner.h"
#include "gpubench/benchmark_spec.h"
#include "gpubench/errors.h"
#include "gpubench/model_registry.h"
#include "gpubench/progress_printer.h"
#include "gpubench/result_output.h"

namespace gpubench::cli {
namespace {

struct TrainOptions {
  BenchmarkSpec spec;
  std::string precision = "fp32";
  std::string device = "auto";
  std::string output = "results";
  CLI::Option* batch_option = nullptr;
};

int run_train(TrainOptions& options) {
  BenchmarkSpec spec = options.spec;
  spec.precision = parse_precision(options.precision);
  spec.device = parse_device(options.device);
  if (options.batch_option->count() > 0 && spec.batch_size <= 0) {
    throw UsageError("batch size must be a positive integer, got " +
                     std::to_string(spec.batch_size));
  }
  const BenchmarkSpec resolved = resolve_spec(spec, cuda_available(), cuda_device_count());
  if (spec.device == DeviceKind::kAuto && resolved.device == DeviceKind::kCpu) {
    log::warn("no CUDA device found: running on the CPU");
  }
  const std::string path = prepare_result_path(options.output, resolved);
  const ModelInfo& info = ModelRegistry::instance().get(resolved.model);

  log::info("{} {} on {} x{}, batch {} per device, {} warm-up + {} x {} steps, {} threads",
            resolved.model, to_string(resolved.precision), to_string(resolved.device),
            resolved.gpus, resolved.batch_size, resolved.warmup_steps, resolved.repeat,
            resolved.steps, resolved.threads);
  Result result;
  {
    ProgressPrinter progress(resolved.model, info.sample_unit + "/sec");
    result = run_benchmark(resolved, std::ref(progress));
  }
  write_json_atomically(path, result_to_json(result));
  std::fputs(render_results_table({result}).c_str(), stdout);
  std::printf("result: %s\n", path.c_str());
  if (result.status != RunStatus::kOk) {
    log::error("benchmark {}: {}", to_string(result.status), result.error);
    return kExitBenchmarkFailed;
  }
  return kExitOk;
}

}  // namespace

void add_train_command(CLI::App& app, const GlobalOptions&, int& exit_code) {
  auto options = std::make_shared<TrainOptions>();
  BenchmarkSpec& spec = options->spec;
  CLI::App* cmd =
      app.add_subcommand("train", "Train a model on synthetic data and measure throughput");
  cmd->add_option("--model,-m", spec.model, "Model name (see `gpubench models`)")
      ->capture_default_str();
  cmd->add_option("--precision,-p", options->precision,
                  "fp32 (TF32 off), tf32, fp16 (AMP + loss scaling), bf16")
      ->capture_default_str();
  cmd->add_option("--device", options->device, "auto (CUDA when present), cuda or cpu")
      ->capture_default_str();
  cmd->add_option("--gpus", spec.gpus, "Number of devices")->capture_default_str();
  options->batch_option = cmd->add_option("--batch-size,-b", spec.batch_size,
                                          "Per-device batch size (default: the model's)");
  cmd->add_option("--warmup-steps", spec.warmup_steps, "Untimed steps before the first trial")
      ->capture_default_str();
  cmd->add_option("--steps", spec.steps, "Timed steps per trial")->capture_default_str();
  cmd->add_option("--repeat", spec.repeat, "Trials; the median trial is reported")
      ->capture_default_str();
  cmd->add_option("--seed", spec.seed, "Random seed for weights and synthetic data")
      ->capture_default_str();
  cmd->add_flag_callback(
      "--channels-last", [options] { options->spec.channels_last = true; },
      "NHWC memory format (default: on for fp16/bf16 on CUDA)");
  cmd->add_flag_callback(
      "--no-channels-last", [options] { options->spec.channels_last = false; },
      "NCHW memory format");
  cmd->add_option("--tgt-len", spec.tgt_len,
                  "Language models: tokens per segment (default: the model's)");
  cmd->add_option("--mem-len", spec.mem_len,
                  "Language models: memory length in tokens (default: the model's)");
  cmd->add_option("--threads", spec.threads, "CPU intra-op threads (default: all logical CPUs)");
  cmd->add_option("--output,-o", options->output, "Result file (.json) or directory")
      ->capture_default_str();
  cmd->callback([options, &exit_code] { exit_code = run_train(*options); });
}

}  // namespace gpubench::cli
