#!/usr/bin/env bash
# scripts/sanitize.sh - the CPU code under a sanitizer, in a build of its own without CUDA:
#   scripts/sanitize.sh thread    ThreadSanitizer over the worker-thread scheduler, the exchange and
#                                 the driver (layout, multi-device and driver tests)
#   scripts/sanitize.sh address   AddressSanitizer + UndefinedBehaviorSanitizer over every CPU test
#   scripts/sanitize.sh thread --selection   prints the thread pass's test pattern and the executables it builds
#                                 (tests/check_sanitize_selection.py checks them against a full build's tests)
# Extra arguments go to ctest. Builds into build-<sanitizer>/ (or $NBODY_BUILD_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:-thread}
shift || true
# Counted without OMP_THREAD_LIMIT and OMP_NUM_THREADS, which nproc honours: the thread pass sets the first to 1
# below (its build once ran on one core of two).
jobs=$(env -u OMP_THREAD_LIMIT -u OMP_NUM_THREADS nproc)
targets=""  # empty: the whole build
case "$kind" in
  thread)
    flags="-fsanitize=thread -g -O1"
    # The viewer too: its simulation thread (LiveSwitches) hands frames to the render loop; --serve's
    # network thread takes frames from the encoder and input for the render loop (ServeServer).
    viewer=AUTO
    # hermite4's block steps under both threading models too (multigpu/hermite_blocks.cpp).
    tests='(^Cpu/Layouts|^StepContract|^Partition|^Driver|^Backends/LiveSwitches|^Mpi|^ServeServer|^ServeMailbox)\.|^Hermite\.(EveryHostLayout|ContinuesBitForBit)'
    # Only their executables are built: the rest of the build costs minutes and runs nothing here. Tests are listed
    # by running their executables, and one not built is only a placeholder (NAME_NOT_BUILT): a test matched above
    # that moved to an executable not named here would be left out without a word. The release build's test
    # Scripts.SanitizeThreadBuildsWhatItSelects fails then (tests/check_sanitize_selection.py).
    # live_simulation_tests exists where the viewer is built.
    targets="driver_tests hermite_tests layout_tests_cpu mpi_tests multidevice_tests physics_tests serve_tests"
    viewer_targets="live_simulation_tests"
    # The MPI tests (the exchange's communication thread, ranks with worker threads): Open MPI is not
    # built for ThreadSanitizer, so what happens inside it is suppressed (tests/tsan_mpi.supp) and its
    # plugins stay loaded, so their frames can be recognised.
    export OMPI_MCA_mca_base_component_disable_dlclose=1 PMIX_MCA_mca_base_component_disable_dlclose=1
    # libgomp is not built for ThreadSanitizer: its barriers are invisible to it, so threads of one
    # OpenMP team would look racy. OMP_THREAD_LIMIT=1 (it overrides omp_set_num_threads) keeps the check on what this project's
    # own threads (the scheduler's workers, the exchange) do.
    export OMP_THREAD_LIMIT=1
    export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/tests/tsan_mpi.supp ${TSAN_OPTIONS:-}"
    ;;
  address)
    flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g -O1"
    viewer=OFF
    tests='.'
    export ASAN_OPTIONS="detect_leaks=1 ${ASAN_OPTIONS:-}" UBSAN_OPTIONS="print_stacktrace=1 ${UBSAN_OPTIONS:-}"
    # Open MPI keeps memory until the process ends: its leaks are its own (tests/lsan.supp). They are
    # recognised only with its plugins kept loaded and stacks unwound through its libraries, which
    # is slow: the MPI tests run apart, with those settings.
    mpi_lsan="suppressions=$PWD/tests/lsan.supp:fast_unwind_on_malloc=0"
    # HDF5 keeps an object header's buffer when a damaged file fails its checksum (tests/lsan_hdf5.supp);
    # the pass of the other tests, which refuse such files on purpose, does not count it as nbody's.
    plain_lsan="suppressions=$PWD/tests/lsan_hdf5.supp"
    export OMPI_MCA_mca_base_component_disable_dlclose=1 PMIX_MCA_mca_base_component_disable_dlclose=1
    ;;
  *)
    echo "usage: scripts/sanitize.sh thread|address [ctest arguments]" >&2
    exit 2
    ;;
esac
if [ "${1:-}" = --selection ]; then
  printf 'tests=%s\ntargets=%s\n' "$tests" "$targets ${viewer_targets:-}"
  exit 0
fi
scripts/install-deps.sh
build_dir=${NBODY_BUILD_DIR:-build-$kind}
# RelWithDebInfo's own flags (-O2 -g -DNDEBUG) would come after $flags and win: its -O2 made the build a third
# slower for no check the sanitizers make, so they are replaced by $flags' -O1. Without -DNDEBUG the libraries'
# own checks (assert, the renderer's check_gl) run too.
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=ON -DNBODY_ENABLE_CUDA=OFF \
  -DNBODY_BUILD_VIEWER=$viewer -DNBODY_NATIVE_CPU=OFF -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="" \
  -DCMAKE_EXE_LINKER_FLAGS="$flags" >/dev/null
if [ -n "$targets" ]; then
  # Those of the viewer's tests where the viewer is built (NBODY_VIEWER_BUILT is not cached: ninja knows).
  all_targets=$(ninja -C "$build_dir" -t targets all)
  for t in ${viewer_targets:-}; do
    if grep -q "^$t:" <<<"$all_targets"; then targets="$targets $t"; fi
  done
  # shellcheck disable=SC2086 # one target a word
  cmake --build "$build_dir" --parallel "$jobs" --target $targets
else
  cmake --build "$build_dir" --parallel "$jobs"
fi
cd "$build_dir"
# A pass that selects no test fails (--no-tests=error): a label that lost its tests must not pass.
if [ "$kind" = address ]; then
  # Two passes, the MPI tests apart. A filter given here (e.g. -R Fuzz) may select tests of one pass
  # only: then the other is left out, and it is an error only if neither selects any.
  selected() { ctest -N "$@" | sed -n 's/^Total Tests: //p'; }
  plain=1 mpi=1
  if [ $# -gt 0 ]; then
    plain=$(selected -LE 'gl|mpi' -R "$tests" "$@") mpi=$(selected -L mpi -R "$tests" "$@")
    if [ "$plain" = 0 ] && [ "$mpi" = 0 ]; then
      echo "scripts/sanitize.sh: no test selected by: $*" >&2
      exit 1
    fi
  fi
  [ "$plain" = 0 ] || LSAN_OPTIONS="$plain_lsan ${LSAN_OPTIONS:-}" \
    ctest --no-tests=error --output-on-failure --parallel "$jobs" -LE 'gl|mpi' -R "$tests" "$@"
  [ "$mpi" = 0 ] || LSAN_OPTIONS="$mpi_lsan ${LSAN_OPTIONS:-}" ctest --no-tests=error --output-on-failure -L mpi -R "$tests" "$@"
else
  # One test at a time, as they have always run here (nproc said 1 under OMP_THREAD_LIMIT): the MPI tests start
  # three ranks each, and the thread pass's tests time their threads' hand-overs.
  ctest --no-tests=error --output-on-failure -LE gl -R "$tests" "$@"
fi
