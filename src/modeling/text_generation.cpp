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

}  // namespace gpubench
