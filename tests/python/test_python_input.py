# tests/python/test_python_input.py - what a new user's trial of the module tried: arrays as files and hands give them
# (big-endian, integers), copies, integrate's end, NULs in paths, None assigned, a missing file, and what the
# docstrings and docs/python.md say of the views and of MPI reads.
import copy
import errno
import itertools
import math
import os
import pathlib
import pickle
import re
import shutil
import subprocess
import sys
import tempfile
import warnings

import numpy as np
import pytest

import nbody

DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs" / "python.md"
POSITIONS = np.random.default_rng(0).normal(size=(8, 3))
VELOCITIES = np.random.default_rng(1).normal(size=(8, 3))
MASSES = np.full(8, 1 / 8)


def test_big_endian_floats_are_taken_as_the_values_they_hold():
    # astropy.io.fits gives '>f8': float64, though not np.float64 (the native order).
    sim = nbody.Simulation.from_arrays(POSITIONS.astype(">f8"), VELOCITIES.astype(">f4"), MASSES.astype(">f8"),
                                       backend="cpu")
    assert np.array_equal(sim.positions, POSITIONS)
    assert np.array_equal(sim.velocities, VELOCITIES.astype(np.float32))  # widened exactly
    assert np.array_equal(sim.masses, MASSES)
    sim.positions = (2 * POSITIONS).astype(">f8")
    sim.velocities = (2 * VELOCITIES).astype(">f4")
    sim.masses = (2 * MASSES).astype(">f4")
    assert np.array_equal(sim.positions, 2 * POSITIONS)
    assert np.array_equal(sim.velocities, (2 * VELOCITIES).astype(np.float32))
    assert np.array_equal(sim.masses, 2 * MASSES)


def test_integers_are_taken_exactly_and_other_kinds_refused():
    # As one types a binary: no dtype chosen, numpy's int64.
    sim = nbody.Simulation.from_arrays([[1, 0, 0], [-1, 0, 0]], [[0, 0.5, 0], [0, -0.5, 0]], [1, 1], backend="cpu")
    assert sim.positions.tolist() == [[1, 0, 0], [-1, 0, 0]] and sim.masses.tolist() == [1, 1]
    sim.masses = np.array([3, 1], dtype=np.uint8)
    sim.velocities = np.zeros((2, 3), dtype=np.int32)
    assert sim.masses.tolist() == [3, 1] and not sim.velocities.any()
    # 2**53 + 1 would become 2**53: refused, naming the body; 2**53 itself is exact (refused by the library's bound).
    with pytest.raises(ValueError, match=r"^positions: body 1 has the integer -9007199254740993, which float64 cannot "
                                         r"hold exactly; integers must be within 2\*\*53"):
        sim.positions = np.array([[0, 0, 0], [0, -(2**53 + 1), 0]])
    # A single large integer is the wrong shape first (as a single float is), not an IndexError.
    with pytest.raises(ValueError, match=r"^masses: shape \(\); expected \(N,\)$"):
        sim.masses = 2**60
    for bad, kind in ((np.ones(2, dtype=bool), "bool"), (np.ones(2, dtype=complex), "complex128"),
                      (np.array([1, None], dtype=object), "object"), (np.array(["1", "2"]), "<U1")):
        with pytest.raises(TypeError, match=rf"^masses: expected a float64 or float32 array, or integers; got dtype "
                                            rf"{re.escape(kind)}$"):
            sim.masses = bad
    assert sim.masses.tolist() == [3, 1]


def test_a_simulation_is_not_copied_and_the_message_says_how_to_branch():
    sim = nbody.Simulation(n=16, backend="cpu")
    # copy.copy made a second object on the same engine: stepping the "copy" moved the original.
    for copier in (copy.copy, copy.deepcopy, pickle.dumps):
        with pytest.raises(TypeError, match=r"^a Simulation cannot be copied or pickled; to branch a run, "
                                            r"sim\.checkpoint\(path\), then nbody\.Simulation\.restart\(path\)"):
            copier(sim)
    assert sim.steps == 0


