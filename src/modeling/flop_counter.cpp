#include "modeling/flop_counter.h"

#include "gpubench/layers.h"

namespace gpubench {
namespace {
thread_local FlopCounter* active_counter = nullptr;
thread_local FlopCounts* active_counts = nullptr;

double share(int64_t part, int64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}
}  // namespace

FlopCounts& FlopCounts::operator+=(const FlopCounts& other) {
  multiply_adds += other.multiply_adds;
  frozen_weight_multiply_adds += other.frozen_weight_multiply_adds;
  fp8_multiply_adds += other.fp8_multiply_adds;
  fp8_frozen_weight_multiply_adds += other.fp8_frozen_weight_multiply_adds;
  weight_bytes_read += other.weight_bytes_read;
  return *this;
}

double FlopCounts::fp8_training_share() const {
  return share(3 * fp8_multiply_adds - fp8_frozen_weight_multiply_adds,
               3 * multiply_adds - frozen_weight_multiply_adds);
}

double FlopCounts::fp8_forward_share() const {
  return share(fp8_multiply_adds, multiply_adds);
}

FlopCounter::FlopCounter() : previous_(active_counter) {
  active_counter = this;
  active_counts = &counts_;
}

FlopCounter::~FlopCounter() {
  active_counter = previous_;
  active_counts = previous_ ? &previous_->counts_ : nullptr;
}

void FlopCounter::record_multiply_adds(int64_t count, bool frozen_weight, bool fp8) {
  if (active_counts == nullptr) return;
  active_counts->multiply_adds += count;
  if (frozen_weight) active_counts->frozen_weight_multiply_adds += count;
  if (!fp8) return;
  active_counts->fp8_multiply_adds += count;
  if (frozen_weight) active_counts->fp8_frozen_weight_multiply_adds += count;
}

void FlopCounter::record_weight_read(int64_t bytes) {
  if (active_counts != nullptr) active_counts->weight_bytes_read += bytes;
}

namespace layers {

void count_multiply_adds(int64_t multiply_adds, bool frozen_weight) {
  FlopCounter::record_multiply_adds(multiply_adds, frozen_weight);
}

}  // namespace layers
}  // namespace gpubench
