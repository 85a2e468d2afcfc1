# tests/python/test_performance_api.py - the parts of the Python API that exist for speed: the
# benchmark report (the command line's keys), state arrays as views of one host copy per step, and
# the device view of a single GPU's positions (DLPack, __cuda_array_interface__).
import ctypes
import ctypes.util
import json

import numpy as np
import pytest

import nbody


def test_benchmark_has_the_command_lines_json_keys(cli, tmp_path):
    out = tmp_path / "bench.json"
    cli("--benchmark", "--bodies", 64, "--steps", 2, "--warmup", 1, "--json", out)
    expected = json.loads(out.read_text())
    sim = nbody.Simulation(n=64, backend="cpu", precision="fp32")
    report = sim.benchmark(steps=2, warmup=1)
    # (made_by, the build and command line, is the report file's: a script's own is nbody.__version__ and its code)
    assert sorted(report) == sorted(k for k in expected if k != "made_by")
    # The same settings give the same non-timing values, the end state's bits among them.
    for key in ("mode", "bodies", "source", "backend", "kernel", "precision", "devices", "threading", "launch",
                "integrator", "force_evaluations_per_step", "timed_steps", "warmup_steps", "flops_per_interaction",
                "steps_made", "state_hash", "dt", "softening", "cpu_threads", "damping", "units"):
        assert report[key] == expected[key], key
    assert report["median_step_ms"] > 0
    assert len(report["step_ms"]) == 2 and min(report["step_ms"]) == report["min_step_ms"]
    assert sim.steps == 0  # measured on a copy: the simulation itself did not move
    # Each timed step's time is kept: more than a million are refused, naming steps, not as a MemoryError.
    with pytest.raises(ValueError, match=r"^steps=1000000000000000: a benchmark times each of its steps, at most "
                                         r"1000000 \(a longer run: run\(\)\)$"):
        sim.benchmark(steps=10**15)


def test_state_arrays_are_read_only_views_that_keep_their_step():
    sim = nbody.Simulation(n=128, backend="cpu")
    p, v, m = sim.positions, sim.velocities, sim.masses
    for a in (p, v, m):
        assert not a.flags.writeable and not a.flags.owndata
    # Two reads at one step share memory: no copy per read.
    assert np.shares_memory(sim.positions, p) and np.shares_memory(sim.masses, m)
    before = p.copy()
    sim.step()
    after = sim.positions
    assert not np.shares_memory(after, p)  # the held array keeps its memory...
    assert np.array_equal(p, before)       # ...and the values of its step
    assert not np.array_equal(after, before)
    with pytest.raises(ValueError):
        p[0, 0] = 1.0


def test_step_then_read_sees_every_step():
    a = nbody.Simulation(n=64, backend="cpu")
    b = nbody.Simulation(n=64, backend="cpu")
    for _ in range(5):
        a.step()
    b.step(5)
    b.synchronize()
    assert a.steps == b.steps == 5 and np.array_equal(a.positions, b.positions)


def test_device_positions_refused_on_the_cpu():
    sim = nbody.Simulation(n=16, backend="cpu")
    with pytest.raises(ValueError, match="device_positions: the simulation runs on the CPU"):
        sim.device_positions


def _cudart():
    for name in ("cudart", "cudart.so.12", "cudart.so.13", "cudart.so.11.0"):
        path = ctypes.util.find_library(name) or (f"lib{name}" if name.startswith("cudart.so") else None)
        try:
            return ctypes.CDLL(path) if path else None
        except OSError:
            continue
    return None


@pytest.mark.skipif(not nbody.cuda_built() or not nbody.devices(), reason="needs a CUDA build and a GPU")
@pytest.mark.parametrize("precision,dtype", [("fp32", np.float32), ("fp64", np.float64)])
def test_device_positions_are_the_engines_buffer(precision, dtype):
    cudart = _cudart()
    if cudart is None:
        pytest.skip("libcudart not found by ctypes")
    sim = nbody.Simulation(n=1000, backend="cuda", numgpus=1, precision=precision)
    sim.step(3)
    view = sim.device_positions
    cai = view.__cuda_array_interface__
    assert cai["version"] == 3 and cai["shape"] == (1000, 3) and cai["typestr"] == np.dtype(dtype).str
    assert cai["strides"] == (4 * np.dtype(dtype).itemsize, np.dtype(dtype).itemsize)
    assert view.__dlpack_device__() == (2, view.device)  # kDLCUDA
    # Read the rows (x, y, z, m) straight from the pointer: they are the state, no copy of it.
    rows = np.empty((1000, 4), dtype=dtype)
    cudart.cudaMemcpy.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    assert cudart.cudaMemcpy(rows.ctypes.data, ctypes.c_void_p(cai["data"][0]), rows.nbytes, 2) == 0  # DeviceToHost
    assert np.array_equal(rows[:, :3].astype(np.float64), sim.positions)
    assert np.array_equal(rows[:, 3].astype(np.float64), sim.masses)
    capsule = view.__dlpack__()
    assert type(capsule).__name__ == "PyCapsule"
    sim.step()
    assert not view.valid
    with pytest.raises(RuntimeError, match="earlier state"):
        view.__cuda_array_interface__


def test_hermite4_benchmark_goes_on_from_each_bodys_own_time(cli, tmp_path):
    # A benchmark of a hermite4 simulation that has run measures the run as it would go on: every body at its own
    # time with its own step (the block structure reached), not a new start as at t = 0. The end state is that of
    # `nbody --benchmark` on the simulation's checkpoint.
    sim = nbody.Simulation(scenario="plummer", n=200, seed=4, precision="fp64", integrator="hermite4", backend="cpu")
    sim.run(steps=25)
    sim.checkpoint(tmp_path / "blocks.h5")
    cli("--benchmark", "--restart", tmp_path / "blocks.h5", "--steps", 6, "--warmup", 2, "--json", tmp_path / "b.json")
    expected = json.loads((tmp_path / "b.json").read_text())["hermite4"]
    report = sim.benchmark(steps=6, warmup=2)["hermite4"]
    assert report["state_hash"] == expected["state_hash"]
    assert report["block_steps"] == expected["block_steps"]
    assert sim.steps == 25  # measured on a copy
    # A new start from the same positions and velocities (every body's step chosen afresh) ends elsewhere.
    fresh = nbody.Simulation.from_arrays(sim.positions, sim.velocities, sim.masses, time=sim.time, backend="cpu",
                                         softening=sim.softening, precision="fp64", integrator="hermite4")
    assert fresh.benchmark(steps=6, warmup=2)["hermite4"]["state_hash"] != expected["state_hash"]
