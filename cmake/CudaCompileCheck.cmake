# Stands in for find_package(Torch) when only the headers of a CUDA-enabled LibTorch are at hand
# (CI has no GPU and Debian's LibTorch has no CUDA): enough to compile every source with
# GPUBENCH_WITH_CUDA=1, never to link or run.
find_package(CUDAToolkit REQUIRED)
set(_torch_root "${GPUBENCH_CUDA_COMPILE_CHECK}")
if(NOT EXISTS "${_torch_root}/include/torch/csrc/api/include/torch/torch.h")
  message(FATAL_ERROR "GPUBENCH_CUDA_COMPILE_CHECK=${_torch_root} has no include/torch/csrc/api/include/torch/torch.h")
endif()
add_library(gpubench_torch_headers INTERFACE)
target_include_directories(gpubench_torch_headers SYSTEM INTERFACE
  "${_torch_root}/include" "${_torch_root}/include/torch/csrc/api/include" ${CUDAToolkit_INCLUDE_DIRS})
target_compile_definitions(gpubench_torch_headers INTERFACE _GLIBCXX_USE_CXX11_ABI=1)
set(TORCH_LIBRARIES gpubench_torch_headers)
set(TORCH_CUDA_LIBRARIES "headers only")
set(Torch_VERSION "(headers of ${_torch_root})")
set(TORCH_INSTALL_PREFIX "${_torch_root}")
