# tests/python/test_run_outputs.py - sim.run is the command line's run loop (driver::run): the same
# diagnostics series as `nbody --run --diagnostics`, the same checkpoints and snapshots, written
# whole even when Ctrl-C or the callback ends the run; a callback may read, not step or change.
import csv
import os
import re
import signal
import shutil
import subprocess
import sys
import threading
import time
import warnings

import numpy as np
import pytest

import nbody


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_the_diagnostics_series_is_the_command_lines(cli, tmp_path):
    cli("--run", "--bodies", 256, "--precision", "fp64", "--steps", 250, "--diagnostics-every", 100,
        "--diagnostics", tmp_path / "cli.csv")
    sim = nbody.Simulation(n=256, backend="cpu")
    assert sim.run(steps=250, diagnostics=tmp_path / "py.csv", diagnostics_every=100) == 250
    assert sim.last_run["diagnostics_samples"] == 4
    assert not (tmp_path / "py.csv.partial").exists()
    want, got = rows(tmp_path / "cli.csv"), rows(tmp_path / "py.csv")
    assert [r["step"] for r in got] == ["0", "100", "200", "250"]
    for w, g in zip(want, got):
        w.pop("wall_seconds"), g.pop("wall_seconds")
        assert w == g  # every column but the wall time, to the last digit
    # The last row is the state the script reads.
    assert float(got[-1]["total"]) == sim.diagnostics()["total"]


def test_a_scripts_next_run_continues_its_series(cli, tmp_path):
    # Two runs into one file read as one run of their steps together: the command line's rows to the last digit. The
    # second run's start, step 150, is off the grid of the rows it continues: not a row of the series, and the first
    # run's end row gives way to the rows after it.
    cli("--run", "--bodies", 256, "--precision", "fp64", "--steps", 300, "--diagnostics-every", 100,
        "--diagnostics", tmp_path / "cli.csv")
    sim = nbody.Simulation(n=256, backend="cpu")
    sim.run(steps=150, diagnostics=tmp_path / "py.csv", diagnostics_every=100)
    sim.run(steps=150, diagnostics=tmp_path / "py.csv", diagnostics_every=100)
    assert sim.last_run["diagnostics_samples"] == 2  # this run's: 200 and 300
    assert any(n.startswith("diagnostics=") and ": continues " in n and "its 2 rows before step 150 kept" in n
               for n in sim.last_run["notices"]), sim.last_run["notices"]
    assert not any("steps apart" in n for n in sim.last_run["notices"]), sim.last_run["notices"]
    want, got = rows(tmp_path / "cli.csv"), rows(tmp_path / "py.csv")
    assert [r["step"] for r in got] == ["0", "100", "200", "300"]
    for w, g in zip(want, got):
        w.pop("wall_seconds"), g.pop("wall_seconds")
        assert w == g
    # A next run at another step cadence is said, in the script's words.
    sim.run(steps=100, diagnostics=tmp_path / "py.csv", diagnostics_every=50)
    assert any("its 3 rows before step 300 kept, 1 row from step 300 on replaced; they are 100 steps apart, this "
               "run's 50: diagnostics_every=100 (or the diagnostics_dt they were taken at) keeps the series even" in n
               for n in sim.last_run["notices"]), sim.last_run["notices"]


@pytest.mark.skipif(not nbody.checkpoints_built(), reason="this nbody was built without HDF5")
@pytest.mark.parametrize("precision", ["fp32", "fp64"])
def test_a_moving_clusters_series_goes_on_through_runs_and_restarts(tmp_path, precision):
    # The energy error of a cluster that drifts (bulk kinetic energy 200 times its own) is over its own energy, and a
    # series of it is still taken up as the run's: by the script's next run, and by a restart from its checkpoint,
    # as one of a cluster at rest is (no "another start energy", nothing begun again).
    rest = nbody.Simulation(n=256, backend="cpu", precision=precision)
    x, v, m = np.array(rest.positions), np.array(rest.velocities), np.array(rest.masses)
    sim = nbody.Simulation.from_arrays(x, v + [10.0, 0.0, 0.0], m, backend="cpu", precision=precision)
    series = tmp_path / "d.csv"
    sim.run(steps=20, diagnostics=series, diagnostics_every=10, checkpoint=tmp_path / "c.h5")
    sim.run(steps=20, diagnostics=series, diagnostics_every=10)
    assert [r["step"] for r in rows(series)] == ["0", "10", "20", "30", "40"]
    assert any(": continues " in n and "its 2 rows before step 20 kept" in n for n in sim.last_run["notices"]), \
        sim.last_run["notices"]
    again = nbody.Simulation.restart(tmp_path / "c.h5", backend="cpu", precision=precision)
    again.run(steps=20, diagnostics=series, diagnostics_every=10)
    assert not any("start energy" in n or "begins again" in n for n in again.last_run["notices"]), \
        again.last_run["notices"]
    assert [r["step"] for r in rows(series)] == ["0", "10", "20", "30", "40"]
    assert any(": continues " in n and "its 2 rows before step 20 kept" in n for n in again.last_run["notices"]), \
        again.last_run["notices"]
    # The error is the cluster's own, as at rest: the same steps give it to a few digits.
    rest.run(steps=40)
    assert abs(again.diagnostics()["relative_energy_error"] / rest.diagnostics()["relative_energy_error"] - 1) < 0.05


def test_a_new_softening_begins_the_series_again_and_says_so(tmp_path):
    # Another softening is another potential: the energy error is measured from the state it starts at, so the next
    # run's series begins again there, as a restart's with another --softening does, in the command line's words and
    # as a RuntimeWarning (the rows before are kept under a name of their own). Runs after continue the new series,
    # the first of them also when the run before took no step.
    series = tmp_path / "py.csv"
    begins_again = r"py\.csv': replaced when the run ends: this run measures its energy error from a new start " \
                   r"energy, so its series begins again at step {}"
    sim = nbody.Simulation(n=256, backend="cpu")
    sim.run(steps=150, diagnostics=series, diagnostics_every=100)
    before = series.read_bytes()
    sim.softening = 0.05
    with pytest.warns(RuntimeWarning, match=begins_again.format(150)):
        sim.run(steps=0, diagnostics=series, diagnostics_every=100)
    assert re.search(begins_again.format(150) + r"; the earlier series is kept as .*py\.earlier-1\.csv$",
                     sim.last_run["diagnostics_replaced"])
    assert sim.last_run["warnings"] == [sim.last_run["diagnostics_replaced"]]  # as docs/python.md says
    assert [r["step"] for r in rows(series)] == ["150"]
    assert (tmp_path / "py.earlier-1.csv").read_bytes() == before  # the rows before the new softening: not lost
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a continuation is no warning
        sim.run(steps=100, diagnostics=series, diagnostics_every=100)
        assert sim.last_run["diagnostics_replaced"] is None
        sim.run(steps=50, diagnostics=series, diagnostics_every=100)
    assert any(": continues " in n and "its 2 rows before step 250 kept" in n for n in sim.last_run["notices"]), \
        sim.last_run["notices"]
    assert [r["step"] for r in rows(series)] == ["150", "200", "300"]  # 250, off the grid, is no row
    # A checkpoint continued with another softening: the same.
    sim.checkpoint(tmp_path / "c.h5")
    again = nbody.Simulation.restart(tmp_path / "c.h5", softening=0.02)
    before = series.read_bytes()
    with pytest.warns(RuntimeWarning, match=begins_again.format(300)):
        again.run(steps=10, diagnostics=series, diagnostics_every=100)
    assert [r["step"] for r in rows(series)] == ["300", "310"]
    assert (tmp_path / "py.earlier-2.csv").read_bytes() == before
    # Another run's series (another seed's), taken up by a run of this one: replaced, and said so the same way.
    other = nbody.Simulation(n=256, backend="cpu", seed=7)
    other.run(steps=10)
    not_this_runs = r"py\.csv is not this run's series \(.*\): replaced when the run ends$"
    with pytest.warns(RuntimeWarning, match=not_this_runs):
        other.run(steps=10, diagnostics=series, diagnostics_every=100)
    assert re.search(not_this_runs, other.last_run["diagnostics_replaced"])
    assert [r["step"] for r in rows(series)] == ["10", "20"]


@pytest.mark.skipif(not nbody.checkpoints_built(), reason="this nbody was built without HDF5")
def test_another_runs_checkpoint_replaced_is_a_warning(tmp_path):
    # A checkpoint path that holds another run's checkpoint (another seed, another body count): replaced when the run
    # ends, said as a RuntimeWarning and in last_run; the same run's, written again, is no warning.
    nbody.Simulation(n=256, backend="cpu", seed=7).run(steps=20, checkpoint=tmp_path / "c.h5")
    sim = nbody.Simulation(n=256, backend="cpu")
    said = (r"^checkpoint='.*c\.h5' holds another run's state, at step 20: plummer \(seed 7\), 256 bodies, where this "
            r"run is plummer \(seed 42\), 256 bodies: this run replaces it when it ends \(one stopped before, by a "
            r"signal or a failure, keeps it\): name another file to keep it$")
    with pytest.warns(RuntimeWarning, match=said) as caught:
        sim.run(steps=10, checkpoint=tmp_path / "c.h5")
    assert len(caught) == 1 and caught[0].filename == __file__  # once, at the script's line
    assert re.search(said, sim.last_run["checkpoint_replaced"]) and sim.last_run["warnings"] == [str(caught[0].message)]
    # A filter that makes it an error stops the run before it replaces the file, which stays the other run's.
    other = nbody.Simulation(n=256, backend="cpu", seed=9)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(RuntimeWarning, match="holds another run's state"):
            other.run(steps=10, checkpoint=tmp_path / "c.h5")
    kept = nbody.Simulation.restart(tmp_path / "c.h5", backend="cpu")
    assert kept.steps == 10 and np.array_equal(kept.positions, sim.positions)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sim.run(steps=10, checkpoint=tmp_path / "c.h5")
        assert sim.last_run["checkpoint_replaced"] is None
    assert nbody.Simulation.restart(tmp_path / "c.h5", backend="cpu").steps == 20


def test_a_checkpoint_that_a_run_writes_now_is_no_one_elses(tmp_path):
    # Two simulations of a script writing one checkpoint would replace each other's state at each write, and a restart
    # would go on from whichever wrote last: while a run writes it, another run's or a save's is refused, and nothing
    # of theirs is written.
    path = tmp_path / "c.h5"
    other = nbody.Simulation(n=64, backend="cpu", seed=7)
    refused = []

    def callback(s):
        for attempt in (lambda: other.checkpoint(path), lambda: other.run(steps=1, checkpoint=path),
                        lambda: other.save(path), lambda: other.run(steps=1, save=path), lambda: s.save(path)):
            with pytest.raises(ValueError) as e:
                attempt()
            refused.append(str(e.value))
        return True

    sim = nbody.Simulation(n=256, backend="cpu")
    assert sim.run(steps=10, checkpoint=path, callback=callback, every=2) == 2
    held = (r": is being written by a run of this process now \(the run a callback is called from, or another "
            r"simulation's, which holds .*\.c\.h5\.lock\)")
    assert re.match(r"^Simulation\.checkpoint\('.*c\.h5'\)" + held, refused[0]), refused
    assert re.match(r"^checkpoint='.*c\.h5'" + held, refused[1]), refused
    assert re.match(r"^Simulation\.save\('.*c\.h5'\)" + held, refused[2]), refused
    assert re.match(r"^save='.*c\.h5'" + held, refused[3]), refused
    # Nor does the run's own callback save a snapshot over the checkpoint it needs to go on from.
    assert re.match(r"^Simulation\.save\('.*c\.h5'\)" + held, refused[4]), refused
    assert other.steps == 0
    assert nbody.Simulation.restart(path, backend="cpu").steps == 2 and os.listdir(tmp_path) == ["c.h5"]
    other.checkpoint(path)  # once that run has ended, the path is free
    assert len(nbody.Simulation.restart(path, backend="cpu").positions) == 64
    # The run's own callback may save to the run's own checkpoint: that run holds its lock.
    own, steps_saved = tmp_path / "own.h5", []

    def save_own(s):
        s.checkpoint(own)
        steps_saved.append(nbody.Simulation.restart(own, backend="cpu").steps)

    sim.run(steps=4, checkpoint=own, callback=save_own, every=2)
    assert steps_saved == [4, 6] and nbody.Simulation.restart(own, backend="cpu").steps == 6
    # A callback may run another simulation, whose own callback checkpoints the outer run's file: as that run.
    inner, nested_saves = nbody.Simulation(n=64, backend="cpu", seed=3), []

    def inner_callback(s):
        sim.checkpoint(own)
        nested_saves.append(nbody.Simulation.restart(own, backend="cpu").steps)
        return True

    def outer_callback(s):
        inner.run(steps=1, checkpoint=tmp_path / "inner.h5", every=1, callback=inner_callback)
        return False

    sim.run(steps=2, checkpoint=own, callback=outer_callback, every=2)
    assert nested_saves == [8], nested_saves


