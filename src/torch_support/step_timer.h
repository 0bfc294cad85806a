// Times a window of training steps, bounded by device synchronisation (docs/method.md).
// An interface, so that the measurement (run/measurement.h) runs on a fake clock in tests;
// torch_support/device_timers.h has the device implementations.
#pragma once

#include <functional>
#include <vector>

namespace gpubench {

struct WindowTiming {
  double seconds = 0;                 // synchronised wall time of the whole window
  std::vector<double> step_times_ms;  // one per mark_step()
};

class StepTimer {
 public:
  virtual ~StepTimer() = default;
  virtual void start_window() = 0;         // synchronises the device, then starts the clock
  virtual void mark_step() = 0;            // records the end of one step, without synchronising
  virtual WindowTiming stop_window() = 0;  // synchronises, then stops the clock
  // Host time since start_window, unsynchronised: for progress display only.
  virtual double elapsed_seconds() const = 0;

  // Data parallelism: run after the device synchronisation at both ends of the window, before
  // the clock is read, so the window is bounded on every rank.
  void set_barrier(std::function<void()> barrier) { barrier_ = std::move(barrier); }

 protected:
  void wait_for_all_ranks() {
    if (barrier_) barrier_();
  }

 private:
  std::function<void()> barrier_;
};

}  // namespace gpubench
