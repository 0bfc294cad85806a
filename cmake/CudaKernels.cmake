# gpubench's own CUDA kernels (src/kernels/cuda/, docs/kernels.md): compiled where LibTorch has
# CUDA and nvcc is found, for A100 (sm_80), A40/A6000/RTX 3090 (sm_86), L40S (sm_89) and
# H100/H200 (sm_90); -DGPUBENCH_CUDA_ARCHITECTURES=... overrides the list. Without nvcc a CUDA
# build still builds, its operators running their ATen compositions on the GPU too, and says so.
# The kernels go into a static library that gpubench_core links (and into the installed
# archive); fused_operators.cpp refers to it (cuda_kernels_linked), so that its operator
# registrations are always linked in.
set(GPUBENCH_WITH_CUDA_KERNELS 0)
if(GPUBENCH_WITH_CUDA)
  include(CheckLanguage)
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(GPUBENCH_CUDA_ARCHITECTURES "80;86;89;90" CACHE STRING
        "The GPU architectures gpubench's own CUDA kernels are compiled for")
    # TorchConfig sets CMAKE_CUDA_ARCHITECTURES to OFF and puts the wheel's own -gencode list
    # into CMAKE_CUDA_FLAGS (sm_50 among them, which nvcc 13 no longer compiles): ours replace it.
    set(CMAKE_CUDA_ARCHITECTURES ${GPUBENCH_CUDA_ARCHITECTURES})
    # The compiler cache for nvcc too (ccache knows it), as CMakeLists.txt sets it for C++.
    if(CMAKE_CXX_COMPILER_LAUNCHER AND NOT CMAKE_CUDA_COMPILER_LAUNCHER)
      set(CMAKE_CUDA_COMPILER_LAUNCHER ${CMAKE_CXX_COMPILER_LAUNCHER})
    endif()
    enable_language(CUDA)
    string(REGEX REPLACE "-gencode[ =]arch=compute_[0-9a-z]+,code=[a-z_0-9]+" "" CMAKE_CUDA_FLAGS
                         "${CMAKE_CUDA_FLAGS}")
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
  # Objects, for the installed archive too (cmake/Package.cmake), and a library of them to link.
  add_library(gpubench_kernels_cuda_objects OBJECT ${sources})
  target_include_directories(gpubench_kernels_cuda_objects PRIVATE "${PROJECT_SOURCE_DIR}/src")
  target_link_libraries(gpubench_kernels_cuda_objects PRIVATE ${TORCH_LIBRARIES})
  # The C++ ABI switch LibTorch needs, for nvcc's host compiler too.
  target_compile_options(gpubench_kernels_cuda_objects PRIVATE
                         "$<$<COMPILE_LANGUAGE:CUDA>:${GPUBENCH_TORCH_CXX_FLAGS}>")
  set_target_properties(gpubench_kernels_cuda_objects PROPERTIES POSITION_INDEPENDENT_CODE ON)
  add_library(gpubench_kernels_cuda STATIC $<TARGET_OBJECTS:gpubench_kernels_cuda_objects>)
  set_target_properties(gpubench_kernels_cuda PROPERTIES LINKER_LANGUAGE CXX)
  target_link_libraries(gpubench_kernels_cuda PUBLIC ${TORCH_LIBRARIES})
  target_link_libraries(${core_target} PUBLIC gpubench_kernels_cuda)
  target_compile_definitions(${core_target} PUBLIC GPUBENCH_WITH_CUDA_KERNELS=1)
endfunction()
