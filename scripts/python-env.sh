#!/usr/bin/env bash
# scripts/python-env.sh - the Python environment the tests use: a virtual environment in .venv
# (Debian's python3, its packages visible) with what Debian lacks installed from PyPI
# (python/requirements-test.txt). Idempotent: installs only when the requirements changed.
# Prints the environment's interpreter.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${NBODY_VENV:-.venv}
requirements=python/requirements-test.txt
stamp="$venv/.requirements"
if [ ! -x "$venv/bin/python" ]; then
  /usr/bin/python3 -m venv --system-site-packages "$venv" >&2
fi
if ! cmp -s "$requirements" "$stamp"; then
  echo "python-env: installing $(grep -cv '^#' "$requirements") packages from PyPI into $venv" >&2
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements" >&2
  cp "$requirements" "$stamp"
fi
echo "$(cd "$venv" && pwd)/bin/python"
