#include "train/compat.h"

#include <ATen/autocast_mode.h>
#include <c10/util/Exception.h>
#if GPUBENCH_TORCH_AT_LEAST(2, 7)
#include <torch/csrc/distributed/c10d/Backend.hpp>
#endif

namespace gpubench::compat {

#if GPUBENCH_TORCH_AT_LEAST(2, 4)

bool autocast_enabled(c10::DeviceType device) {
  return at::autocast::is_autocast_enabled(device);
}

void set_autocast_enabled(c10::DeviceType device, bool enabled) {
  at::autocast::set_autocast_enabled(device, enabled);
}

void set_autocast_dtype(c10::DeviceType device, at::ScalarType dtype) {
  at::autocast::set_autocast_dtype(device, dtype);
}

#else

bool autocast_enabled(c10::DeviceType device) {
  return device == c10::DeviceType::CPU ? at::autocast::is_cpu_enabled()
                                        : at::autocast::is_enabled();
}

void set_autocast_enabled(c10::DeviceType device, bool enabled) {
  if (device == c10::DeviceType::CPU) {
    at::autocast::set_cpu_enabled(enabled);
  } else {
    at::autocast::set_enabled(enabled);
  }
}

void set_autocast_dtype(c10::DeviceType device, at::ScalarType dtype) {
  if (device == c10::DeviceType::CPU) {
    at::autocast::set_autocast_cpu_dtype(dtype);
  } else {
    at::autocast::set_autocast_gpu_dtype(dtype);
  }
}

#endif

void set_tf32(bool matmul, bool cudnn) {
  at::globalContext().setAllowTF32CuBLAS(matmul);
  at::globalContext().setAllowTF32CuDNN(cudnn);
}

bool tf32_matmul_enabled() {
  return at::globalContext().allowTF32CuBLAS();
}

bool tf32_cudnn_enabled() {
  return at::globalContext().allowTF32CuDNN();
}

bool is_out_of_memory(const std::exception& error) {
  if (dynamic_cast<const c10::OutOfMemoryError*>(&error) != nullptr) return true;
  const std::string what = error.what();
  return what.find("out of memory") != std::string::npos ||
         what.find("CUBLAS_STATUS_ALLOC_FAILED") != std::string::npos;
}

void shutdown_collective_backend([[maybe_unused]] CollectiveBackend& backend) {
#if GPUBENCH_TORCH_AT_LEAST(2, 7)
  backend.shutdown();
#endif
}

void fused_sgd_([[maybe_unused]] at::TensorList params, [[maybe_unused]] at::TensorList grads,
                [[maybe_unused]] at::TensorList momentum_buffers,
                [[maybe_unused]] double weight_decay, [[maybe_unused]] double momentum,
                [[maybe_unused]] double lr, [[maybe_unused]] double dampening,
                [[maybe_unused]] bool nesterov, [[maybe_unused]] bool is_first_step,
                [[maybe_unused]] const std::optional<at::Tensor>& found_inf) {
#if GPUBENCH_TORCH_AT_LEAST(2, 4) && GPUBENCH_WITH_CUDA
  at::_fused_sgd_(params, grads, momentum_buffers, weight_decay, momentum, lr, dampening, nesterov,
                  /*maximize=*/false, is_first_step, /*grad_scale=*/std::nullopt, found_inf);
#else
  TORCH_CHECK(false, "this LibTorch has no fused SGD");
#endif
}

std::string libtorch_version() {
  return std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) + "." +
         std::to_string(TORCH_VERSION_PATCH);
}

}  // namespace gpubench::compat
