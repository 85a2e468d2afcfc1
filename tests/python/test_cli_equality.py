# tests/python/test_cli_equality.py - bitwise the same from every door: a run from Python and the same
# run from the command line (--run --checkpoint, read with h5py) hold the same bits, and each continues
# the other's checkpoint as if the run had never stopped.
import json

import h5py
import numpy as np
import pytest

import nbody

pytestmark = pytest.mark.skipif(not nbody.checkpoints_built(), reason="this nbody was built without HDF5")

# One configuration per row: command-line options, and Python's keywords for the same run.
CASES = [
    (["--scenario", "plummer", "--bodies", 300, "--seed", 7, "--precision", "fp64"],
     dict(scenario="plummer", n=300, seed=7, precision="fp64")),
    (["--scenario", "disk", "--bodies", 257, "--precision", "fp32", "--integrator", "omelyan4", "--dt", 0.005],
     dict(scenario="disk", n=257, precision="fp32", integrator="omelyan4", dt=0.005)),
    (["--scenario", "collision", "--bodies", 200, "--precision", "fp64", "--integrator", "euler-damped"],
     dict(scenario="collision", n=200, precision="fp64", integrator="euler-damped")),
]


def read(path):
    """A checkpoint's bodies in body order (every family group, by ParticleIDs), its positions as the
    run held them: (Coordinates - Shift) + CoordinateRoundoff, exactly (sim/io/checkpoint.h)."""
    with h5py.File(path, "r") as f:
        header = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in f["Header"].attrs.items()}
        groups = [f[g] for g in sorted(f) if g.startswith("PartType")]
        ids = np.concatenate([g["ParticleIDs"][:] for g in groups])
        order = np.argsort(ids)
        x = np.concatenate([g["Coordinates"][:] for g in groups])
        positions = (x - x.dtype.type(header["Shift"][0])) + np.concatenate([g["CoordinateRoundoff"][:] for g in groups])
        bodies = {"Coordinates": positions}
        for k in ("Velocities", "Masses"):
            bodies[k] = np.concatenate([g[k][:] for g in groups])
        return ({k: v[order] for k, v in bodies.items()}, header)