def test_integrate_says_where_it_ended_for_every_integrator():
    sim = nbody.Simulation(scenario="two-body", dt=0.03, backend="cpu")
    with pytest.warns(RuntimeWarning, match=r"^t_end=1\.0: the run ended at 1\.02, the first step of dt=0\.03 at or "
                                            r"past it \(integrate takes whole steps; REBOUND's ends at t_end "
                                            r"exactly\)$") as caught:
        sim.integrate(1.0)
    assert len(caught) == 1 and caught[0].filename == __file__ and sim.time == 1.02
    assert sim.notices[-1] == str(caught[0].message) and sim.last_run["notices"] == [sim.notices[-1]]
    # A time from np.arange (a NumPy scalar) is quoted as the number it is, not as NumPy 2's np.float64(2.0).
    with pytest.warns(RuntimeWarning, match=r"^t_end=2\.0: the run ended at 2\.01, "):
        sim.integrate(np.arange(3.0)[2])
    # A whole number of steps (0.3 with dt=0.1 ends at 0.30000000000000004: the clock's rounding, not a step past it),
    # and a run the callback stopped, end where they should: nothing said.
    for t_end, dt, callback in ((1.25, 0.25, None), (0.3, 0.1, None), (10.0, 0.25, lambda s: s.steps >= 3)):
        quiet = nbody.Simulation(scenario="two-body", dt=dt, backend="cpu")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            quiet.integrate(t_end, callback=callback)
        assert not caught and not quiet.notices
    # hermite4 ends at t_end, every body brought to it: nothing said.
    hermite = nbody.Simulation(n=16, integrator="hermite4", backend="cpu")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        hermite.integrate(0.3)
    assert not caught and not hermite.notices and hermite.time == 0.3


def test_a_nul_in_a_path_is_refused_naming_the_argument(tmp_path, monkeypatch):
    # The C library ends the name at the NUL: "run\0junk.h5" wrote "run" (past the check of its extension).
    monkeypatch.chdir(tmp_path)
    sim = nbody.Simulation(n=16, backend="cpu")
    calls = [("path", lambda: sim.checkpoint("run\0junk.h5")), ("path", lambda: sim.save("run\0junk.bin")),
             ("path", lambda: nbody.Simulation.restart("run\0junk.h5")),
             ("path", lambda: nbody.Simulation.load("run\0junk.bin"))]
    outputs = (("diagnostics", ".csv"), ("checkpoint", ".h5"), ("snapshots", "s"), ("save", ".bin"))
    calls += [(name, lambda name=name, ending=ending: sim.run(steps=1, **{name: tmp_path / f"run\0{ending}"}))
              for name, ending in outputs]
    for name, call in calls:
        with pytest.raises(ValueError, match=rf"^{name} '.*run\\x00.*': embedded null byte; a file name cannot "
                                             r"hold one$"):
            call()
    assert list(tmp_path.iterdir()) == [] and sim.steps == 0


@pytest.mark.parametrize("name,what", [
    ("dt", "a number"), ("softening", "a number"), ("damping", "a number"), ("eta", "a number"),
    ("eta_start", "a number"), ("dt_max", "a number"), ("numgpus", "a whole number"),
    ("integrator", r"a name \(leapfrog, yoshida4, omelyan4, euler-damped, hermite4\)"),
    ("precision", r"a name \(fp32, fp64\)"),
    ("threading", r"a name \(single, workers\)"), ("launch", r"a name \(stream, graph\)"),
])
def test_assigning_none_to_a_setting_is_refused(name, what):
    # It did nothing, silently: sim.dt = None read as "back to the default".
    sim = nbody.Simulation(n=16, backend="cpu", dt=0.02)
    before = getattr(sim, name)
    with pytest.raises(TypeError, match=rf"^{name}: expected {what}, got None \(nothing was changed\); None means the "
                                        r"default only in the arguments that make a simulation$"):
        setattr(sim, name, None)
    assert getattr(sim, name) == before


def test_a_missing_file_is_a_file_not_found_error_and_a_value_error(tmp_path):
    for read in (nbody.Simulation.restart, nbody.Simulation.load):
        missing = tmp_path / "missing.h5"
        with pytest.raises(FileNotFoundError, match=rf"^{re.escape(str(missing))}: cannot open: No such file or "
                                                    r"directory$") as caught:
            read(missing, backend="cpu")
        e = caught.value
        assert isinstance(e, nbody.MissingFileError) and isinstance(e, ValueError)  # except ValueError still works
        assert e.errno == errno.ENOENT and e.filename == str(missing)
    # A file that is there but is not one: a ValueError alone.
    text = tmp_path / "notes.txt"
    text.write_text("not bodies\n")
    for read in (nbody.Simulation.restart, nbody.Simulation.load):
        with pytest.raises(ValueError) as caught:
            read(text, backend="cpu")
        assert not isinstance(caught.value, OSError)


