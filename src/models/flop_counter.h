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

  // Called by the counted layers; a no-op when no counter is active.
  static void record_multiply_adds(int64_t count);

 private:
  int64_t multiply_adds_ = 0;
  FlopCounter* previous_;
};

}  // namespace gpubench
