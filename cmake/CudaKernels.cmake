# gpubench's own CUDA kernels (src/kernels/cuda/, docs/kernels.md): compiled where LibTorch has
# CUDA and nvcc is found, for A100 (sm_80), A40/A6000/RTX 3090 (sm_86), L40S (sm_89) and
# H100/H200 (sm_90); -DCMAKE_CUDA_ARCHITECTURES=... overrides the list. Without nvcc a CUDA
# build still builds, its operators running their ATen compositions on the GPU too, and says so.
# The kernels go into a static library that gpubench_core links; fused_operators.cpp refers to
# it (cuda_kernels_linked), so that its operator registrations are always linked in.
set(GPUBENCH_WITH_CUDA_KERNELS 0)
if(GPUBENCH_WITH_CUDA)
  include(CheckLanguage)
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES OR CMAKE_CUDA_ARCHITECTURES STREQUAL "")
      set(CMAKE_CUDA_ARCHITECTURES 80 86 89 90)
    endif()
    enable_language(CUDA)
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    set(GPUBENCH_WITH_CUDA_KERNELS 1)
  else()
    message(WARNING "gpubench: no nvcc found: this CUDA build runs its own operators as their "
                    "ATen compositions (set CMAKE_CUDA_COMPILER to compile its kernels)")
  endif()
endif()
message(STATUS "gpubench: own CUDA kernels=${GPUBENCH_WITH_CUDA_KERNELS} "
               "(architectures ${CMAKE_CUDA_ARCHITECTURES})")

function(gpubench_add_cuda_kernels core_target)
  if(NOT GPUBENCH_WITH_CUDA_KERNELS)
    return()
  endif()
  file(GLOB sources CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/src/kernels/cuda/*.cu")
  add_library(gpubench_kernels_cuda STATIC ${sources})
  target_include_directories(gpubench_kernels_cuda PRIVATE "${PROJECT_SOURCE_DIR}/src")
  target_link_libraries(gpubench_kernels_cuda PRIVATE ${TORCH_LIBRARIES})
  # The C++ ABI switch LibTorch needs, for nvcc's host compiler too.
  target_compile_options(gpubench_kernels_cuda PRIVATE
                         "$<$<COMPILE_LANGUAGE:CUDA>:${GPUBENCH_TORCH_CXX_FLAGS}>")
  set_target_properties(gpubench_kernels_cuda PROPERTIES POSITION_INDEPENDENT_CODE ON
                        CUDA_RUNTIME_LIBRARY Shared)
  target_link_libraries(${core_target} PUBLIC gpubench_kernels_cuda)
  target_compile_definitions(${core_target} PUBLIC GPUBENCH_WITH_CUDA_KERNELS=1)
endfunction()
