# tests/python/test_hermite_steering.py - hermite4 from Python as a scientist drives it: settings changed between
# runs (the per-body state kept where it is still the system's, started again where it is not), runs to a time that
# is not a block time, its settings read back, and what a run that ends with an exception leaves in last_run.
import json
import math
import re
import warnings

import numpy as np
import pytest

import nbody

PLUMMER = dict(scenario="plummer", n=128, seed=11, precision="fp64", integrator="hermite4", backend="cpu")


def kepler_pair():
    # m = 0.7, 0.3 at pericentre of an a = 1, e = 0.6 orbit, in the centre-of-mass frame (G = 1).
    r, v = np.array([0.4, 0.0, 0.0]), np.array([0.0, 2.0, 0.0])
    return np.array([-0.3 * r, 0.7 * r]), np.array([-0.3 * v, 0.7 * v]), np.array([0.7, 0.3])


def same_state(a, b):
    return a.time == b.time and np.array_equal(a.positions, b.positions) and np.array_equal(a.velocities, b.velocities)


def test_from_arrays_keeps_a_softening_of_0_with_hermite4():
    pos, vel, m = kepler_pair()
    sim = nbody.Simulation.from_arrays(pos, vel, m, integrator="hermite4", softening=0.0, backend="cpu",
                                       precision="fp64")
    assert sim.softening == 0.0
    # The Kepler energy -G m1 m2 / (2a) = -0.105, exactly but for rounding without softening.
    assert sim.energy() == pytest.approx(-0.105, rel=1e-12)


def test_bodies_at_one_position_without_softening_are_refused():
    # Their force is infinite: refused before any step (which would make NaN of every body), naming them, in each
    # way a script can get there; nothing changes when it is refused.
    same = np.array([[0.5, 0, 0], [-0.5, 0, 0], [0.5, 0, 0]])
    with pytest.raises(ValueError, match=r"^arrays: bodies 0 and 2 are at the same position \(0.5, 0, 0\): with "
                                         r"softening=0 their force is infinite; give a softening, or move one of them$"):
        nbody.Simulation.from_arrays(same, np.zeros((3, 3)), np.ones(3), softening=0.0, integrator="hermite4",
                                     backend="cpu")
    sim = nbody.Simulation.from_arrays(same, np.zeros((3, 3)), np.ones(3), softening=0.1, integrator="hermite4",
                                       backend="cpu")
    with pytest.raises(ValueError, match="^the state at step 0: bodies 0 and 2 are at the same position"):
        sim.softening = 0.0
    assert sim.softening == 0.1
    apart = nbody.Simulation.from_arrays(same + [[0, 0, 0], [0, 0, 0], [0, 0, 1]], np.zeros((3, 3)), np.ones(3),
                                         softening=0.0, integrator="hermite4", backend="cpu")
    with pytest.raises(ValueError, match="^positions: bodies 0 and 2 are at the same position"):
        apart.positions = same
    assert apart.positions[2][2] == 1
    # Two test particles at one place pull on neither, but their pair is 0 x infinity (NaN) all the same: refused,
    # not said to be an infinite force.
    with pytest.raises(ValueError, match=r"^arrays: bodies 0 and 1 are at the same position \(0, 0, 0\): with "
                                         r"softening=0 their pair is 0/0, though neither has mass; give a softening, "
                                         r"or move one of them$"):
        nbody.Simulation.from_arrays([[0, 0, 0], [0, 0, 0], [1, 0, 0]], np.zeros((3, 3)), [0, 0, 1], softening=0.0,
                                     integrator="hermite4", backend="cpu")


def test_a_new_softening_starts_every_body_again():
    # The accelerations and jerks of each body's last step are of the old potential: continuing from them mixed two
    # potentials in the next correctors. The run goes on as a simulation made at that state with the new softening.
    changed = nbody.Simulation(**PLUMMER, softening=0.5)
    changed.run(t_end=0.25)
    fresh = nbody.Simulation.from_arrays(changed.positions, changed.velocities, changed.masses, time=changed.time,
                                         softening=1e-3, **{k: PLUMMER[k] for k in ("precision", "integrator",
                                                                                    "backend")})
    changed.softening = 1e-3
    assert any("hermite4 starts every body again" in n for n in changed.notices)
    # The energy error is measured from the new potential's energy.
    assert changed.diagnostics()["relative_energy_error"] == 0.0
    changed.run(steps=40)
    fresh.run(steps=40)
    assert same_state(changed, fresh)
    assert changed.diagnostics()["relative_energy_error"] < 1e-6


