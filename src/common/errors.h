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

// UsageError "<name> must be a positive integer, got <value>" unless value > 0.
void require_positive(int64_t value, const std::string& name);

// The text up to its first line break: a LibTorch error carries a C++ backtrace after it.
std::string first_line(const std::string& text);

// "a, b, c" for error messages that list the allowed values.
std::string join(const std::vector<std::string>& items, const std::string& separator = ", ");

}  // namespace gpubench
