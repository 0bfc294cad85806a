#include "launcher/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "common/errors.h"

extern char** environ;

namespace gpubench {
namespace {

// The children being waited for (a negative entry is a process group), so that Ctrl-C or
// SIGTERM sent to gpubench also ends them. Read by the signal handler: fixed size, no locks.
constexpr int kMaxTracked = 1024;
volatile sig_atomic_t tracked_count = 0;
pid_t tracked[kMaxTracked];
// How long a child told to stop (SIGTERM) may take to clean up before it is killed.
constexpr auto kStopGrace = std::chrono::seconds(2);

// Tells every child to stop (a gpubench child then removes its own temporary folder and stops
// its own children) and notes the signal; the waiting loops throw Interrupted, which unwinds
// through the destructors that clean up here.
void stop_tracked_and_note(int signal_number) {
  note_interruption(signal_number);  // first: whoever sees a child die then sees the flag too
  for (int i = 0; i < tracked_count; ++i) {
    if (tracked[i] != 0) ::kill(tracked[i], SIGTERM);
  }
}

void track(pid_t target) {
  handle_interruptions();
  for (int i = 0; i < tracked_count; ++i) {
    if (tracked[i] == 0) {
      tracked[i] = target;
      return;
    }
  }
  if (tracked_count < kMaxTracked) {
    tracked[tracked_count] = target;
    tracked_count = tracked_count + 1;
  }
}

void untrack(pid_t target) {
  for (int i = 0; i < tracked_count; ++i) {
    if (tracked[i] == target) tracked[i] = 0;
  }
}

std::vector<std::string> merged_environment(const EnvironmentOverrides& overrides) {
  std::vector<std::string> out;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string text = *entry;
    const std::string name = text.substr(0, text.find('='));
    const bool replaced = std::any_of(overrides.begin(), overrides.end(),
                                      [&](const auto& pair) { return pair.first == name; });
    if (!replaced) out.push_back(text);
  }
  for (const auto& [name, value] : overrides) out.push_back(name + "=" + value);
  return out;
}

ProcessOutcome outcome_of(int status) {
  ProcessOutcome outcome;
  if (WIFEXITED(status)) outcome.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) outcome.signal = WTERMSIG(status);
  return outcome;
}

}  // namespace

void handle_interruptions() {
  static bool installed = false;
  if (installed) return;
  ::signal(SIGINT, stop_tracked_and_note);
  ::signal(SIGTERM, stop_tracked_and_note);
  // A closed SSH session's SIGHUP ends the run the same way (its temporary folders removed),
  // unless the run was started to outlive it (nohup: SIGHUP ignored).
  struct sigaction hangup {};
  if (::sigaction(SIGHUP, nullptr, &hangup) == 0 && hangup.sa_handler != SIG_IGN) {
    ::signal(SIGHUP, stop_tracked_and_note);
  }
  installed = true;
}

std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", seconds);
  return text;
}

std::string ProcessOutcome::describe() const {
  if (timed_out) {
    return std::string("timed out and was killed") +
           (time_limit_seconds > 0 ? " after " + seconds_text(time_limit_seconds) + " s" : "");
  }
  if (signal != 0)
    return "killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  return "exit code " + std::to_string(exit_code);
}

ChildProcess::ChildProcess(const std::vector<std::string>& argv,
                           const EnvironmentOverrides& environment, bool own_group,
                           bool discard_stdout)
    : own_group_(own_group) {
  // Everything the child needs is built before fork: after it, only async-signal-safe calls.
  std::vector<char*> args;
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  const std::vector<std::string> env_text = merged_environment(environment);
  std::vector<char*> env;
  for (const auto& entry : env_text) env.push_back(const_cast<char*>(entry.c_str()));
  env.push_back(nullptr);

  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
  if (pid_ == 0) {
    // The child ends with its parent, even one killed by SIGKILL: SIGTERM lets a gpubench child
    // clean up and stop its own children. Checked after it is set: a parent that died before
    // has left the child to init already.
    if (::prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || ::getppid() != parent) ::_exit(127);
    if (own_group) ::setpgid(0, 0);
    if (discard_stdout) {
      const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
      if (null >= 0) ::dup2(null, 1);
    }
    ::execve(args[0], args.data(), env.data());
    const char message[] = "gpubench: cannot start a child process\n";
    [[maybe_unused]] const auto written = ::write(2, message, sizeof(message) - 1);
    ::_exit(127);
  }
  if (own_group) ::setpgid(pid_, pid_);
  track(own_group ? -pid_ : pid_);
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(other.pid_), own_group_(other.own_group_), outcome_(other.outcome_) {
  other.pid_ = -1;
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !outcome_) stop();
}

std::optional<ProcessOutcome> ChildProcess::poll() {
  if (outcome_ || pid_ <= 0) return outcome_;
  int status = 0;
  const pid_t done = ::waitpid(pid_, &status, WNOHANG);
  if (done == pid_) {
    outcome_ = outcome_of(status);
    untrack(own_group_ ? -pid_ : pid_);
  }
  return outcome_;
}

ProcessOutcome ChildProcess::wait() {
  while (!poll()) {
    throw_if_interrupted();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return *outcome_;
}

void ChildProcess::kill_now() {
  if (pid_ <= 0 || outcome_) return;
  ::kill(own_group_ ? -pid_ : pid_, SIGKILL);
}

ProcessOutcome ChildProcess::stop() {
  if (pid_ <= 0) return {};
  if (!outcome_) ::kill(own_group_ ? -pid_ : pid_, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + kStopGrace;
  while (!poll() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill_now();
  int status = 0;
  while (!outcome_) {
    if (::waitpid(pid_, &status, 0) == pid_) {
      outcome_ = outcome_of(status);
      untrack(own_group_ ? -pid_ : pid_);
    } else if (errno != EINTR) {
      outcome_ = ProcessOutcome{};
    }
  }
  return *outcome_;
}

ProcessOutcome run_child_process(const std::vector<std::string>& argv, double timeout_seconds,
                                 bool discard_stdout) {
  ChildProcess child(argv, {}, true, discard_stdout);
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration<double>(timeout_seconds > 0 ? timeout_seconds : 1e12);
  for (;;) {
    throw_if_interrupted();  // first: a child that SIGTERM ended was interrupted, not failed
    if (auto outcome = child.poll()) {
      throw_if_interrupted();
      return *outcome;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      ProcessOutcome outcome = child.stop();
      outcome.timed_out = true;
      outcome.time_limit_seconds = timeout_seconds;
      return outcome;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

std::string current_executable() {
  char path[4096];
  const ssize_t length = ::readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (length <= 0) throw std::runtime_error("cannot find the running executable");
  return std::string(path, static_cast<size_t>(length));
}

}  // namespace gpubench