@pytest.mark.parametrize("precision", ["fp32", "fp64"])
def test_a_restart_with_a_new_softening_goes_on_as_the_change_in_place(tmp_path, precision):
    # hermite4 keeps positions and velocities in fp64 in either precision: a checkpoint restarted with another
    # softening starts every body again from that fp64 state (an fp32 file's particle groups hold it in fp32: it is
    # predicted again from the Hermite group). So it goes on to the bit as the same change made in place does (on
    # the CPU; a GPU's predictor rounds in its own way).
    settings = dict(PLUMMER, precision=precision, softening=1e-3)
    changed = nbody.Simulation(**settings)
    changed.run(t_end=0.25, checkpoint=tmp_path / "c.h5")
    changed.softening = 0.01
    restarted = nbody.Simulation.restart(tmp_path / "c.h5", softening=0.01, backend="cpu")  # a file has no backend
    assert same_state(changed, restarted)
    changed.run(steps=40)
    restarted.run(steps=40)
    assert same_state(changed, restarted)
    assert changed.last_run["hermite4"]["state_hash"] == restarted.last_run["hermite4"]["state_hash"]


def test_a_lower_dt_max_between_block_steps_goes_on(tmp_path):
    # Between the times every body shares (a run by block steps), some bodies are far into long steps: a lower dt max
    # cuts each to a step that ends after the block time, and the run goes on, as a restart with it does.
    sim = nbody.Simulation(**dict(PLUMMER, n=256))
    sim.run(steps=37)
    t = sim.time
    assert t * 16 != math.floor(t * 16), "the run is at a time every body shares: nothing to show"
    sim.checkpoint(tmp_path / "c.h5")
    sim.configure(dt_max=1 / 1024)
    sim.run(steps=5)
    assert sim.time > t
    again = nbody.Simulation.restart(tmp_path / "c.h5", dt_max=1 / 1024, backend="cpu")  # the bits of the same engine
    again.run(steps=5)
    assert same_state(sim, again)


def test_settings_changed_before_the_first_block_step_are_those_of_the_start():
    # No block step yet: the start steps are the new settings', as the constructor's would be.
    configured = nbody.Simulation(**PLUMMER, softening=0.01)
    configured.configure(eta_start=0.5, dt_max=0.125)
    made = nbody.Simulation(**PLUMMER, softening=0.01, eta_start=0.5, dt_max=0.125)
    configured.run(steps=30)
    made.run(steps=30)
    assert same_state(configured, made)
    # After a block step, a change of eta keeps each body's own step: not a new start.
    kept = nbody.Simulation(**PLUMMER, softening=0.01)
    kept.run(steps=10)
    kept.configure(eta=0.01)
    again = nbody.Simulation(**PLUMMER, softening=0.01)
    again.run(steps=10)
    again.configure(eta=0.01, threads=1)
    # (Not a new start: one from the same state with eta 0.01 chooses other first steps and ends elsewhere.)
    fresh = nbody.Simulation.from_arrays(kept.positions, kept.velocities, kept.masses, time=kept.time,
                                         softening=0.01, eta=0.01, **{k: PLUMMER[k] for k in ("precision", "integrator",
                                                                                              "backend")})
    kept.run(steps=10)
    again.run(steps=10)
    fresh.run(steps=10)
    assert same_state(kept, again)
    assert not same_state(kept, fresh)
    # "Before the first block step" is hermite4's own: after leapfrog steps, a switch and then a change still start
    # every body with the change's settings, as one configure() with both does.
    one = nbody.Simulation(scenario="plummer", n=128, seed=11, precision="fp64", backend="cpu", softening=0.01)
    two = nbody.Simulation(scenario="plummer", n=128, seed=11, precision="fp64", backend="cpu", softening=0.01)
    for sim in (one, two):
        sim.run(steps=4)
    one.configure(integrator="hermite4")
    one.configure(eta_start=0.5)
    two.configure(integrator="hermite4", eta_start=0.5)
    one.run(steps=20)
    two.run(steps=20)
    assert same_state(one, two)


