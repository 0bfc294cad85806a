#include "run/measurement.h"

#include "common/errors.h"

namespace gpubench {

Measurement measure_trials(const TrialPlan& plan, StepTimer& timer,
                           const std::function<void()>& step, const MeasurementHooks& hooks) {
  for (int i = 1; i <= plan.warmup_steps; ++i) {
    throw_if_interrupted();
    step();
    if (hooks.progress) hooks.progress({true, 0, plan.repeat, i, plan.warmup_steps, 0});
  }
  Measurement measurement;
  std::vector<double> step_times;
  for (int trial = 1; trial <= plan.repeat; ++trial) {
    timer.start_window();
    if (hooks.window_opened) hooks.window_opened();
    for (int i = 1; i <= plan.steps; ++i) {
      if (trial == 1 && i == 1 && hooks.before_first_timed_step) hooks.before_first_timed_step();
      throw_if_interrupted();
      step();
      timer.mark_step();
      if (hooks.progress && i < plan.steps) {
        const double elapsed = timer.elapsed_seconds();
        hooks.progress({false, trial, plan.repeat, i, plan.steps,
                        elapsed > 0 ? plan.samples_per_step * i / elapsed : 0});
      }
    }
    const WindowTiming timing = timer.stop_window();
    if (hooks.window_closed) hooks.window_closed();
    measurement.trials.push_back(plan.samples_per_step * plan.steps / timing.seconds);
    // A trial's last step reports the trial as the result records it (its synchronised window).
    if (hooks.progress) {
      hooks.progress(
          {false, trial, plan.repeat, plan.steps, plan.steps, measurement.trials.back()});
    }
    step_times.insert(step_times.end(), timing.step_times_ms.begin(), timing.step_times_ms.end());
  }
  measurement.step_time_ms = summarize(step_times);
  measurement.throughput = median(measurement.trials);
  return measurement;
}

}  // namespace gpubench
