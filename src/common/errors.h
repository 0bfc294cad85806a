#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpubench {

// Bad input from the user (flags, suite files, paths): one line, exit code 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// SIGINT or SIGTERM arrived while gpubench waited for its children (which it has then told to
// stop): thrown so that destructors clean up; the top level then ends the process by the same
// signal.
class Interrupted : public std::exception {
 public:
  explicit Interrupted(int signal_number) : signal_number_(signal_number) {}
  int signal_number() const { return signal_number_; }
  const char* what() const noexcept override { return "interrupted"; }

 private:
  int signal_number_;
};

// Throws Interrupted when SIGINT or SIGTERM arrived since the handler was installed
// (process/child_process.h installs it with the first child); a no-op otherwise.
void throw_if_interrupted();
// Marks the signal as arrived; the handler calls it (async-signal-safe).
void note_interruption(int signal_number);

// UsageError "<name> must be a positive integer, got <value>" unless value > 0.
void require_positive(int64_t value, const std::string& name);

// The text up to its first line break: a LibTorch error carries a C++ backtrace after it.
std::string first_line(const std::string& text);

// "a, b, c" for error messages that list the allowed values.
std::string join(const std::vector<std::string>& items, const std::string& separator = ", ");

}  // namespace gpubench
