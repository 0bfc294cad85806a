#include "train/graphed_step.h"

#include <ATen/autocast_mode.h>

#include "common/errors.h"
#include "torch_support/compat.h"

namespace gpubench {

GraphedStep::GraphedStep(TrainingStep& step, const SyntheticBatch& batch, torch::Device device,
                         int warmup_steps, bool rehearsal) {
#if !GPUBENCH_WITH_CUDA
  if (!rehearsal) {
    throw UsageError("graph mode needs a CUDA device: this gpubench was built without CUDA");
  }
#endif
  // Cached casts of the weights would be made during capture and then stand stale in the graph.
  at::autocast::set_autocast_cache_enabled(false);
  // The last warm-up step records the step's memory: it runs eagerly before the graph's private
  // pool exists, so measuring it does not add a second step's worth to the graph's footprint.
  int calls = 0;
  const std::function<void()> work = [&step, &batch, device, warmup_steps, calls, this]() mutable {
    if (++calls == warmup_steps) step.measure_memory_of_next_step(device);
    // The backward timeline is the eager warm-up's: a capture would record its marks into the
    // graph, and a replay runs no hooks.
    if (calls > warmup_steps) step.set_timeline(nullptr);
    loss_ = step.run(batch);
  };
  graph_ = rehearsal ? CapturedGraph::rehearsal(work, warmup_steps)
                     : std::make_unique<CapturedGraph>(work, device, warmup_steps);
}

GraphedStep::~GraphedStep() = default;

torch::Tensor GraphedStep::run() {
  graph_->replay();
  return loss_;
}

}  // namespace gpubench
