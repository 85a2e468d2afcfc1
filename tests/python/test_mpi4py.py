# tests/python/test_mpi4py.py - one simulation over the ranks of an mpi4py communicator
# (Simulation(comm=...)): 2 ranks under mpirun on the CPU give the positions and velocities of one
# process bit for bit (and its energy, on as many devices), a checkpoint the 2 ranks wrote
# continues in one process bit for bit, and a run's callback checkpoints to the run's own file.
# Run by pytest, which starts this same file under mpirun (NBODY_MPIEXEC, set by CTest); each rank then runs
# ranks_main().
import json
import os
import shutil
import subprocess
import sys
import warnings

import numpy as np
import pytest

import nbody

# Small enough for seconds on 2 shared cores; an odd count, so the ranks' shares differ.
SETTINGS = dict(scenario="plummer", n=1001, seed=7, softening=0.05, backend="cpu", threads=1)


def bits(a):
    """The array's bit patterns: equal only when every value is bit for bit the same."""
    return np.ascontiguousarray(a).view(np.uint64)


def ranks_main(out_dir):
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    checkpoint = os.path.join(out_dir, "ranks.h5")

    many = nbody.Simulation(**SETTINGS, comm=comm)
    assert "2 ranks" in many.description, many.description
    many.step(7)
    result = many.run(steps=13, checkpoint=checkpoint)
    assert result == 13, result
    positions, velocities = many.positions, many.velocities
    energy = many.diagnostics()["total"]
    many.step(5)
    later = many.positions

    # One process: the same settings, every body here.
    one = nbody.Simulation(**SETTINGS)
    assert "2 ranks" not in one.description, one.description
    one.step(20)
    same_state = bool(np.array_equal(bits(one.positions), bits(positions)) and
                      np.array_equal(bits(one.velocities), bits(velocities)))
    # The energy is summed device by device: one process over as many devices (2) sums it alike.
    two_devices = nbody.Simulation(**SETTINGS, numgpus=2)
    two_devices.step(20)
    same_energy = two_devices.diagnostics()["total"] == energy

    # The checkpoint the ranks wrote (rank 0), continued by each rank alone.
    comm.Barrier()
    restarted = nbody.Simulation.restart(checkpoint, threads=1, backend="cpu")
    restart_steps = restarted.steps
    same_restart = bool(np.array_equal(bits(restarted.positions), bits(positions)))
    restarted.step(5)
    same_continuation = bool(np.array_equal(bits(restarted.positions), bits(later)))

    # A run that does not resolve its orbit warns (rank 0, once the run has returned); a script that makes warnings
    # errors gets it raised on every rank alike, so that no rank goes on alone.
    import warnings
    unresolved = nbody.Simulation("two-body", eccentricity=0.99, softening=0.001, backend="cpu", comm=comm)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            unresolved.run(steps=2000, diagnostics=os.path.join(out_dir, "unresolved.csv"))
            raised = None
        except RuntimeWarning as e:
            raised = str(e)
    warned = unresolved.last_run["warnings"]
    comm.Barrier()

    # A series the run replaced (a new softening begins it again) is warned of on every rank alike too, though rank 0
    # alone found it.
    series = os.path.join(out_dir, "ranks.csv")
    many.run(steps=3, diagnostics=series)
    many.softening = 0.02  # SETTINGS' is 0.05
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            many.run(steps=3, diagnostics=series)
            replaced = None
        except RuntimeWarning as e:
            replaced = str(e)
    comm.Barrier()

    # Another run's snapshot in the folder: rank 0 checks the files it would write, and every rank refuses the run
    # with its words, none going on alone into the run.
    if rank == 0:
        os.makedirs(os.path.join(out_dir, "snaps"))
        open(os.path.join(out_dir, "snaps", "s_00000010.hdf5"), "w").close()
    comm.Barrier()
    try:
        nbody.Simulation(**SETTINGS, comm=comm).run(steps=2, snapshots=os.path.join(out_dir, "snaps", "s"))
        mixed = None
    except ValueError as e:
        mixed = str(e)

    # A run that blows up: rank 0 saves the last state checked sound, and every rank's result says so alike (a script
    # that branches on it takes the same path on every rank).
    blown = nbody.Simulation(n=64, dt=1e12, precision="fp32", backend="cpu", comm=comm)
    try:
        blown.run(steps=100, checkpoint=os.path.join(out_dir, "blown.h5"))
        blew = None
    except RuntimeError as e:
        blew = str(e)
    blown_result = dict(saved_step=blown.last_run["saved_step"], save_failure=blown.last_run["save_failure"])

    # The run's callback checkpoints to the run's own file, whose lock rank 0 holds: every rank takes part alike, none
    # taking that lock for another run's.
    own = os.path.join(out_dir, "own.h5")
    own_steps = []

    def save_own(s):
        s.checkpoint(own)
        own_steps.append(s.steps)

    nbody.Simulation(**SETTINGS, comm=comm).run(steps=4, checkpoint=own, callback=save_own, every=2)
    comm.Barrier()
    own_steps.append(nbody.Simulation.restart(own, threads=1, backend="cpu").steps)

    # A call one rank alone makes (a read on rank 0 after a step, while rank 1 steps on), or with other arguments, is
    # refused on every rank, naming both calls: it met the other rank's call in MPI, whose messages have other sizes
    # (a crash, or memory overwritten). The ranks stay together: the calls after it go on.
    lone = nbody.Simulation(**SETTINGS, comm=comm)
    lone.step(2)
    differed = []
    for mine in ((lambda: lone.positions) if rank == 0 else (lambda: lone.step(2)), lambda: lone.step(3 + rank),
                 lambda: lone.run(steps=2, checkpoint=os.path.join(out_dir, f"lone_{rank}.h5"))):
        try:
            mine()
            differed.append(None)
        except ValueError as e:
            differed.append(str(e))
    lone.step(1)
    together = lone.steps

    # A callback that raises on one rank stops the run on every rank, and is raised on every rank (the others' a
    # RuntimeError naming the rank and the exception); so is a KeyboardInterrupt there (a signal to one rank), as
    # itself. Before, only that rank raised, and the others went on alone.
    def raises_on_rank_1(kind):
        def callback(s):
            if rank == 1 and s.steps >= 4:
                raise kind("boom on rank 1")
        return callback

    callback_raised = []
    for kind in (ValueError, KeyboardInterrupt):
        try:
            lone.run(steps=10, callback=raises_on_rank_1(kind), every=2)
            callback_raised.append(None)
        except (Exception, KeyboardInterrupt) as e:
            callback_raised.append(f"{type(e).__name__}: {e}")
    lone.step(1)  # still together

    # Ctrl-C to one rank while the others' callback reads the state (a collective call): it came while rank 0 waited,
    # and rank 0 called no callback but voted to stop, which met rank 1's read in MPI (MPI_ERR_TRUNCATE, the job
    # aborted). Every rank now raises KeyboardInterrupt, at the same step.
    import signal
    import threading
    import time
    main = threading.get_ident()

    def reads(s):
        s.energy()
        if s.steps == lone_start + 2:
            if rank == 0:
                threading.Timer(0.1, lambda: signal.pthread_kill(main, signal.SIGINT)).start()
            else:
                time.sleep(0.5)  # rank 0 meanwhile waits for this rank

    lone_start = lone.steps
    try:
        lone.run(steps=20, callback=reads, every=1)
        signalled = None
    except KeyboardInterrupt:
        signalled = "KeyboardInterrupt"
    lone.step(1)
    signalled_steps = lone.steps

    # A tipsy save's warning, found by rank 0 alone (another program's parameter file beside the one with the units),
    # which a filter makes an error: raised on every rank alike, where rank 0 alone raised before.
    tipsy = os.path.join(out_dir, "tipsy")
    if rank == 0:
        os.makedirs(tipsy)
        with open(os.path.join(tipsy, "other.param"), "w") as f:
            f.write("dMsolUnit = 1\n")
    comm.Barrier()
    units = nbody.Simulation(**SETTINGS, mass_unit="1e3Msun", length_unit="1pc", comm=comm)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            units.save(os.path.join(tipsy, "s.bin"))
            save_raised = None
        except RuntimeWarning as e:
            save_raised = str(e)
    units.step(1)  # still together

    report = dict(rank=rank, size=comm.Get_size(), save_raised=save_raised, differed=differed, together=together,
                  own_steps=own_steps,
                  callback_raised=callback_raised, lone_steps=lone.steps, signalled=signalled,
                  signalled_steps=signalled_steps, same_state=same_state, same_energy=same_energy,
                  restart_steps=restart_steps, same_restart=same_restart, same_continuation=same_continuation,
                  raised=raised, warned=warned, replaced=replaced, mixed=mixed, blew=blew, blown_result=blown_result)
    reports = comm.gather(report, root=0)
    if rank == 0:
        print("REPORT " + json.dumps(reports), flush=True)


