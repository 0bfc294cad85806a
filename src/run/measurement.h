// The measurement's phases, apart from what is measured: warm-up steps untimed, then `repeat`
// trial windows of `steps` steps each, bounded by the timer's synchronisation; a trial's
// throughput is its samples over its window; the median trial is the result (docs/method.md).
// Driven by a StepTimer, so tests run it on a fake clock.
#pragma once

#include <functional>
#include <vector>

#include "results/statistics.h"
#include "torch_support/step_timer.h"

namespace gpubench {

struct ProgressEvent {
  bool warmup = false;
  int trial = 0;  // 1-based; 0 during warm-up
  int trials = 0;
  int step = 0;  // 1-based within the phase
  int steps = 0;
  // So far in this trial (host clock; 0 during warm-up); at a trial's last step, the trial's
  // throughput as the result records it.
  double samples_per_second = 0;
};
using ProgressCallback = std::function<void(const ProgressEvent&)>;

struct TrialPlan {
  int warmup_steps = 0;
  int steps = 1;                // per trial
  int repeat = 1;               // trials
  double samples_per_step = 1;  // global
};

struct Measurement {
  std::vector<double> trials;  // samples/sec of each trial, in run order
  Summary step_time_ms;        // over every timed step of every trial
  double throughput = 0;       // the median trial
};

struct MeasurementHooks {
  ProgressCallback progress;
  std::function<void()> before_first_timed_step;  // the fault-injection point
  // Inside each trial's window: after its opening synchronisation, after its closing one.
  std::function<void()> window_opened;
  std::function<void()> window_closed;
};

// Calls `step` warmup_steps + steps x repeat times.
Measurement measure_trials(const TrialPlan& plan, StepTimer& timer,
                           const std::function<void()>& step, const MeasurementHooks& hooks = {});

}  // namespace gpubench
