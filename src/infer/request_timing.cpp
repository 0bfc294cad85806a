#include "infer/request_timing.h"

#include "common/errors.h"

namespace gpubench {

std::vector<double> time_requests(StepTimer& timer, int count,
                                  const std::function<void()>& request) {
  std::vector<double> milliseconds;
  milliseconds.reserve(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    throw_if_interrupted();
    timer.start_window();
    request();
    timer.mark_step();
    milliseconds.push_back(timer.stop_window().seconds * 1e3);
  }
  return milliseconds;
}

}  // namespace gpubench