_UNREADABLE = """
import sys, nbody
for read in (nbody.Simulation.restart, nbody.Simulation.load):
    for path in sys.argv[1:]:
        try:
            read(path, backend="cpu")
        except OSError as e:
            print(type(e).__name__, isinstance(e, PermissionError), isinstance(e, ValueError), e.errno, e.filename, e)
"""


def test_a_file_it_may_not_read_is_a_permission_error_and_a_value_error(tmp_path):
    # As a missing file is a FileNotFoundError: `except OSError` catches every file it cannot get at. Root reads any
    # file, so there the reader runs as nobody (skipped where that cannot import nbody).
    sim = nbody.Simulation(n=16, backend="cpu")
    tmp_path.chmod(0o755)  # the files' own permission refused, not their folder's (pytest's base folder is 0700)
    base = pathlib.Path(tempfile.mkdtemp(prefix="nbody-unreadable-"))
    base.chmod(0o755)
    files = [base / "c.h5", base / "s.bin"] if nbody.checkpoints_built() else [base / "s.bin"]
    if nbody.checkpoints_built():
        sim.checkpoint(files[0])
    sim.save(files[-1])
    for f in files:
        f.chmod(0o200)
    command = [sys.executable, "-c", _UNREADABLE] + [str(f) for f in files]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    if os.geteuid() == 0:
        if not shutil.which("setpriv"):
            pytest.skip("running as root, and no setpriv to read as another user")
        command = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] + command
    r = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    if re.search(r"^(ModuleNotFoundError|ImportError|PermissionError): .*", r.stderr, re.M):
        pytest.skip("nobody cannot import this nbody: " + r.stderr.strip().splitlines()[-1])
    lines = r.stdout.splitlines()
    assert r.returncode == 0 and len(lines) == 2 * len(files), (r.stdout, r.stderr)
    for line, path in zip(lines, [f for _ in range(2) for f in files]):
        assert line.startswith(f"UnreadableFileError True True {errno.EACCES} {path} {path}: cannot "), line
        assert line.endswith(": " + os.strerror(errno.EACCES)), line
    shutil.rmtree(base)


def test_docstrings_say_the_views_strides_and_how_to_scale_them():
    sim = nbody.Simulation(n=16, backend="cpu")
    assert sim.positions.strides == (32, 8) and "rows 32 bytes" in nbody.Simulation.positions.__doc__
    assert sim.velocities.strides == (24, 8) and "rows 24 bytes apart" in nbody.Simulation.velocities.__doc__
    assert sim.masses.strides == (32,) and "4 values apart, strides (32,)" in nbody.Simulation.masses.__doc__
    # In place, numpy's bare "output array is read-only"; the docstring gives the assignment that works.
    with pytest.raises(ValueError, match="read-only"):
        v = sim.velocities
        v *= 0.9
    idiom = "sim.velocities = 0.9 * sim.velocities"
    assert idiom in nbody.Simulation.velocities.__doc__
    before = np.array(sim.velocities)
    exec(idiom, {"sim": sim})
    assert np.array_equal(sim.velocities, 0.9 * before)
    assert "why_no_devices" in nbody.__all__ and "MissingFileError" in nbody.__all__


def test_docs_read_the_state_on_every_rank_under_mpi():
    if not DOCS.is_file():
        pytest.skip(f"{DOCS} is not beside these tests")
    docs = DOCS.read_text()
    # The views' strides as the module has them, and the idiom for an in-place change.
    assert "`velocities` are packed,\nstrides (24, 8)" in docs
    assert "(`sim.velocities *= 0.9`" in docs and "(`sim.velocities = 0.9 * sim.velocities`)" in docs
    # Reading the state is collective: `if rank == 0: x = sim.positions` waits for the other ranks until the job ends.
    mpi = docs.split("## MPI", 1)[1].split("```python", 1)[1].split("```", 1)[0]
    lines = mpi.splitlines()
    collective = re.compile(r"sim\.(positions|velocities|masses|types|energy|diagnostics)\b")
    assert any(re.search(r"sim\.(positions|velocities|masses)\b", line) and not line.startswith(" ") for line in lines)
    for i, line in enumerate(lines):
        if re.match(r"if .*rank == 0:", line):
            body = list(itertools.takewhile(lambda b: b.startswith(" "), lines[i + 1:]))
            assert not any(collective.search(b) for b in body), f"the MPI example reads on rank 0 alone: {body}"


