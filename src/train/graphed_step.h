// Graph mode: one whole training step (forward, loss, backward, the fp16 scaler's unscale, inf
// check and scale update, the optimiser step) captured once in a CUDA graph and replayed for
// every timed step, so the host launches one graph instead of hundreds of kernels. What PyTorch's
// notes on CUDA graphs ask for is done before capture: warm-up steps on a side stream (cuDNN
// autotuning, cuBLAS workspaces, the optimiser's momentum buffers and the allocator settle
// there), autocast's weight cache off, a static batch, no host synchronisation inside the step
// (the fused SGD skips an overflowing fp16 step on the device).
#pragma once

#include <memory>
#include <string>

#include <torch/torch.h>

#include "features/graph_mode/graph_mode.h"
#include "modeling/model_registry.h"
#include "settings/setting_values.h"
#include "torch_support/captured_graph.h"
#include "train/training_step.h"

namespace gpubench {

class GraphedStep {
 public:
  // Runs `warmup_steps` eager steps of `step` on a side stream, the last of them measuring its
  // memory (step.last_step_memory()), then captures one.
  // With `rehearsal`, no device graph (CapturedGraph::rehearsal): for tests on the CPU.
  GraphedStep(TrainingStep& step, const SyntheticBatch& batch, torch::Device device,
              int warmup_steps, bool rehearsal = false);
  ~GraphedStep();

  // Replays the captured step on the current stream; returns the loss of the step (the graph's
  // static output, overwritten by the next replay).
  torch::Tensor run();
  double capture_ms() const { return graph_->capture_ms(); }

 private:
  std::unique_ptr<CapturedGraph> graph_;
  torch::Tensor loss_;
};

}  // namespace gpubench
