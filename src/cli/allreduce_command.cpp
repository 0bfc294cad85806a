// gpubench allreduce: all-reduce bandwidth over the training process groups (nccl-tests'
// algbw/busbw), to tell an NVLink box from a PCIe box before training.
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "common/json_text.h"
#include "common/log.h"

#include "commands.h"
#include "common/errors.h"
#include "distributed/allreduce_benchmark.h"
#include "distributed/collectives.h"
#include "run/resolve_benchmark.h"
#include "runner/runner.h"
#include "spec/benchmark_fields.h"
#include "system/machine.h"
#include "system/system_probe.h"

namespace gpubench::cli {
namespace {

struct AllreduceOptions {
  std::string device = "auto";
  int gpus = 1;
  std::string min_bytes = "8";
  std::string max_bytes = "128M";
  AllreduceSweep sweep;
  // The same default as a training benchmark's timeout_s.
  int timeout_seconds = find_benchmark_field("timeout")->default_value.get<int>();
  std::string output;
};

DeviceKind device_here(const AllreduceOptions& options, int ranks, int local_ranks) {
  return resolve_device(parse_device(options.device), ranks, read_machine_facts(local_ranks));
}

// One rank of the sweep; rank 0 prints the table and writes --output.
int run_rank(const AllreduceOptions& options, const AllreduceSweep& sweep,
             const LaunchEnvironment& launch) {
  const DeviceKind kind = device_here(options, launch.world_size, launch.local_world_size);
  const torch::Device device = device_for_rank(kind, launch);
  auto collectives =
      Collectives::connect(launch, device, std::chrono::seconds(options.timeout_seconds));
  AllreduceReport report;
  report.rows = run_allreduce_sweep(*collectives, sweep);
  collectives->shutdown();
  if (launch.rank != 0) return kExitOk;
  report.world_size = collectives->world_size();
  report.nodes = collectives->nodes();
  report.backend = collectives->backend();
  report.device = to_string(kind);
  report.launcher = launch.launcher;
  report.sweep = sweep;
  report.system = collect_system_info();
  std::fputs(render_allreduce_table(report).c_str(), stdout);
  if (!options.output.empty()) {
    write_output(options.output, json_text(allreduce_report_to_json(report)) + "\n");
    std::printf("result: %s\n", options.output.c_str());
  }
  return kExitOk;
}

int run_allreduce(const AllreduceOptions& options, const GlobalOptions& global) {
  AllreduceSweep sweep = options.sweep;
  sweep.min_bytes = parse_byte_size(options.min_bytes, "--min-bytes");
  sweep.max_bytes = parse_byte_size(options.max_bytes, "--max-bytes");
  validate_sweep(sweep);
  require_positive(options.timeout_seconds, "timeout");
  require_positive(options.gpus, "gpus");
  if (const auto launch = launched_by()) {
    int code = kExitBenchmarkFailed;
    try {
      code = run_rank(options, sweep, *launch);
    } catch (const UsageError&) {
      throw;
    } catch (const std::exception& error) {
      log::error("rank {}: all-reduce failed: {}", launch->rank, first_line(error.what()));
    }
    end_process(code);
  }
  device_here(options, options.gpus, 0);
  if (options.gpus == 1) {  // a group of one, in this process: the backend's local overhead
    const RendezvousServer server(std::chrono::seconds(options.timeout_seconds));
    LaunchEnvironment alone;
    alone.launcher = "none";
    alone.master_port = server.port();
    alone.store_hosted_by_launcher = true;
    return run_rank(options, sweep, alone);
  }
  // Each rank runs this command line again, and finds its place in the launch environment.
  const auto failure = rerun_as_local_ranks(global.arguments, options.gpus,
                                            std::chrono::seconds(options.timeout_seconds));
  if (failure) {
    log::error("all-reduce failed: rank {} {}", failure->rank, failure->outcome.describe());
    // A rank's output error (its table could not be printed) is the run's: exit code 2.
    return failure->outcome.exit_code == kExitUsage ? kExitUsage : kExitBenchmarkFailed;
  }
  return kExitOk;
}

}  // namespace

void add_allreduce_command(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  auto options = std::make_shared<AllreduceOptions>();
  CLI::App* cmd = app.add_subcommand("allreduce", torch_command_description("allreduce"));
  cmd->add_option("--device", options->device, "auto (CUDA when present), cuda or cpu")
      ->capture_default_str();
  const BenchmarkField& gpus = *find_benchmark_field("gpus");
  cmd->add_option("--gpus", options->gpus,
                  "Ranks, one process per device (under torchrun/srun/mpirun: the launcher's)")
      ->check(number_in_range(static_cast<double>(gpus.min), static_cast<double>(gpus.max)))
      ->capture_default_str();
  cmd->add_option("--min-bytes,-b", options->min_bytes, "Smallest message (K, M, G: binary)")
      ->capture_default_str();
  cmd->add_option("--max-bytes,-e", options->max_bytes, "Largest message")->capture_default_str();
  cmd->add_option("--factor,-f", options->sweep.factor, "Size multiplier between rows")
      ->check(number_in_range(2, kMaxSweepFactor))
      ->capture_default_str();
  cmd->add_option("--iters,-n", options->sweep.iters, "Timed all-reduces per size")
      ->check(number_in_range(1, kMaxSweepIterations))
      ->capture_default_str();
  cmd->add_option("--warmup-iters,-w", options->sweep.warmup_iters, "Untimed all-reduces per size")
      ->check(number_in_range(0, kMaxSweepIterations))
      ->capture_default_str();
  const BenchmarkField& timeout = *find_benchmark_field("timeout");
  cmd->add_option("--timeout", options->timeout_seconds,
                  "Seconds a rank waits for its peers before failing")
      ->check(number_in_range(static_cast<double>(timeout.min), static_cast<double>(timeout.max)))
      ->capture_default_str();
  cmd->add_option("--output,-o", options->output, "Also write the rows as JSON to this file");
  cmd->callback([options, &global, &exit_code] { exit_code = run_allreduce(*options, global); });
}

}  // namespace gpubench::cli