def test_a_simulation_says_its_units():
    assert nbody.Simulation(n=16, backend="cpu").units is None
    sim = nbody.Simulation(n=16, backend="cpu", mass_unit="1e3Msun", length_unit="1pc")
    units = sim.units
    assert units["mass"] == "1e3Msun" and units["length"] == "1pc"
    assert units["time_s"] == pytest.approx(1.4879e13, rel=1e-4) and units["velocity_km_s"] == pytest.approx(2.0739, rel=1e-4)
    sim.configure(mass_unit="1Msun", length_unit="1au")
    assert sim.units["length"] == "1au"


def test_a_body_of_mass_0_is_a_test_particle(tmp_path):
    # As a tipsy file's: mass 0 is allowed from arrays too. The test particle orbits the star and never pulls on it.
    positions = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    velocities = np.array([[0.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    sim = nbody.Simulation.from_arrays(positions, velocities, np.array([1.0, 0.0]), softening=0.0,
                                       integrator="hermite4", precision="fp64", backend="cpu")
    sim.run(t_end=3.125)  # about half an orbit of radius 1, at a multiple of the longest step
    assert np.array_equal(sim.positions[0], [0.0, 0.0, 0.0]) and np.array_equal(sim.velocities[0], [0.0, 0.0, 0.0])
    np.testing.assert_allclose(sim.positions[1], [math.cos(3.125), math.sin(3.125), 0.0], atol=1e-4)  # eta 0.02
    sim.masses = np.array([1.0, 0.0])
    with pytest.raises(ValueError, match=r"^masses: body 1 has mass -0\.5; masses must not be negative"):
        sim.masses = np.array([1.0, -0.5])


def test_bytes_paths_and_numpy_scalars_are_taken(tmp_path):
    # What a script may hold: a path as bytes (os.fsencode, os.listdir(b".")), a count or a time as a NumPy 0-d
    # array (np.sum of an array, np.array(3)); each taken as the str or the number it is, as Python's own calls do.
    sim = nbody.Simulation(n=64, backend="cpu")
    assert sim.run(steps=np.array(3), every=np.array(1)) == 3
    sim.run(t_end=np.array(0.05), diagnostics_dt=np.array(0.01), diagnostics=os.fsencode(tmp_path / "d.csv"))
    assert sim.steps == 5 and (tmp_path / "d.csv").exists()
    sim.save(os.fsencode(tmp_path / "s.bin"))
    assert nbody.Simulation.load(os.fsencode(tmp_path / "s.bin")).n == 64
    with pytest.raises(TypeError, match=r"^steps: expected a whole number, got 3\.0 \(float\)$"):
        sim.run(steps=np.array(3.0))
    with pytest.raises(ValueError, match=r"^path .*: not a UTF-8 name; nbody takes file names in UTF-8$"):
        sim.save(b"\xff\xfe.bin")


def test_arrays_start_at_a_time_with_a_unit():
    # from_arrays' time as text with a unit, as dt takes one: in the units mass_unit and length_unit give.
    p, v, m = np.array([[1.0, 0, 0], [-1, 0, 0]]), np.zeros((2, 3)), np.array([0.5, 0.5])
    sim = nbody.Simulation.from_arrays(p, v, m, time="1Myr", mass_unit="1e3Msun", length_unit="1pc", backend="cpu")
    assert sim.time == pytest.approx(1e6 * 365.25 * 86400 / sim.units["time_s"], rel=1e-12)
    with pytest.raises(ValueError, match=r"^time='1Myr': a time in Myr needs the run's units"):
        nbody.Simulation.from_arrays(p, v, m, time="1Myr", backend="cpu")
    with pytest.raises(ValueError, match=r"^time='soon': not a number and a time unit"):
        nbody.Simulation.from_arrays(p, v, m, time="soon", mass_unit="1e3Msun", length_unit="1pc", backend="cpu")
    with pytest.raises(TypeError, match=r"^time: expected a number or text with a unit, got \[1\] \(list\)$"):
        nbody.Simulation.from_arrays(p, v, m, time=[1], backend="cpu")


def test_times_in_a_unit_are_taken_in_the_simulations_units(tmp_path):
    # t_end and the series' times as text with a unit, where the simulation has units: the same run as the number.
    sim = nbody.Simulation(n=64, backend="cpu")
    with pytest.raises(ValueError, match=r"^t_end='1Myr': a time in Myr needs the run's units: give mass_unit and "
                                         r"length_unit \(or start from a file that records them\)"):
        sim.run(t_end="1Myr")
    with pytest.raises(ValueError, match=r"^t_end='soon': not a time; give a number in the simulation's units, or text "
                                         r"with a unit \(Gyr, Myr, kyr, yr, d, s\), e\.g\. '10Myr'$"):
        sim.run(t_end="soon")
    sim.configure(mass_unit="1e3Msun", length_unit="1pc")
    myr = 1e6 * 365.25 * 86400 / sim.units["time_s"]
    twin = nbody.Simulation(n=64, backend="cpu")
    sim.run(t_end="1Myr", diagnostics=tmp_path / "d.csv", diagnostics_dt="0.5Myr")
    twin.run(t_end=myr, diagnostics=tmp_path / "e.csv", diagnostics_dt=0.5 * myr)
    assert sim.steps == twin.steps == math.ceil(myr / 0.01)
    rows = lambda p: [line.split(",")[:2] for line in p.read_text().splitlines()[1:]]
    assert rows(tmp_path / "d.csv") == rows(tmp_path / "e.csv")
    # (Its times in the units given too, as the user reads them.)
    with pytest.warns(RuntimeWarning, match=r"^t_end='2Myr': the run ended at 4\.25 \(2\.004 Myr\), the first step of "
                                            r"dt=0\.01 \(4\.715 kyr\)"):
        sim.integrate("2Myr")
    assert sim.time >= 2 * myr
    with pytest.raises(ValueError, match=r"^t_end='1e12Gyr': more than 1e\+15 steps of dt 0\.01 away"):
        sim.run(t_end="1e12Gyr")
    # The settings of a time step too, in the units named with them, the simulation's, or its file's; messages quote
    # the text as given.
    kyr = myr / 1e3
    made = nbody.Simulation(n=64, backend="cpu", mass_unit="1e3Msun", length_unit="1pc", dt="1kyr")
    assert made.dt == kyr
    made.dt = "2 kyr"
    assert math.isclose(made.dt, 2 * kyr, rel_tol=1e-15)
    with pytest.raises(ValueError, match=r"^t_end='1e12Gyr': more than 1e\+15 steps of dt 2 kyr away"):
        made.run(t_end="1e12Gyr")
    made.configure(integrator="hermite4", dt_max="100kyr")
    assert math.isclose(made.dt_max, 100 * kyr, rel_tol=1e-15)
    assert made.notices[-1] == ("dt_max='100kyr': the longest step is 0.125, the power of two at or below it "
                                "(every step is a power of two)"), made.notices
    with pytest.raises(ValueError, match=r"^dt='1kyr': hermite4 chooses each body's step"):
        made.configure(dt="1kyr")
    with pytest.raises(ValueError, match=r"^dt_max='1e-9yr' \(2\.12097e-15 in the simulation's units, 1e3Msun, 1pc\): "
                                         r"must be a longest step in \[1e-09, 1e\+12\]$"):
        made.dt_max = "1e-9yr"
    with pytest.raises(ValueError, match=r"^dt='soon': not a time; give a number in the simulation's units, or text "
                                         r"with a unit \(Gyr, Myr, kyr, yr, d, s\), e\.g\. '1kyr'$"):
        made.dt = "soon"
    with pytest.raises(ValueError, match=r"^diagnostics_dt='1kyr' and diagnostics_every=1 both given"):
        made.run(steps=1, diagnostics=tmp_path / "j.csv", diagnostics_every=1, diagnostics_dt="1kyr")
    with pytest.raises(ValueError, match=r"^dt='1kyr': a time in kyr needs the run's units"):
        nbody.Simulation(n=64, backend="cpu", dt="1kyr")
    made.dt_max = 0.0625
    made.run(t_end="0.1Myr", diagnostics=tmp_path / "h.csv", diagnostics_dt="10kyr")
    assert not any("is not a block time" in n for n in made.notices)
    assert any(n.startswith("diagnostics_dt='10kyr': not a multiple of the longest step 0.0625") for n in made.notices)
    with pytest.raises(ValueError, match=r"^diagnostics_dt='1e30Gyr' \(2\.12097e\+33 in the simulation's units, "
                                         r"1e3Msun, 1pc\): must be a time in \(0, 1e\+27\]$"):
        made.run(steps=1, diagnostics=tmp_path / "i.csv", diagnostics_dt="1e30Gyr")
    if nbody.checkpoints_built():
        sim.checkpoint(tmp_path / "c.h5")
        again = nbody.Simulation.restart(tmp_path / "c.h5", dt="1kyr")
        assert again.dt == kyr and f"dt='1kyr' overrides {tmp_path / 'c.h5'}'s 0.01" in again.notices, again.notices
