// The one place that knows the differences between LibTorch 1.13 (Debian) and 2.x.
#pragma once

#include <exception>
#include <string>

#include <ATen/ATen.h>
#include <torch/version.h>

#define GPUBENCH_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) ||           \
   (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

namespace gpubench::compat {

// Autocast switches per device type: 2.4 made them take the device type as an argument.
bool autocast_enabled(c10::DeviceType device);
void set_autocast_enabled(c10::DeviceType device, bool enabled);
void set_autocast_dtype(c10::DeviceType device, at::ScalarType dtype);

// TF32 for cuBLAS matmuls and cuDNN convolutions.
void set_tf32(bool matmul, bool cudnn);
bool tf32_matmul_enabled();
bool tf32_cudnn_enabled();

// True for a device allocator's out-of-memory error, whichever LibTorch threw it.
bool is_out_of_memory(const std::exception& error);

// "1.13.0" or "2.11.0".
std::string libtorch_version();

}  // namespace gpubench::compat
