#include "modeling/flop_counter.h"

namespace gpubench {
namespace {
thread_local FlopCounter* active_counter = nullptr;
}  // namespace

FlopCounter::FlopCounter() : previous_(active_counter) {
  active_counter = this;
}

FlopCounter::~FlopCounter() {
  active_counter = previous_;
}

void FlopCounter::record_multiply_adds(int64_t count, bool frozen_weight) {
  if (active_counter == nullptr) return;
  active_counter->multiply_adds_ += count;
  if (frozen_weight) active_counter->frozen_weight_multiply_adds_ += count;
}

}  // namespace gpubench
