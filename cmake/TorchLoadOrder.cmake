# GPUBENCH_TORCH_LOAD_ORDER: the libraries of cmake/torch-load-order.txt that LibTorch loads here,
# by path, for the executables to list right after LibTorch.
#
# Debian's LibTorch 1.13 loads about 290 shared libraries (OpenCV's, GDAL's and FFmpeg's among
# them). The loader finds each symbol by searching the loaded libraries in order, and the ones
# that bind the most symbols, mostly to themselves, came deep in that order: the search was over a
# quarter of LibTorch's start (0.5-0.6 s of CPU, paid by every process that loads it). Listed
# early, they are found early (0.09 s of CPU less a start). scripts/torch-load-order.sh measures the list; a library that this
# LibTorch does not load (the torch wheel's loads a dozen) is left out, so the list changes no
# library's set, only the order.
function(gpubench_torch_load_order torch_library)
  set(GPUBENCH_TORCH_LOAD_ORDER "" PARENT_SCOPE)
  find_program(GPUBENCH_LDD ldd)
  if(NOT GPUBENCH_LDD OR NOT EXISTS "${torch_library}")
    return()
  endif()
  execute_process(COMMAND ${GPUBENCH_LDD} ${torch_library} OUTPUT_VARIABLE loaded
                  RESULT_VARIABLE ldd_result ERROR_QUIET)
  if(NOT ldd_result EQUAL 0)
    return()
  endif()
  file(STRINGS ${PROJECT_SOURCE_DIR}/cmake/torch-load-order.txt sonames)
  set(paths "")
  foreach(soname ${sonames})
    string(REPLACE "+" "\\+" pattern "${soname}")
    string(REPLACE "." "\\." pattern "${pattern}")
    if(loaded MATCHES "[\t ]${pattern} => ([^ \n]+)")
      list(APPEND paths ${CMAKE_MATCH_1})
    endif()
  endforeach()
  set(GPUBENCH_TORCH_LOAD_ORDER ${paths} PARENT_SCOPE)
endfunction()
