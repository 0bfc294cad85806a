#include "gpubench/child_process.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>

namespace gpubench {
namespace {

// The process group of the child being waited for, so that Ctrl-C or SIGTERM sent to gpubench
// also ends the benchmark, which runs in a process group of its own.
volatile sig_atomic_t running_child_group = 0;

void forward_and_die(int signal_number) {
  if (running_child_group > 0) ::kill(-running_child_group, SIGKILL);
  ::signal(signal_number, SIG_DFL);
  ::raise(signal_number);
}

class ForwardTerminationSignals {
 public:
  explicit ForwardTerminationSignals(pid_t group) {
    running_child_group = group;
    previous_int_ = ::signal(SIGINT, forward_and_die);
    previous_term_ = ::signal(SIGTERM, forward_and_die);
  }
  ~ForwardTerminationSignals() {
    ::signal(SIGINT, previous_int_);
    ::signal(SIGTERM, previous_term_);
    running_child_group = 0;
  }

 private:
  sighandler_t previous_int_;
  sighandler_t previous_term_;
};

}  // namespace

std::string ProcessOutcome::describe() const {
  if (timed_out) return "timed out and was killed";
  if (signal != 0)
    return "killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  return "exit code " + std::to_string(exit_code);
}

ProcessOutcome run_child_process(const std::vector<std::string>& argv, double timeout_seconds) {
  std::vector<char*> args;
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);

  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    ::setpgid(0, 0);
    ::execv(args[0], args.data());
    std::fprintf(stderr, "gpubench: cannot run %s: %s\n", args[0], std::strerror(errno));
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  ForwardTerminationSignals forward(pid);

  ProcessOutcome outcome;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration<double>(timeout_seconds > 0 ? timeout_seconds : 1e12);
  int status = 0;
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) throw std::runtime_error("waitpid failed");
    if (std::chrono::steady_clock::now() >= deadline) {
      outcome.timed_out = true;
      ::kill(-pid, SIGTERM);
      std::this_thread::sleep_for(std::chrono::seconds(2));
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (WIFEXITED(status)) outcome.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) outcome.signal = WTERMSIG(status);
  return outcome;
}

std::string current_executable() {
  char path[4096];
  const ssize_t length = ::readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (length <= 0) throw std::runtime_error("cannot find the running executable");
  return std::string(path, static_cast<size_t>(length));
}

}  // namespace gpubench
