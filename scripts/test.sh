#!/usr/bin/env bash
# scripts/test.sh - install what is missing, build, and run every test. GPU tests (labels gpu,
# multigpu) report "skipped" where no CUDA device is visible. The tests' Python packages from PyPI
# go into .venv (scripts/python-env.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
python=$(scripts/python-env.sh)
scripts/build.sh -DBUILD_TESTING=ON -DNBODY_PYTHON="$python"
cd "${NBODY_BUILD_DIR:-build}"
ctest --no-tests=error --output-on-failure --parallel "$(nproc)" "$@"
