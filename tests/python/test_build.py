# tests/python/test_build.py - every way to make a simulation, and the values each starts from.
import re

import numpy as np
import pytest

import nbody


def test_scenario_with_the_command_lines_defaults():
    sim = nbody.Simulation(n=64, backend="cpu")
    assert (len(sim), sim.steps, sim.time) == (64, 0, 0.0)
    assert (sim.integrator, sim.dt, sim.softening, sim.precision) == ("leapfrog", 0.01, 0.01, "fp64")
    assert sim.backend == "cpu" and sim.numgpus == 1 and sim.threading == "single"
    assert sim.kernel == "simd" and sim.threads is None  # the backend's default kernel; every core
    sim.configure(kernel="reference", threads=1)
    assert sim.kernel == "reference" and sim.threads == 1
    assert sim.positions.shape == (64, 3) and sim.velocities.shape == (64, 3) and sim.masses.shape == (64,)
    assert sim.masses.sum() == pytest.approx(1.0)
    assert list(sim.ids) == list(range(64))
    # A disk's softening is its own (the command line's), euler-damped's dt too.
    assert nbody.Simulation("disk", n=64, backend="cpu").softening == 0.05
    assert nbody.Simulation(n=64, backend="cpu", integrator="euler-damped").dt == 0.016
    assert len(nbody.Simulation("two-body", backend="cpu")) == 2


def test_the_same_seed_makes_the_same_bodies_and_another_seed_others():
    a, b, c = (nbody.Simulation(n=32, seed=s, backend="cpu") for s in (1, 1, 2))
    assert np.array_equal(a.positions, b.positions) and not np.array_equal(a.positions, c.positions)


def test_from_arrays_keeps_the_values_exactly(tmp_path):
    rng = np.random.default_rng(3)
    pos, vel, m = rng.normal(size=(50, 3)), 0.1 * rng.normal(size=(50, 3)), rng.uniform(0.5, 1.5, 50) / 50
    sim = nbody.Simulation.from_arrays(pos, vel, m, time=2.5, backend="cpu")
    assert np.array_equal(sim.positions, pos) and np.array_equal(sim.velocities, vel) and np.array_equal(sim.masses, m)
    assert sim.time == 2.5 and sim.softening == 0.01
    # float32 input is widened exactly.
    sim32 = nbody.Simulation.from_arrays(pos.astype(np.float32), vel.astype(np.float32), m.astype(np.float32),
                                         backend="cpu")
    assert np.array_equal(sim32.positions, pos.astype(np.float32).astype(np.float64))


def test_bodies_without_mass_run_and_are_said_to_move_in_straight_lines(tmp_path):
    rng = np.random.default_rng(5)
    pos, vel = rng.normal(size=(8, 3)), rng.normal(size=(8, 3))
    sim = nbody.Simulation.from_arrays(pos, vel, np.zeros(8), backend="cpu")
    assert "every body of arrays has mass 0: none attracts another, so each moves in a straight line" in sim.notices
    sim.run(steps=4)
    np.testing.assert_allclose(sim.positions, pos + sim.time * vel, rtol=0, atol=1e-14)
    # One body with mass among test particles: their orbits are no part of the energy, whose error stays 0; said.
    m = np.zeros(8)
    m[0] = 1.0
    star = nbody.Simulation.from_arrays(pos, vel, m, backend="cpu")
    assert not any("has mass 0" in n for n in star.notices)
    assert ("one body of arrays has mass, the others are massless test particles: they carry no energy, so the energy "
            "error measures nothing of their orbits (compare them with their analytic orbits instead)") in star.notices
    star.run(steps=4)
    assert star.diagnostics()["relative_energy_error"] == 0.0
    # Two bodies with mass are a system: nothing said.
    m[1] = 1.0
    assert not any("mass" in n for n in nbody.Simulation.from_arrays(pos, vel, m, backend="cpu").notices)
    # Masses set to 0 later: said then.
    later = nbody.Simulation.from_arrays(pos, vel, m, backend="cpu")
    later.masses = np.zeros(8)
    assert later.notices[-1].startswith("every body of the bodies set has mass 0")
    # A file's bodies, on the command line too.
    sim.save(tmp_path / "massless.bin")
    loaded = nbody.Simulation.load(str(tmp_path / "massless.bin"), backend="cpu")
    assert any(n.startswith("every body of ") and "massless.bin has mass 0" in n for n in loaded.notices)


