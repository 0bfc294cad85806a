// The device implementations of StepTimer (CUDA events, or the steady clock on the CPU), and
// other timing on the device's timeline.
#pragma once

#include <memory>
#include <vector>

#include <torch/torch.h>

#include "torch_support/step_timer.h"

namespace gpubench {

std::unique_ptr<StepTimer> make_step_timer(torch::Device device);

// Durations of marked intervals on the device's timeline (CUDA events on the current stream, the
// steady clock on the CPU), recorded without synchronising inside the timed window. As with CUDA
// events, an interval can be read only after synchronize_device has run past its end: take_ms
// throws otherwise, on the CPU too, so that reading too early fails in the CPU tests.
class DeviceIntervals {
 public:
  explicit DeviceIntervals(torch::Device device);
  ~DeviceIntervals();
  void begin();
  void end();
  std::vector<double> take_ms();  // every completed interval since the last call

 private:
  struct Marks;
  std::unique_ptr<Marks> marks_;
};

// Waits until all work queued on the device has finished (on the CPU: marks what came before as
// readable, see DeviceIntervals).
void synchronize_device(torch::Device device);

}  // namespace gpubench
