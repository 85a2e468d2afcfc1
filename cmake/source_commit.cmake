# cmake/source_commit.cmake - writes OUT, a header defining NBODY_SOURCE_COMMIT: the commit the sources were built
# from (git's short hash; where tracked files differ from it, "-modified." and a short hash of the difference, so that
# two differently modified trees are told apart), or "unknown" where SOURCE is no git checkout of its own (a tarball,
# a copy inside another project's repository) or git cannot read it (one owned by another user). Run at every build
# (mpi/CMakeLists.txt), it replaces OUT only where the text changed, so that a build of the same sources compiles
# nothing again. Usage: cmake -DSOURCE=dir -DOUT=file -P source_commit.cmake
set(commit "unknown")
find_package(Git QUIET)
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SOURCE} rev-parse --show-toplevel
                  OUTPUT_VARIABLE top OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_VARIABLE why RESULT_VARIABLE failed)
  file(REAL_PATH "${SOURCE}" source_real)
  if(NOT failed)
    file(REAL_PATH "${top}" top_real)
  endif()
  if(failed AND EXISTS "${SOURCE}/.git")
    string(STRIP "${why}" why)
    message(STATUS "The sources' commit: unknown (git: ${why})")
  elseif(NOT failed AND top_real STREQUAL source_real)
    execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SOURCE} rev-parse --short=12 HEAD
                    OUTPUT_VARIABLE head OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE failed)
    if(NOT failed AND head)
      set(commit "${head}")
      execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SOURCE} diff --quiet HEAD -- RESULT_VARIABLE changed
                      OUTPUT_QUIET ERROR_QUIET)
      if(changed EQUAL 1)
        execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SOURCE} diff HEAD --
                        COMMAND ${GIT_EXECUTABLE} hash-object --stdin
                        OUTPUT_VARIABLE difference OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
        string(SUBSTRING "${difference}0000000000" 0 10 difference)
        set(commit "${commit}-modified.${difference}")
      endif()
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
