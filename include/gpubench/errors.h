#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace gpubench {

// Bad input from the user (flags, suite files, paths): one line, exit code 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "a, b, c" for error messages that list the allowed values.
std::string join(const std::vector<std::string>& items, const std::string& separator = ", ");

}  // namespace gpubench
