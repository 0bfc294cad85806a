// gpubench train: one benchmark, one result file. With --gpus N > 1 it starts N ranks here;
// started by a launcher (torchrun, srun, mpirun) it runs as the rank the environment names.
// Its benchmark options come from the field table (spec/benchmark_fields.h); a child started
// by `run` or by the rank launcher gets the resolved benchmark as a file instead.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "commands.h"
#include "common/atomic_file.h"
#include "common/byte_size.h"
#include "common/environment.h"
#include "common/errors.h"
#include "common/log.h"
#include "distributed/data_parallel_run.h"
#include "distributed/launch_environment.h"
#include "models/model_registry.h"
#include "process/child_process.h"
#include "reporting/results_table.h"
#include "results/result_path.h"
#include "spec/benchmark_fields.h"
#include "system/machine.h"
#include "train/benchmark_runner.h"
#include "train/memory_plan.h"
#include "train/progress_printer.h"
#include "train/resolve_benchmark.h"

namespace gpubench::cli {
namespace {

struct TrainOptions {
  std::map<std::string, std::string> texts;  // field key -> the option's text
  std::map<std::string, CLI::Option*> options;
  std::map<std::string, std::optional<bool>> flags;  // flag field key -> --key / --no-key
  std::string benchmark_file;
  std::string output = "results";
};

BenchmarkRequest requested(const TrainOptions& options) {
  BenchmarkRequest request;
  for (const BenchmarkField& field : benchmark_fields()) {
    if (field.type == FieldType::kFlag) {
      if (const auto flag = options.flags.at(field.key)) field.request(request, *flag);
    } else if (options.options.at(field.key)->count() > 0) {
      field.request(request, field_value_from_text(field, options.texts.at(field.key)));
    }
  }
  return request;
}

bool any_setting_given(const TrainOptions& options) {
  for (const auto& [key, option] : options.options) {
    if (option->count() > 0) return true;
  }
  for (const auto& [key, flag] : options.flags) {
    if (flag) return true;
  }
  return false;
}

void log_plan(const ResolvedBenchmark& resolved) {
  log::info("{} {} on {} x{}, batch {} per device, {} warm-up + {} x {} steps, {} threads",
            resolved.model, to_string(resolved.precision), to_string(resolved.device),
            resolved.gpus, resolved.batch_size, resolved.warmup_steps, resolved.repeat,
            resolved.steps, resolved.threads);
}

// The figures are printed even when the result file cannot be written (that is then exit code 2,
// an output error): a measurement is not lost to a full disk.
int report(const Result& result, const std::string& path) {
  std::optional<UsageError> unwritten;
  try {
    write_json_atomically(path, result_to_json(result));
  } catch (const UsageError& error) {
    unwritten = error;
  }
  std::fputs(render_results_table({result}).c_str(), stdout);
  if (result.status == RunStatus::kOk) std::fputs(render_efficiency_lines(result).c_str(), stdout);
  if (unwritten) throw *unwritten;
  std::printf("result: %s\n", path.c_str());
  if (result.status != RunStatus::kOk) {
    log::error("benchmark {}: {}", to_string(result.status), result.error);
    return kExitBenchmarkFailed;
  }
  return kExitOk;
}

// What runs: the file a parent wrote (checked against this machine, nothing decided again), or
// the options resolved here.
ResolvedBenchmark benchmark_to_run(const TrainOptions& options, BenchmarkRequest request,
                                   const MachineFacts& machine) {
  if (options.benchmark_file.empty()) return resolve(request, machine);
  if (any_setting_given(options)) {
    throw UsageError("--benchmark-file holds every setting; give no other benchmark options");
  }
  const ResolvedBenchmark resolved = read_benchmark_file(options.benchmark_file);
  check_runnable_here(resolved, machine);
  return resolved;
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
  const ResolvedBenchmark resolved =
      benchmark_to_run(options, request, read_machine_facts(launch.local_world_size));
  if (resolved.gpus != launch.world_size) {
    throw UsageError("the benchmark file is for " + std::to_string(resolved.gpus) + " ranks but " +
                     launch.launcher + " started " + std::to_string(launch.world_size));
  }
  const bool ours = launch.launcher == "gpubench";
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
      code = report(result, path);
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

int run_train(const TrainOptions& options, const GlobalOptions& global) {
  const BenchmarkRequest request = requested(options);
  const EnvironmentLookup environment = process_environment();
  if (const auto launch = detect_launch_environment(environment)) {
    run_as_rank(options, request, *launch, environment);
  }
  const MachineFacts machine = read_machine_facts();
  const ResolvedBenchmark resolved = benchmark_to_run(options, request, machine);
  if (request.device.value_or(DeviceKind::kAuto) == DeviceKind::kAuto &&
      resolved.device == DeviceKind::kCpu) {
    log::warn("no CUDA device found: running on the CPU");
  }
  const std::string path = prepare_result_path(options.output, resolved);
  log_plan(resolved);
  if (resolved.gpus > 1) {
    LocalRanksOptions ranks;
    ranks.executable = current_executable();
    ranks.log_level = global.log_level;
    ranks.result_path = path;
    return report(run_local_ranks(resolved, ranks), path);
  }
  ProgressPrinter progress(resolved.model, sample_unit(resolved));
  return report(run_benchmark(resolved, context_for(resolved, 0, 1, &progress, environment)), path);
}

std::string help_of(const BenchmarkField& field) {
  return field.default_text.empty() ? field.help
                                    : field.help + " (default: " + field.default_text + ")";
}

}  // namespace

void add_train_command(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  auto options = std::make_shared<TrainOptions>();
  CLI::App* cmd = app.add_subcommand("train", torch_command_description("train"));
  for (const BenchmarkField& field : benchmark_fields()) {
    if (field.type == FieldType::kFlag) {
      const std::string key = field.key;
      options->flags[key] = std::nullopt;
      cmd->add_flag_callback(
          field.long_flag(), [options, key] { options->flags[key] = true; }, help_of(field));
      cmd->add_flag_callback(
          "--no-" + field.long_flag().substr(2), [options, key] { options->flags[key] = false; },
          "Turn off: " + field.help);
      continue;
    }
    const std::string names =
        field.long_flag() + (field.short_flag.empty() ? "" : "," + field.short_flag);
    options->options[field.key] = cmd->add_option(names, options->texts[field.key], help_of(field));
  }
  cmd->add_option("--benchmark-file", options->benchmark_file,
                  "A resolved benchmark (gpubench.benchmark/1 JSON), as `run` and the rank "
                  "launcher hand to their children; takes no other benchmark option");
  cmd->add_option("--output,-o", options->output, "Result file (.json) or directory")
      ->capture_default_str();
  cmd->callback([options, &global, &exit_code] { exit_code = run_train(*options, global); });
}

}  // namespace gpubench::cli
