#include "run/profiled_trial.h"

#include <optional>

#include <ATen/record_function.h>

#include "common/atomic_file.h"
#include "common/errors.h"
#include "common/log.h"
#include "common/text_table.h"
#include "torch_support/compat.h"

namespace gpubench {
namespace {

// The profiler on for a scope: a step that throws leaves it off again, its events dropped.
class ProfilerScope {
 public:
  ProfilerScope(bool cuda, std::string scratch_directory)
      : scratch_directory_(std::move(scratch_directory)) {
    compat::start_profiler(cuda);
  }
  ~ProfilerScope() {
    if (!running_) return;
    try {
      compat::stop_profiler(scratch_directory_);
    } catch (const std::exception& error) {
      log::warn("stopping the profiler after a failed step: {}", error.what());
    }
  }
  ProfilerScope(const ProfilerScope&) = delete;
  ProfilerScope& operator=(const ProfilerScope&) = delete;

  std::string stop() {
    running_ = false;
    return compat::stop_profiler(scratch_directory_);
  }

 private:
  std::string scratch_directory_;
  bool running_ = true;
};

void run_marked_steps(const TrialPlan& plan, StepTimer& timer, const std::function<void()>& step) {
  for (int i = 1; i <= plan.steps; ++i) {
    RECORD_USER_SCOPE("ProfilerStep#" + std::to_string(i));
    throw_if_interrupted();
    step();
    timer.mark_step();
  }
}

}  // namespace

ProfileInfo run_profiled_trial(const TrialPlan& plan, StepTimer& timer,
                               const std::function<void()>& step, torch::Device device,
                               const std::string& path, bool records) {
  log::info("profiling one more trial of {} steps (its figures are not among the results)",
            plan.steps);
  // Started before the window: the profiler's own start-up (Kineto's, CUPTI's) is not the
  // profiled trial's time.
  std::optional<ProfilerScope> profiler;
  if (records) profiler.emplace(device.is_cuda(), folder_of(path));
  timer.start_window();
  run_marked_steps(plan, timer, step);
  const WindowTiming timing = timer.stop_window();
  if (!profiler) return {};
  ProfileInfo info;
  info.profiler = compat::profiler_name();
  info.steps = plan.steps;
  info.throughput = plan.samples_per_step * plan.steps / timing.seconds;
  info.trace = write_new_file(path, profiler->stop());
  log::info("profile: {} ({} steps, {} per second while profiled)", info.trace, info.steps,
            format_fixed(info.throughput, 2));
  return info;
}

}  // namespace gpubench
