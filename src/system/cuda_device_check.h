// Whether this process can use a CUDA device, and if not, why, in words a person can act on.
#pragma once

#include <string>

namespace gpubench {

// "" when at least one CUDA device can be used; otherwise one line: this LibTorch has no CUDA,
// no NVIDIA driver is loaded, the CUDA runtime's own refusal (a driver older than the runtime),
// or no device visible (CUDA_VISIBLE_DEVICES named).
std::string why_no_cuda_device();

// The CUDA runtime version this LibTorch was built with ("13.0"); "" without CUDA.
std::string libtorch_cuda_version();

}  // namespace gpubench
