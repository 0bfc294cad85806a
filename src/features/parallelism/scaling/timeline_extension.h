// A backward timeline measured on a model built with fewer of its repeated blocks (`train
// --blocks N`), extended to the model's depth (docs/scaling.md#a-model-too-large-for-this-host).
// The N-block timeline times every parameter on its own and tags it with its block. The whole
// model's backward is: the parameters before the blocks (the head) as measured, the measured
// blocks, then one more block after another, each ready a block's period later (the median over
// the parameters of the time between the same parameter in consecutive blocks), then the
// parameters after the blocks (embeddings) that much later too. Its gradients are grouped into
// DDP's buckets at the run's cap (scaling/bucket_rule.h). Two parts are not measured per block
// and are scaled: the forward pass with the backward pass, the optimiser step with the gradient
// bytes (a multi-tensor step is bound by the bytes it reads and writes).
#pragma once

#include <cstdint>
#include <string>

#include "results/result.h"

namespace gpubench {

struct ExtendedTimeline {
  StepTimelineInfo timeline;  // whole depth, DDP's buckets
  double step_ms = 0;         // the measured step with each phase replaced by its extension
  std::string how;            // in words, for the renderings
};

// Throws UsageError when the timeline cannot be extended (fewer than two blocks measured, blocks
// of different parameter lists).
ExtendedTimeline extend_timeline(const StepTimelineInfo& measured, double step_ms,
                                 int64_t bucket_cap_bytes);

}  // namespace gpubench