def test_hermite4_settings_read_back_and_refused_where_they_mean_nothing():
    sim = nbody.Simulation(**PLUMMER)
    assert sim.dt is None and sim.eta == 0.02 and sim.eta_start == 0.01 and sim.dt_max == 0.0625
    sim.eta = 0.005
    assert sim.eta == 0.005
    assert "eta=0.005" in repr(sim)
    # Named as a script names them, not as the command line does.
    with pytest.raises(ValueError, match=r"^damping=0.9: hermite4 does not damp"):
        sim.configure(damping=0.9)
    with pytest.raises(ValueError, match=r"^dt=0.01: hermite4 chooses each body's step \(a power of two up to dt_max, "
                                         r"from eta\); give dt_max instead$"):
        sim.dt = 0.01
    with pytest.raises(ValueError, match=r"^eta_start: applies to integrator='hermite4' only \(leapfrog takes one dt "
                                         r"for every body\)$"):
        nbody.Simulation(scenario="plummer", n=64, backend="cpu", eta_start=0.1)
    # Bodies from arrays are checked as every other start is: nothing kept that the integrator would ignore.
    pos, vel, m = kepler_pair()
    for settings, refused in [(dict(integrator="leapfrog", eta=0.05), r"^eta: applies to integrator='hermite4' only"),
                              (dict(integrator="hermite4", damping=0.9), r"^damping=0.9: hermite4 does not damp"),
                              (dict(integrator="hermite4", kernel="reference"), r"^kernel='reference': hermite4 has "),
                              (dict(integrator="hermite4", dt=0.01), r"^dt=0.01: hermite4 chooses each body's step "
                                                                     r"\(a power of two up to dt_max, from eta\); give "
                                                                     r"dt_max instead$")]:
        with pytest.raises(ValueError, match=refused):
            nbody.Simulation.from_arrays(pos, vel, m, backend="cpu", **settings)
    assert sim.eta == 0.005 and sim.dt is None  # a refused change changes nothing
    # A dt_max off the powers of two: a notice names the longest step, once, in the keyword's spelling.
    odd = nbody.Simulation(**PLUMMER, dt_max=0.1)
    said = "dt_max=0.1: the longest step is 0.0625, the power of two at or below it (every step is a power of two)"
    assert odd.notices.count(said) == 1
    odd.configure(eta=0.01)
    odd.dt_max = 0.3
    assert odd.notices.count(said) == 1 and odd.notices[-1].startswith("dt_max=0.3: the longest step is 0.25,")
    leapfrog = nbody.Simulation(scenario="plummer", n=64, backend="cpu", integrator="euler-damped", damping=0.9)
    leapfrog.configure(integrator="hermite4")  # the damping named at the start is not this change's
    assert leapfrog.integrator == "hermite4"


def test_a_finish_goes_on_bit_for_bit_through_a_restart_and_settings_that_keep_the_steps(tmp_path):
    # After a run to 0.3 (no block time), the bodies keep the steps they held: a restart of its checkpoint, another
    # layout and a new eta_start (which chooses first steps only) go on as the simulation itself does, to the bit.
    straight = nbody.Simulation(**PLUMMER, softening=0.01)
    straight.run(t_end=0.3, checkpoint=tmp_path / "f.h5")
    straight.run(t_end=0.5)
    restarted = nbody.Simulation.restart(tmp_path / "f.h5", backend="cpu")
    assert restarted.time == 0.3
    restarted.run(t_end=0.5)
    others = [restarted]
    for change in (dict(numgpus=2), dict(eta_start=0.005)):
        changed = nbody.Simulation(**PLUMMER, softening=0.01)
        changed.run(t_end=0.3)
        changed.configure(**change)
        changed.run(t_end=0.5)
        others.append(changed)
    for other in others:
        assert other.steps == straight.steps
        assert np.array_equal(other.positions, straight.positions) and np.array_equal(other.velocities,
                                                                                       straight.velocities)


