# Regenerates build_info.h on every build (the file is rewritten only when its text changes),
# so the git commit a binary reports is the one it was built from.
set(GPUBENCH_GENERATED_DIR "${CMAKE_BINARY_DIR}/generated")
add_custom_target(gpubench_build_info ALL
  COMMAND ${CMAKE_COMMAND}
          -DSOURCE_DIR=${CMAKE_SOURCE_DIR}
          -DOUTPUT=${GPUBENCH_GENERATED_DIR}/gpubench/build_info.h
          -DVERSION=${PROJECT_VERSION}
          -P ${CMAKE_SOURCE_DIR}/cmake/WriteBuildInfo.cmake
  BYPRODUCTS ${GPUBENCH_GENERATED_DIR}/gpubench/build_info.h
  COMMENT "Recording the git commit")
