#include "features/graph_mode/graph_mode.h"

#include "modeling/model_registry.h"
#include "torch_support/compat.h"

namespace gpubench {

int graph_capture_warmup_steps(Task task) {
  // Inference captures a forward pass or a decode step instead (infer/static_decode.h,
  // torch_support/captured_graph.h).
  return task == Task::kInfer ? 1 : kGraphCaptureWarmupSteps;
}

Refusal graph_mode_unsupported_reason(const ResolvedBenchmark& benchmark) {
  if (benchmark.mode != Mode::kGraph) return {};
  if (benchmark.device != DeviceKind::kCuda) {
    return {"graph mode needs a CUDA device", requirement::kCuda};
  }
  const ModelInfo& info = ModelRegistry::instance().get(benchmark.model);
  if (!info.capabilities.captures(benchmark.task)) {
    return {"graph mode cannot capture " + info.name + "'s " +
            (benchmark.task == Task::kTrain ? "training step" : "inference") +
            (info.capabilities.graph_refusal.empty() ? ": the model declares no graph-mode support"
                                                     : ": " + info.capabilities.graph_refusal) +
            "; use --mode eager"};
  }
  const int needed = graph_capture_warmup_steps(benchmark.task);
  if (benchmark.warmup_steps < needed) {
    return {"graph mode needs warmup_steps >= " + std::to_string(needed) + ", got " +
            std::to_string(benchmark.warmup_steps) +
            ": the warm-up runs before the capture, so that cuDNN's autotuning, the optimiser's "
            "first-step state and the allocator settle outside the graph"};
  }
  if (benchmark.gpus > 1) {
    return {benchmark.task == Task::kTrain
                ? "graph mode runs one rank: capturing the gradient all-reduce (NCCL inside a "
                  "CUDA graph, started from autograd hooks) is not implemented; use --mode eager "
                  "with --gpus " +
                      std::to_string(benchmark.gpus)
                : "graph mode runs one process: infer's replicas (--gpus " +
                      std::to_string(benchmark.gpus) + ") run eagerly; use --mode eager"};
  }
  if (benchmark.task == Task::kInfer) return {};

  if (!compat::kHasFusedSgd) {
    return {
        "graph mode needs LibTorch 2.4 or newer with CUDA (its fused SGD keeps the step free "
        "of host synchronisation); this gpubench has LibTorch " +
            compat::libtorch_version(),
        requirement::kLibtorchGraphs};
  }
  if (benchmark.activation_checkpointing) {
    return {
        "graph mode cannot capture activation checkpointing: its recomputation saves and "
        "restores the CUDA generator's state, which a graph capture forbids"};
  }
  return {};
}

std::string graph_mode_unsupported_in_process_group(const std::string& launcher, int world_size) {
  return "graph mode runs without a process group, but " + launcher +
         " started this process as "
         "one of " +
         std::to_string(world_size) +
         " rank(s): capturing the gradient all-reduce "
         "(NCCL inside a CUDA graph, started from autograd hooks) is not implemented; run it "
         "without the launcher, or with --mode eager";
}

void check_graph_mode(const ResolveInputs& inputs, ResolvedBenchmark& benchmark) {
  (void)inputs;
  graph_mode_unsupported_reason(benchmark).raise_if_refused();
}

}  // namespace gpubench
