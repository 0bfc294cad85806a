// Counts multiply-adds of the layers in layers.h while a FlopCounter is alive on this thread.
#pragma once

#include <cstdint>

namespace gpubench {

class FlopCounter {
 public:
  FlopCounter();
  ~FlopCounter();
  FlopCounter(const FlopCounter&) = delete;
  FlopCounter& operator=(const FlopCounter&) = delete;

  int64_t multiply_adds() const { return multiply_adds_; }
  int64_t flops() const { return 2 * multiply_adds_; }
  // The part of flops() that multiplies by a frozen (requires_grad false) weight.
  int64_t frozen_weight_flops() const { return 2 * frozen_weight_multiply_adds_; }

  // Called by the counted layers; a no-op when no counter is active. `frozen_weight`: one
  // operand is a weight that does not train (its gradient is never computed).
  static void record_multiply_adds(int64_t count, bool frozen_weight = false);

 private:
  int64_t multiply_adds_ = 0;
  int64_t frozen_weight_multiply_adds_ = 0;
  FlopCounter* previous_;
};

}  // namespace gpubench
