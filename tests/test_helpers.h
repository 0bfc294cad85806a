// Shared helpers for tests that run the gpubench binary or need scratch directories.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
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

inline nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

// Exit code 2 and one clear line naming the problem; no abort, no C++ exception text.
inline void expect_usage_error(const std::string& arguments, const std::string& message) {
  const auto result = run_gpubench(arguments);
  EXPECT_EQ(result.exit_code, 2) << arguments << "\n" << result.output;
  EXPECT_NE(result.output.find(message), std::string::npos) << arguments << "\n" << result.output;
  EXPECT_EQ(result.output.find("terminate called"), std::string::npos) << result.output;
  EXPECT_EQ(result.output.find("Exception raised from"), std::string::npos) << result.output;
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

}  // namespace gpubench::testing
