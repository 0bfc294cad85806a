#include "launcher/rank_run.h"

#include <algorithm>
#include <filesystem>

#include "common/log.h"

#include "common/errors.h"
#include "distributed/collectives.h"
#include "features/parallelism/rank_groups.h"
#include "launcher/child_command.h"
#include "launcher/rank_launcher.h"
#include "launcher/temporary_folder.h"
#include "system/machine.h"

namespace gpubench {
namespace fs = std::filesystem;

namespace {

std::string rank_file(const std::string& folder, int rank) {
  return (fs::path(folder) / ("rank-" + std::to_string(rank) + ".json")).string();
}

}  // namespace

Result run_benchmark_as_rank(const ResolvedBenchmark& resolved, const LaunchEnvironment& launch,
                             RunSetup run_setup) {
  const torch::Device device = device_for_rank(resolved.device, launch);
  const std::chrono::seconds timeout(resolved.timeout_s);
  std::unique_ptr<Collectives> collectives;
  parallelism::RankGroups groups;
  try {
    collectives = Collectives::connect(launch, device, timeout);
    groups = parallelism::RankGroups(*collectives, resolved);
  } catch (const UsageError&) {
    throw;
  } catch (const std::exception& error) {
    Result failed = failed_result_for(
        resolved, "rank " + std::to_string(launch.rank) + " could not join the other " +
                      std::to_string(launch.world_size - 1) + " rank(s) at " + launch.master_addr +
                      ":" + std::to_string(launch.master_port) + ": " + first_line(error.what()));
    failed.distributed.launcher = launch.launcher;
    return failed;
  }
  log::debug("rank {} of {} joined ({} on {})", launch.rank, launch.world_size,
             collectives->backend(), device.str());
  run_setup.rank.collectives = collectives.get();
  run_setup.rank.model_parallelism = groups.kind();
  run_setup.rank.model_parallel = groups.model_parallel();
  run_setup.rank.slice_replicas = groups.slice_replicas();
  run_setup.rank.device_index = device.is_cuda() ? device.index() : 0;
  run_setup.rank.launcher = launch.launcher;
  if (launch.rank != 0) run_setup.progress = {};
  Result result = run_benchmark(resolved, run_setup);
  if (result.status == RunStatus::kOk) {
    groups.shutdown();
    collectives->shutdown();
  }
  return result;
}

namespace {

// "; rank 1 was still running (stopped or hung) and was ended", or "" for none.
std::string still_running_text(const std::vector<int>& ranks) {
  if (ranks.empty()) return "";
  std::vector<std::string> names;
  for (int rank : ranks) names.push_back(std::to_string(rank));
  return std::string(ranks.size() == 1 ? "; rank " : "; ranks ") + join(names) +
         (ranks.size() == 1 ? " was" : " were") + " still running (stopped or hung) and " +
         (ranks.size() == 1 ? "was" : "were") + " ended";
}

}  // namespace

std::string rank_result_path(const LaunchEnvironment& launch) {
  return rank_file(launch.rank_results_folder, launch.rank);
}

Result run_local_ranks(const ResolvedBenchmark& resolved, const LocalRanksOptions& options) {
  // In the temp folder, not beside the result: a run killed before it cleans up must not leave
  // rank files where `report` looks for results.
  const TemporaryFolder folder("gpubench-ranks");
  const std::vector<std::string> argv = child_command_line(
      resolved, folder.file("benchmark.json"), {options.executable, options.log_level, ""});
  const auto run_limit = std::chrono::milliseconds(
      static_cast<int64_t>(std::max(0.0, options.run_limit_seconds) * 1000.0));
  const auto failure = launch_local_ranks(
      argv, resolved.gpus, std::chrono::seconds(resolved.timeout_s),
      {{kRankResultsVariable, folder.path()}}, run_limit, options.discard_stdout);
  const int reported_rank = failure ? failure->rank : 0;
  std::optional<Result> written = read_result_if_present(rank_file(folder.path(), reported_rank));
  const std::string rank = "rank " + std::to_string(reported_rank);
  if (written && !failure) return *written;
  // The ranks that were neither done nor failed: the ones that stopped answering.
  const std::string others = failure ? still_running_text(failure->still_running) : "";
  if (failure && failure->outcome.timed_out) {  // the run limit, not a rank's own failure
    return failed_result_for(
        resolved, "timed out after " + seconds_text(options.run_limit_seconds) + " s" + others);
  }
  if (written && written->status != RunStatus::kOk) {
    written->error = rank + ": " + written->error + others;
    return *written;
  }
  const std::string how = failure ? failure->outcome.describe() : "exit code 0";
  return failed_result_for(
      resolved, rank + " " + how + (written ? "" : " without writing a result") + others);
}

}  // namespace gpubench
