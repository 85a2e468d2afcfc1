#!/usr/bin/env bash
# scripts/run.sh - the main job: install what is missing, build, and run nbody.
# With a display this opens nbody's default mode, the viewer; without one (or without the viewer's
# libraries), a headless benchmark on all visible GPUs, or on the CPU if none.
# Arguments go to nbody (e.g. scripts/run.sh --bodies 65536).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# The build's output goes to a log, not the terminal: where it fails, its last lines are shown with the log's name.
build_dir=${NBODY_BUILD_DIR:-build}  # as scripts/build.sh names it
log=$(mktemp -t nbody-build.XXXXXX)
echo "scripts/run.sh: building nbody into $build_dir (minutes the first time; the build's output: $log)" >&2
if ! scripts/build.sh -DBUILD_TESTING=OFF >"$log" 2>&1; then
  tail -n 30 "$log" >&2
  echo "scripts/run.sh: the build failed (above, its last lines; the whole output: $log)" >&2
  exit 1
fi
rm -f "$log"
exec "$build_dir/app/nbody" "$@"
