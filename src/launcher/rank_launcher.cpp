#include "launcher/rank_launcher.h"

#include <thread>

#include "common/errors.h"
#include "distributed/collectives.h"
#include "distributed/launch_environment.h"

namespace gpubench {

std::optional<RankFailure> launch_local_ranks(const std::vector<std::string>& argv, int ranks,
                                              std::chrono::milliseconds rendezvous_timeout,
                                              const EnvironmentOverrides& extra_environment,
                                              std::chrono::milliseconds run_limit,
                                              bool discard_stdout) {
  const auto started = std::chrono::steady_clock::now();
  const RendezvousServer server(rendezvous_timeout);
  std::vector<ChildProcess> children;
  children.reserve(static_cast<size_t>(ranks));
  for (int rank = 0; rank < ranks; ++rank) {
    EnvironmentOverrides environment = {
        {"RANK", std::to_string(rank)},        {"LOCAL_RANK", std::to_string(rank)},
        {"WORLD_SIZE", std::to_string(ranks)}, {"LOCAL_WORLD_SIZE", std::to_string(ranks)},
        {"MASTER_ADDR", "127.0.0.1"},          {"MASTER_PORT", std::to_string(server.port())},
        {kLauncherStoreVariable, "1"}};
    environment.insert(environment.end(), extra_environment.begin(), extra_environment.end());
    children.emplace_back(argv, environment, false, discard_stdout);
  }
  std::optional<RankFailure> failure;
  for (;;) {
    // Before reading outcomes: ranks that SIGTERM ended (gpubench's handler passes it on) are
    // an interruption, not a failure to record.
    throw_if_interrupted();
    bool all_done = true;
    std::vector<int> running;
    for (int rank = 0; rank < ranks; ++rank) {
      const auto outcome = children[static_cast<size_t>(rank)].poll();
      if (!outcome) {
        all_done = false;
        running.push_back(rank);
        continue;
      }
      // Of the ranks found failed together, one killed by a signal is more likely the cause
      // than one that exited after losing its peer.
      const bool first = !failure;
      const bool better = failure && failure->outcome.signal == 0 && outcome->signal != 0;
      if (!outcome->succeeded() && (first || better)) {
        failure = RankFailure{rank, *outcome, {}};
      }
    }
    if (all_done) break;
    if (!failure && run_limit.count() > 0 &&
        std::chrono::steady_clock::now() - started > run_limit) {
      ProcessOutcome timed_out;
      timed_out.timed_out = true;
      timed_out.time_limit_seconds = std::chrono::duration<double>(run_limit).count();
      failure = RankFailure{running.front(), timed_out, {}};
    }
    if (failure) {
      failure->still_running = running;
      for (auto& child : children) child.kill_now();
      for (auto& child : children) child.wait();
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  throw_if_interrupted();
  return failure;
}

}  // namespace gpubench
