// Shared helpers for tests that run the gpubench binary or need scratch directories.
#pragma once

#include <sys/prctl.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include "common/errors.h"

namespace gpubench::testing {

// The message of the UsageError `action` throws, or empty when it throws none.
inline std::string usage_error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const UsageError& error) {
    return error.what();
  }
  return "";
}

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

inline CommandResult run_command(const std::string& command) {
  CommandResult result;
  std::FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) result.output.append(buffer, n);
  const int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

inline CommandResult run_gpubench(const std::string& arguments) {
  return run_command(std::string(GPUBENCH_BINARY) + " " + arguments);
}

// A result file a test read, kept in GPUBENCH_TEST_RESULTS_DIR under the test's name, so that the
// schema check that runs after the suite (tests/CMakeLists.txt, scripts/validate-results.py)
// validates every result the tests produced against schemas/result.schema.json.
inline void keep_for_schema_check(const std::string& path, const nlohmann::json& document) {
#ifdef GPUBENCH_TEST_RESULTS_DIR
  const auto schema = document.is_object() ? document.find("schema") : document.end();
  if (schema == document.end() || !schema->is_string() ||
      schema->get<std::string>().rfind("gpubench.result/", 0) != 0) {
    return;
  }
  static int kept = 0;
  const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = test == nullptr ? "outside-a-test"
                                     : std::string(test->test_suite_name()) + "." + test->name();
  for (char& c : name) c = c == '/' ? '_' : c;
  std::filesystem::create_directories(GPUBENCH_TEST_RESULTS_DIR);
  std::filesystem::copy_file(path,
                             std::string(GPUBENCH_TEST_RESULTS_DIR) + "/" + name + "." +
                                 std::to_string(::getpid()) + "." + std::to_string(++kept) +
                                 ".json",
                             std::filesystem::copy_options::overwrite_existing);
#else
  (void)path;
  (void)document;
#endif
}

inline nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  nlohmann::json document = nlohmann::json::parse(in);
  keep_for_schema_check(path, document);
  return document;
}

// Exit code 2 and gpubench's one line naming the problem (`message`) in what `arguments` gave;
// no abort, no C++ exception text.
inline void expect_refusal(const CommandResult& result, const std::string& arguments,
                           const std::string& message) {
  EXPECT_EQ(result.exit_code, 2) << arguments << "\n" << result.output;
  EXPECT_NE(result.output.find(message), std::string::npos) << arguments << "\n" << result.output;
  EXPECT_NE(result.output.find("gpubench: error: "), std::string::npos) << result.output;
  EXPECT_EQ(result.output.find("terminate called"), std::string::npos) << result.output;
  EXPECT_EQ(result.output.find("Exception raised from"), std::string::npos) << result.output;
}

// The same from the gpubench binary.
inline void expect_usage_error(const std::string& arguments, const std::string& message) {
  expect_refusal(run_gpubench(arguments), arguments, message);
}

// `folder` holds results and `other`, a file that is no result: a report of the folder reads the
// results (naming `model`) and passes over `other`, saying "skipped <skipped> in the folders
// given"; `other` named on its own is refused as no result.
inline void expect_report_passes_over(const std::string& folder, const std::string& other,
                                      const std::string& skipped, const std::string& model) {
  const auto report = run_gpubench("report " + folder);
  EXPECT_EQ(report.exit_code, 0) << report.output;
  EXPECT_NE(report.output.find("skipped " + skipped + " in the folders given"), std::string::npos)
      << report.output;
  EXPECT_NE(report.output.find(model), std::string::npos) << report.output;
  expect_usage_error("report " + other, "not a gpubench result");
}

// A fresh, empty directory under the system temp dir, removed when the object goes away.
class ScratchDirectory {
 public:
  explicit ScratchDirectory(const std::string& name) {
    path_ = std::filesystem::temp_directory_path() /
            ("gpubench-test-" + name + "-" + std::to_string(::getpid()));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDirectory() { std::filesystem::remove_all(path_); }
  std::string path() const { return path_.string(); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::vector<std::string> files_with_extension(const std::string& extension) const {
    std::vector<std::string> out;
    for (const auto& entry : std::filesystem::directory_iterator(path_)) {
      if (entry.path().extension() == extension) out.push_back(entry.path().string());
    }
    return out;
  }

 private:
  std::filesystem::path path_;
};

// --- Processes the test started ---------------------------------------------------------------
// The test process adopts the orphans among its descendants (PR_SET_CHILD_SUBREAPER): a process
// whose parent died is re-parented to the test instead of to init. "No process is left" is then
// asked of the processes themselves, not of a pattern on command lines.
inline const bool kTestAdoptsOrphans = ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0;

// The pids whose parent is `parent`, from /proc.
inline std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> children;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "stat");
    const std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t comm_end = stat.rfind(')');  // "pid (comm) state ppid ..."
    if (comm_end == std::string::npos) continue;
    std::istringstream fields(stat.substr(comm_end + 1));
    std::string state;
    pid_t ppid = 0;
    if (fields >> state >> ppid && ppid == parent) children.push_back(std::stoi(name));
  }
  return children;
}

inline std::string command_line_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (char& c : text) c = c == '\0' ? ' ' : c;
  return std::to_string(pid) + ": " + text;
}

// Waits until `pid` has `count` children (a launcher's ranks, a suite's benchmark); false if it
// has not after `limit`, a bound for a start that went wrong, never reached by a healthy one.
inline bool wait_for_children(pid_t pid, size_t count,
                              std::chrono::seconds limit = std::chrono::seconds(60)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (children_of(pid).size() < count) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

// The test's child processes still alive (each as "pid: command line") once every child that
// ends within `limit` is reaped: what a command left behind. A process that was told to stop
// ends in milliseconds; the limit only bounds the wait for one that never will.
inline std::vector<std::string> processes_left(
    std::chrono::seconds limit = std::chrono::seconds(30)) {
  EXPECT_TRUE(kTestAdoptsOrphans) << "prctl(PR_SET_CHILD_SUBREAPER) failed";
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid > 0) continue;   // one ended: reaped, look again
    if (pid < 0) return {};  // ECHILD: no child left
    if (std::chrono::steady_clock::now() > deadline) {
      std::vector<std::string> left;
      for (const pid_t child : children_of(::getpid())) left.push_back(command_line_of(child));
      return left;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace gpubench::testing
