#!/usr/bin/env bash
# scripts/run.sh - the main job: install what is missing, build, and run nbody.
# With a display this opens nbody's default mode, the viewer; without one (or without the viewer's
# libraries), a headless benchmark on all visible GPUs, or on the CPU if none.
# Arguments go to nbody (e.g. scripts/run.sh --bodies 65536).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh -DBUILD_TESTING=OFF >/dev/null
exec ./build/app/nbody "$@"
