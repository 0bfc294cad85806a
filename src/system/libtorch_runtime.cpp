#include "system/libtorch_runtime.h"

#include <cstdlib>
#include <filesystem>

#if GPUBENCH_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

#include "common/text_table.h"
#include "torch_support/libtorch_location.h"

namespace gpubench {

std::string libtorch_cuda_version() {
#if GPUBENCH_WITH_CUDA
  return std::to_string(CUDART_VERSION / 1000) + "." + std::to_string(CUDART_VERSION % 1000 / 10);
#else
  return "";
#endif
}

std::string libtorch_folder() {
  return compat::libtorch_folder();
}

std::string why_no_cuda_device() {
#if GPUBENCH_WITH_CUDA
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error == cudaSuccess && count > 0) return "";
  if (!std::filesystem::exists("/proc/driver/nvidia")) {
    return "no NVIDIA driver is loaded on this machine (no /proc/driver/nvidia)";
  }
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  const std::string visible_note =
      visible != nullptr ? " (CUDA_VISIBLE_DEVICES=" + terminal_safe(visible) + ")" : "";
  if (error != cudaSuccess) {
    cudaGetLastError();  // the runtime keeps the error sticky otherwise
    return std::string("the CUDA ") + libtorch_cuda_version() +
           " runtime refuses the driver: " + cudaGetErrorString(error) + visible_note;
  }
  return "the driver shows no CUDA device" + visible_note;
#else
  return "this LibTorch was built without CUDA";
#endif
}

}  // namespace gpubench
