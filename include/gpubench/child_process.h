// Runs a child process to completion or until a timeout, then kills its whole process group.
#pragma once

#include <string>
#include <vector>

namespace gpubench {

struct ProcessOutcome {
  bool timed_out = false;
  int exit_code = -1;            // when it exited normally
  int signal = 0;                // when a signal ended it
  std::string describe() const;  // "exit code 1", "killed by signal 6 (Aborted)", ...
};

// timeout_seconds <= 0 waits forever. The child gets its own process group so that a timeout
// also ends whatever it started.
ProcessOutcome run_child_process(const std::vector<std::string>& argv, double timeout_seconds);

// The path of the running executable (/proc/self/exe).
std::string current_executable();

}  // namespace gpubench
