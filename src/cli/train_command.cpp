// gpubench train: one benchmark, one result file. With --gpus N > 1 it starts N ranks here;
// started by a launcher (torchrun, srun, mpirun) it runs as the rank the environment names.
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "gpubench/log.h"

#include "commands.h"
#include "cuda_devices.h"
#include "gpubench/benchmark_runner.h"
#include "gpubench/benchmark_spec.h"
#include "gpubench/child_process.h"
#include "gpubench/data_parallel_run.h"
#include "gpubench/errors.h"
#include "gpubench/launch_environment.h"
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
  int timeout_seconds = static_cast<int>(kDefaultCollectiveTimeout.count());
  CLI::Option* batch_option = nullptr;
  CLI::Option* gpus_option = nullptr;
};

BenchmarkSpec parsed_spec(const TrainOptions& options) {
  BenchmarkSpec spec = options.spec;
  spec.precision = parse_precision(options.precision);
  spec.device = parse_device(options.device);
  if (options.batch_option->count() > 0 && spec.batch_size <= 0) {
    throw UsageError("batch size must be a positive integer, got " +
                     std::to_string(spec.batch_size));
  }
  require_positive(options.timeout_seconds, "timeout");
  return spec;
}

void log_plan(const BenchmarkSpec& resolved) {
  log::info("{} {} on {} x{}, batch {} per device, {} warm-up + {} x {} steps, {} threads",
            resolved.model, to_string(resolved.precision), to_string(resolved.device),
            resolved.gpus, resolved.batch_size, resolved.warmup_steps, resolved.repeat,
            resolved.steps, resolved.threads);
}

int report(const Result& result, const std::string& path) {
  write_json_atomically(path, result_to_json(result));
  std::fputs(render_results_table({result}).c_str(), stdout);
  std::printf("result: %s\n", path.c_str());
  if (result.status != RunStatus::kOk) {
    log::error("benchmark {}: {}", to_string(result.status), result.error);
    return kExitBenchmarkFailed;
  }
  return kExitOk;
}

Result run_with_progress(const BenchmarkSpec& resolved,
                         const std::function<Result(const ProgressCallback&)>& run) {
  const ModelInfo& info = ModelRegistry::instance().get(resolved.model);
  ProgressPrinter progress(resolved.model, info.sample_unit + "/sec");
  return run(std::ref(progress));
}

// Started by a launcher: join as the given rank. Rank 0 writes the result. The process ends
// with _Exit so that no c10d thread stuck on a dead peer keeps it alive.
[[noreturn]] void run_as_rank(const TrainOptions& options, BenchmarkSpec spec,
                              const LaunchEnvironment& launch) {
  if (options.gpus_option->count() > 0 && spec.gpus != launch.world_size) {
    log::warn("--gpus {} ignored: {} started {} ranks", spec.gpus, launch.launcher,
              launch.world_size);
  }
  spec.gpus = launch.world_size;
  const BenchmarkSpec resolved =
      resolve_spec(spec, cuda_available(), cuda_device_count(), launch.local_world_size);
  const bool ours = launch.launcher == "gpubench";
  const std::string path = rank_result_path(
      launch,
      launch.rank == 0 && !ours ? prepare_result_path(options.output, resolved) : options.output);
  if (launch.rank == 0 && !ours) log_plan(resolved);
  const auto timeout = std::chrono::seconds(options.timeout_seconds);
  const Result result = run_with_progress(resolved, [&](const ProgressCallback& progress) {
    return run_benchmark_as_rank(resolved, launch, timeout, progress);
  });
  int code = result.status == RunStatus::kOk ? kExitOk : kExitBenchmarkFailed;
  if (!path.empty() && ours) {
    write_json_atomically(path, result_to_json(result));
  } else if (!path.empty()) {
    code = report(result, path);
  } else if (result.status != RunStatus::kOk) {
    log::error("rank {}: benchmark {}: {}", launch.rank, to_string(result.status), result.error);
  }
  std::fflush(nullptr);
  std::_Exit(code);
}

int run_train(const TrainOptions& options, const GlobalOptions& global) {
  const BenchmarkSpec spec = parsed_spec(options);
  if (const auto launch = detect_launch_environment(process_environment())) {
    run_as_rank(options, spec, *launch);
  }
  const BenchmarkSpec resolved = resolve_spec(spec, cuda_available(), cuda_device_count());
  if (spec.device == DeviceKind::kAuto && resolved.device == DeviceKind::kCpu) {
    log::warn("no CUDA device found: running on the CPU");
  }
  const std::string path = prepare_result_path(options.output, resolved);
  log_plan(resolved);
  if (resolved.gpus > 1) {
    LocalRanksOptions ranks;
    ranks.executable = current_executable();
    ranks.log_level = global.log_level;
    ranks.timeout = std::chrono::seconds(options.timeout_seconds);
    ranks.result_path = path;
    return report(run_local_ranks(resolved, ranks), path);
  }
  const Result result = run_with_progress(resolved, [&](const ProgressCallback& progress) {
    return run_benchmark(resolved, progress);
  });
  return report(result, path);
}

}  // namespace

void add_train_command(CLI::App& app, const GlobalOptions& global, int& exit_code) {
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
  options->gpus_option =
      cmd->add_option("--gpus", spec.gpus,
                      "Data-parallel ranks, one process per device (with --device cpu: CPU "
                      "ranks); under torchrun/srun/mpirun the launcher's world size")
          ->capture_default_str();
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
  cmd->add_option("--threads", spec.threads,
                  "CPU intra-op threads per rank (default: logical CPUs / ranks here)");
  cmd->add_option("--bucket-mb", spec.bucket_mb, "Gradient all-reduce bucket size in MiB")
      ->capture_default_str();
  cmd->add_option("--timeout", options->timeout_seconds,
                  "Seconds a rank waits for its peers (rendezvous, each collective) before the "
                  "run fails")
      ->capture_default_str();
  cmd->add_option("--output,-o", options->output, "Result file (.json) or directory")
      ->capture_default_str();
  cmd->callback([options, &global, &exit_code] { exit_code = run_train(*options, global); });
}

}  // namespace gpubench::cli
