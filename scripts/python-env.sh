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
# PyPI's matplotlib (pynbody and yt need a newer one than Debian's) brings its own mpl_toolkits, but
# Debian's matplotlib claims that name at start-up (its -nspkg.pth), so its older mplot3d was imported
# and every import of matplotlib warned "Unable to import Axes3D". Importing the environment's own
# first, from a .pth of the environment (read before Debian's folder), puts it ahead in the name's path.
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
if [ -d "$site/mpl_toolkits" ]; then
  [ "$(cat "$site/00-mpl-toolkits-first.pth" 2>/dev/null)" = "import mpl_toolkits" ] ||
    echo "import mpl_toolkits" > "$site/00-mpl-toolkits-first.pth"
else
  rm -f "$site/00-mpl-toolkits-first.pth"
fi
echo "$(cd "$venv" && pwd)/bin/python"