def test_exact_finish_time_false_takes_whole_block_steps():
    # REBOUND's keyword: no last step to t_end, so the pieces of a run split at times off the block times give the
    # bits of one run straight through; where it ended is a notice, not a warning.
    straight = nbody.Simulation(**PLUMMER, softening=0.01)
    straight.run(t_end=0.5)
    split = nbody.Simulation(**PLUMMER, softening=0.01)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        split.integrate(0.3, exact_finish_time=False)
        assert 0.3 - 1 / 16 < split.time < 0.3
        assert any(n.startswith("t_end=0.3 is not a block time: the run ended at ") for n in split.notices)
        split.integrate(0.45, exact_finish_time=np.False_)
        split.integrate(0.5, exact_finish_time=0)
    assert split.time == 0.5 and split.steps == straight.steps
    assert np.array_equal(split.positions, straight.positions)
    with pytest.raises(ValueError, match=r"^exact_finish_time=2: give True or False \(REBOUND's 1 or 0\)$"):
        split.integrate(1.0, exact_finish_time=2)
    # Fixed steps: the first step at or past t_end, as asked, with nothing said.
    fixed = nbody.Simulation(scenario="two-body", dt=0.03, backend="cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fixed.integrate(1.0, exact_finish_time=0)
    assert fixed.time == pytest.approx(1.02) and not fixed.notices


def test_a_time_on_the_grid_of_a_finishs_epoch_is_reached_by_block_steps():
    # After a finish at 0.3 (or 0.1), 0.6125 (0.2875) is the epoch plus a multiple of the longest step, though the time
    # less the epoch rounds off that multiple: the run reaches it by block steps, making no finish there, so a run
    # split there has the bits of one that is not.
    for first, middle, last in ((0.3, 0.6125, 1.3), (0.1, 0.2875, 1.1)):
        split = nbody.Simulation(**PLUMMER, softening=0.01)
        straight = nbody.Simulation(**PLUMMER, softening=0.01)
        for sim, ends in ((split, (first, middle, last)), (straight, (first, last))):
            for t_end in ends:
                sim.run(t_end=t_end)
                assert sim.time == t_end
        assert split.steps == straight.steps, (first, middle, last)
        assert np.array_equal(split.positions, straight.positions), (first, middle, last)


def test_a_run_to_a_time_off_the_block_times_ends_there():
    # Every body is brought to t_end by a last step of its own (as REBOUND's exact_finish_time=1 ends at t_end): the
    # state read there is each body's corrected state at t_end, not a prediction, and nothing is said.
    sim = nbody.Simulation(**PLUMMER, softening=0.01)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sim.run(t_end=0.3)
        assert sim.time == 0.3 and sim.last_run["notices"] == [] and not sim.notices
        assert abs(sim.diagnostics()["relative_energy_error"]) < 1e-6
        # Outputs at every tenth of a time unit, as a script takes them: each at its time.
        for k in range(4, 8):
            sim.integrate(k / 10)
            assert sim.time == k / 10
    ended = []
    # A run to a time that its callback stopped says nothing of block times.
    stopped = nbody.Simulation(**PLUMMER, softening=0.01)
    stopped.run(t_end=1.0, callback=lambda s: s.steps >= 3)
    assert stopped.time < 1.0 and not any("block time" in n for n in stopped.notices)
    assert sim.last_run["notices"] == ended  # the run's own, where sim.notices keeps every one
    with pytest.warns(RuntimeWarning, match="^t_end=0.25: the run is already at time") as caught:
        assert sim.integrate(0.25) == 0
    assert caught[0].filename == __file__  # through integrate too
    assert f"t_end=0.25: the run is already at time {sim.time!r}; no steps" in sim.notices
    assert sim.last_run["notices"] == [f"t_end=0.25: the run is already at time {sim.time!r}; no steps"]
    sim.run(steps=2)
    assert sim.last_run["notices"] == []
    # From a start at 0.3, 1.0 is no block time (0.3 plus a multiple of the longest step is): the run ends there, and
    # its block steps go on from there, so 1.0 plus a multiple of the longest step is a block time of every body.
    later = nbody.Simulation.from_arrays(sim.positions, sim.velocities, sim.masses, time=0.3, softening=0.01,
                                         integrator="hermite4", precision="fp64", backend="cpu")
    later.run(t_end=1.0)
    assert later.time == 1.0 and later.last_run["hermite4"]["block_steps"] == later.steps
    later.run(t_end=1.0 + 12 * 0.0625)
    assert later.time == 1.0 + 12 * 0.0625 and not any("block time" in n for n in later.notices)


def test_last_run_is_kept_when_a_run_ends_with_an_exception(tmp_path):
    sim = nbody.Simulation(**PLUMMER, softening=0.01)
    assert sim.last_run is None
    sim.run(steps=5)
    assert sim.last_run["steps"] == 5

    def fail(s):
        if s.steps >= 8:
            raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        sim.run(steps=20, callback=fail, checkpoint=tmp_path / "c.h5")
    assert sim.last_run["steps"] == 3 and sim.last_run["checkpoint"] == str(tmp_path / "c.h5")
    assert (tmp_path / "c.h5").exists()
    assert sim.last_run["failure"] is None and not math.isnan(sim.time)


def test_a_body_whose_forces_cancel_is_said_to_be_one_not_a_close_encounter():
    # Euler's collinear solution: the middle body, at rest at the centre, feels forces that cancel to rounding, which
    # the step criterion takes for ever faster changes. It starts (from its strongest pull's criterion: its own |a| / |a1| is
    # rounding over rounding), and the first step the criterion cuts below the floor stops the run, saying so (the
    # largest pull beside |a|), with advice that works, not a close encounter's (a softening does not help).
    w = math.sqrt(1.25)
    pos, vel = np.array([[-1.0, 0, 0], [0, 0, 0], [1, 0, 0]]), np.array([[0, -w, 0], [0, 0, 0], [0, w, 0]])
    for softening in (0.0, 0.1):
        sim = nbody.Simulation.from_arrays(pos, vel, np.ones(3), integrator="hermite4", softening=softening,
                                           backend="cpu")
        with pytest.raises(RuntimeError) as e:
            sim.run(t_end=10.0)
        said = str(e.value)
        assert re.search(r"body 1 needs a step below the floor.*; the forces on it cancel: \|a\| = \S+ against "
                         r"(1|0.985) from body [02] alone \(a body at a centre of symmetry", said), said
        assert "close encounter" not in said and "eta_start" not in said.split(";", 1)[1], said
        assert 0 < sim.time < 1
    # Moved off the centre, the same bodies run (the collinear solution is unstable: only for a while).
    nudged = pos + np.array([[0, 0, 0], [1e-9, 0, 0], [0, 0, 0]])
    sim = nbody.Simulation.from_arrays(nudged, vel, np.ones(3), integrator="hermite4", softening=0.0, backend="cpu")
    sim.run(t_end=1.0)
    assert sim.time == 1.0


def test_the_figure_eight_starts_with_its_middle_body_at_the_centre_and_comes_back_after_a_period():
    # Chenciner & Montgomery's orbit (Simo's values, 8 digits): at t = 0 the middle body is at the centre, where the
    # others' pulls cancel exactly (|a| = 0, its jerk not), so eta_start |a| / |a1| gives it no step at all; it starts
    # from its strongest pull's criterion, and after one period (6.32591398) every body is back within the values' accuracy.
    x, v = np.array([0.97000436, -0.24308753, 0.0]), np.array([-0.93240737, -0.86473146, 0.0])
    pos, vel = np.array([x, -x, [0.0, 0.0, 0.0]]), np.array([-v / 2, -v / 2, v])
    sim = nbody.Simulation.from_arrays(pos, vel, np.ones(3), integrator="hermite4", softening=0.0, backend="cpu")
    sim.run(t_end=6.32591398)
    assert np.abs(sim.positions - pos).max() < 1e-4 and np.abs(sim.velocities - vel).max() < 1e-4
    # A centre body whose neighbours need a step below the floor (two bodies 1e-13 from it, fast) stops the
    # start naming the criterion it was given, and the encounter.
    pos = np.array([[0.0, 0, 0], [1e-13, 0, 0], [-1e-13, 0, 0]])
    vel = np.array([[0.0, 0, 1], [0, 1, 0], [0, -1, 0]])
    with pytest.raises(RuntimeError, match=r"body 0 cannot start: its start step \(its forces cancel: \|a\| = \S+ "
                                           r"against \S+ from body [12] alone, so eta_start times that pull over "
                                           r"\|a1\|\) comes to \S+, below the floor "
                                           r".*nearest neighbour is body [12] at distance 1e-13 \(a close encounter"):
        nbody.Simulation.from_arrays(pos, vel, np.ones(3), integrator="hermite4", softening=0.0, backend="cpu")


def test_a_close_encounter_stop_goes_on_in_a_softened_potential():
    # The floor's advice, followed: after the unsoftened plunge stops, a softening from here starts every body again.
    # The start criterion (eta_start |a| / |a1| there) is short deep inside the softening, where the acceleration nearly
    # vanishes: the error says that, and names eta_start, not the step the plunge needed.
    pos, vel, m = np.array([[-0.5, 0, 0], [0.5, 0, 0]]), np.zeros((2, 3)), np.array([0.5, 0.5])
    sim = nbody.Simulation.from_arrays(pos, vel, m, integrator="hermite4", softening=0.0, backend="cpu")
    with pytest.raises(RuntimeError, match="needs a step below the floor"):
        sim.run(t_end=4.0)
    stopped = sim.positions, sim.velocities, sim.time
    with pytest.raises(RuntimeError, match=r"body [01] cannot start: its start step \(eta_start times the shorter of "
                                           r"\|a\| / \|a1\| and sqrt\(\|phi\|\) / \|a\|\) comes to .* below the floor "
                                           r".* an eta_start that makes the step at least the floor") as e:
        sim.configure(softening=0.01)
    # The criterion's own value: an eta_start that lifts it to twice the floor starts every body.
    wanted, floor = map(float, re.search(r"comes to (\S+), below the floor (\S+);", str(e.value)).groups())
    sim.configure(softening=0.01, eta_start=0.01 * 2 * floor / wanted)
    sim.run(t_end=4.0)
    assert sim.time == 4.0 and abs(sim.diagnostics()["relative_energy_error"]) < 1e-9
    # Unsoftened, the start is as short as the plunge needs: the advice is the encounter's.
    with pytest.raises(RuntimeError, match=r"cannot start: .*\(a close encounter, which hermite4 does not regularise: a "
                                           r"softening resolves it\)$"):
        nbody.Simulation.from_arrays(stopped[0], stopped[1], m, time=stopped[2], integrator="hermite4", softening=0.0,
                                     backend="cpu")
    # Two softened bodies at one position have no acceleration at all: no eta_start starts them, and the advice says so.
    with pytest.raises(RuntimeError, match=r"cannot start: .* comes to 0, below the floor .*\(its acceleration vanishes "
                                           r"exactly, as where bodies share one position .* move it off that point\)$"):
        nbody.Simulation.from_arrays(np.zeros((2, 3)), [[0, 0.5, 0], [0, -0.5, 0]], [1, 1], integrator="hermite4",
                                     softening=0.01, backend="cpu")


def test_a_time_too_far_is_named_as_a_keyword():
    sim = nbody.Simulation(scenario="plummer", n=32, backend="cpu")
    with pytest.raises(ValueError, match=r"^t_end=1e\+300: more than "):
        sim.run(t_end=1e300)
    with pytest.raises(ValueError, match=r"^t_end=nan: must be a finite time$"):
        sim.run(t_end=float("nan"))
    for wrong in (True, [1.0]):
        with pytest.raises(TypeError, match=r"^t_end: expected a time, got "):
            sim.run(t_end=wrong)
    with pytest.raises(ValueError, match=r"^t_end='abc': not a time; give a number in the simulation's units, or text"):
        sim.run(t_end="abc")  # text is a time with a unit ("10Myr") or nothing
    assert sim.steps == 0


def test_a_restart_in_python_names_python_keywords(tmp_path):
    sim = nbody.Simulation(**PLUMMER)
    sim.run(steps=3)
    sim.checkpoint(tmp_path / "h.h5")
    again = nbody.Simulation.restart(tmp_path / "h.h5", backend="cpu", integrator="leapfrog")
    assert any(n.endswith("at leapfrog's dt 0.01 (dt chooses another)") for n in again.notices), again.notices


def test_last_run_holds_a_failure_with_nothing_saved():
    # Two bodies falling straight at each other, no softening: hermite4's step floor stops the run, and with no
    # checkpoint asked for nothing is saved; last_run says what happened.
    pos, vel, m = np.array([[-0.5, 0, 0], [0.5, 0, 0]]), np.zeros((2, 3)), np.array([0.5, 0.5])
    sim = nbody.Simulation.from_arrays(pos, vel, m, integrator="hermite4", softening=0.0, backend="cpu")
    with pytest.raises(RuntimeError, match="below the floor"):
        sim.run(t_end=4.0)
    assert "below the floor" in sim.last_run["failure"]
    assert sim.last_run["saved_step"] is None and sim.last_run["save_failure"] == "no checkpoint was given"
    assert sim.last_run["steps"] > 0
    # The block step that gave the step below the floor is whole and counted: the steps, the time and the state
    # agree. A change that keeps the steps (the precision) is made, but the step below the floor is not taken: nothing
    # moves.
    assert sim.steps == sim.last_run["steps"] == sim.last_run["hermite4"]["block_steps"]
    assert sim.last_run["hermite4"]["interactions_per_second"] > 0
    steps, time, x = sim.steps, sim.time, sim.positions.copy()
    sim.configure(precision="fp32")
    with pytest.raises(RuntimeError, match=r"holds a step of .* below the floor .* continue from an earlier checkpoint, "
                                           r"or give another eta, eta_start, dt_max or softening"):
        sim.step(1)
    assert sim.steps == steps and sim.time == time and np.array_equal(sim.positions, x)
    # Another eta starts every body again rather than keep the steps the run refused: in a collision the start meets
    # the floor too, and the simulation stays as it was.
    with pytest.raises(RuntimeError, match=r"cannot start: its start step .* below the floor"):
        sim.configure(eta=0.05)
    assert sim.steps == steps and sim.time == time and np.array_equal(sim.positions, x)


@pytest.mark.parametrize("how", ["restart", "configure"])
def test_a_run_stopped_at_the_floor_by_a_bad_eta_goes_on_under_a_good_one(tmp_path, how):
    # An eta far too small stops a run at the floor at once, and its checkpoint (the only one, replaced in place, as
    # a job script does) holds steps below it. The right eta goes on from there: every body starts again, said so.
    sim = nbody.Simulation(**PLUMMER)
    sim.run(t_end=0.25, checkpoint=tmp_path / "c.h5")
    bad = nbody.Simulation.restart(tmp_path / "c.h5", backend="cpu", eta=1e-30)
    with pytest.raises(RuntimeError, match="below the floor"):
        bad.run(t_end=0.5, checkpoint=tmp_path / "c.h5")
    assert bad.last_run["saved_step"] == bad.steps > sim.steps
    if how == "restart":
        good = nbody.Simulation.restart(tmp_path / "c.h5", backend="cpu", eta=0.02)
    else:
        good = bad
        good.configure(eta=0.02)
    said = [n for n in good.notices if n.startswith("hermite4 starts every body again")]
    assert len(said) == 1 and "stopped at the floor" in said[0] and "other step settings do not keep" in said[0], \
        good.notices
    good.run(t_end=0.5)
    assert good.time == pytest.approx(0.5, abs=0.07) and good.diagnostics()["relative_energy_error"] < 1e-5


def test_a_run_that_meets_the_floor_counts_its_steps_with_a_checkpoint_too(tmp_path):
    pos, vel, m = np.array([[-0.5, 0, 0], [0.5, 0, 0]]), np.zeros((2, 3)), np.array([0.5, 0.5])
    sim = nbody.Simulation.from_arrays(pos, vel, m, integrator="hermite4", softening=0.0, backend="cpu")
    with pytest.raises(RuntimeError, match="below the floor"):
        sim.run(steps=100000, checkpoint=tmp_path / "c.h5")
    assert sim.steps == sim.last_run["steps"] == sim.last_run["hermite4"]["block_steps"] > 0


def test_last_run_has_hermite4s_figures_as_the_command_line_has_them(cli, tmp_path):
    sim = nbody.Simulation(**PLUMMER)
    sim.run(t_end=0.5)
    h = sim.last_run["hermite4"]
    cli("--run", "--scenario", "plummer", "--bodies", 128, "--seed", 11, "--precision", "fp64", "--integrator",
        "hermite4", "--t-end", 0.5, "--json", tmp_path / "r.json")
    with open(tmp_path / "r.json") as f:
        j = json.load(f)["hermite4"]
    for key in ("block_steps", "force_evaluations", "step_level_histogram", "longest_step", "eta", "eta_start",
                "dt_max", "state_hash"):
        assert h[key] == j[key], key
    assert h["block_steps"] == sim.steps > 0
    assert sum(h["step_level_histogram"]) == h["force_evaluations"]
    # The command line's run includes the start's N x N pairs; run() counts from its first block step.
    assert h["interactions"] == h["force_evaluations"] * 128 == j["interactions"] - 128 * 128
    sim.run(t_end=1.0)
    assert 0 < sim.last_run["hermite4"]["block_steps"] == sim.steps - h["block_steps"]
    leapfrog = nbody.Simulation(n=16, backend="cpu")
    leapfrog.run(steps=1)
    assert leapfrog.last_run["hermite4"] is None


def test_a_failed_run_keeps_its_last_sample(tmp_path):
    # The sample taken before the block steps that met the floor is the series' last row, as a run that did not fail
    # writes it: the row nearest the failure.
    pos, vel, m = np.array([[-0.5, 0, 0], [0.5, 0, 0]]), np.zeros((2, 3)), np.array([0.5, 0.5])
    sim = nbody.Simulation.from_arrays(pos, vel, m, integrator="hermite4", softening=0.0, backend="cpu")
    with pytest.raises(RuntimeError, match="below the floor"):
        sim.run(t_end=2.0, diagnostics=tmp_path / "f.csv", diagnostics_dt=0.0625)
    times = [float(line.split(",")[1]) for line in (tmp_path / "f.csv").read_text().splitlines()[1:]]
    assert times[-1] == 1.0625 and sim.time > 1.0625  # the free fall ends at 1.1107
    assert sim.last_run["diagnostics_samples"] == len(times) == 18


def test_an_eta_below_what_the_rounding_allows_is_said_in_pythons_words():
    said = lambda s: [n for n in s.notices if n.startswith("eta=")]
    sim = nbody.Simulation(scenario="plummer", n=64, integrator="hermite4", precision="fp32", backend="cpu")
    sim.configure(eta=3e-4)
    assert len(said(sim)) == 1 and said(sim)[0].startswith(
        "eta=0.0003: below about 0.001 with precision='fp32', the forces' rounding") and \
        said(sim)[0].endswith("(precision='fp64' allows one down to about 1e-7)"), sim.notices
    fine = nbody.Simulation(scenario="plummer", n=64, integrator="hermite4", precision="fp64", eta=3e-4,
                            backend="cpu")
    assert said(fine) == [], fine.notices
    made = nbody.Simulation(scenario="plummer", n=64, integrator="hermite4", precision="fp64", eta=1e-8, backend="cpu")
    assert len(said(made)) == 1 and "below about 1e-07 with precision='fp64'" in said(made)[0], made.notices


def test_the_two_body_scenario_is_keplers_orbit_with_hermite4():
    # A softening makes the orbit precess where it passes close: hermite4, which needs none, runs the Kepler binary
    # unsoftened unless told otherwise (REBOUND's default too); the fixed-step integrators keep the default they need.
    kepler = nbody.Simulation(scenario="two-body", eccentricity=0.9, integrator="hermite4", backend="cpu")
    assert kepler.softening == 0.0
    assert nbody.Simulation(scenario="two-body", eccentricity=0.9, backend="cpu").softening == 0.01
    assert nbody.Simulation(scenario="two-body", integrator="hermite4", softening=0.05, backend="cpu").softening == 0.05
    # The pericentre stays where it was: after 10 periods of Kepler's orbit (2 pi a^1.5 / sqrt(G M), here M = 1 and
    # a = 1, the scenario's), the bodies are back at apocentre on the x axis.
    x0 = kepler.positions.copy()
    kepler.run(t_end=10 * 2 * math.pi)
    drift = np.arctan2(kepler.positions[0, 1] - kepler.positions[1, 1], kepler.positions[0, 0] - kepler.positions[1, 0])
    start = np.arctan2(x0[0, 1] - x0[1, 1], x0[0, 0] - x0[1, 0])
    assert abs(np.angle(np.exp(1j * (drift - start)))) < 1e-3, drift - start


def test_time_steps_are_each_bodys_own_as_its_checkpoint_and_snapshots_store_them(tmp_path):
    h5py = pytest.importorskip("h5py")
    sim = nbody.Simulation(**PLUMMER)
    start = sim.time_steps  # the start criterion's, before any block step
    sim.run(t_end=0.5)
    steps = sim.time_steps
    assert steps.shape == (128,) and steps.dtype == np.float64
    for s in (start, steps):
        mantissa, _ = np.frexp(s)
        assert np.all(mantissa == 0.5) and s.max() <= 1 / 16  # powers of two, at most dt_max's
    assert len(np.unique(steps)) >= 3  # a Plummer sphere's bodies are at several levels
    assert not np.array_equal(start, steps)
    sim.checkpoint(tmp_path / "c.h5")
    with h5py.File(tmp_path / "c.h5", "r") as f:
        assert np.array_equal(f["Hermite/Steps"][:], steps)
    # A snapshot holds them too, as GADGET's TimeStep of each family, exact in fp32, with the integrator they are of.
    sim.save(tmp_path / "s.h5")
    sim.run(steps=1, snapshots=tmp_path / "series", snapshot_precision="fp32")
    for name, expected in (("s.h5", steps), ("series_%08d.hdf5" % sim.steps, sim.time_steps)):
        with h5py.File(tmp_path / name, "r") as f:
            assert f["Header"].attrs["Integrator"] == b"hermite4"
            stored = f["PartType4/TimeStep"]
            assert np.array_equal(stored[:], expected[f["PartType4/ParticleIDs"][:]]), name
    steps[0] = 1.0  # a copy of the simulation's
    assert sim.time_steps[0] != 1.0
    leapfrog = nbody.Simulation(n=16, backend="cpu", dt=0.01)
    assert np.array_equal(leapfrog.time_steps, np.full(16, 0.01))
    leapfrog.save(tmp_path / "l.h5")  # one step for every body: no TimeStep
    with h5py.File(tmp_path / "l.h5", "r") as f:
        assert f["Header"].attrs["Integrator"] == b"leapfrog" and "TimeStep" not in f["PartType4"]
