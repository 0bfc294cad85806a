execute_process(COMMAND git -C "${SOURCE_DIR}" rev-parse --short=12 HEAD
                OUTPUT_VARIABLE GIT_COMMIT OUTPUT_STRIP_TRAILING_WHITESPACE
                RESULT_VARIABLE GIT_RESULT ERROR_QUIET)
if(NOT GIT_RESULT EQUAL 0 OR GIT_COMMIT STREQUAL "")
  set(GIT_COMMIT "unknown")
else()
  execute_process(COMMAND git -C "${SOURCE_DIR}" status --porcelain --untracked-files=no
                  OUTPUT_VARIABLE GIT_DIRTY OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT GIT_DIRTY STREQUAL "")
    set(GIT_COMMIT "${GIT_COMMIT}-dirty")
  endif()
endif()
set(TEXT "#pragma once\n#define GPUBENCH_VERSION \"${VERSION}\"\n#define GPUBENCH_GIT_COMMIT \"${GIT_COMMIT}\"\n")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" OLD_TEXT)
endif()
if(NOT "${OLD_TEXT}" STREQUAL "${TEXT}")
  file(WRITE "${OUTPUT}" "${TEXT}")
endif()
