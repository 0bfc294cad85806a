#include "launcher/launch.h"

#include <algorithm>

#include "common/atomic_file.h"
#include "common/byte_size.h"
#include "common/environment.h"
#include "common/errors.h"
#include "common/input_limits.h"
#include "common/log.h"
#include "common/text_table.h"
#include "features/graph_mode/graph_mode.h"
#include "infer/inference_fit_probe.h"
#include "launcher/batch_probes.h"
#include "launcher/child_process.h"
#include "launcher/rank_run.h"
#include "memory/run_memory.h"
#include "optim/optimizer_registry.h"
#include "run/resolve_benchmark.h"
#include "run/run_benchmark.h"
#include "settings/benchmark_fields.h"
#include "system/machine.h"
#include "testing/test_hooks.h"
#include "train/fit_probe.h"

namespace gpubench {
namespace {

std::string executable_of(const LaunchOptions& options) {
  return options.executable.empty() ? current_executable() : options.executable;
}

void log_plan(const ResolvedBenchmark& b) {
  const std::string lengths = b.gen_len > 0 ? ", prompt " + std::to_string(b.prompt_len) + " + " +
                                                  std::to_string(b.gen_len) + " generated"
                                            : "";
  const std::string steps =
      b.task == Task::kTrain ? counted(b.steps, "step")
                             : (b.gen_len > 0 ? counted(b.steps, "generation")
                                              : counted(b.steps, "forward pass", "forward passes"));
  log::info("{} {} {} on {} x{}, batch {} per device{}, {} warm-up + {} x {}, {}",
            to_string(b.task), b.model, to_string(b.precision), to_string(b.device), b.gpus,
            b.batch_size, lengths, b.warmup_steps, b.repeat, steps, counted(b.threads, "thread"));
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

RunSetup run_setup_for(const ResolvedBenchmark& benchmark, int rank, int ranks_here,
                       const LaunchOptions& options) {
  const EnvironmentLookup environment = process_environment();
  RunSetup setup;
  setup.progress = options.progress;
  setup.fault =
      fault_for(environment(kFaultInjectionVariable), benchmark.model, benchmark.precision, rank);
  setup.host_memory_available = host_memory_share(environment, ranks_here);
  return setup;
}

// A search where not even batch 1 trains: the result at batch 1, as its last probe ended.
Result no_batch_trains(ResolvedBenchmark benchmark, const BatchSearchInfo& search) {
  benchmark.batch_size = 1;
  const BatchProbe& last = search.probes.back();
  Result result = failed_result_for(
      benchmark, "no batch trains under " + bytes_text(search.memory_limit_bytes) + " (" +
                     search.memory_limit_source + "): batch " + std::to_string(last.batch) + " " +
                     last.outcome + (last.error.empty() ? "" : ": " + last.error));
  if (last.outcome == "oom") result.status = RunStatus::kOom;
  result.batch_search = search;
  return result;
}

// This process alone: the batch searched first where asked, then the benchmark here or as its
// ranks of gpubench's own launcher.
Result run_alone(ResolvedBenchmark benchmark, const LaunchOptions& options) {
  std::optional<BatchSearchInfo> search;
  if (benchmark.batch_size == kSearchBatchSize) {
    search =
        find_largest_batch(benchmark, {executable_of(options), "warn", benchmark.timeout_s * 4.0});
    if (search->found_batch == 0) return no_batch_trains(benchmark, *search);
    benchmark.batch_size = search->found_batch;
  }
  log_plan(benchmark);
  Result result;
  if (benchmark.runs_process_group()) {
    result = run_local_ranks(benchmark, {executable_of(options), options.log_level});
  } else {
    result = run_benchmark(benchmark, run_setup_for(benchmark, 0, 1, options));
  }
  if (search) result.batch_search = *search;
  return result;
}

// This process as one rank of a launcher's run.
Result run_as_rank(const BenchmarkLaunch& launch, const LaunchOptions& options) {
  const LaunchEnvironment& rank = *launch.rank;
  const ResolvedBenchmark& benchmark = launch.benchmark;
  if (benchmark.gpus != rank.world_size) {
    throw UsageError("the benchmark file is for " + std::to_string(benchmark.gpus) + " ranks but " +
                     rank.launcher + " started " + std::to_string(rank.world_size));
  }
  if (launch.reports()) log_plan(benchmark);
  const Result result = run_benchmark_as_rank(  // rank 0 alone shows progress
      benchmark, rank, run_setup_for(benchmark, rank.rank, rank.local_world_size, options));
  if (launch.under_gpubench()) {
    write_json_atomically(rank_result_path(rank), result_to_json(result));
  } else if (rank.rank != 0 && result.status != RunStatus::kOk) {
    log::error("rank {}: benchmark {}: {}", rank.rank, to_string(result.status), result.error);
  }
  return result;
}

}  // namespace

std::vector<ResolvedBenchmark> resolve_here(const std::vector<BenchmarkRequest>& requests,
                                            bool warn_on_cpu_fallback) {
  const MachineFacts machine = read_machine_facts();
  std::vector<ResolvedBenchmark> benchmarks;
  bool fell_back = false;
  for (const BenchmarkRequest& request : requests) {
    benchmarks.push_back(resolve(request, machine));
    fell_back = fell_back || (request.device.value_or(DeviceKind::kAuto) == DeviceKind::kAuto &&
                              benchmarks.back().device == DeviceKind::kCpu);
  }
  if (fell_back && warn_on_cpu_fallback) log::warn("no CUDA device found: running on the CPU");
  return benchmarks;
}

std::vector<std::pair<std::string, std::string>> resolve_rule_list() {
  std::vector<std::pair<std::string, std::string>> rules;
  for (const ResolveStep& step : resolve_steps()) rules.emplace_back(step.owner, step.decides);
  return rules;
}

ResolvedBenchmark resolve_here(const BenchmarkRequest& request, bool warn_on_cpu_fallback) {
  return resolve_here(std::vector<BenchmarkRequest>{request}, warn_on_cpu_fallback).front();
}

std::optional<LaunchEnvironment> launched_by() {
  return detect_launch_environment(process_environment());
}

ResolvedBenchmark checked_benchmark_file(const std::string& path) {
  const ResolvedBenchmark given = read_benchmark_file(path);
  const ResolvedBenchmark again = resolve(request_from(given), read_machine_facts());
  if (const std::string difference = first_difference(given, again); !difference.empty()) {
    throw UsageError("'" + echoed(path) + "' is not a resolved benchmark: " + difference);
  }
  return given;
}

BenchmarkLaunch launch_as_rank(BenchmarkRequest request, const LaunchEnvironment& rank) {
  if (request.gpus && *request.gpus != rank.world_size) {
    log::warn("--gpus {} ignored: {} started {} ranks", *request.gpus, rank.launcher,
              rank.world_size);
  }
  request.gpus = rank.world_size;
  if (request.batch_size == kSearchBatchSize) {
    throw UsageError(
        "--batch-size max searches with probes of one process; find the batch with "
        "`gpubench train --batch-size max` (or `gpubench fit`) first, then give it to " +
        rank.launcher);
  }
  if (request.mode == Mode::kGraph) {
    throw UsageError(graph_mode_unsupported_in_process_group(rank.launcher, rank.world_size));
  }
  return {resolve(request, read_machine_facts(rank.local_world_size)), rank};
}

Result launch(const BenchmarkLaunch& launch, const LaunchOptions& options) {
  return launch.rank ? run_as_rank(launch, options) : run_alone(launch.benchmark, options);
}

MemoryFit predict_memory(const ResolvedBenchmark& benchmark, bool by_blocks) {
  FitOptions options;
  options.force_blocks = by_blocks;
  return fit_memory(benchmark, options);
}

InferenceMemoryFit predict_inference_memory(
    const ResolvedBenchmark& benchmark, bool by_blocks,
    const std::shared_ptr<const layers::WeightFormat>& counted_weights) {
  FitOptions options;
  options.force_blocks = by_blocks;
  options.counted_weights = counted_weights;
  return fit_inference_memory(benchmark, options);
}

std::optional<RankFailure> rerun_as_local_ranks(const std::vector<std::string>& arguments,
                                                int ranks, std::chrono::seconds timeout) {
  std::vector<std::string> argv{current_executable()};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  return launch_local_ranks(argv, ranks, timeout);
}

std::string optimizer_label(const std::string& name) {
  return OptimizerRegistry::instance().get(name).label;
}

void enable_test_hooks_from_environment() {
  enable_test_hooks(process_environment()(kTestHooksVariable) == std::optional<std::string>("1"));
}

}  // namespace gpubench
