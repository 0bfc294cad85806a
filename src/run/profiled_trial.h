// --profile (docs/profiling.md): one more trial of the workload's steps, run under LibTorch's op
// profiler after the measured trials so that the profiler's cost is in none of their figures.
// The trial is bounded by the timer's synchronisation (every rank's, with data parallelism), so
// the trace holds its steps and nothing else; each step is the range ProfilerStep#N, the name
// torch.profiler's step() gives, so both sides' traces read alike (scripts/profile_diff.py).
#pragma once

#include <functional>
#include <string>

#include <torch/torch.h>

#include "results/result.h"
#include "run/measurement.h"
#include "torch_support/step_timer.h"

namespace gpubench {

// Runs plan.steps steps of `step`. Where `records` (rank 0), under the profiler, and the trace
// goes to `path` or, where a file of that name exists, the first free FILE-2.json, ...
ProfileInfo run_profiled_trial(const TrialPlan& plan, StepTimer& timer,
                               const std::function<void()>& step, torch::Device device,
                               const std::string& path, bool records);

}  // namespace gpubench
