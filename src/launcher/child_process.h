// Child processes: one benchmark run to completion or a timeout, or a set of ranks watched
// together. A child dies with its parent, even one killed by SIGKILL (PR_SET_PDEATHSIG). Ctrl-C
// or SIGTERM sent to gpubench while it waits tells its children to stop and makes the waiting
// call throw Interrupted (common/errors.h), so that every destructor on the way out runs.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpubench {

struct ProcessOutcome {
  bool timed_out = false;
  double time_limit_seconds = 0;  // the limit it ran past, when timed_out
  int exit_code = -1;             // when it exited normally
  int signal = 0;                 // when a signal ended it
  bool succeeded() const { return !timed_out && signal == 0 && exit_code == 0; }
  // "exit code 1", "killed by signal 6 (Aborted)", "timed out and was killed after 2.5 s", ...
  std::string describe() const;
};

using EnvironmentOverrides = std::vector<std::pair<std::string, std::string>>;

class ChildProcess {
 public:
  // Starts argv[0] with this process's environment plus `environment`; in a process group of
  // its own when `own_group` (so that killing the group also ends what it starts); with
  // `discard_stdout`, its standard output goes to /dev/null (its log lines still show).
  ChildProcess(const std::vector<std::string>& argv, const EnvironmentOverrides& environment,
               bool own_group, bool discard_stdout = false);
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&&) = delete;
  ~ChildProcess();  // stops (stop()) a child still running

  pid_t pid() const { return pid_; }
  std::optional<ProcessOutcome> poll();  // the outcome once it has ended; never blocks
  ProcessOutcome wait();                 // throws Interrupted on SIGINT/SIGTERM
  void kill_now();                       // SIGKILL, to the group when it has its own
  // SIGTERM (to the group when it has its own), up to 2 s to clean up and end, then SIGKILL;
  // reaps it. Never throws.
  ProcessOutcome stop();

 private:
  pid_t pid_ = -1;
  bool own_group_ = false;
  std::optional<ProcessOutcome> outcome_;
};

// From now on SIGINT and SIGTERM tell the children to stop and make the waiting calls (and the
// end of the command) throw Interrupted, instead of ending the process at once. Called with the
// first child and with the first temporary folder (temporary_folder.h); idempotent.
void handle_interruptions();

// timeout_seconds <= 0 waits forever. The child gets its own process group so that a timeout
// also ends whatever it started (stop()). Throws Interrupted on SIGINT/SIGTERM.
ProcessOutcome run_child_process(const std::vector<std::string>& argv, double timeout_seconds,
                                 bool discard_stdout = false);

// "0.5", "300": a time limit as it was given, not cut to whole seconds.
std::string seconds_text(double seconds);

// The path of the running executable (/proc/self/exe).
std::string current_executable();

}  // namespace gpubench