def test_load_reads_what_save_wrote(tmp_path):
    sim = nbody.Simulation(n=40, backend="cpu", softening=0.02)
    sim.run(steps=3)
    path = tmp_path / "s.bin"
    sim.save(path)
    loaded = nbody.Simulation.load(str(path), backend="cpu")
    assert len(loaded) == 40 and loaded.softening == pytest.approx(0.02)
    # tipsy holds float32 values.
    assert np.array_equal(loaded.positions, sim.positions.astype(np.float32).astype(np.float64))
    assert any("tipsy" in n for n in loaded.notices)


def test_a_save_over_a_loaded_tipsy_file_that_holds_gas_fields_is_refused(tmp_path):
    # Another program's tipsy file, its gas with temperatures: a save over it wrote them as 0. nbody's own (below) may
    # be continued in place.
    import struct
    n_gas, n_dark = 4, 12
    rng = np.random.default_rng(3)
    records = b""
    for i in range(n_gas):  # mass, pos, vel, rho, temp, hsmooth, metals, phi
        records += struct.pack(">12f", 1.0 / 16, *rng.normal(size=3), *(0.1 * rng.normal(size=3)), 1.0, 5000.0 + i,
                               0.01, 0.0, 0.0)
    for i in range(n_dark):  # mass, pos, vel, eps, phi
        records += struct.pack(">9f", 1.0 / 16, *rng.normal(size=3), *(0.1 * rng.normal(size=3)), 0.01, 0.0)
    path = tmp_path / "gas.bin"
    path.write_bytes(struct.pack(">diiiiii", 0.0, n_gas + n_dark, 3, n_gas, n_dark, 0, 0) + records)
    before = path.read_bytes()
    sim = nbody.Simulation.load(path, backend="cpu")
    with pytest.raises(ValueError, match=r"gas\.bin: the Simulation\.load file, which holds what nbody does not keep "
                                         r"\(its gas's density, temperature and metals\): a save over it would lose "
                                         r"that; give Simulation\.save another file"):
        sim.save(path)
    assert path.read_bytes() == before
    sim.save(tmp_path / "own.bin")
    own = nbody.Simulation.load(tmp_path / "own.bin", backend="cpu")
    own.save(tmp_path / "own.bin")


def test_a_snapshot_whose_two_statements_of_its_units_disagree_is_refused(tmp_path):
    # Its Header's MassUnit and LengthUnit are what nbody reads, its /Units what yt reads: a file edited in one (U_M
    # 2e43 g where the header says 1e10 Msun) loaded as the header's, while yt read the other system.
    h5py = pytest.importorskip("h5py")
    sim = nbody.Simulation(n=40, backend="cpu", mass_unit="1e10Msun", length_unit="1kpc")
    path = tmp_path / "s.h5"
    sim.save(path)
    nbody.Simulation.load(path, backend="cpu")  # as written: the same units twice
    with h5py.File(path, "a") as f:
        f["Units"].attrs["Unit mass in cgs (U_M)"] = np.array([2e43])
    with pytest.raises(ValueError, match=r"s\.h5: /Units gives Unit mass in cgs \(U_M\) 2e\+43 g, which yt reads, "
                                         r"where Header/MassUnit and LengthUnit \(1e10Msun, 1kpc\) make it "
                                         r"1\.98\d*e\+43 g: the two statements of the units disagree"):
        nbody.Simulation.load(path, backend="cpu")


def test_restart_continues_a_checkpoint_with_its_settings(tmp_path):
    sim = nbody.Simulation(n=40, backend="cpu", integrator="omelyan4", dt=0.02, softening=0.03, precision="fp32")
    sim.run(steps=5)
    sim.checkpoint(tmp_path / "c.h5")
    again = nbody.Simulation.restart(tmp_path / "c.h5", backend="cpu")
    assert (again.steps, again.time, again.integrator, again.dt, again.softening, again.precision) == (
        5, sim.time, "omelyan4", 0.02, 0.03, "fp32")
    assert np.array_equal(again.positions, sim.positions) and np.array_equal(again.velocities, sim.velocities)
    sim.run(steps=5)
    again.run(steps=5)
    assert np.array_equal(again.positions, sim.positions)
    # A named setting overrides the file's, with a notice.
    faster = nbody.Simulation.restart(tmp_path / "c.h5", backend="cpu", dt=0.01, integrator="leapfrog")
    assert faster.dt == 0.01 and faster.time == pytest.approx(0.1)
    assert f"dt=0.01 overrides {tmp_path / 'c.h5'}'s 0.02" in faster.notices
    assert f"integrator='leapfrog' overrides {tmp_path / 'c.h5'}'s omelyan4" in faster.notices