def same_bits(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("cli_args,keywords", CASES)
def test_run_equals_the_command_lines_run(tmp_path, cli, cli_args, keywords):
    cli("--run", *cli_args, "--steps", 12, "--checkpoint", tmp_path / "cli.h5")
    sim = nbody.Simulation(backend="cpu", **keywords)
    assert sim.run(steps=12, checkpoint=tmp_path / "py.h5") == 12
    want, want_header = read(tmp_path / "cli.h5")
    got, got_header = read(tmp_path / "py.h5")
    for key in want:
        assert same_bits(got[key], want[key]), key
    for key in ("Step", "Time", "Dt", "Softening", "Damping", "Integrator", "Precision", "Scenario", "Seed",
                "InitialEnergy", "EndStep", "Checksum"):
        assert got_header[key] == want_header[key], key
    # A state written outside a run holds the same bits, and no end of a run.
    sim.checkpoint(tmp_path / "state.h5")
    state, state_header = read(tmp_path / "state.h5")
    for key in want:
        assert same_bits(state[key], want[key]), key
    assert "EndStep" not in state_header and "EndTime" not in state_header
    for key in ("Step", "Time", "Dt", "Softening", "Integrator", "Precision", "InitialEnergy"):
        assert state_header[key] == want_header[key], key
    # The arrays Python hands out are the same state: fp32 values widened exactly.
    assert np.array_equal(sim.positions, want["Coordinates"].astype(np.float64))
    assert np.array_equal(sim.velocities, want["Velocities"].astype(np.float64))
    assert sim.time == want_header["Time"]


def test_several_devices_and_workers_give_the_same_bits(tmp_path, cli):
    cli("--run", *CASES[0][0], "--steps", 12, "--checkpoint", tmp_path / "cli.h5")
    sim = nbody.Simulation(backend="cpu", numgpus=3, threading="workers", **CASES[0][1])
    sim.run(steps=12)
    want, _ = read(tmp_path / "cli.h5")
    assert same_bits(sim.positions, want["Coordinates"]) and same_bits(sim.velocities, want["Velocities"])


def test_python_continues_the_command_lines_checkpoint_bit_for_bit(tmp_path, cli):
    cli("--run", *CASES[1][0], "--steps", 8, "--checkpoint", tmp_path / "half.h5")
    cli("--run", *CASES[1][0], "--steps", 16, "--checkpoint", tmp_path / "whole.h5")
    sim = nbody.Simulation.restart(tmp_path / "half.h5", backend="cpu")
    assert sim.steps == 8
    sim.run(steps=8, checkpoint=tmp_path / "py.h5")  # a run's checkpoint: where it was going (step 16) too
    want, want_header = read(tmp_path / "whole.h5")
    got, got_header = read(tmp_path / "py.h5")
    for key in want:
        assert same_bits(got[key], want[key]), key
    assert got_header["Checksum"] == want_header["Checksum"]


def test_the_command_line_continues_pythons_checkpoint_bit_for_bit(tmp_path, cli):
    cli("--run", *CASES[0][0], "--steps", 16, "--checkpoint", tmp_path / "whole.h5")
    sim = nbody.Simulation(backend="cpu", **CASES[0][1])
    sim.run(steps=8)
    sim.checkpoint(tmp_path / "py.h5")
    cli("--run", "--restart", tmp_path / "py.h5", "--steps", 8, "--checkpoint", tmp_path / "continued.h5")
    want, want_header = read(tmp_path / "whole.h5")
    got, got_header = read(tmp_path / "continued.h5")
    for key in want:
        assert same_bits(got[key], want[key]), key
    assert got_header["Checksum"] == want_header["Checksum"]


def test_a_command_line_restart_says_that_pythons_checkpoint_records_no_end(tmp_path, cli):
    sim = nbody.Simulation(n=64, backend="cpu")
    sim.run(steps=2)
    sim.checkpoint(tmp_path / "py.h5")
    cli("--run", "--restart", tmp_path / "py.h5", "--json", tmp_path / "r.json")
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["steps"] == 1000
    assert f"{tmp_path / 'py.h5'} records no end of the run it continues (Python's checkpoint() writes none, nor " \
           "did an older nbody): this run makes the default 1000 steps (--steps or --t-end sets another end)" \
           in report["notices"], report
    with pytest.raises(TypeError, match=r"^run: give steps or t_end \(one of them\); .*py.h5 records no end of the run "
                                        r"it continues \(Python's checkpoint\(\) writes none, nor did an older nbody\)$"):
        nbody.Simulation.restart(tmp_path / "py.h5", backend="cpu").run()


def test_steering_keeps_the_state_bit_for_bit(tmp_path, cli):
    """dt, softening and integrator changed between steps continue exactly as the command line's
    restart with the same options does; a device count or threading change alters nothing."""
    sim = nbody.Simulation(backend="cpu", **CASES[0][1])
    sim.run(steps=6)
    sim.checkpoint(tmp_path / "at6.h5")
    sim.numgpus = 2
    sim.threading = "workers"
    sim.configure(dt=0.004, softening=0.02, integrator="yoshida4")
    assert (sim.numgpus, sim.threading, sim.dt, sim.softening, sim.integrator) == (2, "workers", 0.004, 0.02, "yoshida4")
    sim.run(steps=6)
    cli("--run", "--restart", tmp_path / "at6.h5", "--dt", 0.004, "--softening", 0.02, "--integrator", "yoshida4",
        "--steps", 6, "--checkpoint", tmp_path / "cli.h5")
    want, want_header = read(tmp_path / "cli.h5")
    assert same_bits(sim.positions, want["Coordinates"]) and same_bits(sim.velocities, want["Velocities"])
    assert sim.time == want_header["Time"] and sim.steps == want_header["Step"] == 12


def test_assigned_bodies_step_as_a_run_started_from_them():
    sim = nbody.Simulation(n=100, backend="cpu")
    sim.run(steps=4)
    pos, vel, m = sim.positions * 1.01, sim.velocities * 0.99, sim.masses
    sim.positions, sim.velocities = pos, vel
    assert np.array_equal(sim.positions, pos) and sim.steps == 4
    fresh = nbody.Simulation.from_arrays(pos, vel, m, time=sim.time, backend="cpu")
    sim.run(steps=5)
    fresh.run(steps=5)
    assert np.array_equal(sim.positions, fresh.positions) and np.array_equal(sim.velocities, fresh.velocities)


def test_hermite4_to_a_time_equals_the_command_lines_run(tmp_path, cli):
    # Block steps have no fixed length: run(t_end=...) and --t-end both stop at the time through the
    # simulation's own limit (driver::steps_for_time_limit), which the next run by steps no longer has.
    cli("--run", "--scenario", "plummer", "--bodies", 300, "--seed", 7, "--precision", "fp64", "--integrator",
        "hermite4", "--eta", 0.05, "--t-end", 0.125, "--checkpoint", tmp_path / "cli.h5")
    sim = nbody.Simulation(scenario="plummer", n=300, seed=7, precision="fp64", integrator="hermite4", eta=0.05,
                           backend="cpu")
    blocks = sim.run(t_end=0.125)
    assert blocks > 0
    assert sim.time == 0.125  # a multiple of dt_max: every body ends at the time itself
    sim.checkpoint(tmp_path / "py.h5")
    want, want_header = read(tmp_path / "cli.h5")
    got, got_header = read(tmp_path / "py.h5")
    for key in want:
        assert same_bits(got[key], want[key]), key
    assert got_header["Step"] == want_header["Step"] == blocks
    with h5py.File(tmp_path / "cli.h5", "r") as a, h5py.File(tmp_path / "py.h5", "r") as b:
        for name in a["Hermite"]:
            assert same_bits(b["Hermite"][name][:], a["Hermite"][name][:]), name
    assert sim.run(steps=5) == 5  # the time limit was that run's alone
    assert sim.time > 0.125


def test_hermite4_without_softening_restarts_with_its_own(tmp_path):
    # softening 0 is hermite4's alone, and elsewhere means "the scenario's": a restart keeps the file's 0, whether
    # it names softening=0 or not, and a switch to leapfrog with that 0 is refused.
    settings = dict(scenario="plummer", n=128, seed=3, precision="fp64", integrator="hermite4", softening=0,
                    backend="cpu")
    whole = nbody.Simulation(**settings)
    whole.run(steps=40)
    half = nbody.Simulation(**settings)
    half.run(steps=20)
    half.checkpoint(tmp_path / "half.h5")
    for options in [{}, {"softening": 0}]:
        again = nbody.Simulation.restart(tmp_path / "half.h5", backend="cpu", **options)
        again.run(steps=20)
        assert again.time == whole.time, options
        assert np.array_equal(again.positions, whole.positions), options
        assert np.array_equal(again.velocities, whole.velocities), options
        changed = nbody.Simulation.restart(tmp_path / "half.h5", backend="cpu", **options)
        changed.run(steps=10)
        changed.configure(threads=1)  # a settings change keeps the file's 0 too
        changed.run(steps=10)
        assert changed.softening == 0, options
        assert np.array_equal(changed.positions, whole.positions), options
    with pytest.raises(ValueError, match="softening 0"):
        nbody.Simulation.restart(tmp_path / "half.h5", backend="cpu", integrator="leapfrog")
    with pytest.raises(ValueError, match=r"^integrator='leapfrog': the softening is 0 \(hermite4's none\), which "
                                         r"leapfrog cannot take; give softening= too"):
        again.configure(integrator="leapfrog")
    with pytest.raises(ValueError, match="softening=0: .* only with integrator='hermite4'"):
        again.configure(integrator="leapfrog", softening=0)


def test_configure_switches_to_hermite4_and_back():
    # The remembered dt is the old integrator's: a switch takes the new one's (hermite4 has none) unless dt is named.
    sim = nbody.Simulation(scenario="plummer", n=128, seed=2, backend="cpu")
    sim.run(steps=3)
    sim.configure(integrator="hermite4")
    blocks = sim.run(steps=5)
    assert blocks == 5 and sim.integrator == "hermite4"
    sim.configure(integrator="leapfrog")
    assert sim.integrator == "leapfrog" and sim.dt == 0.01


def test_hermite4_goes_on_bit_for_bit_through_a_settings_change(tmp_path):
    # A settings change rebuilds the simulation on the state and clock it reached; hermite4's per-body state
    # (each body's time, step, acceleration and jerk) goes with it, so the same settings give the bits of a run
    # that never changed.
    settings = dict(scenario="plummer", n=128, seed=5, precision="fp64", integrator="hermite4", backend="cpu")
    whole = nbody.Simulation(**settings)
    whole.run(steps=30)
    changed = nbody.Simulation(**settings)
    changed.run(steps=15)
    changed.configure(threads=1)
    changed.run(steps=15)
    assert changed.time == whole.time
    assert np.array_equal(changed.positions, whole.positions)
    assert np.array_equal(changed.velocities, whole.velocities)
