// The LibTorch this process runs on: where it was loaded from, the CUDA it was built with, and
// whether a CUDA device can be used (if not, why, in words a person can act on).
#pragma once

#include <string>

namespace gpubench {

// "" when at least one CUDA device can be used; otherwise one line: this LibTorch has no CUDA,
// no NVIDIA driver is loaded, the CUDA runtime's own refusal (a driver older than the runtime),
// or no device visible (CUDA_VISIBLE_DEVICES named).
std::string why_no_cuda_device();

// The CUDA runtime version this LibTorch was built with ("13.0"); "" without CUDA.
std::string libtorch_cuda_version();

// The folder its libtorch_cpu was loaded from; "" where the loader cannot say.
std::string libtorch_folder();

}  // namespace gpubench
