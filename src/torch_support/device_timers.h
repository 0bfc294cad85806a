// The device implementations of StepTimer (CUDA events, or the steady clock on the CPU), and
// other timing on the device's timeline.
#pragma once

#include <memory>
#include <vector>

#include <torch/torch.h>

#include "torch_support/step_timer.h"

namespace gpubench {

std::unique_ptr<StepTimer> make_step_timer(torch::Device device);

// Points on the device's timeline (CUDA events on the current stream, the steady clock on the
// CPU), recorded without synchronising. As with CUDA events, the points can be read only after
// synchronize_device has run past the last: take_ms throws otherwise, on the CPU too, so that
// reading too early fails in the CPU tests.
class DeviceMarks {
 public:
  explicit DeviceMarks(torch::Device device);
  ~DeviceMarks();
  void mark();
  size_t size() const;
  std::vector<double> take_ms();  // each point's time after the first, in ms; then none are left

 private:
  struct Marks;
  std::unique_ptr<Marks> marks_;
};

// Durations of marked intervals on the device's timeline, read as DeviceMarks are.
class DeviceIntervals {
 public:
  explicit DeviceIntervals(torch::Device device) : marks_(device) {}
  void begin() { marks_.mark(); }
  void end() { marks_.mark(); }
  std::vector<double> take_ms();  // every completed interval since the last call

 private:
  DeviceMarks marks_;
};

// Waits until all work queued on the device has finished (on the CPU: marks what came before as
// readable, see DeviceIntervals).
void synchronize_device(torch::Device device);

}  // namespace gpubench
