// Times a window of training steps, bounded by device synchronisation. Per-step times come from
// device events on CUDA (no host sync inside the window) and from the steady clock on the CPU.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include <torch/torch.h>

namespace gpubench {

struct WindowTiming {
  double seconds = 0;                 // synchronised wall time of the whole window
  std::vector<double> step_times_ms;  // one per mark_step()
};

class StepTimer {
 public:
  static std::unique_ptr<StepTimer> for_device(torch::Device device);
  virtual ~StepTimer() = default;
  virtual void start_window() = 0;         // synchronises the device, then starts the clock
  virtual void mark_step() = 0;            // records the end of one step, without synchronising
  virtual WindowTiming stop_window() = 0;  // synchronises, then stops the clock

  // Data parallelism: run after the device synchronisation at both ends of the window, before
  // the clock is read, so the window is bounded on every rank (DESIGN.md, Measurement).
  void set_barrier(std::function<void()> barrier) { barrier_ = std::move(barrier); }

 protected:
  void wait_for_all_ranks() {
    if (barrier_) barrier_();
  }

 private:
  std::function<void()> barrier_;
};

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