def test_diagnostics_report_what_the_command_line_does():
    sim = nbody.Simulation(n=512, backend="cpu")
    d = sim.diagnostics()
    assert d["total"] == pytest.approx(d["kinetic"] + d["potential"]) and d["total"] == sim.energy()
    assert d["relative_energy_error"] == 0.0 and d["mass"] == pytest.approx(1.0)
    assert np.allclose(d["momentum"], 0, atol=1e-14) and np.allclose(d["centre_of_mass"], 0, atol=1e-14)
    # A Plummer sphere in Henon units: virial ratio 1, half-mass radius 0.77 (sampling noise at N = 512).
    assert d["virial_ratio"] == pytest.approx(1.0, abs=0.15)
    assert d["lagrangian_radii"][1] == pytest.approx(0.769, rel=0.15)
    assert list(d["lagrangian_fractions"]) == [0.1, 0.5, 0.9]
    sim.run(steps=10)
    assert 0 < sim.diagnostics()["relative_energy_error"] < 1e-3


def test_devices_lists_what_is_visible():
    listed = nbody.devices()
    assert isinstance(listed, list)
    if not listed:
        assert nbody.why_no_devices()
    for d in listed:
        assert {"ordinal", "name", "memory_bytes", "peers"} <= set(d)


def test_repr_says_what_runs():
    r = repr(nbody.Simulation(n=16, backend="cpu"))
    assert "n=16" in r and "leapfrog" in r and "cpu" in r


def test_names_lists_each_settings_choices_and_names_them_when_asked_for_another():
    assert "hermite4" in nbody.names("integrator") and nbody.names("precision") == ["fp32", "fp64"]
    with pytest.raises(ValueError) as refused:
        nbody.names("colour")
    listed = str(refused.value).split("are ", 1)[1].split(", ")
    assert str(refused.value).startswith("no names for 'colour': the keywords that take a name from a list are ")
    assert {"snapshot_precision", "format", "integrator"} <= set(listed)
    assert all(nbody.names(setting) for setting in listed), listed  # every one listed has its names
    # Not a name at all: one line, as every other wrong type is (nanobind's own message lists its overloads).
    with pytest.raises(TypeError, match=r"^names\(option\): option must be a str such as 'integrator', got int 5$"):
        nbody.names(5)


def test_the_version_is_the_command_lines_and_the_one_a_checkpoint_records(tmp_path):
    import os
    import subprocess
    import h5py
    assert isinstance(nbody.__version__, str) and nbody.__version__[0].isdigit()
    exe = os.environ.get("NBODY_EXECUTABLE")
    if exe and os.access(exe, os.X_OK):
        said = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=60).stdout.splitlines()
        assert said[0] == "nbody " + nbody.__version__
        # The build a number came from: its sources' commit, compiler, flags and CPU and CUDA targets, which every
        # --json report records too, with its command line.
        assert len(said) == 2 and said[1].startswith(f"build: version={nbody.__version__}; commit="), said
        for field in ("; compiler=", "; build=", "; flags=", "; cpu=", "; cuda="):
            assert field in said[1], said
        report = tmp_path / "b.json"
        subprocess.run([exe, "--benchmark", "--backend", "cpu", "--bodies", "64", "--steps", "1", "--quiet", "--json",
                        str(report)], check=True, timeout=120)
        import json
        made = json.loads(report.read_text())["made_by"]
        assert "build: " + made["build"] == said[1]
        assert made["command_line"][1:] == ["--benchmark", "--backend", "cpu", "--bodies", "64", "--steps", "1",
                                            "--quiet", "--json", str(report)]
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", made["written_utc"])
    if nbody.checkpoints_built():
        sim = nbody.Simulation(n=16, backend="cpu")
        sim.checkpoint(tmp_path / "c.h5")
        with h5py.File(tmp_path / "c.h5") as f:
            assert f["Code"].attrs["Code"].decode() == "nbody " + nbody.__version__


def test_a_save_of_a_body_past_the_bound_says_it_starts_no_run(tmp_path):
    # A run may carry a body past the 1e15 nbody takes from any file: the save is written, and warns that it starts no
    # run, as nbody --save does.
    pos = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    vel = np.array([[0.0, 0.0, 0.0], [9e14, 0.0, 0.0]])
    sim = nbody.Simulation.from_arrays(pos, vel, np.array([0.5, 0.5]), backend="cpu", dt=0.01)
    sim.run(steps=200)
    for name in ("far.bin", "far.h5"):
        with pytest.warns(RuntimeWarning, match=r"body 1's position x is 1\.8e\+15; nbody reads magnitudes up to 1e15: "
                                                r"the file starts no nbody run"):
            sim.save(tmp_path / name)
        with pytest.raises(ValueError, match=r"position x is 1\.8e\+15"):
            nbody.Simulation.load(str(tmp_path / name), backend="cpu")
