#include "modeling/text_generation.h"

namespace gpubench {

int64_t KvCache::bytes() const {
  int64_t total = 0;
  for (const auto* tensors : {&keys, &values}) {
    for (const torch::Tensor& t : *tensors) total += t.numel() * t.element_size();
  }
  return total;
}

int64_t KvCache::bytes_per_token() const {
  if (keys.empty() || capacity == 0) return 0;
  return bytes() / (capacity * keys.front().size(0));
}

torch::Tensor KvCache::to_stored(const torch::Tensor& x, const torch::Tensor& stored) {
  if (x.scalar_type() == stored.scalar_type()) return x;
  if (stored.element_size() == 1) return x.clamp(-448, 448).to(stored.scalar_type());
  return x.to(stored.scalar_type());
}

void KvCache::write_at(const torch::Tensor& stored, const torch::Tensor& position,
                       const torch::Tensor& x) {
  const torch::Tensor value = to_stored(x, stored);
  // index_copy has no Float8 kernel (CPU or CUDA): an FP8 cache is written as its bytes.
  if (stored.element_size() == 1) {
    stored.view(torch::kByte).index_copy_(2, position, value.view(torch::kByte));
  } else {
    stored.index_copy_(2, position, value);
  }
}

torch::Tensor KvCache::to_compute(const torch::Tensor& stored, torch::ScalarType dtype) {
  return stored.to(dtype);
}

}  // namespace gpubench
