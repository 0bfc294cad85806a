// Samples one device every interval during each timed window, on a thread of its own, and
// reads the energy counter at each window's edges; the summary is summarize_windows'.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "telemetry/telemetry_source.h"

namespace gpubench {

class TelemetryRecorder {
 public:
  TelemetryRecorder(std::unique_ptr<TelemetrySource> source, std::chrono::milliseconds interval);
  ~TelemetryRecorder();
  TelemetryRecorder(const TelemetryRecorder&) = delete;
  TelemetryRecorder& operator=(const TelemetryRecorder&) = delete;

  // A sample at each edge, and every interval between them.
  void begin_window();
  void end_window();
  DeviceTelemetry summary();

 private:
  void take_sample();  // holds mutex_
  void sample_until_stopped();

  std::unique_ptr<TelemetrySource> source_;
  std::chrono::milliseconds interval_;
  std::vector<TelemetryWindow> windows_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread sampler_;
};

}  // namespace gpubench
