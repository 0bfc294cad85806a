#include "gpubench/data_parallel_run.h"

#include <unistd.h>

#include <filesystem>

#if GPUBENCH_WITH_CUDA
#include <c10/cuda/CUDAFunctions.h>
#endif

#include "gpubench/log.h"

#include "gpubench/benchmark_fields.h"
#include "gpubench/collectives.h"
#include "gpubench/errors.h"
#include "gpubench/rank_launcher.h"

namespace gpubench {
namespace fs = std::filesystem;

namespace {

std::string rank_file(const std::string& folder, int rank) {
  return (fs::path(folder) / ("rank-" + std::to_string(rank) + ".json")).string();
}

Result failed_result(const BenchmarkSpec& resolved, const std::string& launcher,
                     const std::string& error) {
  Result result = failed_result_for(resolved, error);
  result.distributed.world_size = resolved.gpus;
  result.distributed.launcher = launcher;
  result.distributed.backend = resolved.device == DeviceKind::kCuda ? "nccl" : "gloo";
  return result;
}

}  // namespace

torch::Device device_for_rank(DeviceKind kind, const LaunchEnvironment& launch) {
  if (kind != DeviceKind::kCuda) return torch::kCPU;
  const int count = static_cast<int>(torch::cuda::device_count());
  const int index = count == 1 ? 0 : launch.local_rank;
  if (index >= count) {
    throw UsageError("local rank " + std::to_string(launch.local_rank) +
                     " has no CUDA device: " + std::to_string(count) + " visible");
  }
#if GPUBENCH_WITH_CUDA
  c10::cuda::set_device(static_cast<c10::DeviceIndex>(index));
#endif
  return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(index));
}

Result run_benchmark_as_rank(const BenchmarkSpec& resolved, const LaunchEnvironment& launch,
                             std::chrono::milliseconds timeout, const ProgressCallback& progress) {
  const torch::Device device = device_for_rank(resolved.device, launch);
  std::unique_ptr<Collectives> collectives;
  try {
    collectives = Collectives::connect(launch, device, timeout);
  } catch (const UsageError&) {
    throw;
  } catch (const std::exception& error) {
    return failed_result(resolved, launch.launcher,
                         "rank " + std::to_string(launch.rank) + " could not join the other " +
                             std::to_string(launch.world_size - 1) + " rank(s) at " +
                             launch.master_addr + ":" + std::to_string(launch.master_port) + ": " +
                             first_line(error.what()));
  }
  log::debug("rank {} of {} joined ({} on {})", launch.rank, launch.world_size,
             collectives->backend(), device.str());
  RankContext rank;
  rank.collectives = collectives.get();
  rank.device_index = device.is_cuda() ? device.index() : 0;
  rank.launcher = launch.launcher;
  Result result = run_benchmark(resolved, launch.rank == 0 ? progress : ProgressCallback{}, rank);
  if (result.status == RunStatus::kOk) collectives->shutdown();
  return result;
}

std::string rank_result_path(const LaunchEnvironment& launch, const std::string& output_path) {
  if (const char* folder = std::getenv(kRankResultsVariable);
      folder && launch.launcher == "gpubench") {
    return rank_file(folder, launch.rank);
  }
  return launch.rank == 0 ? output_path : "";
}

Result run_local_ranks(const BenchmarkSpec& resolved, const LocalRanksOptions& options) {
  // In the temp folder, not beside the result: a run killed before it cleans up must not leave
  // rank files where `report` looks for results.
  const std::string folder =
      (fs::temp_directory_path() / ("gpubench-ranks-" + std::to_string(::getpid()))).string();
  fs::remove_all(folder);
  fs::create_directories(folder);
  std::vector<std::string> argv{options.executable, "--log-level", options.log_level, "train"};
  for (auto& argument : to_train_arguments(resolved)) argv.push_back(std::move(argument));
  const auto timeout_s = std::chrono::duration_cast<std::chrono::seconds>(options.timeout);
  argv.insert(argv.end(),
              {"--timeout", std::to_string(timeout_s.count()), "--output", options.result_path});

  const auto failure =
      launch_local_ranks(argv, resolved.gpus, options.timeout, {{kRankResultsVariable, folder}});
  const int reported_rank = failure ? failure->rank : 0;
  std::optional<Result> written = read_result_if_present(rank_file(folder, reported_rank));
  fs::remove_all(folder);
  const std::string rank = "rank " + std::to_string(reported_rank);
  if (written && !failure) return *written;
  if (written && written->status != RunStatus::kOk) {
    written->error = rank + ": " + written->error;
    return *written;
  }
  const std::string how = failure ? failure->outcome.describe() : "exit code 0";
  return failed_result(resolved, "gpubench",
                       rank + " " + how + (written ? "" : " without writing a result"));
}

}  // namespace gpubench
