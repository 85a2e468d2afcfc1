#!/usr/bin/env bash
# scripts/build.sh - configures and builds nbody (Release) into ./build, or $NBODY_BUILD_DIR.
# Extra arguments go to CMake's configure step (e.g. -DCMAKE_CUDA_ARCHITECTURES=90 or
# -DNBODY_ENABLE_CUDA=OFF), after any in $NBODY_CMAKE_ARGS.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${NBODY_BUILD_DIR:-build}
command -v nvcc >/dev/null 2>&1 || [ ! -d /usr/local/cuda/bin ] || export PATH="/usr/local/cuda/bin:$PATH"
# shellcheck disable=SC2086 # NBODY_CMAKE_ARGS is a list of words
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release ${NBODY_CMAKE_ARGS:-} "$@"
cmake --build "$build_dir" --parallel "$(nproc)"