def test_two_ranks_are_one_process_bit_for_bit(tmp_path):
    if not nbody.mpi_built():
        pytest.skip("this nbody was built without MPI (test_comm_refused_without_mpi covers that build)")
    if not nbody.checkpoints_built():
        pytest.skip("this nbody was built without HDF5: no checkpoints")
    mpirun = os.environ.get("NBODY_MPIEXEC") or shutil.which("mpirun")
    assert mpirun, "no mpirun: NBODY_MPIEXEC (CTest sets it in a build with MPI) names none, nor does PATH"
    # Open MPI refuses root unless told (CI containers); a rank that hangs ends the job within a minute.
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMP_NUM_THREADS="1",
               NBODY_RANK_TIMEOUT="60")
    r = subprocess.run([mpirun, "-np", "2", "--oversubscribe", sys.executable, __file__, str(tmp_path)],
                       capture_output=True, text=True, timeout=240, env=env)
    assert r.returncode == 0, f"mpirun exited {r.returncode}:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    lines = [line for line in r.stdout.splitlines() if line.startswith("REPORT ")]
    assert len(lines) == 1, r.stdout
    reports = json.loads(lines[0][len("REPORT "):])
    assert [p["rank"] for p in reports] == [0, 1] and all(p["size"] == 2 for p in reports), reports
    for p in reports:
        assert p["same_state"], f"rank {p['rank']}: 2 ranks' positions and velocities differ from one process's"
        assert p["same_energy"], f"rank {p['rank']}: 2 ranks' energy differs from one process's on 2 devices"
        assert p["restart_steps"] == 20, p
        assert p["same_restart"], f"rank {p['rank']}: the 2 ranks' checkpoint restarts with other positions"
        assert p["same_continuation"], f"rank {p['rank']}: the restarted run goes on differently from the 2 ranks"
        assert p["raised"] and p["raised"].startswith("the energy changed by ") and p["raised"] == reports[0]["warned"][0], p
        assert p["replaced"] and "its series begins again at step 28" in p["replaced"], p
        assert p["mixed"] and "s_00000010.hdf5), another run's" in p["mixed"], p
        assert p["blew"] and "no longer finite" in p["blew"] and p["blew"] == reports[0]["blew"], p
        assert p["blown_result"] == dict(saved_step=0, save_failure=None), p
        assert p["own_steps"] == [2, 4, 4], p
        assert p["differed"] == [
            "rank 1 calls step(2) where rank 0 calls a read of the state (positions, velocities, masses or types): "
            "under MPI every rank makes the same calls of a simulation, with the same arguments, in the same order "
            "(each is collective)",
            "rank 1 calls step(4) where rank 0 calls step(3): under MPI every rank makes the same calls of a "
            "simulation, with the same arguments, in the same order (each is collective)",
            f"rank 1 calls run(steps=2, checkpoint='{tmp_path / 'lone_1.h5'}') where rank 0 calls run(steps=2, "
            f"checkpoint='{tmp_path / 'lone_0.h5'}'): under MPI every rank makes the same calls of a simulation, "
            "with the same arguments, in the same order (each is collective)"], p
        assert p["together"] == 3, p
        assert p["callback_raised"] == (
            ["ValueError: boom on rank 1", "KeyboardInterrupt: boom on rank 1"] if p["rank"] == 1 else
            ["RuntimeError: rank 1's run callback raised ValueError: boom on rank 1; the run stopped there on every "
             "rank", "KeyboardInterrupt: "]), p
        assert p["lone_steps"] == reports[0]["lone_steps"], p
        assert p["save_raised"] and "other.param beside" in p["save_raised"], p
        assert p["signalled"] == "KeyboardInterrupt" and p["signalled_steps"] == reports[0]["signalled_steps"], p
    # (ranks.earlier-1.csv: the series before the new softening, kept.)
    assert sorted(os.listdir(tmp_path)) == ["blown.h5", "own.h5", "ranks.csv", "ranks.earlier-1.csv", "ranks.h5",
                                            "snaps", "tipsy", "unresolved.csv"], os.listdir(tmp_path)
    assert os.listdir(tmp_path / "snaps") == ["s_00000010.hdf5"], "the refused run wrote a snapshot"


