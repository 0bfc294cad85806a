// What graph mode (a captured CUDA graph replayed for every timed step) can run: rules of the
// resolve step, next to the constant the capture itself uses (train/graphed_step.h,
// infer/static_decode.h).
#pragma once

#include <string>

#include "common/errors.h"
#include "features/resolve_rule.h"
#include "settings/benchmark.h"

namespace gpubench {

// Eager steps before a training step is captured: PyTorch's notes on CUDA graphs warm a whole
// network up for three iterations on a side stream before capturing it.
inline constexpr int kGraphCaptureWarmupSteps = 3;

// The eager steps graph mode runs before its capture: kGraphCaptureWarmupSteps for training, one
// for inference.
int graph_capture_warmup_steps(Task task);
// Why this benchmark cannot run in graph mode with this gpubench (and what the machine or build
// lacks, where that is why), or no refusal when it can.
Refusal graph_mode_unsupported_reason(const ResolvedBenchmark& benchmark);
// The rule of resolve: that reason, raised.
void check_graph_mode(const ResolveInputs& inputs, ResolvedBenchmark& benchmark);
// Why graph mode cannot run as one of `world_size` ranks that `launcher` started: decided from
// the process group, since a launcher's world of one still joins one and all-reduces.
std::string graph_mode_unsupported_in_process_group(const std::string& launcher, int world_size);

}  // namespace gpubench
