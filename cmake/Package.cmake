# The installed package (docs/api.md): `cmake --install BUILD --prefix PREFIX` installs the public
# headers (include/gpubench/, which include LibTorch and the standard library only), two static
# libraries and a CMake package config, so that a project of its own does find_package(gpubench)
# and links gpubench::gpubench (examples/custom_model/).
#
# libgpubench.a holds everything that trains and the command line; it is linked whole (the models
# and workloads register themselves from static objects, which a plain static link would drop).
# It is built on demand (target gpubench_package): the archive would otherwise be rewritten on
# every build.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
set(GPUBENCH_ARCHIVE_OBJECTS $<TARGET_OBJECTS:gpubench_core> $<TARGET_OBJECTS:gpubench_cli>
    $<TARGET_OBJECTS:gpubench_cli_base>)
if(GPUBENCH_WITH_CUDA_KERNELS)  # cmake/CudaKernels.cmake
  list(APPEND GPUBENCH_ARCHIVE_OBJECTS $<TARGET_OBJECTS:gpubench_kernels_cuda_objects>)
endif()
add_library(gpubench_archive STATIC EXCLUDE_FROM_ALL ${GPUBENCH_ARCHIVE_OBJECTS})
set_target_properties(gpubench_archive PROPERTIES OUTPUT_NAME gpubench LINKER_LANGUAGE CXX)
add_custom_target(gpubench_package DEPENDS gpubench_archive gpubench_base)

install(FILES $<TARGET_FILE:gpubench_archive> $<TARGET_FILE:gpubench_base>
        DESTINATION ${CMAKE_INSTALL_LIBDIR} OPTIONAL)
install(DIRECTORY include/gpubench DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

configure_file(cmake/gpubenchConfig.cmake.in
               "${CMAKE_CURRENT_BINARY_DIR}/package/gpubenchConfig.cmake" @ONLY)
write_basic_package_version_file("${CMAKE_CURRENT_BINARY_DIR}/package/gpubenchConfigVersion.cmake"
                                 COMPATIBILITY SameMinorVersion)
install(FILES "${CMAKE_CURRENT_BINARY_DIR}/package/gpubenchConfig.cmake"
              "${CMAKE_CURRENT_BINARY_DIR}/package/gpubenchConfigVersion.cmake"
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gpubench)
