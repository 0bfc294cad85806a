// gpubench allreduce: all-reduce bandwidth over the training process groups (nccl-tests'
// algbw/busbw), to tell an NVLink box from a PCIe box before training.
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "common/input_limits.h"
#include "common/json_text.h"
#include "common/log.h"

#include "allreduce_options.h"
#include "commands.h"
#include "common/errors.h"
#include "distributed/allreduce_benchmark.h"
#include "distributed/collectives.h"
#include "launcher/launch.h"
#include "run/run_rules.h"
#include "system/machine.h"
#include "system/system_probe.h"

namespace gpubench::cli {
namespace {

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
  const std::string json = json_text(allreduce_report_to_json(report)) + "\n";
  std::fputs(options.format == "json" ? json.c_str()
                                      : render_allreduce_table(report, options.format).c_str(),
             stdout);
  if (!options.output.empty()) {
    write_output(options.output, json);
    // Said where a person reads the output; json and csv stay one document.
    if (options.format == "table" || options.format == "markdown") {
      std::printf("result: %s\n", shown(options.output).c_str());
    }
  }
  return kExitOk;
}

int run_allreduce(const AllreduceOptions& options, const GlobalOptions& global) {
  const AllreduceSweep sweep = checked_sweep(options);
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
  CLI::App* cmd = add_allreduce_subcommand(app, options);
  cmd->callback([options, &global, &exit_code] { exit_code = run_allreduce(*options, global); });
}

}  // namespace gpubench::cli
