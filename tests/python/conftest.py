# tests/python/conftest.py - what the Python tests share: the nbody command line beside the module
# (NBODY_EXECUTABLE, set by CTest), and running it.
import os
import subprocess

import pytest


@pytest.fixture(scope="session")
def cli():
    """Runs the nbody command line on the CPU; returns the CompletedProcess (asserting exit 0)."""
    exe = os.environ.get("NBODY_EXECUTABLE")
    if not exe or not os.access(exe, os.X_OK):
        pytest.skip("NBODY_EXECUTABLE names no nbody executable")

    def run(*args, expect=0):
        r = subprocess.run([exe, "--backend", "cpu", "--quiet", *map(str, args)], capture_output=True, text=True,
                           timeout=300)
        assert r.returncode == expect, f"nbody {' '.join(map(str, args))} exited {r.returncode}: {r.stderr}"
        return r

    return run
