// Latency per request: each request its own window of the step timer (synchronised at both
// ends), so a request's time includes everything it queued on the device.
#pragma once

#include <functional>
#include <vector>

#include "torch_support/step_timer.h"

namespace gpubench {

// Milliseconds of each of `count` requests, in run order.
std::vector<double> time_requests(StepTimer& timer, int count,
                                  const std::function<void()>& request);

}  // namespace gpubench
