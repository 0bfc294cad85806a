#pragma once

#include <torch/torch.h>

namespace gpubench::cli {

inline bool cuda_available() {
  return torch::cuda::is_available();
}
inline int cuda_device_count() {
  return cuda_available() ? static_cast<int>(torch::cuda::device_count()) : 0;
}

}  // namespace gpubench::cli
