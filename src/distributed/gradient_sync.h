// What a training step asks of data parallelism (train/training_step.h): DDP's gradient
// averaging (distributed/gradient_synchronizer.h) or sharded data parallelism
// (features/parallelism/sharded_data_parallel.h).
#pragma once

#include <cstdint>
#include <vector>

#include <torch/torch.h>

#include "modeling/block_observer.h"

namespace gpubench {

class GradientSync {
 public:
  virtual ~GradientSync() = default;
  // The tensors the optimiser updates, given the model's trainable parameters.
  virtual std::vector<torch::Tensor> optimized(std::vector<torch::Tensor> trainable) {
    return trainable;
  }
  // Before the forward pass; what sees its blocks go in and out (nullptr: nothing).
  virtual void begin_step() {}
  virtual BlockObserver* block_observer() { return nullptr; }
  // After backward: the optimised tensors' gradients averaged over the ranks.
  virtual void finish_step() = 0;
  // fp16's loss scaler: where ranks hold different gradients, `found_inf` (float32 [1]) made
  // the largest over them.
  virtual void agree_on_found_inf(torch::Tensor& /*found_inf*/) {}
  // After the optimiser's update.
  virtual void after_update() {}

  // Collectives that carry the gradients per step, and their bytes per rank.
  virtual int bucket_count() const = 0;
  virtual int64_t gradient_bytes() const = 0;
  // Time the device spent waiting for the gradients' communication after backward, one entry
  // per step since the last call. Call after the device has been synchronised.
  virtual std::vector<double> take_exposed_communication_ms() = 0;
};

}  // namespace gpubench
