#!/usr/bin/env bash
# scripts/check-without-cuda.sh - nbody built as a machine without the CUDA toolkit builds it (warnings as errors),
# and what only such a build does differently: --backend cuda is refused with the reason, the CPU engine runs, the
# viewer draws by host upload. The CPU tests but the viewer's and the Python module's run without CUDA in the
# sanitizer builds (scripts/sanitize.sh leaves CUDA out); NBODY_BUILD_DIR=build-nocuda
# NBODY_CMAKE_ARGS=-DNBODY_ENABLE_CUDA=OFF scripts/test.sh runs every test in such a build. Builds into
# build-nocuda/ (or $NBODY_BUILD_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
build=${NBODY_BUILD_DIR:-build-nocuda}
# The viewer insisted on: install-deps.sh has installed its libraries, and its host upload is what differs here.
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DNBODY_ENABLE_CUDA=OFF -DNBODY_WERROR=ON \
  -DNBODY_BUILD_VIEWER=ON -DBUILD_TESTING=OFF >/dev/null
cmake --build "$build" --parallel "$(nproc)" --target nbody
nbody=$build/app/nbody
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "check-without-cuda: $*" >&2; exit 1; }

if "$nbody" --backend cuda --run --bodies 16 --steps 1 >"$out/stdout" 2>"$out/stderr"; then
  fail "--backend cuda ran in a build without CUDA"
fi
grep -q "this nbody was built without CUDA" "$out/stderr" || fail "--backend cuda: $(cat "$out/stderr")"
"$nbody" --run --bodies 1024 --steps 10 -q --json "$out/run.json" || fail "the CPU engine's run failed"
grep -q '"backend": *"cpu' "$out/run.json" || fail "the run was not on the CPU: $(cat "$out/run.json")"
"$nbody" --offscreen --bodies 1024 --frames 2 --screenshot "$out/shot.png" 2>"$out/viewer" ||
  fail "the viewer offscreen: $(cat "$out/viewer")"
[ "$(head -c 4 "$out/shot.png" | tail -c 3)" = PNG ] || fail "the viewer's screenshot is not a PNG"
echo "check-without-cuda: built with warnings as errors; --backend cuda refused with the reason; the CPU engine and" \
  "the viewer (host upload) run"
