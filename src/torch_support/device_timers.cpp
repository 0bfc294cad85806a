#include "torch_support/device_timers.h"

#include <atomic>
#include <chrono>
#include <stdexcept>

#if GPUBENCH_WITH_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace gpubench {
namespace {

using Clock = std::chrono::steady_clock;

// How many times the CPU "device" has been synchronised. Host marks carry the count at their
// recording, so that reading an interval on the CPU obeys CUDA's rule for events: an interval
// whose end the device has not been synchronised past cannot be read (cudaEventElapsedTime
// raises cudaErrorNotReady). A run that reads too early then fails on the CPU as on a GPU.
std::atomic<uint64_t> host_synchronisations{0};

double seconds_between(Clock::time_point start, Clock::time_point end) {
  return std::chrono::duration<double>(end - start).count();
}

class HostStepTimer : public StepTimer {
 public:
  void start_window() override {
    marks_.clear();
    synchronize_device(torch::kCPU);
    wait_for_all_ranks();
    start_ = Clock::now();
    marks_.push_back(start_);
  }
  void mark_step() override { marks_.push_back(Clock::now()); }
  double elapsed_seconds() const override { return seconds_between(start_, Clock::now()); }
  WindowTiming stop_window() override {
    synchronize_device(torch::kCPU);
    wait_for_all_ranks();
    WindowTiming timing;
    timing.seconds = seconds_between(start_, Clock::now());
    for (size_t i = 1; i < marks_.size(); ++i) {
      timing.step_times_ms.push_back(1000.0 * seconds_between(marks_[i - 1], marks_[i]));
    }
    return timing;
  }

 private:
  Clock::time_point start_;
  std::vector<Clock::time_point> marks_;
};

#if GPUBENCH_WITH_CUDA
class CudaStepTimer : public StepTimer {
 public:
  explicit CudaStepTimer(torch::Device device) : device_(device) {}
  void start_window() override {
    synchronize_device(device_);
    wait_for_all_ranks();
    events_.clear();
    start_ = Clock::now();
    record();
  }
  void mark_step() override { record(); }
  double elapsed_seconds() const override { return seconds_between(start_, Clock::now()); }
  WindowTiming stop_window() override {
    synchronize_device(device_);
    wait_for_all_ranks();
    WindowTiming timing;
    timing.seconds = seconds_between(start_, Clock::now());
    for (size_t i = 1; i < events_.size(); ++i) {
      timing.step_times_ms.push_back(events_[i - 1]->elapsed_time(*events_[i]));
    }
    return timing;
  }

 private:
  void record() {
    auto event = std::make_unique<at::cuda::CUDAEvent>(cudaEventDefault);
    event->record(c10::cuda::getCurrentCUDAStream(device_.index()));
    events_.push_back(std::move(event));
  }
  torch::Device device_;
  Clock::time_point start_;
  std::vector<std::unique_ptr<at::cuda::CUDAEvent>> events_;
};
#endif

}  // namespace

struct HostMark {
  Clock::time_point time;
  uint64_t synchronisations = 0;  // host_synchronisations when it was recorded
};

struct DeviceMarks::Marks {
  torch::Device device = torch::kCPU;
  std::vector<HostMark> host;
#if GPUBENCH_WITH_CUDA
  std::vector<std::unique_ptr<at::cuda::CUDAEvent>> events;
#endif
};

DeviceMarks::DeviceMarks(torch::Device device) : marks_(std::make_unique<Marks>()) {
  marks_->device = device;
}
DeviceMarks::~DeviceMarks() = default;

void DeviceMarks::mark() {
#if GPUBENCH_WITH_CUDA
  if (marks_->device.is_cuda()) {
    auto event = std::make_unique<at::cuda::CUDAEvent>(cudaEventDefault);
    event->record(c10::cuda::getCurrentCUDAStream(marks_->device.index()));
    marks_->events.push_back(std::move(event));
    return;
  }
#endif
  marks_->host.push_back({Clock::now(), host_synchronisations.load()});
}

size_t DeviceMarks::size() const {
#if GPUBENCH_WITH_CUDA
  if (marks_->device.is_cuda()) return marks_->events.size();
#endif
  return marks_->host.size();
}

std::vector<double> DeviceMarks::take_ms() {
  std::vector<double> out;
#if GPUBENCH_WITH_CUDA
  auto& events = marks_->events;
  for (size_t i = 0; i < events.size(); ++i) {
    out.push_back(i == 0 ? 0.0 : events[0]->elapsed_time(*events[i]));
  }
  events.clear();
#endif
  auto& host = marks_->host;
  if (!host.empty() && host.back().synchronisations == host_synchronisations.load()) {
    host.clear();
    throw std::logic_error(
        "a device mark was read before the device was synchronised past it (CUDA raises "
        "cudaErrorNotReady here)");
  }
  for (const HostMark& mark : host) {
    out.push_back(1000.0 * seconds_between(host.front().time, mark.time));
  }
  host.clear();
  return out;
}

std::vector<double> DeviceIntervals::take_ms() {
  const std::vector<double> points = marks_.take_ms();
  std::vector<double> out;
  for (size_t i = 1; i < points.size(); i += 2) out.push_back(points[i] - points[i - 1]);
  return out;
}

void synchronize_device(torch::Device device) {
#if GPUBENCH_WITH_CUDA
  if (device.is_cuda()) {
    torch::cuda::synchronize(device.index());
    return;
  }
#endif
  if (device.is_cpu()) ++host_synchronisations;
}

std::unique_ptr<StepTimer> make_step_timer(torch::Device device) {
#if GPUBENCH_WITH_CUDA
  if (device.is_cuda()) return std::make_unique<CudaStepTimer>(device);
#endif
  (void)device;
  return std::make_unique<HostStepTimer>();
}

}  // namespace gpubench
