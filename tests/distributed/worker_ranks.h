// The proofs' workers (tests/workers/) run as local ranks by gpubench's own launcher: each rank
// writes what it found to <prefix>-rank<R>.json.
#pragma once

#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "launcher/rank_launcher.h"

namespace gpubench::testing {

// `argv` (the worker, its prefix, its arguments) over `ranks` ranks; every rank's findings.
inline std::vector<nlohmann::json> run_worker_ranks(const std::vector<std::string>& argv,
                                                    const std::string& prefix, int ranks) {
  // A proof takes seconds; one past two minutes is stuck (a 2.11 CI run once saw a sharded bf16
  // proof hang until CTest's 600 s ended the whole unit suite).
  const auto failure =
      launch_local_ranks(argv, ranks, std::chrono::seconds(120), {}, std::chrono::seconds(120));
  EXPECT_FALSE(failure) << "rank " << failure->rank << " " << failure->outcome.describe();
  if (failure) return {};
  std::vector<nlohmann::json> found;
  for (int rank = 0; rank < ranks; ++rank) {
    std::ifstream in(prefix + "-rank" + std::to_string(rank) + ".json");
    found.push_back(nlohmann::json::parse(in));
  }
  return found;
}

}  // namespace gpubench::testing