def test_a_save_is_refused_over_the_checkpoint_another_process_runs_to(cli, tmp_path):
    # A notebook saving to the name a batch job checkpoints to would replace that job's state: refused while the job
    # runs, naming it, with nothing written; once it has ended, the save goes ahead.
    cli("--version")  # skips where the command line is not built
    path = tmp_path / "c.h5"
    job = subprocess.Popen([os.environ["NBODY_EXECUTABLE"], "--backend", "cpu", "--quiet", "--run", "--bodies", "2048",
                            "--steps", "100000000", "--checkpoint", str(path)], stderr=subprocess.PIPE, text=True)
    try:
        lock = tmp_path / ".c.h5.lock"
        for _ in range(400):  # the lock is taken once its file names the holder (written just after it)
            if lock.exists() and lock.stat().st_size:
                break
            time.sleep(0.05)
        sim = nbody.Simulation(n=64, backend="cpu")
        for save in (lambda: sim.save(path), lambda: sim.checkpoint(path)):
            with pytest.raises(ValueError, match=r": is being written by another run now \(process %d on " % job.pid):
                save()
        assert not path.exists()
    finally:
        job.send_signal(signal.SIGINT)
        assert job.wait(timeout=30) == 130, job.stderr.read()
    assert len(nbody.Simulation.restart(path, backend="cpu").positions) == 2048
    sim.checkpoint(path)
    assert len(nbody.Simulation.restart(path, backend="cpu").positions) == 64


def test_another_simulations_periodic_checkpoint_does_not_replace_a_running_checkpoint(tmp_path):
    # Two runs of a script on two threads, one's checkpoint named as a file of the other's periodic checkpoints. Taken
    # after the series' run had started, it is refused at the second run's start (the series' lock), nothing written;
    # taken before the series' run, that run's periodic write to it is refused, said and counted. Neither run's file is
    # replaced by the other's.
    def run_first(first, outcome, taken, first_done):
        try:
            with warnings.catch_warnings(record=True) as said:
                warnings.simplefilter("always")
                first.run(steps=8, checkpoint=tmp_path / "c.h5", checkpoint_every=8, every=4,
                          callback=lambda s: not taken.wait(30))
            outcome["said"] = [str(w.message) for w in said]
        except Exception as e:  # noqa: BLE001 (reported below)
            outcome["error"] = repr(e)
        finally:
            first_done.set()

    series = tmp_path / "c_00000008.h5"
    # The series' run first: the other run is refused at its start.
    first, second = nbody.Simulation(n=64, backend="cpu"), nbody.Simulation(n=128, backend="cpu")
    taken, first_done, outcome = threading.Event(), threading.Event(), {}
    thread = threading.Thread(target=run_first, args=(first, outcome, taken, first_done))
    thread.start()
    time.sleep(0.5)  # the first run has started, its outputs checked and locked
    try:
        with pytest.raises(ValueError, match=r"is being written by a run of this process now \(the run a callback is "
                                             r"called from, or another simulation's, which holds .*\.c_########\.h5\.lock\)"):
            second.run(steps=10, checkpoint=series)
    finally:
        taken.set()
        thread.join(60)
    assert "error" not in outcome, outcome
    assert first.last_run["checkpoints_written"] == 1, first.last_run
    assert len(nbody.Simulation.restart(series, backend="cpu").positions) == 64
    series.unlink()
    (tmp_path / "c.h5").unlink()
    # The other run first: the series' run is refused at its start, naming the file and the run that writes it.
    first, second = nbody.Simulation(n=64, backend="cpu"), nbody.Simulation(n=128, backend="cpu")
    taken, done = threading.Event(), threading.Event()

    def second_waits(s):
        taken.set()
        done.wait(60)
        return True

    second_thread = threading.Thread(target=lambda: second.run(steps=100000, checkpoint=series, every=1,
                                                               callback=second_waits))
    second_thread.start()
    try:
        assert taken.wait(30)  # the second run holds its checkpoint's lock
        with pytest.raises(ValueError, match=r"^checkpoint_every=8 writes .*c_00000008\.h5.*is being written by a run "
                                             r"of this process now"):
            first.run(steps=8, checkpoint=tmp_path / "c.h5", checkpoint_every=8)
    finally:
        done.set()
        second_thread.join(60)
    assert not (tmp_path / "c.h5").exists()
    assert len(nbody.Simulation.restart(series, backend="cpu").positions) == 128


def test_a_series_by_time_is_the_command_lines(cli, tmp_path):
    # hermite4 sampled at every multiple of 1/8 (a multiple of the longest step, 1/16): every body at each, the
    # command line's rows to the last digit, and the run's bits as without samples.
    cli("--run", "--integrator", "hermite4", "--bodies", 256, "--precision", "fp64", "--t-end", 1, "--diagnostics-dt",
        0.125, "--diagnostics", tmp_path / "cli.csv")
    sim = nbody.Simulation(n=256, integrator="hermite4", precision="fp64", backend="cpu")
    sim.run(t_end=1, diagnostics=tmp_path / "py.csv", diagnostics_dt=0.125)
    want, got = rows(tmp_path / "cli.csv"), rows(tmp_path / "py.csv")
    assert [float(r["time"]) for r in got] == [k / 8 for k in range(9)] and len(want) == len(got)
    for w, g in zip(want, got):
        w.pop("wall_seconds"), g.pop("wall_seconds")
        assert w == g
    plain = nbody.Simulation(n=256, integrator="hermite4", precision="fp64", backend="cpu")
    plain.run(t_end=1)
    assert plain.last_run["hermite4"]["state_hash"] == sim.last_run["hermite4"]["state_hash"]
    with pytest.raises(ValueError, match=r"^diagnostics_dt=0.1 and diagnostics_every=3 both given; give one of them$"):
        sim.run(steps=1, diagnostics=tmp_path / "x.csv", diagnostics_dt=0.1, diagnostics_every=3)
    with pytest.raises(ValueError, match=r"^diagnostics_dt=0: must be a time in \(0, 1e\+27\]$"):
        sim.run(steps=1, diagnostics=tmp_path / "x.csv", diagnostics_dt=0)


PLUNGE = dict(scenario="two-body", eccentricity=0.999999, softening=0.0, integrator="hermite4", backend="cpu")


