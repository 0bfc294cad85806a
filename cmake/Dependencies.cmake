# Finds every dependency. LibTorch comes from Debian (1.13, CPU) or from a CUDA build
# (for example the torch Python package: -DCMAKE_PREFIX_PATH=$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)')).
find_package(Threads REQUIRED)
# TorchConfig finds its libraries with find_library, which prefers system directories: with
# Debian's LibTorch installed too, a CUDA LibTorch named on CMAKE_PREFIX_PATH would be mixed
# with Debian's libtorch.so. Pin the libraries to the LibTorch whose config is used.
foreach(_prefix IN LISTS CMAKE_PREFIX_PATH)
  if(EXISTS "${_prefix}/Torch/TorchConfig.cmake")
    get_filename_component(_torch_root "${_prefix}/../.." ABSOLUTE)
    find_library(TORCH_LIBRARY torch PATHS "${_torch_root}/lib" NO_DEFAULT_PATH)
    find_library(c10_LIBRARY c10 PATHS "${_torch_root}/lib" NO_DEFAULT_PATH)
    break()
  endif()
endforeach()
find_package(Torch REQUIRED)
# The C++ standard the LibTorch's headers need, which its config sets on its target: 17 up to 2.11,
# 20 in 2.14 (its headers stop with "C++20 or later compatible compiler is required").
get_target_property(GPUBENCH_TORCH_CXX_STANDARD torch CXX_STANDARD)
if(GPUBENCH_TORCH_CXX_STANDARD AND GPUBENCH_TORCH_CXX_STANDARD GREATER CMAKE_CXX_STANDARD)
  set(CMAKE_CXX_STANDARD ${GPUBENCH_TORCH_CXX_STANDARD})
  # GCC 12 warns falsely on "literal" + std::string&& in C++20 (-Wrestrict, GCC bug 105651).
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    add_compile_options(-Wno-restrict)
  endif()
endif()
include(TorchLoadOrder)
gpubench_torch_load_order(${TORCH_LIBRARY})
# The torch Python package keeps what libtorch_cuda needs (cuDNN, cuBLAS, NCCL, ...) in
# site-packages/nvidia/*/lib, found at run time through libtorch_cuda's own RPATH. The linker
# must see them too to resolve libtorch_cuda's references; NCCL's header is there as well.
get_filename_component(_torch_site "${TORCH_INSTALL_PREFIX}/.." ABSOLUTE)
file(GLOB GPUBENCH_TORCH_WHEEL_LIBRARY_DIRS LIST_DIRECTORIES true "${_torch_site}/nvidia/*/lib")
if(GPUBENCH_TORCH_WHEEL_LIBRARY_DIRS)
  list(JOIN GPUBENCH_TORCH_WHEEL_LIBRARY_DIRS ":" _rpath_link)
  set(GPUBENCH_TORCH_LINK_OPTIONS "LINKER:-rpath-link,${_rpath_link}")
  set(GPUBENCH_NCCL_HINTS "${_torch_site}/nvidia/nccl/include")
endif()
find_package(CLI11 REQUIRED)
find_package(nlohmann_json 3.9 REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(spdlog REQUIRED)

if(TORCH_CUDA_LIBRARIES)
  set(GPUBENCH_WITH_CUDA 1)
else()
  set(GPUBENCH_WITH_CUDA 0)
endif()
list(LENGTH GPUBENCH_TORCH_LOAD_ORDER _early)
message(STATUS "gpubench: LibTorch ${Torch_VERSION} at ${TORCH_INSTALL_PREFIX}, CUDA=${GPUBENCH_WITH_CUDA}, C++${CMAKE_CXX_STANDARD}, "
               "${_early} of its libraries listed early")

# TORCH_CXX_FLAGS carries the C++ ABI switch the LibTorch build needs.
separate_arguments(GPUBENCH_TORCH_CXX_FLAGS UNIX_COMMAND "${TORCH_CXX_FLAGS}")

# yaml-cpp 0.7's config names its target yaml-cpp; newer ones yaml-cpp::yaml-cpp.
if(NOT TARGET yaml-cpp AND TARGET yaml-cpp::yaml-cpp)
  add_library(yaml-cpp ALIAS yaml-cpp::yaml-cpp)
endif()

# c10d's Gloo and NCCL process groups: their headers include gloo's and NCCL's own, which
# LibTorch does not ship (Debian's libgloo-dev; nccl.h from the CUDA toolkit or the nvidia-nccl
# wheel, -DGPUBENCH_NCCL_INCLUDE_DIR=...).
find_path(GPUBENCH_GLOO_INCLUDE_DIR gloo/context.h)
set(GPUBENCH_WITH_GLOO 0)
if(GPUBENCH_GLOO_INCLUDE_DIR)
  set(GPUBENCH_WITH_GLOO 1)
endif()
set(GPUBENCH_WITH_NCCL 0)
if(GPUBENCH_WITH_CUDA)
  find_path(GPUBENCH_NCCL_INCLUDE_DIR nccl.h
            HINTS ${GPUBENCH_NCCL_HINTS} ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include)
  if(GPUBENCH_NCCL_INCLUDE_DIR)
    set(GPUBENCH_WITH_NCCL 1)
  endif()
endif()
message(STATUS "gpubench: c10d Gloo=${GPUBENCH_WITH_GLOO} (${GPUBENCH_GLOO_INCLUDE_DIR}), "
               "NCCL=${GPUBENCH_WITH_NCCL} (${GPUBENCH_NCCL_INCLUDE_DIR})")
