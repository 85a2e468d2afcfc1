#!/usr/bin/env bash
# scripts/build.sh - configures and builds nbody (Release) into ./build, or $NBODY_BUILD_DIR.
# Extra arguments go to CMake's configure step (e.g. -DCMAKE_CUDA_ARCHITECTURES=90).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${NBODY_BUILD_DIR:-build}
command -v nvcc >/dev/null 2>&1 || export PATH="/usr/local/cuda/bin:$PATH"
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build "$build_dir" --parallel "$(nproc)"
