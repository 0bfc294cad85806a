// The error gpubench's public API throws for a request it cannot run (docs/api.md).
#pragma once

#include <stdexcept>

namespace gpubench {

// Bad input from the user (flags, suite files, paths, a setting's value): one line that names the
// bad value and what is allowed; gpubench's command line exits with code 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace gpubench
