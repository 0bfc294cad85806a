// Counting a training run's memory from its tensors: the weights, gradients and optimiser state
// alive now, and what one step allocates (docs/memory.md).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include <torch/torch.h>

#include "memory/backward_moments.h"
#include "optim/multi_tensor_optimizer.h"
#include "results/memory_info.h"

namespace gpubench {

// One step's tensor bytes on its device (memory/tensor_memory.h): when it began (after the
// gradients were cleared), after the forward pass, and the peak in between and after.
struct StepMemory {
  int64_t start = 0;
  int64_t after_forward = 0;
  int64_t peak = 0;
  // Where asked (TrainingStep::measure_memory_of_next_step): backward's moments, each peak in
  // the same count as `start`.
  std::vector<BackwardMoments::Moment> backward_moments;
  // What the forward pass left for backward: the activations. The count is the process's, and
  // Gloo's worker threads allocate and free their own temporaries while a sharded step's
  // prefetches run beside its forward: on CPU ranks of a tiny model the difference has read a
  // few tens of KB below zero (-27,864 bytes once), which is read as none.
  int64_t activations() const { return std::max<int64_t>(0, after_forward - start); }
  int64_t peak_above_start() const { return peak - start; }
};

// The bytes of the tensors' storages, each storage once (tied weights share one).
int64_t storage_bytes(const std::vector<torch::Tensor>& tensors);

// Weights (parameters and buffers), gradients (those defined now) and optimiser states, counted
// from the tensors; activations and other left 0.
MemoryBreakdown counted_training_state(torch::nn::Module& module,
                                       const MultiTensorOptimizer& optimizer);

}  // namespace gpubench
