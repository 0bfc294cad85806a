#include "common/standard_streams.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/errors.h"

namespace gpubench {
namespace {

bool is_open(int fd) {
  return ::fcntl(fd, F_GETFD) != -1 || errno != EBADF;
}

void reopen_on_null(int fd, int flags) {
  const int null = ::open("/dev/null", flags);
  if (null >= 0 && null != fd) {
    ::dup2(null, fd);
    ::close(null);
  }
}

}  // namespace

void guard_standard_streams() {
  // Lowest first: open() takes the lowest free descriptor, so /dev/null lands on the right one.
  if (!is_open(STDIN_FILENO)) reopen_on_null(STDIN_FILENO, O_RDONLY);
  const bool output_closed = !is_open(STDOUT_FILENO);
  if (output_closed) reopen_on_null(STDOUT_FILENO, O_WRONLY);
  if (!is_open(STDERR_FILENO)) reopen_on_null(STDERR_FILENO, O_WRONLY);
  if (output_closed) {
    throw UsageError(
        "standard output is closed; gpubench prints its results there (redirect it to a file "
        "or /dev/null)");
  }
}

std::string standard_output_failure() {
  errno = 0;
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    const int error = errno;
    std::clearerr(stdout);
    return error != 0 ? std::strerror(error) : "write error";
  }
  return "";
}

void write_standard_output(const std::string& text) {
  errno = 0;
  const bool written = std::fwrite(text.data(), 1, text.size(), stdout) == text.size();
  const int error = errno;
  const std::string failure = standard_output_failure();
  if (!written || !failure.empty()) {
    throw UsageError("cannot write to standard output: " +
                     (failure.empty() ? std::string(std::strerror(error)) : failure));
  }
}

}  // namespace gpubench
