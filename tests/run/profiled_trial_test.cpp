// --profile's extra trial: the profiler is running before the trial's window opens, so its own
// start-up (Kineto's, CUPTI's on a GPU) is no part of the profiled trial's time.
#include "run/profiled_trial.h"

#include <gtest/gtest.h>

#include <ATen/record_function.h>

#include "test_helpers.h"

namespace gpubench {
namespace {

// A window that marks its opening in the trace as a range: present only if the profiler was
// already recording when the window opened.
class WindowMarkingTimer : public StepTimer {
 public:
  void start_window() override { RECORD_USER_SCOPE("window-opened"); }
  void mark_step() override { ++steps_; }
  WindowTiming stop_window() override { return {0.5, std::vector<double>(steps_, 1.0)}; }
  double elapsed_seconds() const override { return 0; }

 private:
  int steps_ = 0;
};

TEST(ProfiledTrial, TheProfilerRunsBeforeTheTrialsWindowOpens) {
  testing::ScratchDirectory dir("profiled-trial");
  WindowMarkingTimer timer;
  TrialPlan plan;
  plan.steps = 2;
  plan.samples_per_step = 4;
  int steps = 0;
  const ProfileInfo info = run_profiled_trial(
      plan, timer, [&steps] { ++steps; }, torch::kCPU, dir.file("trace.json"), true);
  EXPECT_EQ(steps, 2);
  EXPECT_DOUBLE_EQ(info.throughput, 4 * 2 / 0.5);
  const nlohmann::json trace = testing::read_json(info.trace);
  const nlohmann::json& events = trace.is_array() ? trace : trace.at("traceEvents");
  bool window = false;
  for (const auto& event : events) window |= event.value("name", "") == "window-opened";
  EXPECT_TRUE(window) << "the window opened before the profiler started";
}

}  // namespace
}  // namespace gpubench
