#include "stderr_capture.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <thread>

namespace gpubench {

struct StderrCapture::State {
  size_t kept_bytes = 0;
  int saved = -1;  // the real standard error
  int read_end = -1;
  std::thread reader;
  std::string held;
  bool cut = false;  // the start of `held` was dropped

  void read_all() {
    char buffer[4096];
    for (;;) {
      const ssize_t n = ::read(read_end, buffer, sizeof(buffer));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      held.append(buffer, static_cast<size_t>(n));
      if (held.size() > 2 * kept_bytes) {
        held.erase(0, held.size() - kept_bytes);
        cut = true;
      }
    }
  }
};

StderrCapture::StderrCapture(size_t kept_bytes) : state_(std::make_unique<State>()) {
  state_->kept_bytes = kept_bytes;
  int ends[2] = {-1, -1};
  if (::pipe2(ends, O_CLOEXEC) != 0) return;
  std::fflush(stderr);
  state_->saved = ::fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 0);
  if (state_->saved < 0 || ::dup2(ends[1], STDERR_FILENO) < 0) {
    if (state_->saved >= 0) ::close(state_->saved);
    state_->saved = -1;
    ::close(ends[0]);
    ::close(ends[1]);
    return;
  }
  ::close(ends[1]);  // descriptor 2 is now the only write end: closing it ends the reader
  state_->read_end = ends[0];
  state_->reader = std::thread([state = state_.get()] { state->read_all(); });
}

StderrCapture::~StderrCapture() {
  release();
}

std::string StderrCapture::release() {
  if (state_->saved < 0) return "";
  std::fflush(stderr);
  ::dup2(state_->saved, STDERR_FILENO);
  ::close(state_->saved);
  state_->saved = -1;
  state_->reader.join();
  ::close(state_->read_end);
  std::string held = std::move(state_->held);
  if (held.size() > state_->kept_bytes) {
    held.erase(0, held.size() - state_->kept_bytes);
    state_->cut = true;
  }
  if (state_->cut) {
    const size_t line = held.find('\n');
    if (line != std::string::npos) held.erase(0, line + 1);
  }
  return held;
}

}  // namespace gpubench
