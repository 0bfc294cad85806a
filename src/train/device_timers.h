// The device implementations of StepTimer (CUDA events, or the steady clock on the CPU), and
// other timing on the device's timeline.
#pragma once

#include <memory>
#include <vector>

#include <torch/torch.h>

#include "train/step_timer.h"

namespace gpubench {

std::unique_ptr<StepTimer> make_step_timer(torch::Device device);

// Durations of marked intervals on the device's timeline (CUDA events on the current stream, the
// steady clock on the CPU), read without synchronising inside the timed window.
class DeviceIntervals {
 public:
  explicit DeviceIntervals(torch::Device device);
  ~DeviceIntervals();
  void begin();
  void end();
  std::vector<double> take_ms();  // every completed interval since the last call; device idle

 private:
  struct Marks;
  std::unique_ptr<Marks> marks_;
};

// Waits until all work queued on the device has finished (a no-op on the CPU).
void synchronize_device(torch::Device device);

}  // namespace gpubench
