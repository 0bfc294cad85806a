#include "train/graphed_step.h"

#include <ATen/autocast_mode.h>

#include "common/errors.h"
#include "train/compat.h"

namespace gpubench {

std::string GraphedStep::unsupported_reason(const ResolvedBenchmark& benchmark) {
  if (benchmark.mode != Mode::kGraph) return "";
  if (benchmark.device != DeviceKind::kCuda) return "graph mode needs a CUDA device";
  // Inference captures a forward pass or a decode step instead (infer/static_decode.h,
  // train/captured_graph.h).
  const int needed = benchmark.task == Task::kInfer ? 1 : kGraphCaptureWarmupSteps;
  if (benchmark.warmup_steps < needed) {
    return "graph mode needs warmup_steps >= " + std::to_string(needed) + ", got " +
           std::to_string(benchmark.warmup_steps) +
           ": the warm-up runs before the capture, so that cuDNN's autotuning, the optimiser's "
           "first-step state and the allocator settle outside the graph";
  }
  if (benchmark.task == Task::kInfer) return "";
  if (!compat::kHasFusedSgd) {
    return "graph mode needs LibTorch 2.4 or newer with CUDA (its fused SGD keeps the step free "
           "of host synchronisation); this gpubench has LibTorch " +
           compat::libtorch_version();
  }
  if (benchmark.tgt_len > 0) {
    return "graph mode captures image models only: a language model's recurrent memory is a new "
           "tensor every step, which a replayed graph would never read";
  }
  if (benchmark.activation_checkpointing) {
    return "graph mode cannot capture activation checkpointing: its recomputation saves and "
           "restores the CUDA generator's state, which a graph capture forbids";
  }
  if (benchmark.gpus > 1) {
    return "graph mode runs one rank: capturing the gradient all-reduce (NCCL inside a CUDA "
           "graph, started from autograd hooks) is not implemented; use --mode eager with "
           "--gpus " +
           std::to_string(benchmark.gpus);
  }
  return "";
}

std::string GraphedStep::unsupported_in_process_group(const std::string& launcher, int world_size) {
  return "graph mode runs without a process group, but " + launcher +
         " started this process as "
         "one of " +
         std::to_string(world_size) +
         " rank(s): capturing the gradient all-reduce "
         "(NCCL inside a CUDA graph, started from autograd hooks) is not implemented; run it "
         "without the launcher, or with --mode eager";
}

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
