// gpubench train: one benchmark, one result file. With --gpus N > 1 it starts N ranks here;
// started by a launcher (torchrun, srun, mpirun) it runs as the rank the environment names.
// Its benchmark options come from the field table (spec/benchmark_fields.h); a child started
// by `run` or by the rank launcher gets the resolved benchmark as a file instead.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "benchmark_options.h"
#include "cli/progress_printer.h"
#include "commands.h"
#include "common/atomic_file.h"
#include "common/byte_size.h"
#include "common/environment.h"
#include "common/errors.h"
#include "common/log.h"
#include "distributed/launch_environment.h"
#include "memory/memory_plan.h"
#include "modeling/model_registry.h"
#include "process/batch_probes.h"
#include "process/child_process.h"
#include "process/data_parallel_run.h"
#include "reporting/results_table.h"
#include "result_output.h"
#include "results/result_path.h"
#include "run/benchmark_runner.h"
#include "run/graph_mode.h"
#include "run/resolve_benchmark.h"
#include "spec/benchmark_fields.h"
#include "system/machine.h"

namespace gpubench::cli {
namespace {

struct TrainOptions {
  std::shared_ptr<BenchmarkOptions> settings = std::make_shared<BenchmarkOptions>();
  std::string output = "results";
};

void log_plan(const ResolvedBenchmark& resolved) {
  log::info("{} {} on {} x{}, batch {} per device, {} warm-up + {} x {} steps, {} threads",
            resolved.model, to_string(resolved.precision), to_string(resolved.device),
            resolved.gpus, resolved.batch_size, resolved.warmup_steps, resolved.repeat,
            resolved.steps, resolved.threads);
}

// The host memory one of `ranks_here` processes may take: GPUBENCH_HOST_MEMORY, else its share of
// MemAvailable; unset where neither is known.
std::optional<int64_t> host_memory_share(const EnvironmentLookup& environment, int ranks_here) {
  if (const auto given = environment(kHostMemoryVariable)) {
    return parse_byte_size(*given, kHostMemoryVariable);
  }
  const std::optional<int64_t> available = host_available_memory();
  if (!available) return std::nullopt;
  return *available / std::max(1, ranks_here);
}

RunContext context_for(const ResolvedBenchmark& resolved, int rank, int ranks_here,
                       ProgressPrinter* progress, const EnvironmentLookup& environment) {
  RunContext context;
  if (progress != nullptr) context.progress = std::ref(*progress);
  context.fault = fault_for(environment(kFaultInjectionVariable), resolved, rank);
  context.host_memory_available = host_memory_share(environment, ranks_here);
  return context;
}

std::string sample_unit(const ResolvedBenchmark& resolved) {
  return ModelRegistry::instance().get(resolved.model).sample_unit + "/sec";
}

// Started by a launcher: join as the given rank. Rank 0 writes the result. The process ends
// with _Exit so that no c10d thread stuck on a dead peer keeps it alive.
[[noreturn]] void run_as_rank(const TrainOptions& options, BenchmarkRequest request,
                              const LaunchEnvironment& launch,
                              const EnvironmentLookup& environment) {
  if (request.gpus && *request.gpus != launch.world_size) {
    log::warn("--gpus {} ignored: {} started {} ranks", *request.gpus, launch.launcher,
              launch.world_size);
  }
  request.gpus = launch.world_size;
  const bool ours = launch.launcher == "gpubench";
  if (!ours && request.mode == Mode::kGraph) {
    throw UsageError(graph_mode_unsupported_in_process_group(launch.launcher, launch.world_size));
  }
  if (request.batch_size == kSearchBatchSize) {
    throw UsageError(
        "--batch-size max searches with probes of one process; find the batch with "
        "`gpubench train --batch-size max` (or `gpubench fit`) first, then give it to " +
        launch.launcher);
  }
  const ResolvedBenchmark resolved =
      benchmark_to_run(*options.settings, request, read_machine_facts(launch.local_world_size));
  if (resolved.gpus != launch.world_size) {
    throw UsageError("the benchmark file is for " + std::to_string(resolved.gpus) + " ranks but " +
                     launch.launcher + " started " + std::to_string(launch.world_size));
  }
  if (resolved.mode == Mode::kGraph) {
    throw UsageError(graph_mode_unsupported_in_process_group(launch.launcher, launch.world_size));
  }
  const std::string path = rank_result_path(
      launch,
      launch.rank == 0 && !ours ? prepare_result_path(options.output, resolved) : options.output);
  if (launch.rank == 0 && !ours) log_plan(resolved);
  ProgressPrinter progress(resolved.model, sample_unit(resolved));
  const Result result = run_benchmark_as_rank(
      resolved, launch,
      context_for(resolved, launch.rank, launch.local_world_size, &progress, environment));
  int code = result.status == RunStatus::kOk ? kExitOk : kExitBenchmarkFailed;
  if (!path.empty() && ours) {
    write_json_atomically(path, result_to_json(result));
  } else if (!path.empty()) {
    try {
      code = report_result(result, path, !names_result_file(options.output));
    } catch (const UsageError& error) {  // _Exit below, not unwinding past c10d's threads
      code = usage_error(error.what());
    }
  } else if (result.status != RunStatus::kOk) {
    log::error("rank {}: benchmark {}: {}", launch.rank, to_string(result.status), result.error);
  }
  code = with_output_checked(code);
  std::fflush(nullptr);
  std::_Exit(code);
}

// A search where not even batch 1 trains: the result at batch 1, as its last probe ended.
Result no_batch_trains(ResolvedBenchmark resolved, const BatchSearchInfo& search) {
  resolved.batch_size = 1;
  const BatchProbe& last = search.probes.back();
  Result result = failed_result_for(
      resolved, "no batch trains under " + bytes_text(search.memory_limit_bytes) + " (" +
                    search.memory_limit_source + "): batch " + std::to_string(last.batch) + " " +
                    last.outcome + (last.error.empty() ? "" : ": " + last.error));
  if (last.outcome == "oom") result.status = RunStatus::kOom;
  result.batch_search = search;
  return result;
}

int run_train(const TrainOptions& options, const GlobalOptions& global) {
  const BenchmarkRequest request = requested(*options.settings);
  const EnvironmentLookup environment = process_environment();
  if (const auto launch = detect_launch_environment(environment)) {
    run_as_rank(options, request, *launch, environment);
  }
  const MachineFacts machine = read_machine_facts();
  ResolvedBenchmark resolved = benchmark_to_run(*options.settings, request, machine);
  // A child given its benchmark as a file was told its device: no warning of its own.
  if (options.settings->benchmark_file.empty() &&
      request.device.value_or(DeviceKind::kAuto) == DeviceKind::kAuto &&
      resolved.device == DeviceKind::kCpu) {
    log::warn("no CUDA device found: running on the CPU");
  }
  const std::string path = prepare_result_path(options.output, resolved);
  const bool new_name = !names_result_file(options.output);
  std::optional<BatchSearchInfo> search;
  if (resolved.batch_size == kSearchBatchSize) {
    search = find_largest_batch(resolved, {current_executable(), "warn", resolved.timeout_s * 4.0});
    if (search->found_batch == 0) {
      return report_result(no_batch_trains(resolved, *search), path, new_name);
    }
    resolved.batch_size = search->found_batch;
  }
  log_plan(resolved);
  Result result;
  if (resolved.gpus > 1) {
    LocalRanksOptions ranks;
    ranks.executable = current_executable();
    ranks.log_level = global.log_level;
    ranks.result_path = path;
    result = run_local_ranks(resolved, ranks);
  } else {
    ProgressPrinter progress(resolved.model, sample_unit(resolved));
    result = run_benchmark(resolved, context_for(resolved, 0, 1, &progress, environment));
  }
  if (search) result.batch_search = *search;
  return report_result(result, path, new_name);
}

}  // namespace

void add_train_command(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  auto options = std::make_shared<TrainOptions>();
  CLI::App* cmd = app.add_subcommand("train", torch_command_description("train"));
  add_benchmark_options(*cmd, options->settings);
  cmd->add_option("--output,-o", options->output, "Result file (.json) or directory")
      ->capture_default_str();
  cmd->callback([options, &global, &exit_code] { exit_code = run_train(*options, global); });
}

}  // namespace gpubench::cli