def test_a_rank_that_makes_no_simulation_ends_the_job_within_the_bound():
    # Rank 1's arguments are refused before it meets the others; rank 0 waited for it in a blocking MPI_Comm_dup for
    # ever, whatever NBODY_RANK_TIMEOUT said. Now that wait has the bound every other one has.
    if not nbody.mpi_built():
        pytest.skip("this nbody was built without MPI")
    mpirun = os.environ.get("NBODY_MPIEXEC") or shutil.which("mpirun")
    assert mpirun, "no mpirun: NBODY_MPIEXEC (CTest sets it in a build with MPI) names none, nor does PATH"
    script = ("from mpi4py import MPI\nimport nbody\nrank = MPI.COMM_WORLD.rank\n"
              "nbody.Simulation(n=64, backend='cpu', softening=0.01 if rank == 0 else -1.0, comm=MPI.COMM_WORLD)\n")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMP_NUM_THREADS="1",
               NBODY_RANK_TIMEOUT="5")
    r = subprocess.run([mpirun, "-np", "2", "--oversubscribe", sys.executable, "-c", script], capture_output=True,
                       text=True, timeout=120, env=env)
    assert r.returncode != 0
    assert "softening=-1.0: must be a positive length" in r.stderr, r.stderr[-3000:]
    assert ("rank 0 of 2: waited 5 s for the other ranks in making a simulation over the communicator (every rank "
            "makes it, with the same comm)") in r.stderr, r.stderr[-3000:]


def test_comm_must_be_an_mpi4py_communicator():
    with pytest.raises((TypeError, ValueError), match="comm"):
        nbody.Simulation(n=16, backend="cpu", comm="MPI_COMM_WORLD")


def test_comm_refused_without_mpi():
    if nbody.mpi_built():
        pytest.skip("this nbody was built with MPI")
    with pytest.raises(ValueError, match="built without MPI"):
        nbody.Simulation(n=16, backend="cpu", comm=object())


if __name__ == "__main__":
    ranks_main(sys.argv[1])
