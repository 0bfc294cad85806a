// gpubench's own launcher: runs one command as ranks 0..n-1 on this machine, with torchrun's
// environment variables and a TCPStore hosted here, and watches them together: the first rank
// that fails ends the others at once, so nothing is left waiting on a dead peer.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "launcher/child_process.h"

namespace gpubench {

struct RankFailure {
  int rank = 0;
  ProcessOutcome outcome;
  std::vector<int> still_running;  // ranks running (stopped or hung) when the failure was seen
};

// `argv` is the command every rank runs; `extra_environment` is added for all of them.
// Returns the first rank that failed, or nothing when all ranks exited with 0. With a positive
// `run_limit`, ranks still running after it are ended and the first of them is the failure
// (outcome timed_out): a suite's limit for one benchmark, and the tests' proofs, so that a rank
// stuck outside any collective (whose own timeouts end it otherwise) fails its test instead of
// holding the suite. With `discard_stdout`, the ranks' standard output goes to /dev/null.
std::optional<RankFailure> launch_local_ranks(
    const std::vector<std::string>& argv, int ranks, std::chrono::milliseconds rendezvous_timeout,
    const EnvironmentOverrides& extra_environment = {},
    std::chrono::milliseconds run_limit = std::chrono::milliseconds(0),
    bool discard_stdout = false);

}  // namespace gpubench
