#include "train/graphed_step.h"

#include <chrono>

#include <ATen/autocast_mode.h>

#if GPUBENCH_WITH_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

#include "common/errors.h"
#include "train/compat.h"

namespace gpubench {

std::string GraphedStep::unsupported_reason(const ResolvedBenchmark& benchmark) {
  if (benchmark.mode != Mode::kGraph) return "";
  if (benchmark.device != DeviceKind::kCuda) return "graph mode needs a CUDA device";
  // Inference captures a forward pass or a decode step instead (infer/captured_graph.h).
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

#if GPUBENCH_WITH_CUDA

struct GraphedStep::Graph {
  at::cuda::CUDAGraph graph;
};

GraphedStep::GraphedStep(TrainingStep& step, const SyntheticBatch& batch, torch::Device device,
                         int warmup_steps)
    : graph_(std::make_unique<Graph>()) {
  // Cached casts of the weights would be made during capture and then stand stale in the graph.
  at::autocast::set_autocast_cache_enabled(false);
  const auto index = static_cast<c10::DeviceIndex>(device.index());
  const c10::cuda::CUDAStream main = c10::cuda::getCurrentCUDAStream(index);
  const c10::cuda::CUDAStream side = c10::cuda::getStreamFromPool(false, index);
  at::cuda::CUDAEvent ready;
  ready.record(main);
  ready.block(side);
  {
    const c10::cuda::CUDAStreamGuard on_side(side);
    for (int i = 0; i < warmup_steps; ++i) step.run(batch);
    side.synchronize();
    const auto start = std::chrono::steady_clock::now();
    graph_->graph.capture_begin();
    loss_ = step.run(batch);
    graph_->graph.capture_end();
    side.synchronize();
    capture_ms_ =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }
  at::cuda::CUDAEvent captured;
  captured.record(side);
  captured.block(main);
}

GraphedStep::~GraphedStep() = default;

torch::Tensor GraphedStep::run() {
  graph_->graph.replay();
  return loss_;
}

#else

struct GraphedStep::Graph {};

GraphedStep::GraphedStep(TrainingStep&, const SyntheticBatch&, torch::Device, int) {
  throw UsageError("graph mode needs a CUDA device: this gpubench was built without CUDA");
}

GraphedStep::~GraphedStep() = default;

torch::Tensor GraphedStep::run() {
  return loss_;
}

#endif

}  // namespace gpubench
