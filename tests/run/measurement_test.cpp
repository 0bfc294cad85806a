// The measurement's arithmetic on a fake clock: no real time, every figure exact.
#include "run/measurement.h"

#include <chrono>
#include <stdexcept>

#include <gtest/gtest.h>

#include "torch_support/device_timers.h"

namespace gpubench {
namespace {

// Each step takes the next duration of a script (seconds); a window is the sum of its steps
// plus `sync_overhead` (the synchronisations at its ends).
class FakeTimer : public StepTimer {
 public:
  FakeTimer(std::vector<double> durations, double sync_overhead)
      : durations_(std::move(durations)), sync_overhead_(sync_overhead) {}
  void start_window() override {
    ++windows_;
    window_ = 0;
    marks_.clear();
  }
  void mark_step() override {
    const double step = durations_.at(next_++);
    window_ += step;
    marks_.push_back(step * 1000);
  }
  WindowTiming stop_window() override { return {window_ + sync_overhead_, marks_}; }
  double elapsed_seconds() const override { return window_; }

  size_t marked() const { return next_; }
  int windows() const { return windows_; }

 private:
  std::vector<double> durations_;
  double sync_overhead_;
  size_t next_ = 0;
  int windows_ = 0;
  double window_ = 0;
  std::vector<double> marks_;
};

TEST(Measurement, WarmupIsUntimedEachTrialIsItsWindowAndTheMedianTrialIsReported) {
  // Three trials of two steps: windows of 0.5+0.5, 0.2+0.3 and 1.0+1.0 s, plus 0.5 s of
  // synchronisation each, at 12 samples per step.
  FakeTimer timer({0.5, 0.5, 0.2, 0.3, 1.0, 1.0}, 0.5);
  int steps_run = 0;
  std::vector<ProgressEvent> events;
  const TrialPlan plan{4, 2, 3, 12};
  const Measurement m =
      measure_trials(plan, timer, [&] { ++steps_run; },
                     {[&](const ProgressEvent& e) { events.push_back(e); }, {}, {}, {}});
  EXPECT_EQ(steps_run, 4 + 2 * 3);
  EXPECT_EQ(timer.marked(), 6u);  // warm-up steps are never marked
  EXPECT_EQ(timer.windows(), 3);
  ASSERT_EQ(m.trials.size(), 3u);
  EXPECT_DOUBLE_EQ(m.trials[0], 24 / 1.5);  // samples of the window over its synchronised time
  EXPECT_DOUBLE_EQ(m.trials[1], 24 / 1.0);
  EXPECT_DOUBLE_EQ(m.trials[2], 24 / 2.5);
  EXPECT_DOUBLE_EQ(m.throughput, 16);  // the median trial, not the mean (16.5)
  // Step times: 200, 300, 500, 500, 1000, 1000 ms.
  EXPECT_DOUBLE_EQ(m.step_time_ms.median, 500);
  EXPECT_DOUBLE_EQ(m.step_time_ms.min, 200);
  EXPECT_DOUBLE_EQ(m.step_time_ms.max, 1000);
  EXPECT_DOUBLE_EQ(m.step_time_ms.mean, 3500.0 / 6);
  ASSERT_EQ(events.size(), 4u + 6u);
  EXPECT_TRUE(events[0].warmup);
  EXPECT_EQ(events[3].step, 4);
  EXPECT_FALSE(events[4].warmup);
  EXPECT_EQ(events[5].trial, 1);
  EXPECT_DOUBLE_EQ(events[4].samples_per_second, 12 / 0.5);  // 1 step in 0.5 s of host time
  // A trial's last step: the trial as recorded (its window with the synchronisation), 24 / 1.5.
  EXPECT_EQ(events[5].trial, 1);
  EXPECT_EQ(events[5].step, 2);
  EXPECT_DOUBLE_EQ(events[5].samples_per_second, m.trials[0]);
  EXPECT_DOUBLE_EQ(events[9].samples_per_second, m.trials[2]);
}

TEST(Measurement, TheFaultHookRunsOnceBeforeTheFirstTimedStep) {
  FakeTimer timer({1, 1, 1, 1}, 0);
  std::vector<std::string> order;
  MeasurementHooks hooks;
  hooks.before_first_timed_step = [&] { order.push_back("fault"); };
  measure_trials(
      {1, 2, 2, 1}, timer, [&] { order.push_back("step"); }, hooks);
  EXPECT_EQ(order, (std::vector<std::string>{"step", "fault", "step", "step", "step", "step"}));
}

// Telemetry samples inside the windows only: opened after each window's start, closed after its
// stop, never around the warm-up.
TEST(Measurement, WindowHooksBracketEachTrialAndNotTheWarmUp) {
  FakeTimer timer({1, 1, 1, 1}, 0);
  std::vector<std::string> order;
  MeasurementHooks hooks;
  hooks.window_opened = [&] { order.push_back("open" + std::to_string(timer.windows())); };
  hooks.window_closed = [&] { order.push_back("close"); };
  measure_trials(
      {1, 2, 2, 1}, timer, [&] { order.push_back("step"); }, hooks);
  EXPECT_EQ(order, (std::vector<std::string>{"step", "open1", "step", "step", "close", "open2",
                                             "step", "step", "close"}));
}

TEST(Measurement, PercentilesOfTheStepTimes) {
  std::vector<double> durations;
  for (int i = 1; i <= 100; ++i) durations.push_back(i / 1000.0);  // 1..100 ms
  FakeTimer timer(durations, 0);
  const Measurement m = measure_trials({0, 100, 1, 1}, timer, [] {});
  EXPECT_NEAR(m.step_time_ms.p5, 5.95, 1e-9);  // linear interpolation, as numpy's default
  EXPECT_NEAR(m.step_time_ms.p95, 95.05, 1e-9);
  EXPECT_NEAR(m.step_time_ms.median, 50.5, 1e-9);
}

// CUDA's rule for events holds on the CPU too: an interval cannot be read until the device has
// been synchronised past its end, so code that reads too early fails in the CPU tests.
TEST(DeviceIntervals, AnIntervalIsReadableOnlyAfterTheDeviceIsSynchronisedPastItsEnd) {
  const torch::Device cpu(torch::kCPU);
  DeviceIntervals intervals(cpu);
  intervals.begin();
  intervals.end();
  EXPECT_THROW(intervals.take_ms(), std::logic_error);
  EXPECT_TRUE(intervals.take_ms().empty()) << "the failed read drops what it could not read";

  const auto outer_start = std::chrono::steady_clock::now();
  intervals.begin();
  intervals.end();
  const double outer_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - outer_start)
          .count();
  synchronize_device(cpu);
  const std::vector<double> first = intervals.take_ms();
  ASSERT_EQ(first.size(), 1u);
  EXPECT_GE(first[0], 0.0);
  EXPECT_LE(first[0], outer_ms) << "the interval lies inside the clock readings around it";

  // One interval synchronised past, then one more recorded after the synchronisation.
  intervals.begin();
  intervals.end();
  synchronize_device(cpu);
  intervals.begin();
  intervals.end();
  EXPECT_THROW(intervals.take_ms(), std::logic_error);
}

TEST(DeviceIntervals, TheCpuStepTimerSynchronisesAtBothEndsOfItsWindow) {
  const torch::Device cpu(torch::kCPU);
  DeviceIntervals intervals(cpu);
  auto timer = make_step_timer(cpu);
  timer->start_window();
  intervals.begin();
  intervals.end();
  timer->mark_step();
  const WindowTiming timing = timer->stop_window();
  EXPECT_EQ(timing.step_times_ms.size(), 1u);
  EXPECT_EQ(intervals.take_ms().size(), 1u);
}

}  // namespace
}  // namespace gpubench
