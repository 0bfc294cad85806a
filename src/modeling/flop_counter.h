// Counts multiply-adds of the layers in layers.h (and the models' attention products) while a
// FlopCounter is alive on this thread.
#pragma once

#include <cstdint>

namespace gpubench {

struct FlopCounts {
  int64_t multiply_adds = 0;
  int64_t frozen_weight_multiply_adds = 0;  // by a weight that does not train
  // The parts of both that ran as FP8 products (docs/fp8.md).
  int64_t fp8_multiply_adds = 0;
  int64_t fp8_frozen_weight_multiply_adds = 0;
  // Bytes of the weights the linear products read (a quantised weight's FP8 bytes and scales).
  int64_t weight_bytes_read = 0;

  FlopCounts& operator+=(const FlopCounts& other);
  // Of a training step's products (forward, input gradients, and weight gradients of the
  // weights that train: 3x the forward less the frozen part), the share that ran in FP8.
  double fp8_training_share() const;
  // Of forward passes' products, the share that ran in FP8.
  double fp8_forward_share() const;
};

class FlopCounter {
 public:
  FlopCounter();
  ~FlopCounter();
  FlopCounter(const FlopCounter&) = delete;
  FlopCounter& operator=(const FlopCounter&) = delete;

  const FlopCounts& counts() const { return counts_; }
  int64_t multiply_adds() const { return counts_.multiply_adds; }
  int64_t flops() const { return 2 * counts_.multiply_adds; }
  // The part of flops() that multiplies by a frozen (requires_grad false) weight.
  int64_t frozen_weight_flops() const { return 2 * counts_.frozen_weight_multiply_adds; }

  // Called by the counted layers; a no-op when no counter is active. `frozen_weight`: one
  // operand is a weight that does not train (its gradient is never computed); `fp8`: the
  // product ran in FP8 (and so do its gradients' products in training).
  static void record_multiply_adds(int64_t count, bool frozen_weight = false, bool fp8 = false);
  static void record_weight_read(int64_t bytes);

 private:
  FlopCounts counts_;
  FlopCounter* previous_;
};

}  // namespace gpubench
