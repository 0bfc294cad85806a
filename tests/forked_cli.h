// gpubench-train's main (run_command_line) in a forked copy of the test process: a refusal that
// needs LibTorch (a model's capabilities, the devices) checked through the whole command line
// without a LibTorch start (0.4-0.6 s of CPU a process). The binary's own path (gpubench's
// checks, the exec) is tested by the tests that run it (Cli, HostileInput). A forked child cannot
// use a CUDA context its parent made: the e2e suites that fork never touch CUDA themselves.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <wordexp.h>

#include <cerrno>
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gpubench/benchmark.h"  // run_command_line
#include "test_helpers.h"

namespace gpubench::testing {

// `arguments` split as the shell splits them (quotes; no substitution), run as
// `gpubench-train <arguments>` in a child forked from this process, its stdout and stderr
// together. A child still running after 120 s is ended by SIGALRM (exit code 128 + 14). For
// refusals and other commands that compute nothing: a forked child that runs LibTorch's parallel
// kernels can hang on LibTorch 2.x, whose OpenMP threads the parent started do not exist in it
// (`fit --task infer` did, until SIGALRM); those go through the binary (run_gpubench).
inline CommandResult run_forked(const std::string& arguments) {
  CommandResult result;
  int pipe_ends[2];
  if (::pipe(pipe_ends) != 0) return result;
  std::fflush(stdout);  // the child would write this process's buffered output again
  std::fflush(stderr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(pipe_ends[0]);
    ::dup2(pipe_ends[1], STDOUT_FILENO);
    ::dup2(pipe_ends[1], STDERR_FILENO);
    ::close(pipe_ends[1]);
    ::alarm(120);
    wordexp_t words{};
    if (::wordexp(arguments.c_str(), &words, WRDE_NOCMD | WRDE_UNDEF) != 0) ::_exit(127);
    std::vector<char*> argv{const_cast<char*>("gpubench")};
    for (size_t i = 0; i < words.we_wordc; ++i) argv.push_back(words.we_wordv[i]);
    argv.push_back(nullptr);
    const int code = run_command_line(static_cast<int>(argv.size()) - 1, argv.data());
    std::fflush(stdout);
    std::fflush(stderr);
    ::_exit(code);
  }
  ::close(pipe_ends[1]);
  if (pid < 0) {
    ::close(pipe_ends[0]);
    return result;
  }
  char buffer[4096];
  ssize_t n = 0;
  while ((n = ::read(pipe_ends[0], buffer, sizeof(buffer))) != 0) {
    if (n < 0 && errno != EINTR) break;
    if (n > 0) result.output.append(buffer, static_cast<size_t>(n));
  }
  ::close(pipe_ends[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

// expect_refusal (test_helpers.h) of gpubench-train's main.
inline void expect_refused(const std::string& arguments, const std::string& message) {
  expect_refusal(run_forked(arguments), arguments, message);
}

}  // namespace gpubench::testing