def test_a_run_that_does_not_resolve_its_orbits_warns_as_it_happens(tmp_path):
    # An unsoftened plunge that eta = 0.02 does not resolve: its first sample past the bound (block step 320) warns
    # at once, and the end again, as Python warnings naming Python's settings; last_run keeps them.
    sim = nbody.Simulation(**PLUNGE)
    with pytest.warns(RuntimeWarning) as caught:
        sim.run(t_end=10, diagnostics=tmp_path / "d.csv", diagnostics_every=20)
    said = [str(w.message) for w in caught]
    assert len(said) == 2
    assert re.match(r"at step \d+ \(time 3.14\d*\), the energy changed by 0.01\d* of its start", said[0])
    assert "give a smaller eta (this run: 0.02) or a softening (this run: none" in said[1]
    assert all(w.filename == __file__ for w in caught)  # the script's line, not nbody's
    assert sim.last_run["warnings"] == said and sim.last_run["energy_warning"] == said[1]
    assert sim.time == 10 and not sim.last_run["stopped_by_callback"] and not sim.last_run["interrupted"]
    # A script that makes warnings errors stops the run there, its outputs written, and gets the warning raised.
    again = nbody.Simulation(**PLUNGE)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(RuntimeWarning, match="^at step "):
            again.run(t_end=10, diagnostics=tmp_path / "e.csv", diagnostics_every=20, callback=lambda s: None)
    warned_at = int(re.match(r"at step (\d+)", said[0]).group(1))
    assert warned_at <= again.steps < sim.steps and again.last_run["steps"] == again.steps
    # The warning stopped it, not the callback nor a signal.
    assert not again.last_run["stopped_by_callback"] and not again.last_run["interrupted"]
    assert warned_at <= int(rows(tmp_path / "e.csv")[-1]["step"]) <= again.steps
    # A run stopped after that warning and before its end's energy pass (a callback that raised stops it as a signal
    # does) reports the warning it gave, not none.
    class Stop(Exception):
        pass

    def stop_after_the_warning(s):
        if s.steps >= warned_at + 40:
            raise Stop()
    stopped = nbody.Simulation(**PLUNGE)
    with pytest.warns(RuntimeWarning, match="^at step "), pytest.raises(Stop):
        stopped.run(t_end=10, diagnostics=tmp_path / "s.csv", diagnostics_every=20, callback=stop_after_the_warning)
    assert stopped.last_run["energy_warning"] == said[0], stopped.last_run
    # A resolved run warns of nothing.
    fine = nbody.Simulation("two-body", eccentricity=0.5, backend="cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fine.run(steps=500, diagnostics=tmp_path / "f.csv")
    assert fine.last_run["warnings"] == [] and fine.last_run["energy_warning"] is None


@pytest.mark.skipif(not nbody.checkpoints_built(), reason="this nbody was built without HDF5")
def test_checkpoints_and_snapshots_of_a_run_restart_where_they_were_taken(tmp_path):
    sim = nbody.Simulation(n=128, backend="cpu")
    sim.run(steps=30, checkpoint=tmp_path / "c.h5", checkpoint_every=10, snapshots=tmp_path / "s",
            snapshot_every=15)
    assert sim.last_run["checkpoints_written"] == 3 and sim.last_run["snapshots_written"] == 3
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["c.h5", "c_00000010.h5", "c_00000020.h5", "c_00000030.h5",
                     "s_00000000.hdf5", "s_00000015.hdf5", "s_00000030.hdf5"]
    middle = nbody.Simulation.restart(tmp_path / "c_00000020.h5", backend="cpu")
    assert middle.steps == 20
    middle.step(10)
    assert np.array_equal(middle.positions, sim.positions)
    # The script's next run goes on with the series; another simulation's run (another seed's) would mix its files
    # with these.
    sim.run(steps=15, snapshots=tmp_path / "s", snapshot_every=15)
    assert sim.last_run["snapshots_written"] == 1  # 45: 30, its start, is the run before's end
    with pytest.raises(ValueError, match=r"^snapshots='.*s': the folder holds 3 files of that series past step 0 "
                                         r"\(.*s_00000015\.hdf5, \.\.\.\), another run's, which this new run's"):
        nbody.Simulation(n=128, seed=7, backend="cpu").run(steps=5, snapshots=tmp_path / "s")


@pytest.mark.skipif(not nbody.checkpoints_built(), reason="this nbody was built without HDF5")
def test_a_script_run_again_after_a_kill_writes_its_own_series_again(tmp_path):
    # A job's script, killed after its periodic checkpoints at steps 10 and 20 but before its end wrote c.h5, is run
    # again as it was: the files are its own course's (the same bodies and settings), an earlier start of it, which
    # it writes again and says so; it ends as a script never killed does.
    def script(steps):
        sim = nbody.Simulation(n=128, backend="cpu")
        sim.run(steps=steps, checkpoint=tmp_path / "c.h5", checkpoint_every=10, snapshots=tmp_path / "s",
                snapshot_every=10)
        return sim
    script(20)
    (tmp_path / "c.h5").unlink()
    again = script(40)
    said = [n for n in again.last_run["notices"] if "of this run's course, an earlier start of it" in n]
    assert len(said) == 2, again.last_run["notices"]
    assert re.search(r"^checkpoint_every=10: the folder holds 2 files of that series past step 0 \(.*c_00000010\.h5, "
                     r"\.\.\.\) of this run's course, an earlier start of it, which this run writes again as it "
                     r"passes them \(Simulation\.restart\('.*c_00000020\.h5'\) would go on from its last "
                     r"instead\)$", said[1]), said
    whole = nbody.Simulation(n=128, backend="cpu")
    whole.step(40)
    assert np.array_equal(again.positions, whole.positions)
    # Another seed's script is another run, refused among them.
    with pytest.raises(ValueError, match=r"another run's, which this new run's would mix with"):
        nbody.Simulation(n=128, seed=7, backend="cpu").run(steps=40, checkpoint=tmp_path / "c.h5",
                                                             checkpoint_every=10)


def test_a_chain_of_stopped_runs_writes_the_series_of_one_run(tmp_path):
    # A run stopped before its end (a callback that raised, as Ctrl-C or a job's time limit does) saves its state to
    # its checkpoint, not to the series; the run that goes on from there (the same script, or a restart) writes its
    # start only where one falls due. The files are those of the run that never stopped.
    nbody.Simulation(n=128, backend="cpu").run(steps=40, snapshots=tmp_path / "w" / "s", snapshot_every=10)
    want = sorted(p.name for p in (tmp_path / "w").iterdir())
    assert want == ["s_%08d.hdf5" % k for k in range(0, 41, 10)]

    def stop_at(step):
        def callback(sim):
            if sim.steps == step:
                raise RuntimeError("stopped")
        return callback

    for go_on in ("script", "restart"):
        folder = tmp_path / go_on
        folder.mkdir()
        sim = nbody.Simulation(n=128, backend="cpu")
        with pytest.raises(RuntimeError, match="stopped"):
            sim.run(steps=40, callback=stop_at(25), snapshots=folder / "s", snapshot_every=10,
                    checkpoint=folder / "c.h5")
        assert sim.last_run["snapshots_written"] == 3, sim.last_run  # 0, 10, 20: 25 is in c.h5
        if go_on == "restart":
            sim = nbody.Simulation.restart(folder / "c.h5", backend="cpu")
        sim.run(steps=15, snapshots=folder / "s", snapshot_every=10, checkpoint=folder / "c.h5")
        assert sim.last_run["snapshots_written"] == 2, sim.last_run  # 30 and 40
        assert sorted(p.name for p in folder.glob("s_*")) == want, go_on
        # A stopped run with no checkpoint has only the series to keep its state: its end is written.
        other = nbody.Simulation(n=128, backend="cpu")
        with pytest.raises(RuntimeError, match="stopped"):
            other.run(steps=40, callback=stop_at(25), snapshots=folder / "o", snapshot_every=10)
        assert (folder / "o_00000025.hdf5").exists()


def test_a_run_that_begins_a_series_or_a_course_writes_its_start(tmp_path):
    # A run past step 0 writes its start where its series begins (a name no run wrote before) and where its course
    # does (other bodies, other settings): that state is in no file of the series yet.
    sim = nbody.Simulation(n=128, backend="cpu")
    sim.run(steps=12, snapshots=tmp_path / "a", snapshot_every=5)
    sim.run(steps=8, snapshots=tmp_path / "b", snapshot_every=5)
    assert sorted(p.name for p in tmp_path.glob("b_*")) == ["b_00000012.hdf5", "b_00000015.hdf5", "b_00000020.hdf5"]
    sim.run(steps=2, snapshots=tmp_path / "a", snapshot_every=5)  # 20 falls due, and 22 ends it
    sim.run(steps=1, snapshots=tmp_path / "a", snapshot_every=5)  # the series goes on from 22
    assert sim.last_run["snapshots_written"] == 1  # 23, its end
    assert sorted(p.name for p in tmp_path.glob("a_*")) == ["a_%08d.hdf5" % k for k in (0, 5, 10, 12, 20, 22, 23)]
    sim.positions = sim.positions * 1.01  # other bodies at step 23: the series' file there is now theirs
    sim.run(steps=1, snapshots=tmp_path / "a", snapshot_every=5)
    assert sim.last_run["snapshots_written"] == 2  # 23 and 24
    sim.configure(dt=0.005)
    sim.run(steps=1, snapshots=tmp_path / "a", snapshot_every=5)
    assert sim.last_run["snapshots_written"] == 2  # 24 and 25
    sim.run(steps=2, snapshots=tmp_path / "a", snapshot_every=5)
    assert sim.last_run["snapshots_written"] == 1  # 27 (25 was written as the run before's end)


@pytest.mark.skipif(not nbody.checkpoints_built(), reason="this nbody was built without HDF5")
def test_a_restart_of_a_step_0_checkpoint_goes_on_over_its_earlier_starts_files(tmp_path):
    # A script that starts from a --steps 0 checkpoint and was killed left its series past step 0: run again, it goes
    # on over them (its own, written again bit for bit), not refused as another run's.
    nbody.Simulation(n=128, backend="cpu").run(steps=0, checkpoint=tmp_path / "zero.h5")
    for _ in range(2):
        sim = nbody.Simulation.restart(tmp_path / "zero.h5", backend="cpu")
        sim.run(steps=20, snapshots=tmp_path / "s", snapshot_every=10)
        assert sim.last_run["snapshots_written"] == 3
        assert sim.last_run["diagnostics_failure"] is None  # as --json's null
        assert sim.last_run["diagnostics_rows_in"] is None
    # With other bodies it is another course: refused among them. So is a setting changed, run again over its own.
    other = nbody.Simulation.restart(tmp_path / "zero.h5", backend="cpu")
    other.positions = other.positions * 1.5
    with pytest.raises(ValueError, match=r"the folder holds 2 files of that series past step 0 of another course"):
        other.run(steps=10, snapshots=tmp_path / "s", snapshot_every=10)
    for _ in range(2):
        branch = nbody.Simulation.restart(tmp_path / "zero.h5", backend="cpu")
        branch.configure(dt=0.005)
        assert branch.run(steps=20, snapshots=tmp_path / "b", snapshot_every=10) == 20


def test_a_branch_is_not_mixed_with_the_course_it_leaves(tmp_path):
    # Every file records its run's course: a script that restarts a checkpoint and changes a setting of the course
    # (configure before its run, or a step() between them) is refused where the series holds the old course's files
    # past its step, nothing removed; on its own files (a branch run again) it goes on.
    first = nbody.Simulation(n=128, backend="cpu")
    first.run(steps=30, snapshots=tmp_path / "s", snapshot_every=10, checkpoint=tmp_path / "c.h5", checkpoint_every=10)
    old = (tmp_path / "s_00000020.hdf5").read_bytes()
    for between in (False, True):
        branch = nbody.Simulation.restart(tmp_path / "c_00000010.h5", backend="cpu")
        branch.configure(dt=0.005)
        if between:
            branch.step()
        with pytest.raises(ValueError, match=r"the folder holds .* of that series past step 1[01] of another course"):
            branch.run(steps=20, snapshots=tmp_path / "s", snapshot_every=10)
    assert (tmp_path / "s_00000020.hdf5").read_bytes() == old
    # The checkpoint of the course it leaves, further on, alike: a stop would keep it for a restart to go on with.
    branch = nbody.Simulation.restart(tmp_path / "c_00000010.h5", backend="cpu")
    branch.configure(dt=0.005)
    with pytest.raises(ValueError, match=r"^checkpoint='.*c\.h5' holds step 30 of another course: the run this one "
                                         r"branches from at step 10"):
        branch.run(steps=20, checkpoint=tmp_path / "c.h5", checkpoint_every=0)
    # Other bodies at the restart's step: another course too.
    moved = nbody.Simulation.restart(tmp_path / "c_00000010.h5", backend="cpu")
    moved.positions = moved.positions * 1.5
    with pytest.raises(ValueError, match=r"past step 10 of another course"):
        moved.run(steps=20, snapshots=tmp_path / "s", snapshot_every=10)
    # Bodies set between a change and its undoing: the setting changed back does not undo them.
    undone = nbody.Simulation.restart(tmp_path / "c_00000010.h5", backend="cpu")
    undone.configure(dt=0.005)
    undone.positions = undone.positions * 1.5
    undone.configure(dt=0.01)
    with pytest.raises(ValueError, match=r"past step 10 of another course"):
        undone.run(steps=20, snapshots=tmp_path / "s", snapshot_every=10)
    # A checkpoint edited by hand (its checksum deleted, a velocity changed) is another course from its step.
    h5py = pytest.importorskip("h5py")
    shutil.copy(tmp_path / "c_00000010.h5", tmp_path / "e.h5")
    with h5py.File(tmp_path / "e.h5", "r+") as f:
        del f["Header"].attrs["Checksum"]
        group = next(g for g in ("PartType1", "PartType4", "PartType0") if g in f)
        f[group]["Velocities"][3, 0] += 0.5
    edited = nbody.Simulation.restart(tmp_path / "e.h5", backend="cpu")
    with pytest.raises(ValueError, match=r"past step 10 of another course"):
        edited.run(steps=20, snapshots=tmp_path / "s", snapshot_every=10)
    # The same dt given again changes nothing, nor one changed and changed back before a step; the branch in a series
    # of its own goes on over its own files.
    same = nbody.Simulation.restart(tmp_path / "c_00000010.h5", backend="cpu")
    same.configure(dt=0.01)
    assert same.run(steps=20, snapshots=tmp_path / "s", snapshot_every=10) == 20
    back = nbody.Simulation.restart(tmp_path / "c_00000010.h5", backend="cpu")
    back.configure(dt=0.005)
    back.configure(softening=0.02)
    back.configure(dt=0.01, softening=0.01)
    assert back.run(steps=20, snapshots=tmp_path / "s", snapshot_every=10) == 20
    for _ in range(2):
        branch = nbody.Simulation.restart(tmp_path / "c_00000010.h5", backend="cpu")
        branch.configure(dt=0.005)
        assert branch.run(steps=20, snapshots=tmp_path / "b", snapshot_every=10) == 20
    with h5py.File(tmp_path / "b_00000030.hdf5") as f, h5py.File(tmp_path / "s_00000030.hdf5") as g:
        assert len(f["Header"].attrs["Course"]) == 16 and f["Header"].attrs["Course"] != g["Header"].attrs["Course"]


def test_a_restart_whose_run_names_no_end_goes_on_to_its_runs_end(tmp_path):
    # A checkpoint records where its run was going: to a time, or to a step. A script that restarts it and runs with
    # neither goes on to that end, with a notice, and ends with the state of the run that never stopped.
    whole = nbody.Simulation(n=128, backend="cpu")
    whole.run(t_end=0.3, checkpoint=tmp_path / "t.h5", checkpoint_dt=0.1)
    rest = nbody.Simulation.restart(tmp_path / "t_00000010.h5", backend="cpu")
    assert rest.run() == 20
    assert rest.time == whole.time and np.array_equal(rest.positions, whole.positions)
    assert any("t_00000010.h5's run was going to time 0.3: this run goes on to it (steps or t_end sets another "
               "end)" in n for n in rest.last_run["notices"]), rest.notices
    by_steps = nbody.Simulation(n=128, backend="cpu", integrator="hermite4")
    by_steps.run(steps=30, checkpoint=tmp_path / "s.h5", checkpoint_every=10)
    rest = nbody.Simulation.restart(tmp_path / "s_00000010.h5", backend="cpu")
    assert rest.run() == 20 and rest.steps == 30
    assert np.array_equal(rest.positions, by_steps.positions)
    # Once it has stepped, a run names its end again; from a run that reached its end, it makes no steps.
    with pytest.raises(TypeError, match=r"^run: give steps or t_end \(one of them\)$"):
        rest.run()
    done = nbody.Simulation.restart(tmp_path / "t.h5", backend="cpu")
    assert done.run() == 0 and "t.h5's run reached its end, time 0.3: no steps" in done.notices[-1]
    # Settings changed before the first run keep the file's end (a new dt goes on to the same time).
    rest = nbody.Simulation.restart(tmp_path / "t_00000010.h5", backend="cpu")
    rest.configure(dt=0.005)
    assert rest.run() == 40 and rest.time == pytest.approx(0.3)
    # A run the script's callback stopped ended where the script meant it to: its checkpoint records that step.
    stopped = nbody.Simulation(n=128, backend="cpu")
    stopped.run(steps=100, callback=lambda s: s.steps >= 40, every=10, checkpoint=tmp_path / "cb.h5")
    assert stopped.steps == 40
    assert nbody.Simulation.restart(tmp_path / "cb.h5", backend="cpu").run() == 0
    # hermite4 to a time that is no block time ends at it, every body brought there: its end is reached.
    short = nbody.Simulation(n=64, backend="cpu", integrator="hermite4")
    short.run(t_end=0.1, checkpoint=tmp_path / "h.h5")
    assert short.time == 0.1
    # steps as many as a run may have ("until stopped"), from a later step: its checkpoints record the most a
    # checkpoint may hold, and are written.
    far = nbody.Simulation(n=64, backend="cpu")
    far.run(steps=3)
    far.run(steps=10**15, callback=lambda s: s.steps >= 6, every=1, checkpoint=tmp_path / "far.h5",
            checkpoint_every=2)
    assert far.last_run["checkpoints_written"] == 2 and far.last_run["checkpoints_not_written"] == []
    assert nbody.Simulation.restart(tmp_path / "h.h5", backend="cpu").run() == 0
    # Block steps are not steps of dt: a switch of integrator does not take such an end up, and says why.
    with pytest.raises(TypeError, match=r"^run: give steps or t_end \(one of them\); .*s_00000010\.h5's run was going "
                                        r"to block step 30, which leapfrog does not count in steps of dt: it is not "
                                        r"taken up$"):
        nbody.Simulation.restart(tmp_path / "s_00000010.h5", backend="cpu", integrator="leapfrog").run()


def test_a_restart_samples_its_series_as_its_run_did(tmp_path):
    # A checkpoint records how its run sampled its series: a script that restarts it and names no cadence samples so
    # too, with a notice, and the series is the one of the run that never stopped.
    whole = nbody.Simulation(n=128, backend="cpu", integrator="hermite4")
    whole.run(t_end=0.25, diagnostics=tmp_path / "whole.csv", diagnostics_dt=0.03125)
    first = nbody.Simulation(n=128, backend="cpu", integrator="hermite4")
    first.run(t_end=0.125, diagnostics=tmp_path / "d.csv", diagnostics_dt=0.03125, checkpoint=tmp_path / "c.h5")
    rest = nbody.Simulation.restart(tmp_path / "c.h5", backend="cpu")
    rest.run(t_end=0.25, diagnostics=tmp_path / "d.csv")
    assert any("c.h5's diagnostics rows are at every multiple of time 0.03125: so are this run's "
               "(diagnostics_every or diagnostics_dt sets another)" in n for n in rest.last_run["notices"]), \
        rest.last_run["notices"]
    assert [r["step"] for r in rows(tmp_path / "d.csv")] == [r["step"] for r in rows(tmp_path / "whole.csv")]
    # One that writes no series says what the series misses.
    rest = nbody.Simulation.restart(tmp_path / "c.h5", backend="cpu")
    rest.run(t_end=0.25)
    assert any("c.h5's diagnostics rows are at every multiple of time 0.03125; this run writes none, so this run's "
               "will be missing from the series (diagnostics continues them)" in n
               for n in rest.last_run["notices"]), rest.last_run["notices"]
    # A script's next run samples as the run before it did, also after a change of settings; a restart's first run
    # after such a change as the file's run.
    sim = nbody.Simulation(n=128, backend="cpu")
    sim.run(steps=20, diagnostics=tmp_path / "s.csv", diagnostics_every=5)
    sim.configure(dt=0.005)
    sim.run(steps=20, diagnostics=tmp_path / "s.csv")
    assert any("the last run's diagnostics rows are every 5 steps: so are this run's" in n
               for n in sim.last_run["notices"]), sim.last_run["notices"]
    assert [int(r["step"]) for r in rows(tmp_path / "s.csv")] == list(range(0, 41, 5))
    # Periodic checkpoints and snapshots the same way.
    sim.run(steps=10, checkpoint=tmp_path / "k.h5", checkpoint_every=4, snapshots=tmp_path / "snap",
            snapshot_every=5)
    sim.run(steps=10, checkpoint=tmp_path / "k.h5", snapshots=tmp_path / "snap")
    assert sim.last_run["checkpoints_written"] == 3, sim.last_run  # steps 52, 56 and 60
    assert (tmp_path / "k_00000060.h5").exists() and (tmp_path / "snap_00000055.hdf5").exists()
    assert any("the last run's periodic checkpoints are every 4 steps: so are this run's" in n
               for n in sim.last_run["notices"]), sim.last_run["notices"]
    rest = nbody.Simulation.restart(tmp_path / "k.h5", backend="cpu")
    rest.run(steps=10, checkpoint=tmp_path / "k2.h5")
    assert rest.last_run["checkpoints_written"] == 2, rest.last_run  # steps 64 and 68
    # 0: none between the start and the end, where the run before's would be taken up; it needs its checkpoint.
    rest.run(steps=10, checkpoint=tmp_path / "k3.h5", checkpoint_every=0)
    assert rest.last_run["checkpoints_written"] == 0 and (tmp_path / "k3.h5").exists(), rest.last_run
    with pytest.raises(ValueError, match=r"^checkpoint_every=0: give checkpoint too$"):
        rest.run(steps=1, checkpoint_every=0)
    rest = nbody.Simulation.restart(tmp_path / "c.h5", backend="cpu")
    rest.configure(eta=0.03)
    rest.run(t_end=0.25, diagnostics=tmp_path / "d2.csv")
    assert any("c.h5's diagnostics rows are at every multiple of time 0.03125" in n
               for n in rest.last_run["notices"]), rest.last_run["notices"]
    # Steps made by step() between two runs are the same simulation's: the next run still samples as the last did.
    stepped = nbody.Simulation(n=128, backend="cpu")
    stepped.run(steps=20, diagnostics=tmp_path / "p.csv", diagnostics_every=5, checkpoint=tmp_path / "p.h5",
                checkpoint_every=5)
    stepped.step(5)
    stepped.run(steps=20, diagnostics=tmp_path / "q.csv", checkpoint=tmp_path / "p.h5")
    assert [int(r["step"]) for r in rows(tmp_path / "q.csv")] == list(range(25, 46, 5))
    assert stepped.last_run["checkpoints_written"] == 4, stepped.last_run  # steps 30, 35, 40 and 45
    # A series whose rows changed since the run wrote them is not the run's: the next run's rows replace it. The same
    # values in another form are the same rows.
    twin = nbody.Simulation(n=128, backend="cpu")
    twin.run(steps=45, diagnostics=tmp_path / "t.csv", diagnostics_every=5)
    assert "by the digest of them" not in " ".join(twin.last_run["notices"])
    series = tmp_path / "t.csv"
    series.write_text(series.read_text().replace(",0,", ",0.0,"))  # the same values in another form: the same rows
    twin.run(steps=5, diagnostics=series)
    assert not twin.last_run["diagnostics_replaced"], twin.last_run
    lines = series.read_text().splitlines(keepends=True)
    fields = lines[2].rstrip("\n").split(",")  # step 5's: its last figure (r90) changed, its energy and time not
    lines[2] = ",".join(fields[:-1] + [repr(float(fields[-1]) * 2)]) + "\n"
    series.write_text("".join(lines))
    with pytest.warns(RuntimeWarning, match=r"are not the rows the run wrote before step 50 \(by the digest of them"):
        twin.run(steps=5, diagnostics=series)
    assert any("are not the rows the run wrote before step 50 (by the digest of them that its checkpoint, or its "
               "last run, recorded" in n
               for n in twin.last_run["warnings"]), twin.last_run["warnings"]
    # The same series continued past steps that step() made without writing it: the gap in it is said.
    stepped.step(12)
    stepped.run(steps=5, diagnostics=tmp_path / "q.csv")
    assert [int(r["step"]) for r in rows(tmp_path / "q.csv")] == [25, 30, 35, 40, 45, 60, 62]
    assert any(n.endswith("it has no rows between step 45 and step 57 (2 rows at its cadence, every 5 steps): the run "
                          "got from one to the other without writing this series, and the gap stays")
               for n in stepped.last_run["notices"]), stepped.last_run["notices"]
    rest = nbody.Simulation.restart(tmp_path / "c.h5", backend="cpu")
    rest.step(3)
    rest.run(t_end=0.25, diagnostics=tmp_path / "d3.csv")
    assert any("c.h5's diagnostics rows are at every multiple of time 0.03125: so are this run's" in n
               for n in rest.last_run["notices"]), rest.last_run["notices"]


@pytest.mark.skipif(not nbody.checkpoints_built(), reason="this nbody was built without HDF5")
def test_an_output_never_replaces_the_file_the_simulation_started_from(tmp_path):
    # As on the command line: the checkpoint may be continued in place (checkpoint= the file restarted), a tipsy file
    # saved over the one loaded; nothing else may replace the file a simulation was made from.
    nbody.Simulation(n=64, backend="cpu").checkpoint(tmp_path / "run.h5")
    kept = (tmp_path / "run.h5").read_bytes()
    sim = nbody.Simulation.restart(tmp_path / "run.h5")
    for name, call in (("save", lambda: sim.run(steps=1, save=tmp_path / "run.h5")),
                       ("diagnostics", lambda: sim.run(steps=1, diagnostics=tmp_path / "run.h5")),
                       ("Simulation.save", lambda: sim.save(tmp_path / "run.h5"))):
        with pytest.raises(ValueError, match=rf"^{name} .*run\.h5: the Simulation\.restart file; writing it would "
                                             rf"replace the file this run starts from; give {name} another file$"):
            call()
    assert (tmp_path / "run.h5").read_bytes() == kept and sim.steps == 0
    sim.run(steps=2, checkpoint=tmp_path / "run.h5")  # continued in place
    sim.checkpoint(tmp_path / "run.h5")
    assert nbody.Simulation.restart(tmp_path / "run.h5").steps == 2
    sim.save(tmp_path / "t.dat")
    loaded = nbody.Simulation.load(tmp_path / "t.dat")
    with pytest.raises(ValueError, match=r"^Simulation\.checkpoint .*t\.dat: the Simulation\.load file"):
        loaded.checkpoint(tmp_path / "t.dat")
    loaded.save(tmp_path / "t.dat")  # a tipsy file over the tipsy file it was loaded from


def test_hermite4_snapshots_hold_a_tight_binary_apart_by_default(tmp_path):
    # A binary 1e-4 wide at the centre and a body far out: the box is 4096 wide, and float32 coordinates shifted by
    # half of it are 2^-12 apart, so in fp32 the pair is one point. hermite4's snapshots are fp64 unless told otherwise.
    h5py = pytest.importorskip("h5py")
    pos = np.array([[5e-5, 0, 0], [-5e-5, 0, 0], [2000.0, 0, 0]])
    vel = np.array([[0, 70.0, 0], [0, -70.0, 0], [0, 0, 0]])
    sim = nbody.Simulation.from_arrays(pos, vel, [0.5, 0.5, 1e-9], integrator="hermite4", softening=0.0, backend="cpu")
    sim.run(steps=0, snapshots=tmp_path / "d")
    sim.run(steps=0, snapshots=tmp_path / "f", snapshot_precision="fp32")
    for name, width in (("d", 1e-4), ("f", 0.0)):
        with h5py.File(tmp_path / f"{name}_00000000.hdf5") as f:
            x = f["PartType4/Coordinates"][:, 0] if "PartType4" in f else f["PartType1/Coordinates"][:, 0]
            assert abs(abs(x[0] - x[1]) - width) < 1e-9, (name, x[:2])


def test_fp32_snapshots_too_coarse_for_the_softening_are_said_to_be(tmp_path):
    # An escaper a million units out widens the box to 2^21: fp32 coordinates round by up to 2^-4 there, which no
    # pair within the softening (0.01) survives. Said once a run, with the rounding the files have.
    h5py = pytest.importorskip("h5py")
    rng = np.random.default_rng(2)
    pos, vel = rng.normal(size=(100, 3)), 0.1 * rng.normal(size=(100, 3))
    pos[0] = [1e6, -3e5, 2]
    sim = nbody.Simulation.from_arrays(pos, vel, np.full(100, 0.01), backend="cpu")
    sim.run(steps=2, snapshots=tmp_path / "far", snapshot_every=1)
    said = [n for n in sim.notices if "fp32 coordinates" in n]
    assert said == [f"snapshots='{tmp_path / 'far_00000000.hdf5'}': its fp32 coordinates are rounded by up to 0.0625 "
                    "(its box holds every body, so one far out widens it), more than a tenth of the softening (0.01); "
                    "snapshot_precision='fp64' keeps them (said at this run's first)"], said
    with h5py.File(tmp_path / "far_00000000.hdf5") as f:
        x = f["PartType4/Coordinates"][:].astype(float) - f["Header"].attrs["Shift"]
        error = np.abs(x - pos[f["PartType4/ParticleIDs"][:]]).max()
    assert 0.03 < error <= 0.0625  # the bound said is the one the file has
    # Without the escaper, or in fp64, nothing is said.
    pos[0] = [30, 0, 0]
    near = nbody.Simulation.from_arrays(pos, vel, np.full(100, 0.01), backend="cpu")
    near.run(steps=1, snapshots=tmp_path / "near")
    far = nbody.Simulation.from_arrays(np.where(np.arange(100)[:, None] == 0, [1e6, -3e5, 2], pos), vel,
                                       np.full(100, 0.01), backend="cpu")
    far.run(steps=1, snapshots=tmp_path / "fp64", snapshot_precision="fp64")
    assert not [n for n in near.notices + far.notices if "fp32 coordinates" in n]


def test_a_scripts_next_run_keeps_its_snapshot_series_precision(tmp_path):
    # A script's next runs of an fp64 series that name no precision go on in fp64, and say so; one of no steps too,
    # which writes the file at its step again.
    h5py = pytest.importorskip("h5py")
    sim = nbody.Simulation(n=64, backend="cpu")
    sim.run(steps=10, snapshots=tmp_path / "s", snapshot_every=5, snapshot_precision="fp64")
    sim.run(steps=0, snapshots=tmp_path / "s")
    sim.run(steps=10, snapshots=tmp_path / "s", snapshot_every=5)
    assert any(n.startswith(f"{tmp_path / 's_00000010.hdf5'}, the series' file at step 10, is fp64: so are this run's "
                            "snapshots (snapshot_precision sets another)") for n in sim.notices), sim.notices
    for path in sorted(tmp_path.glob("s_*.hdf5")):
        with h5py.File(path, "r") as f:
            assert f["Header"].attrs["Flag_DoublePrecision"] == 1, path.name
            assert f["PartType4/Coordinates"].dtype == np.float64, path.name


def test_snapshots_by_time_are_the_runs_state_at_those_times(tmp_path):
    # hermite4 with snapshots at every multiple of 1/4 (of the longest step, 1/16): every body at each time, so a
    # snapshot at time 0.5 is the state a run to t_end=0.5 ends with (to the rounding of the file's shift by half the
    # box); and the run's bits do not change.
    h5py = pytest.importorskip("h5py")
    sim = nbody.Simulation(n=256, integrator="hermite4", precision="fp64", backend="cpu")
    sim.run(t_end=1, snapshots=tmp_path / "s", snapshot_dt=0.25, snapshot_precision="fp64")
    assert sim.last_run["snapshots_written"] == 5
    times = {}
    for path in sorted(tmp_path.glob("s_*.hdf5")):
        with h5py.File(path, "r") as f:
            times[float(f["Header"].attrs["Time"])] = (path, int(f["Header"].attrs["Step"]))
    assert sorted(times) == [0, 0.25, 0.5, 0.75, 1.0]
    for t, (path, step) in times.items():
        assert path.name == f"s_{step:08d}.hdf5"
    half = nbody.Simulation(n=256, integrator="hermite4", precision="fp64", backend="cpu")
    half.run(t_end=0.5)
    with h5py.File(times[0.5][0], "r") as f:
        (group,) = [f[g] for g in f if g.startswith("PartType")]  # a Plummer sphere's stars
        shift = f["Header"].attrs["Shift"][0]
        positions = np.asarray(group["Coordinates"])[np.argsort(np.asarray(group["ParticleIDs"]))] - shift
    assert np.allclose(positions, half.positions, rtol=0, atol=1e-12 * shift)
    plain = nbody.Simulation(n=256, integrator="hermite4", precision="fp64", backend="cpu")
    plain.run(t_end=1)
    assert plain.last_run["hermite4"]["state_hash"] == sim.last_run["hermite4"]["state_hash"]
    with pytest.raises(ValueError, match=r"^snapshot_dt=0.1: give snapshots too$"):
        sim.run(steps=1, snapshot_dt=0.1)
    with pytest.raises(ValueError, match=r"^snapshot_dt=0.1 and snapshot_every=3 both given; give one of them$"):
        sim.run(steps=1, snapshots=tmp_path / "x", snapshot_dt=0.1, snapshot_every=3)
    with pytest.raises(ValueError, match=r"^snapshot_dt=-1: must be a time in \(0, 1e\+27\]$"):
        sim.run(steps=1, snapshots=tmp_path / "x", snapshot_dt=-1)


def test_checkpoints_by_time_continue_the_run_bit_for_bit(tmp_path):
    sim = nbody.Simulation(n=128, integrator="hermite4", precision="fp64", backend="cpu")
    sim.run(t_end=0.5, checkpoint=tmp_path / "c.h5", checkpoint_dt=0.25)
    assert sim.last_run["checkpoints_written"] == 2
    series = sorted(tmp_path.glob("c_*.h5"))
    assert len(series) == 2
    middle = nbody.Simulation.restart(series[0], backend="cpu")
    assert middle.time == 0.25  # a multiple of the longest step: every body is at it
    middle.run(t_end=0.5)
    assert np.array_equal(middle.positions, sim.positions)
    with pytest.raises(ValueError, match=r"^checkpoint_dt=0.1: give checkpoint too$"):
        sim.run(steps=1, checkpoint_dt=0.1)
    with pytest.raises(ValueError, match=r"^checkpoint_dt=0.1 and checkpoint_every=3 both given; give one of them$"):
        sim.run(steps=1, checkpoint=tmp_path / "x.h5", checkpoint_dt=0.1, checkpoint_every=3)


def test_a_callback_reads_but_may_not_step_and_its_error_ends_the_run(tmp_path):
    sim = nbody.Simulation(n=64, backend="cpu")
    seen = []

    def reads(s):
        seen.append((s.steps, s.diagnostics()["total"], s.positions.shape))

    sim.run(steps=20, callback=reads, every=5)
    assert [s for s, _, _ in seen] == [5, 10, 15, 20] and seen[0][2] == (64, 3)

    def steps(s):
        s.step(1)

    with pytest.raises(ValueError, match="inside its run callback"):
        sim.run(steps=20, callback=steps, every=5)
    assert sim.steps == 25  # stopped where the callback was called; nothing stepped inside it

    def fails(s):
        raise ZeroDivisionError("the script's own error")

    with pytest.raises(ZeroDivisionError):
        sim.run(steps=20, callback=fails, every=4, diagnostics=tmp_path / "d.jsonl")
    assert sim.steps == 29
    assert (tmp_path / "d.jsonl").exists()  # the run's outputs are written before the error is raised
    sim.step(1)  # and the simulation goes on


@pytest.mark.skipif(not nbody.checkpoints_built(), reason="this nbody was built without HDF5")
def test_ctrl_c_writes_the_runs_outputs_and_raises(tmp_path):
    sim = nbody.Simulation(n=1024, backend="cpu")
    timer = threading.Timer(0.4, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        sim.run(steps=10**6, checkpoint=tmp_path / "stop.h5", diagnostics=tmp_path / "d.csv", diagnostics_every=5)
    timer.join()
    stopped = sim.steps
    assert 0 < stopped < 10**6
    assert nbody.Simulation.restart(tmp_path / "stop.h5").steps == stopped
    assert int(rows(tmp_path / "d.csv")[-1]["step"]) <= stopped
    # The interrupt was answered: the next run is not stopped by it.
    assert sim.run(steps=3) == 3


@pytest.mark.skipif(not nbody.checkpoints_built(), reason="this nbody was built without HDF5")
def test_units_reach_the_files_as_from_the_command_line(cli, tmp_path):
    import h5py

    cli("--run", "--bodies", 64, "--precision", "fp64", "--steps", 3, "--mass-unit", "1e5Msun", "--length-unit", "1pc",
        "--checkpoint", tmp_path / "cli.h5")
    sim = nbody.Simulation(n=64, backend="cpu", mass_unit="1e5Msun", length_unit="1pc")
    sim.run(steps=3, checkpoint=tmp_path / "py.h5")
    with h5py.File(tmp_path / "cli.h5") as a, h5py.File(tmp_path / "py.h5") as b:
        assert dict(a["Units"].attrs) == dict(b["Units"].attrs)
        assert a["Units"].attrs["Unit length in cgs (U_L)"] == pytest.approx(3.0857e18, rel=1e-4)
    with pytest.raises(ValueError, match="1e5Mparsec"):
        nbody.Simulation(n=64, backend="cpu", mass_unit="1e5Mparsec", length_unit="1pc")


@pytest.mark.skipif(not nbody.checkpoints_built(), reason="this nbody was built without HDF5")
def test_a_snapshot_series_is_in_one_choice_of_units(tmp_path):
    # Units changed between two runs of a script that write one series: its files would state two. Refused.
    sim = nbody.Simulation(n=64, backend="cpu", mass_unit="1e3Msun", length_unit="1pc")
    sim.run(steps=10, snapshots=tmp_path / "s", snapshot_every=10)
    sim.configure(mass_unit="1e4Msun", length_unit="1pc")
    with pytest.raises(ValueError, match=r"s_00000010\.hdf5, its file at step 10, states 1e3Msun, 1pc, and this run's "
                                         r"are 1e4Msun, 1pc: one series in two units"):
        sim.run(steps=10, snapshots=tmp_path / "s", snapshot_every=10)
    assert sim.steps == 10 and not (tmp_path / "s_00000020.hdf5").exists()
    sim.run(steps=10, snapshots=tmp_path / "t", snapshot_every=10)  # another series


def test_a_restart_in_other_units_than_its_files_warns(tmp_path):
    # Other units than the checkpoint's relabel the whole run (its time reached, its series' times): a RuntimeWarning,
    # as the command line's warning, not a notice alone. The same units: nothing to warn of.
    nbody.Simulation(n=64, backend="cpu", mass_unit="1e3Msun", length_unit="1pc").run(steps=5, checkpoint=tmp_path / "c.h5")
    with pytest.warns(RuntimeWarning, match=r"mass_unit and length_unit \(1e4Msun, 1pc\) override .*c\.h5's 1e3Msun, "
                                            r"1pc: the same numbers in other units"):
        relabelled = nbody.Simulation.restart(tmp_path / "c.h5", mass_unit="1e4Msun", length_unit="1pc")
    assert relabelled.units["mass"] == "1e4Msun"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nbody.Simulation.restart(tmp_path / "c.h5", mass_unit="1e3Msun", length_unit="1pc")


def test_a_scripts_own_save_again_after_configure_is_no_warning(tmp_path):
    # A script that saves its latest state to one file while it changes settings: its own file, not another run's.
    sim = nbody.Simulation(n=64, backend="cpu")
    sim.run(steps=5, save=tmp_path / "end.h5")
    sim.configure(dt=0.005)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sim.run(steps=5, save=tmp_path / "end.h5")


def test_a_run_stopped_by_ctrl_c_says_the_checkpoint_it_could_not_write(tmp_path):
    # A script's `except KeyboardInterrupt: print("saved")` must not take the checkpoint for written: where it could
    # not be (its name a folder here, a full disk in life), the interrupt carries a note and a RuntimeWarning says it,
    # not last_run alone. The older file stays.
    sim = nbody.Simulation(scenario="plummer", n=64, backend="cpu")

    def interrupt_at_10(checkpoint):
        def callback(s):
            if s.steps % 100 >= 10:
                checkpoint.mkdir(exist_ok=True)
                raise KeyboardInterrupt
        return callback

    checkpoint = tmp_path / "ck.h5"
    with pytest.warns(RuntimeWarning, match=r"^the run stopped \(KeyboardInterrupt\); checkpoint not written: .*ck\.h5"):
        with pytest.raises(KeyboardInterrupt) as raised:
            sim.run(steps=100, checkpoint=checkpoint, callback=interrupt_at_10(checkpoint), every=5)
    if sys.version_info >= (3, 11):
        assert any("checkpoint not written" in note for note in raised.value.__notes__), raised.value.__notes__
    assert sim.steps == 10 and sim.last_run["outputs_not_written"][0]["output"] == "checkpoint"
    # Under a filter that makes warnings errors, the interrupt is what the script sees.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(KeyboardInterrupt):
            sim.run(steps=100, checkpoint=tmp_path / "ck2.h5", callback=interrupt_at_10(tmp_path / "ck2.h5"), every=5)


def test_a_final_checkpoint_that_cannot_be_written_costs_only_itself(tmp_path):
    # Its name became a folder during the run: the run's other outputs are written, then OutputNotWrittenError (a
    # RuntimeError), as the command line exits 1: a batch script does not end as if it had its checkpoint. The state
    # is still the script's to write elsewhere.
    sim = nbody.Simulation(scenario="plummer", n=64, backend="cpu")
    checkpoint, save, series = tmp_path / "ck.h5", tmp_path / "end.bin", tmp_path / "d.csv"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning besides
        with pytest.raises(nbody.OutputNotWrittenError,
                           match=r"^checkpoint not written: .*ck\.h5: cannot write checkpoint: .* \(the run's 20 steps "
                                 r"are done, and the simulation holds their state: checkpoint\(\) or save\(\) writes "
                                 r"it elsewhere\)$") as raised:
            sim.run(steps=20, checkpoint=checkpoint, save=save, diagnostics=series, diagnostics_every=10,
                    callback=lambda s: checkpoint.mkdir(exist_ok=True), every=10)
    assert isinstance(raised.value, RuntimeError) and raised.value.outputs == sim.last_run["outputs_not_written"]
    sim.checkpoint(tmp_path / "elsewhere.h5")
    assert nbody.Simulation.restart(tmp_path / "elsewhere.h5").steps == 20
    lost = sim.last_run["outputs_not_written"]
    assert [(d["output"], d["path"]) for d in lost] == [("checkpoint", str(checkpoint))], lost
    assert "directory" in lost[0]["error"] or "folder" in lost[0]["error"], lost
    assert save.stat().st_size > 0
    assert len(series.read_text().splitlines()) == 4  # the header, steps 0, 10 and 20
    assert sim.last_run["failure"] is None and sim.steps == 20
    assert sim.last_run["checkpoint"] is None  # not written


def test_last_run_counts_what_a_run_that_raised_wrote(tmp_path):
    # Two bodies falling straight at each other with no softening: hermite4's step floor ends the run, with no
    # checkpoint to save to. What it wrote before is still counted.
    pos, vel, m = np.array([[-0.5, 0, 0], [0.5, 0, 0]]), np.zeros((2, 3)), np.array([0.5, 0.5])
    sim = nbody.Simulation.from_arrays(pos, vel, m, integrator="hermite4", softening=0.0, backend="cpu")
    with pytest.raises(RuntimeError, match="below the floor"):
        sim.run(t_end=4.0, diagnostics=tmp_path / "d.csv", diagnostics_dt=0.25, snapshots=tmp_path / "s",
                snapshot_dt=0.25)
    out = sim.last_run
    written = sorted(tmp_path.glob("s_*.hdf5"))
    assert out["snapshots_written"] == len(written) >= 4, (out, written)
    assert out["diagnostics_samples"] >= 4, out
    assert out["snapshots_not_written"] == [] and out["outputs_not_written"] == []


def test_a_change_of_integrator_keeps_the_step_and_of_units_relabels(tmp_path):
    # Between integrators of one fixed step the step stays (as a restart's with --integrator does); back from
    # hermite4, which has none, the step before it, said; a simulation that never had one takes the default, said.
    # New units relabel the files from then on, with a notice.
    sim = nbody.Simulation(n=64, dt=0.001, mass_unit="1e5Msun", length_unit="1pc")
    sim.integrator = "omelyan4"
    assert sim.dt == 0.001
    sim.integrator = "hermite4"
    sim.integrator = "leapfrog"
    assert sim.dt == 0.001 and sim.notices[-1] == "dt=0.001, the step before hermite4 (dt= sets another)"
    born = nbody.Simulation(n=64, integrator="hermite4")
    born.integrator = "yoshida4"
    assert born.dt == 0.01 and born.notices[-1] == "dt=0.01, yoshida4's default (it had no fixed step) (dt= sets another)"
    # A change says what it changes: the device choice, made once, is not said again at each change.
    for dt in (0.002, 0.003, 0.004):
        sim.dt = dt
    assert len(sim.notices) == len(set(sim.notices)), sim.notices
    sim.configure(mass_unit="1Msun", length_unit="1au")
    assert sim.notices[-1] == "the files' units are now 1Msun, 1au (were 1e5Msun, 1pc): the outputs from here on say so"
    if nbody.checkpoints_built():
        import h5py
        sim.checkpoint(tmp_path / "u.h5")
        with h5py.File(tmp_path / "u.h5") as f:
            assert f["Header"].attrs["MassUnit"] == b"1Msun" and f["Header"].attrs["LengthUnit"] == b"1au"


def test_a_tipsy_file_that_groups_the_bodies_says_so(tmp_path):
    sim = nbody.Simulation(scenario="collision", n=600, backend="cpu")
    sim.save(tmp_path / "t.bin")
    assert any(n.startswith(str(tmp_path / "t.bin") + ": tipsy groups the bodies by family") for n in sim.notices), \
        sim.notices
    plain = nbody.Simulation(n=64, backend="cpu")
    plain.save(tmp_path / "p.bin")
    assert not any("tipsy groups" in n for n in plain.notices)


@pytest.mark.skipif(not nbody.checkpoints_built(), reason="this nbody was built without HDF5")
def test_saving_to_an_hdf5_name_writes_a_snapshot_with_the_units(tmp_path):
    # save("x.h5") and run(save="x.hdf5") write what run(snapshots=...) writes, in fp64, which yt, pynbody and h5py
    # read with its units, and Simulation.load starts from; a tipsy byte order for such a name is refused.
    h5py = pytest.importorskip("h5py")
    sim = nbody.Simulation(scenario="disk", n=256, precision="fp64", softening=0.02, backend="cpu")
    sim.configure(mass_unit="1e3Msun", length_unit="1pc")
    sim.run(steps=4, save=tmp_path / "r.hdf5")
    assert not any("tipsy" in n for n in sim.last_run["notices"]), sim.last_run["notices"]
    sim.save(tmp_path / "s.h5")
    for name in ("r.hdf5", "s.h5"):
        with h5py.File(tmp_path / name, "r") as f:
            families = [k for k in f if k.startswith("PartType")]
            assert families and all(f[k]["Coordinates"].dtype == np.float64 for k in families), name
    loaded = nbody.Simulation.load(tmp_path / "s.h5", precision="fp64")
    assert loaded.units == sim.units and loaded.time == sim.time and loaded.n == sim.n
    a, b = np.argsort(loaded.ids), np.argsort(sim.ids)
    assert np.array_equal(loaded.ids[a], sim.ids[b])
    scale = np.maximum(1.0, np.abs(sim.positions[b]).max(axis=1, keepdims=True))
    assert np.all(np.abs(loaded.positions[a] - sim.positions[b]) <= 1e-14 * scale)
    assert np.array_equal(loaded.velocities[a], sim.velocities[b]) and np.array_equal(loaded.masses[a], sim.masses[b])
    with pytest.raises(ValueError, match=r"^format='little-endian': a tipsy file's byte order, and Simulation\.save\("
                                         r".*t\.h5'\) is an HDF5 snapshot \(its name ends in \.h5\); leave the format out"):
        sim.save(tmp_path / "t.h5", format="little-endian")
    assert not (tmp_path / "t.h5").exists()
    loaded.save(tmp_path / "s.h5")  # a snapshot over the snapshot it was loaded from: the state continued in place
    sim.save(tmp_path / "u.HDF5")  # the ending in any case
    with h5py.File(tmp_path / "u.HDF5", "r") as f:
        assert "Header" in f
    sim.save(tmp_path / "t.bin")  # tipsy, which holds no units: said
    assert any(n.startswith("Simulation.save(") and "tipsy holds no units" in n for n in sim.notices), sim.notices


def test_a_tipsy_save_states_its_units_beside_it_for_its_readers(tmp_path):
    # Tipsy has no field for units: save() writes them beside the file, where pynbody takes them from, and so does
    # Simulation.load.
    sim = nbody.Simulation(n=64, backend="cpu")
    sim.configure(mass_unit="1e3Msun", length_unit="1pc")
    sim.save(tmp_path / "t.bin")
    said = (f"Simulation.save('{tmp_path / 't.bin'}'): tipsy holds no units; {tmp_path / 't.bin.param'} beside it "
            "states this run's (1e3Msun, 1pc) for pynbody and yt")
    assert sim.notices[-1] == said, sim.notices
    assert "dMsolUnit = 1000\ndKpcUnit = 0.001\n" in (tmp_path / "t.bin.param").read_text()
    loaded = nbody.Simulation.load(tmp_path / "t.bin")
    assert loaded.units == sim.units
    # Another parameter file in the folder, which the readers may take instead: a warning.
    with pytest.warns(RuntimeWarning, match=r"its folder holds .*t\.bin\.param beside .*u\.bin\.param: pynbody may "
                                            r"take either file's units"):
        sim.save(tmp_path / "u.bin")
    with pytest.raises(ValueError, match=r"^Simulation\.save\('.*v\.param'\): a tipsy file named \.param"):
        sim.save(tmp_path / "v.param")
    # A name that ends as another format would be a tipsy file under a false name: refused, nothing written.
    with pytest.raises(ValueError, match=r"^Simulation\.save\('.*v\.hdf'\): \.hdf names an HDF file, and only names "
                                         r"ending in \.h5 or \.hdf5 are HDF5 snapshots"):
        sim.save(tmp_path / "v.hdf")
    with pytest.raises(ValueError, match=r"^Simulation\.checkpoint\('.*v\.bin'\): a checkpoint is an HDF5 file, and "
                                         r"\.bin names a tipsy file; name it .*v\.h5"):
        sim.checkpoint(tmp_path / "v.bin")
    with pytest.raises(ValueError, match=r"^snapshots='.*v\.bin': snapshots are HDF5 files named after BASE and their "
                                         r"step \(.*v_00000100\.hdf5\), and \.bin names a tipsy file; give .*v or .*v\.h5"):
        sim.run(steps=1, snapshots=tmp_path / "v.bin")
    assert not (tmp_path / "v.hdf").exists() and not (tmp_path / "v.bin").exists()
    assert not list(tmp_path.glob("v.bin_*"))
    pynbody = pytest.importorskip("pynbody")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = pynbody.load(str(tmp_path / "t.bin"))
        assert np.allclose(np.sort(s["mass"].in_units("Msol")), np.sort(sim.masses * 1e3), rtol=1e-6, atol=0)
        assert np.allclose(np.sort(s["x"].in_units("kpc")), np.sort(sim.positions[:, 0] * 1e-3), rtol=1e-6, atol=1e-12)


@pytest.mark.skipif(not nbody.checkpoints_built(), reason="this nbody was built without HDF5")
def test_a_refused_series_leaves_no_lock_and_a_locked_checkpoint_is_said(tmp_path):
    # Another run's unfinished series is refused, as often as asked, with its reason: the refusal holds no lock on it
    # (a lock left would make the next call, and the command line, say another process writes it).
    h5py = pytest.importorskip("h5py")
    other = nbody.Simulation(n=64, softening=0.05, backend="cpu")
    other.run(steps=20, diagnostics=tmp_path / "o.csv", diagnostics_every=10)
    os.rename(tmp_path / "o.csv", tmp_path / "d.csv.partial")
    sim = nbody.Simulation(n=64, backend="cpu")
    for _ in range(2):
        with pytest.raises(ValueError, match=r"d\.csv\.partial exists \(the unfinished series of a run that died .*, "
                                             r"not this run's: row 1 \(step 0, time 0\) measures its energy error"):
            sim.run(steps=10, diagnostics=tmp_path / "d.csv")
    # A checkpoint held open to be written (HDF5's lock: h5py's mode "a") is said to be, not to be damaged.
    sim.checkpoint(tmp_path / "c.h5")
    with h5py.File(tmp_path / "c.h5", "a"):
        with pytest.raises(ValueError, match=r"c\.h5: cannot open: it is held open to be written \(HDF5's file lock"):
            nbody.Simulation.restart(tmp_path / "c.h5")
    assert nbody.Simulation.restart(tmp_path / "c.h5").n == 64


@pytest.mark.skipif(not nbody.checkpoints_built(), reason="this nbody was built without HDF5")
def test_a_run_stopped_by_a_callback_that_raises_keeps_a_checkpoint_further_on(tmp_path):
    # As a Ctrl-C's stop: the finished run's checkpoint at step 500 is not replaced by a run stopped at step 10.
    nbody.Simulation(n=64, backend="cpu").run(steps=500, checkpoint=tmp_path / "c.h5")
    sim = nbody.Simulation(n=64, backend="cpu")

    def fail_at_10(s):
        if s.steps >= 10:
            raise ArithmeticError("the script's own error")

    with pytest.raises(ArithmeticError), pytest.warns(RuntimeWarning, match=r"c\.h5 is kept: it holds step 500"):
        sim.run(steps=1000, callback=fail_at_10, checkpoint=tmp_path / "c.h5")
    [kept] = sim.last_run["outputs_not_written"]
    assert kept["output"] == "checkpoint" and re.fullmatch(
        r".*c\.h5 is kept: it holds step 500, past this stopped run's step 10 \(Simulation\.restart\('.*c\.h5'\) goes "
        r"on from it\)", kept["error"]), kept
    assert nbody.Simulation.restart(tmp_path / "c.h5").steps == 500


@pytest.mark.skipif(not nbody.checkpoints_built(), reason="this nbody was built without HDF5")
def test_a_restart_holds_the_rows_it_computes_again_unless_its_course_changes(tmp_path):
    # A run that died past its checkpoint left its rows in k.csv.partial: a restart from the checkpoint computes the
    # rows past it again, and holds them until it has (ended before, it keeps those past its end after its own); one
    # whose course the script changed (dt, or the integrator at the same dt, whose rows fall at the same times) is a
    # branch, which replaces them.
    sim = nbody.Simulation(n=256, backend="cpu")
    sim.run(steps=100, diagnostics=tmp_path / "k.csv", diagnostics_every=50, checkpoint=tmp_path / "c.h5")
    sim.run(steps=200, diagnostics=tmp_path / "k.csv")
    died = (tmp_path / "k.csv").read_text()
    replaced = "its 2 rows before step 100 kept, 5 rows from step 100 on replaced"
    for change, says in (({}, "its 5 rows from step 100 to step 300 (this run's course, computed again) stay until "
                              "this run's rows reach step 300"),
                         ({"dt": 0.005}, replaced), ({"integrator": "yoshida4"}, replaced)):
        (tmp_path / "k.csv").unlink(missing_ok=True)
        (tmp_path / "k.csv.partial").write_text(died)
        again = nbody.Simulation.restart(tmp_path / "c.h5", backend="cpu")
        again.configure(**change)
        again.run(steps=50, diagnostics=tmp_path / "k.csv")
        assert any(says in n for n in again.notices), again.notices
        assert not (tmp_path / "k.csv.partial").exists()  # ended: its rows replace them either way
        # Up to its end; past it, the rows of its own course stay (a branch's past rows are another course's).
        past = ["200", "250", "300"] if not change else []
        assert [line.split(",")[0] for line in (tmp_path / "k.csv").read_text().splitlines()[1:]] == \
               ["0", "50", "100", "150"] + past
        assert any("3 rows of" in n and "past this run's end (step 150, to step 300) stay after its own" in n
                   for n in again.notices) == (not change), again.notices


def test_a_callback_that_raises_stops_the_series_as_a_signal_does(tmp_path):
    # No end row where the script's callback raised: a run that never stopped has no row at that step, and a restart
    # from the state saved there continues the series as that run's.
    sim = nbody.Simulation(n=128, backend="cpu")

    def stop(s):
        if s.steps >= 150:
            raise RuntimeError("enough")

    with pytest.raises(RuntimeError, match="enough"):
        sim.run(steps=1000, diagnostics=tmp_path / "d.csv", diagnostics_every=100, callback=stop, every=10)
    assert [line.split(",")[0] for line in (tmp_path / "d.csv").read_text().splitlines()[1:]] == ["0", "100"]


@pytest.mark.skipif(not nbody.checkpoints_built(), reason="this nbody was built without HDF5")
def test_a_series_begun_again_is_not_lost_to_a_stop_and_a_restart_from_its_branch(tmp_path):
    # A new softening from step 100 of a series that reaches step 200, stopped at step 120: the earlier series stays
    # at its name, and has its other name from the branch's first row on. A restart from the branch's own checkpoint
    # (no new softening of its own) takes the file at the name for another run's and replaces it: the earlier series
    # is still there, under its other name.
    series = tmp_path / "d.csv"
    sim = nbody.Simulation(n=128, backend="cpu")
    sim.run(steps=200, diagnostics=series, diagnostics_every=10, checkpoint=tmp_path / "c.h5", checkpoint_every=100)
    before = series.read_bytes()
    branch = nbody.Simulation.restart(tmp_path / "c_00000100.h5", backend="cpu", softening=0.05)

    def stop(s):
        if s.steps >= 120:
            raise RuntimeError("stop")

    with pytest.raises(RuntimeError, match="stop"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the warning that the series begins again, and the one that it is kept
        branch.run(steps=100, diagnostics=series, callback=stop, every=10, checkpoint=tmp_path / "b.h5")
    assert series.read_bytes() == before
    assert (tmp_path / "d.earlier-1.csv").read_bytes() == before
    again = nbody.Simulation.restart(tmp_path / "b.h5", backend="cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        again.run(steps=80, diagnostics=series)
    assert (tmp_path / "d.earlier-1.csv").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir() if "earlier" in p.name) == ["d.earlier-1.csv"]


@pytest.mark.skipif(not nbody.checkpoints_built(), reason="this nbody was built without HDF5")
def test_a_restart_stopped_before_its_first_row_says_the_held_rows_are_kept(tmp_path):
    sim = nbody.Simulation(n=128, backend="cpu")
    sim.run(steps=130, diagnostics=tmp_path / "k.csv", diagnostics_every=50, checkpoint=tmp_path / "c.h5")
    sim.run(steps=170, diagnostics=tmp_path / "k.csv")
    died = (tmp_path / "k.csv").read_text()  # rows 0, 50, ..., 300: as a run that died there left them
    (tmp_path / "k.csv").rename(tmp_path / "k.csv.partial")
    again = nbody.Simulation.restart(tmp_path / "c.h5", backend="cpu")  # step 130: its next row is at 150

    def stop(s):
        raise RuntimeError("stop")

    with pytest.raises(RuntimeError, match="stop"), pytest.warns(RuntimeWarning, match=r"k\.csv\.partial is kept as it"):
        again.run(steps=100, diagnostics=tmp_path / "k.csv", callback=stop, every=1)
    assert (tmp_path / "k.csv.partial").read_text() == died
    kept = [lost["error"] for lost in again.last_run["outputs_not_written"]]
    assert any(k.startswith(f"{tmp_path / 'k.csv.partial'} is kept as it was: it reaches step 300, past this stopped "
                            "run's rows (none)") for k in kept), kept


def test_a_series_that_may_pass_eight_digits_of_steps_says_how_its_names_sort(tmp_path):
    sim = nbody.Simulation(n=16, backend="cpu")
    sim.run(steps=100_000_000, callback=lambda s: True, every=1, snapshots=tmp_path / "s" / "snap",
            snapshot_every=50_000_000)
    assert sim.steps == 1
    assert any("may pass step 99999999, where its files' names (a step in 8 digits) get longer" in n
               for n in sim.last_run["notices"]), sim.last_run["notices"]
    sim.run(steps=10, snapshots=tmp_path / "t" / "snap")
    assert not any("99999999" in n for n in sim.last_run["notices"])


def test_an_output_named_as_a_tipsy_saves_units_file_is_refused(tmp_path):
    sim = nbody.Simulation(n=64, backend="cpu", mass_unit="1e5Msun", length_unit="1pc")
    # (A checkpoint there is named .param, which every checkpoint is refused for first, as its readers would take it for
    # a parameter file whatever it is beside.)
    with pytest.raises(ValueError, match=r"^checkpoint='.*py\.bin\.param': an HDF5 checkpoint named \.param, which "
                                         r"pynbody and yt would read as a parameter file"):
        sim.run(steps=2, save=tmp_path / "py.bin", checkpoint=tmp_path / "py.bin.param")
    assert sim.steps == 0 and os.listdir(tmp_path) == []


def test_a_series_that_cannot_take_its_name_says_which_file_holds_its_rows(tmp_path):
    # A folder made at the series' name during the run: its rows stay in the partial file, which last_run names, as
    # --json's diagnostics_rows_in does. The warning names the keyword, as every message of a script's run does.
    series = tmp_path / "d.csv"
    sim = nbody.Simulation(n=64, backend="cpu")
    with pytest.warns(RuntimeWarning, match=re.escape(f"diagnostics='{series}': is a directory")):
        sim.run(steps=20, diagnostics=series, diagnostics_every=5, callback=lambda s: series.mkdir(exist_ok=True),
                every=10)
    assert sim.last_run["diagnostics_failure"] and "d.csv" in sim.last_run["diagnostics_failure"]
    assert not any("--diagnostics" in w for w in sim.last_run["warnings"]), sim.last_run["warnings"]
    assert sim.last_run["diagnostics_rows_in"] == str(series) + ".partial"
    assert sum(1 for line in open(sim.last_run["diagnostics_rows_in"]) if line[:1].isdigit()) == 5


@pytest.mark.skipif(not nbody.checkpoints_built(), reason="this nbody was built without HDF5")
def test_snapshots_are_not_written_over_periodic_checkpoints_of_that_name(tmp_path):
    # A restart's snapshots named as the periodic checkpoints it restarts from would replace them with files no
    # restart reads: refused, nothing replaced.
    nbody.Simulation(n=64, backend="cpu").run(steps=4, checkpoint=tmp_path / "run.h5", checkpoint_every=1)
    before = (tmp_path / "run_00000004.h5").read_bytes()
    sim = nbody.Simulation.restart(tmp_path / "run_00000002.h5", backend="cpu")
    with pytest.raises(ValueError, match=r"^snapshots='.*run\.h5' would write .*run_00000004\.h5 over a checkpoint "
                                         r"\(a periodic one of that name\), which a restart goes on from"):
        sim.run(steps=2, snapshots=tmp_path / "run.h5")
    assert (tmp_path / "run_00000004.h5").read_bytes() == before
    assert sim.steps == 2


def test_a_save_or_checkpoint_of_the_moment_warns_before_it_replaces_a_state_its_readers_need(tmp_path):
    # sim.save() and sim.checkpoint() over another run's checkpoint, a checkpoint under a snapshot, or a snapshot named
    # as a series' file of its step: a RuntimeWarning at the script's line before the write, as run()'s outputs warn,
    # so that a filter that makes it an error leaves the file as it was. The script's own file written again is none.
    nbody.Simulation(n=64, backend="cpu", seed=7).run(steps=20, checkpoint=tmp_path / "c.h5",
                                                       snapshots=tmp_path / "s", snapshot_every=10)
    sim = nbody.Simulation(n=256, backend="cpu")
    cases = [(lambda: sim.checkpoint(tmp_path / "c.h5"), r"checkpoint\('.*c\.h5'\) replaces another run's state, at "
              r"step 20: plummer \(seed 7\), 64 bodies, where this run is plummer \(seed 42\), 256 bodies: name another "
              r"file to keep it$", "c.h5"),
             (lambda: sim.save(tmp_path / "c.h5"), r"save\('.*c\.h5'\) replaces a checkpoint \(step 0\) with a "
              r"snapshot, which Simulation.load reads and Simulation.restart does not: name another file to keep it$",
              "c.h5"),
             (lambda: sim.save(tmp_path / "s_00000010.hdf5"), r"save\('.*s_00000010\.hdf5'\) replaces a snapshot "
              r"\(step 10, time 0\.1, named as a series' file of that step\): name another file to keep it$",
              "s_00000010.hdf5")]
    for write, said, name in cases:
        before = (tmp_path / name).read_bytes()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(RuntimeWarning, match=said):
                write()
        assert (tmp_path / name).read_bytes() == before, name
        with pytest.warns(RuntimeWarning, match=said) as caught:
            write()
        assert caught[0].filename == __file__
        assert (tmp_path / name).read_bytes() != before, name
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sim.checkpoint(tmp_path / "c.h5")  # its own now
        sim.save(tmp_path / "mine.h5")
        sim.save(tmp_path / "mine.h5")


def test_a_runs_checkpoint_over_a_snapshot_a_reader_takes_for_a_state_warns_and_a_stop_keeps_it(tmp_path):
    # A snapshot of a series (named after its step) or of another run at a run's checkpoint name: the run warns, as
    # over another run's checkpoint, replaces it at its end, and keeps it where it stops before (a callback raising).
    nbody.Simulation(n=64, backend="cpu", seed=7).run(steps=20, snapshots=tmp_path / "s", snapshot_every=10)
    nbody.Simulation(n=32, backend="cpu").save(tmp_path / "other.h5")
    for name, what in (("s_00000010.hdf5", r"step 10, time 0\.1, named as a series' file of that step"),
                       ("other.h5", r"step 0, time 0, of another run")):
        path = tmp_path / name
        before = path.read_bytes()
        said = rf"^checkpoint='.*{re.escape(name)}' holds a snapshot \({what}\): this run replaces it when it ends"

        def stop(s):
            raise RuntimeError("stopped")
        sim = nbody.Simulation(n=256, backend="cpu")
        with pytest.warns(RuntimeWarning) as caught, pytest.raises(RuntimeError, match="stopped"):
            sim.run(steps=4, checkpoint=path, callback=stop, every=2)
        texts = [str(w.message) for w in caught]
        assert any(re.search(said, t) for t in texts), texts
        kept = f"{path} is kept: it holds a snapshot ({what.replace(chr(92), '')})"
        assert any(t.endswith(kept) for t in texts), texts
        assert path.read_bytes() == before, name
        with pytest.warns(RuntimeWarning, match=said):
            sim.run(steps=4, checkpoint=path)
        assert re.search(said, sim.last_run["checkpoint_replaced"])
        assert nbody.Simulation.restart(path, backend="cpu").n == 256


def test_a_checkpoint_of_the_moment_over_a_series_file_of_another_step_is_refused(tmp_path):
    # The periodic checkpoint a script restarted from, checkpointed back to after more steps: step 10's state, a point
    # a branch starts from, would be gone and its name would say step 10 of step 30's state. Refused before the write,
    # as run(checkpoint=...) and the command line refuse it; the same step's state written again is none of that.
    nbody.Simulation(n=64, backend="cpu").run(steps=20, checkpoint=tmp_path / "c.h5", checkpoint_every=10)
    periodic = tmp_path / "c_00000010.h5"
    sim = nbody.Simulation.restart(periodic, backend="cpu")
    sim.checkpoint(periodic)  # step 10 still
    before = periodic.read_bytes()
    sim.run(steps=20)
    with pytest.raises(ValueError, match=r"^Simulation\.checkpoint\('.*c_00000010\.h5'\): .*c_00000010\.h5 is the "
                                         r"checkpoint of step 10 of a series \(as its name says\), which this would "
                                         r"replace with step 30's state, step 10's own lost; name the series' own "
                                         r"checkpoint \(.*c\.h5\) or another file$"):
        sim.checkpoint(periodic)
    assert periodic.read_bytes() == before
    sim.checkpoint(tmp_path / "c.h5")  # the series' own, the state a restart goes on from
    assert nbody.Simulation.restart(tmp_path / "c.h5", backend="cpu").steps == 30


def test_a_file_another_run_writes_now_is_no_output_of_a_script(cli, tmp_path):
    # A notebook's save() or checkpoint() named as a file of a batch job's series, its --save or its diagnostics
    # series' working file: refused while the job runs, naming what holds it, with nothing written.
    cli("--version")  # skips where the command line is not built
    job = subprocess.Popen([os.environ["NBODY_EXECUTABLE"], "--backend", "cpu", "--quiet", "--run", "--bodies", "2048",
                            "--steps", "100000000", "--checkpoint", str(tmp_path / "c.h5"), "--checkpoint-every",
                            "10000000", "--save", str(tmp_path / "end.h5"), "--diagnostics", str(tmp_path / "d.csv")],
                           stderr=subprocess.PIPE, text=True)
    try:
        for lock in (".c_########.h5.lock", ".end.h5.lock", ".d.csv.lock", "d.csv.partial"):
            for _ in range(400):
                if (tmp_path / lock).exists() and (tmp_path / lock).stat().st_size:
                    break
                time.sleep(0.05)
        sim = nbody.Simulation(n=64, backend="cpu")
        held = r": is being written by another run now \(process %d on " % job.pid
        for write, name, said in ((sim.checkpoint, "c_00000100.h5", held), (sim.save, "c_00000200.hdf5", held),
                                  (sim.save, "end.h5", held), (sim.checkpoint, "end.h5", held),
                                  (sim.save, "d.csv.partial", r": is held open to be written now")):
            with pytest.raises(ValueError, match=said):
                write(tmp_path / name)
            assert name == "d.csv.partial" or not (tmp_path / name).exists(), name
    finally:
        job.send_signal(signal.SIGINT)
        assert job.wait(timeout=30) == 130, job.stderr.read()
    assert len(nbody.Simulation.load(tmp_path / "end.h5", backend="cpu").positions) == 2048


def test_close_lets_the_simulation_go_and_a_with_block_closes_it():
    with nbody.Simulation(n=64, backend="cpu") as sim:
        sim.run(steps=3)
        positions = sim.positions
    assert repr(sim) == "<nbody.Simulation (closed)>"
    for use in (lambda: sim.step(), lambda: sim.time, lambda: sim.positions, lambda: sim.save("x.h5"), lambda: len(sim)):
        with pytest.raises(RuntimeError, match=r"^this Simulation was closed \(close\(\), or the end of its with block\)"):
            use()
    assert positions.shape == (64, 3) and np.isfinite(positions).all()  # taken before: still valid
    sim.close()  # again: nothing
    other = nbody.Simulation(n=64, backend="cpu")
    other.close()
    with pytest.raises(RuntimeError, match="closed"):
        other.run(steps=1)


def test_a_callback_keeps_the_latest_state_in_the_runs_own_save(tmp_path):
    # A script that keeps its latest state in one file while it runs (the run's save= path, written by its callback):
    # the run's own file, written as the run writes it; the end's state is the run's last.
    sim = nbody.Simulation(n=64, backend="cpu")
    sim.run(steps=40, every=10, callback=lambda s: s.save(tmp_path / "state.h5"), save=tmp_path / "state.h5")
    assert nbody.Simulation.load(tmp_path / "state.h5", backend="cpu").time == sim.time


def test_close_from_the_runs_own_callback_is_refused_and_the_run_goes_on(tmp_path):
    sim = nbody.Simulation(n=64, backend="cpu")
    said = []

    def callback(s):
        try:
            s.close()
        except RuntimeError as e:
            said.append(str(e))

    sim.run(steps=4, every=2, callback=callback, diagnostics=tmp_path / "d.csv")
    assert said and said[0].startswith("close(): the simulation is running (a run() under way")
    assert sim.steps == 4 and sim.last_run["steps"] == 4
    sim.close()
    assert repr(sim) == "<nbody.Simulation (closed)>"


def test_a_write_that_is_refused_gives_its_refusal_not_a_warning(tmp_path):
    # A read-only snapshot of a series: save() refuses it (read-only), and does not first warn that it would replace it.
    nbody.Simulation(n=64, backend="cpu").run(steps=10, snapshots=tmp_path / "s", snapshot_every=10)
    path = tmp_path / "s_00000010.hdf5"
    os.chmod(path, 0o444)
    sim = nbody.Simulation(n=32, backend="cpu", seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=r"read-only"):
            sim.save(path)
