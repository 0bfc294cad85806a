// Standard error held back while a library that writes its own diagnostics there does work whose
// failure gpubench reports itself: c10d prints a line for every retry of a rendezvous (glog's
// "Logging before InitGoogleLogging()", "[c10d] The client socket has timed out ..."), which
// would bury gpubench's one line naming the master that never answered.
#pragma once

#include <memory>
#include <string>

namespace gpubench {

class StderrCapture {
 public:
  // From here until release() (or the destructor), what anything in this process writes to
  // descriptor 2 is read by a thread of this object, which keeps the last `kept_bytes` of it.
  // Where no pipe can be made, standard error is left as it is.
  explicit StderrCapture(size_t kept_bytes = 16 * 1024);
  ~StderrCapture();
  StderrCapture(const StderrCapture&) = delete;
  StderrCapture& operator=(const StderrCapture&) = delete;

  // Puts standard error back and returns what was held (its last kept_bytes, from a line's
  // start); later calls return "".
  std::string release();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace gpubench
