# cmake/source_commit.cmake - writes OUT, a header defining NBODY_SOURCE_COMMIT: the commit the sources were built
# from (git's short hash, "-modified" where tracked files differ from it), or "unknown" outside a git checkout. Run
# at every build (mpi/CMakeLists.txt), it replaces OUT only where the text changed, so that a build of the same
# commit compiles nothing again. Usage: cmake -DSOURCE=dir -DOUT=file -P source_commit.cmake
set(commit "unknown")
find_package(Git QUIET)
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SOURCE} rev-parse --short=12 HEAD
                  OUTPUT_VARIABLE head OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE failed)
  if(NOT failed AND head)
    set(commit "${head}")
    execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SOURCE} diff --quiet HEAD -- RESULT_VARIABLE changed
                    OUTPUT_QUIET ERROR_QUIET)
    if(changed)
      set(commit "${commit}-modified")
    endif()
  endif()
endif()
set(text "// Written by cmake/source_commit.cmake at each build.\n#pragma once\n#define NBODY_SOURCE_COMMIT \"${commit}\"\n")
if(EXISTS ${OUT})
  file(READ ${OUT} before)
endif()
if(NOT "${before}" STREQUAL "${text}")
  file(WRITE ${OUT} "${text}")
endif()
