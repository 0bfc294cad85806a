#include "telemetry/telemetry_recorder.h"

namespace gpubench {

TelemetryRecorder::TelemetryRecorder(std::unique_ptr<TelemetrySource> source,
                                     std::chrono::milliseconds interval)
    : source_(std::move(source)), interval_(interval) {}

TelemetryRecorder::~TelemetryRecorder() {
  if (sampler_.joinable()) end_window();
}

void TelemetryRecorder::take_sample() {
  TelemetrySample sample = source_->sample();
  sample.time_s = steady_seconds();
  windows_.back().samples.push_back(sample);
}

void TelemetryRecorder::begin_window() {
  std::lock_guard<std::mutex> lock(mutex_);
  TelemetryWindow window;
  source_->window_started();
  window.energy_start_j = source_->energy_j();
  window.start_s = steady_seconds();
  windows_.push_back(window);
  take_sample();
  stop_ = false;
  sampler_ = std::thread([this] { sample_until_stopped(); });
}

void TelemetryRecorder::sample_until_stopped() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!wake_.wait_for(lock, interval_, [this] { return stop_; })) take_sample();
}

void TelemetryRecorder::end_window() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  sampler_.join();
  std::lock_guard<std::mutex> lock(mutex_);
  take_sample();
  TelemetryWindow& window = windows_.back();
  window.end_s = steady_seconds();
  window.energy_end_j = source_->energy_j();
}

DeviceTelemetry TelemetryRecorder::summary() {
  std::lock_guard<std::mutex> lock(mutex_);
  DeviceTelemetry d = summarize_windows(windows_);
  d.device = source_->device();
  source_->describe(d);
  return d;
}

}  // namespace gpubench
