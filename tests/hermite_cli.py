#!/usr/bin/env python3
"""tests/hermite_cli.py - the nbody command with --integrator hermite4, as a user runs it.

    hermite_cli.py NBODY CASE [MPIRUN]

bad_settings        --eta, --eta-start, --dt-max, --t-end out of bounds, and options that mean nothing with
                    hermite4 (--dt, --damping, --kernel; --eta with leapfrog): one line each, exit status 2.
steps_and_time      --steps counts block steps; --t-end 0.25 ends at time 0.25 exactly; --json reports the
                    block steps, force evaluations, the step levels' histogram, the interactions and the state hash
                    (--benchmark's for the same state); a --t-end the run has already reached makes no block step
                    and says so; one off the block times says where the run ended and how many bodies the end
                    shows predicted; samples and periodic checkpoints due at a run's last block step are written once.
restart_bitwise     100 + 100 block steps through a checkpoint, on 3 and then 2 host devices (workers), hold
                    the bits of 200 on one: /Hermite and the synchronised bodies, and --json's state hash. So
                    does a run from a checkpoint of step 0, in fp64 and in fp32. A step below the floor saves the
                    state where the run stopped, and a softening continues from it. With softening 0 too, restarted
                    with no options (the file's 0, not the scenario's softening) and with --softening 0; a switch
                    to leapfrog with the file's 0 is refused, naming the file. A restart with another softening
                    starts every body again (the file's accelerations and jerks are of the old potential).
interrupt           Ctrl-C in a run to a --t-end: exit status 130, the message says the block steps done and the
                    time reached of the one asked for, the checkpoint continues.
bad_checkpoint      a checkpoint whose HermiteEta or a body's Hermite step is out of bounds is refused, naming
                    the file and the attribute or body.
files               what a run takes from the files it starts from: a tipsy file whose bodies carry eps 0 (nbody's
                    own --save of an unsoftened run) runs hermite4 unsoftened, and another integrator at the default
                    0.01, which it says, as it does for bodies of different eps; a hermite4 checkpoint edited with
                    h5py (its checksum deleted) starts every body again from its particle groups as edited. A run
                    stopped at the step floor reports in --json every key a run that ends reports, its energy
                    warning, and what forced the short step for its eta.
ranks               (MPIRUN) mpirun -np 1, 2 and 3 (x 2 host devices on 2 ranks): the bits of one process; a
                    checkpoint of 2 ranks continued on 3 gives the bits of one run.
"""
import json
import os
import subprocess
import sys
import tempfile

nbody, case = sys.argv[1], sys.argv[2]
mpirun = sys.argv[3] if len(sys.argv) > 3 else None
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL:", what)


def run(args, prefix=(), timeout=240):
    cmd = [*prefix, nbody, "--backend", "cpu", *args]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    print("$", " ".join(cmd), "->", r.returncode)
    print(r.stdout[-2000:], r.stderr[-2000:])
    return r


def h5py_or_skip():
    try:
        import h5py  # noqa: F401
        import numpy  # noqa: F401
    except ImportError:
        print("h5py not installed: skipped")
        sys.exit(77)


def same_checkpoints(a, b, what):
    import h5py
    import numpy as np
    with h5py.File(a, "r") as fa, h5py.File(b, "r") as fb:
        for name in ["Positions", "Velocities", "Accelerations", "Jerks", "Times", "Steps"]:
            check(np.array_equal(fa["Hermite"][name][:], fb["Hermite"][name][:]), f"{what}: /Hermite/{name} differs")
        check(fa["Hermite"].attrs["Epoch"] == fb["Hermite"].attrs["Epoch"], f"{what}: Epoch differs")
        check(fa["Hermite"].attrs.get("Finish") == fb["Hermite"].attrs.get("Finish"), f"{what}: Finish differs")
        for group in ["PartType1", "PartType4", "PartType0"]:
            if group in fa:
                for name in ["Coordinates", "CoordinateRoundoff", "Velocities"]:
                    check(np.array_equal(fa[group][name][:], fb[group][name][:]), f"{what}: {group}/{name} differs")
        check(fa["Header"].attrs["Time"] == fb["Header"].attrs["Time"], f"{what}: Time differs")
        check(fa["Header"].attrs["Step"] == fb["Header"].attrs["Step"], f"{what}: Step differs")


H = ["--run", "--integrator", "hermite4", "--quiet"]

with tempfile.TemporaryDirectory() as d:
    p = lambda name: os.path.join(d, name)

    if case == "bad_settings":
        for args, message in [
            (["--eta", "0"], "--eta 0: must be in (0, 100]"),
            (["--eta", "101"], "--eta 101: must be in (0, 100]"),
            (["--eta", "nan"], "--eta nan: must be in (0, 100]"),
            (["--eta-start", "-1"], "--eta-start -1: must be in (0, 100]"),
            (["--eta", ""], "--eta '': must be a number in (0, 100]"),
            (["--eta-start", "x"], "--eta-start x: must be a number in (0, 100]"),
            (["--dt-max", ""], "--dt-max '': must be a number in [1e-09, 1e12]"),
            (["--dt-max", "0"], "--dt-max 0: must be in [1e-09, 1e12]"),
            (["--dt-max", "1e13"], "--dt-max 1e+13: must be in [1e-09, 1e12]"),
            (["--t-end", "inf"], "--t-end inf"),
            (["--t-end", "1e30"], "--t-end 1e30"),
            (["--dt", "0.01"], "--dt 0.01: hermite4 chooses each body's step"),
            (["--damping", "0.5"], "--damping 0.5: hermite4 does not damp"),
            (["--kernel", "simd"], "--kernel simd: hermite4 has its own"),
            (["--launch", "graph"], "--launch graph"),
        ]:
            r = run([*H, "--bodies", "64", *args])
            check(r.returncode == 2, f"{args}: exit status {r.returncode}, not 2")
            check(r.stderr.startswith("error: ") and message in r.stderr, f"{args}: message {r.stderr!r}")
            check(r.stderr.count("\n") == 1, f"{args}: not one line: {r.stderr!r}")
        r = run(["--run", "--bodies", "64", "--eta", "0.1", "--quiet"])
        check(r.returncode == 2 and "--eta: applies to --integrator hermite4 only" in r.stderr, "--eta with leapfrog")
        r = run(["--run", "--bodies", "64", "--softening", "0", "--quiet"])
        check(r.returncode == 2 and "--softening 0" in r.stderr, "--softening 0 with leapfrog")
        r = run([*H, "--bodies", "64", "--softening", "0", "--steps", "20"])
        check(r.returncode == 0, "hermite4 takes --softening 0")
        # A --dt-max off the powers of two runs with the one below it, and says so; a power of two says nothing.
        loud = ["--run", "--integrator", "hermite4"]  # notices show without --quiet
        r = run([*loud, "--bodies", "64", "--dt-max", "0.1", "--steps", "5", "--json", p("dt_max.json")])
        check(r.returncode == 0 and "notice: --dt-max 0.1: the longest step is 0.0625, the power of two at or below "
              "it" in r.stderr, f"--dt-max 0.1: {r.stderr!r}")
        check(json.load(open(p("dt_max.json")))["hermite4"]["longest_step"] == 0.0625, "--dt-max 0.1's longest step")
        check("dt_max 0.1, longest step 0.0625," in r.stdout, f"the run's header shows the longest step: {r.stdout!r}")
        # Accuracy parameters so small that a step falls below the floor: the run stops (exit 1), and the message
        # names the value that did it.
        r = run([*H, "--bodies", "64", "--eta-start", "1e-12", "--steps", "3"])
        check(r.returncode == 1 and "cannot start" in r.stderr and "eta_start is 1e-12 here" in r.stderr,
              f"--eta-start 1e-12: {r.stderr!r}")
        r = run([*H, "--bodies", "64", "--eta", "1e-12", "--steps", "3"])
        check(r.returncode == 1 and "below the floor" in r.stderr and "(this run: 1e-12)" in r.stderr,
              f"--eta 1e-12: {r.stderr!r}")
        # An eta below what the forces' rounding allows (about 1e-3 in fp32, 1e-7 in fp64): the steps would shrink
        # towards the floor, and the notice says why, with the way out.
        r = run([*loud, "--bodies", "64", "--eta", "3e-4", "--steps", "2"])
        check(r.returncode == 0 and "notice: --eta 0.0003: below about 0.001 with --precision fp32, the forces' "
              "rounding, not the orbits, sets the steps" in r.stderr and "(--precision fp64 allows one down to about "
              "1e-7)" in r.stderr, f"--eta 3e-4: {r.stderr!r}")
        r = run([*loud, "--bodies", "64", "--eta", "1e-8", "--precision", "fp64", "--steps", "2"])
        check(r.returncode == 0 and "notice: --eta 1e-08: below about 1e-07 with --precision fp64" in r.stderr,
              f"--eta 1e-8 in fp64: {r.stderr!r}")
        r = run([*loud, "--bodies", "64", "--eta", "1e-3", "--steps", "2"])
        check(r.returncode == 0 and "--eta" not in r.stderr, f"--eta 1e-3: {r.stderr!r}")
        r = run([*loud, "--bodies", "64", "--dt-max", "0.125", "--steps", "5"])
        check(r.returncode == 0 and "--dt-max" not in r.stderr, f"--dt-max 0.125: {r.stderr!r}")

    elif case == "steps_and_time":
        r = run([*H, "--bodies", "256", "--steps", "7", "--json", p("a.json")])
        check(r.returncode == 0, "--steps 7")
        j = json.load(open(p("a.json")))
        h = j["hermite4"]
        check(j["steps"] == 7 and j["step"] == 7 and h["block_steps"] == 7, f"--steps 7 made {j['steps']} block steps")
        check(j["dt"] is None and h["dt_max"] == 0.0625, f"dt {j['dt']}: hermite4 has no one step (its dt_max apart)")
        check(sum(h["step_level_histogram"]) == h["force_evaluations"] > 0, "histogram sums to the force evaluations")
        check(abs(h["force_evaluations_per_body"] - h["force_evaluations"] / 256) < 1e-12, "evaluations per body")
        # Force+jerk interactions: the start (N^2) and every evaluation against N bodies.
        check(h["interactions"] == 256 * 256 + h["force_evaluations"] * 256, f"interactions {h['interactions']}")
        # The rate is of the timed block steps: the start's pass, made before the clock starts, is counted but not
        # timed, so it is not in the rate.
        rate = h["force_evaluations"] * 256 / j["wall_seconds"]
        check(abs(h["interactions_per_second"] - rate) <= 1e-9 * rate,
              f"interactions/s {h['interactions_per_second']}, the block steps' {rate}")
        r = run([*H, "--bodies", "256", "--t-end", "0.25", "--json", p("b.json")])
        j = json.load(open(p("b.json")))
        check(r.returncode == 0 and j["time"] == 0.25 == j["t_end"], f"--t-end 0.25 ended at {j['time']}")
        check(j["hermite4"]["block_steps"] > 4, "--t-end 0.25 took block steps")
        check(abs(j["end"]["relative_energy_error"]) < 1e-6, f"energy error {j['end']['relative_energy_error']}")
        # A time off the block times ends there too, every body brought to it by a last step of its own: counted as
        # a block step, no notice, the energy kept as at a block time.
        r = run([*H, "--bodies", "64", "--t-end", "0.3", "--json", p("off.json")])
        j = json.load(open(p("off.json")))
        check(r.returncode == 0 and j["t_end"] == 0.3 == j["time"] and j["notices"] == [] and
              j["steps"] == j["hermite4"]["block_steps"] and abs(j["end"]["relative_energy_error"]) < 1e-6,
              f"--t-end 0.3 in --json: {j['t_end']}, {j['time']}, {j['notices']}, {j['end']}")
        # Diagnostics by time: a multiple of the longest step samples every body at each multiple; another the first
        # block time at or past each, said in a notice; neither changes a bit of the run. Fixed steps: the first step
        # at or past each. The multiples are the time's own, not counted from a restart's time.
        r = run([*H, "--bodies", "256", "--precision", "fp64", "--t-end", "1", "--json", p("plain.json")])
        plain = json.load(open(p("plain.json")))["hermite4"]["state_hash"]
        for dt, name in [("0.125", "dt125"), ("0.1", "dt1")]:
            r = run(["--run", "--integrator", "hermite4", "--bodies", "256", "--precision", "fp64", "--t-end", "1",
                     "--diagnostics", p(name + ".csv"), "--diagnostics-dt", dt, "--json", p(name + ".json")])
            times = [float(line.split(",")[1]) for line in open(p(name + ".csv")).read().splitlines()[1:]]
            hashed = json.load(open(p(name + ".json")))["hermite4"]["state_hash"]
            check(r.returncode == 0 and hashed == plain, f"--diagnostics-dt {dt}: state {hashed}, without {plain}")
            multiples = [k * float(dt) for k in range(1, int(round(1 / float(dt))))]
            check(len(times) == len(multiples) + 2 and times[0] == 0 and times[-1] == 1 and
                  all(m <= t < m + 0.0625 for m, t in zip(multiples, times[1:-1])),
                  f"--diagnostics-dt {dt}: sample times {times}")
            noticed = f"notice: --diagnostics-dt {dt}: not a multiple of the longest step 0.0625" in r.stderr
            check(noticed == (dt == "0.1"), f"--diagnostics-dt {dt}: {r.stderr!r}")
            if dt == "0.125":
                check(times == [k / 8 for k in range(9)], f"--diagnostics-dt 0.125: sample times {times}")
        r = run(["--run", "--bodies", "64", "--dt", "0.03", "--t-end", "1", "-q", "--diagnostics", p("lf.csv"),
                 "--diagnostics-dt", "0.25"])
        times = [line.split(",")[1] for line in open(p("lf.csv")).read().splitlines()[1:]]
        check(times == ["0", "0.27000000000000002", "0.51000000000000001", "0.75", "1.02"], f"leapfrog samples {times}")
        # A multiple that rounds a unit past a step's time (3 x 0.1 > 0.3, step 30's) is sampled there, not a step on.
        run(["--run", "--bodies", "64", "--dt", "0.01", "--t-end", "1", "-q", "--diagnostics", p("lf2.csv"),
             "--diagnostics-dt", "0.1"])
        steps = [int(line.split(",")[0]) for line in open(p("lf2.csv")).read().splitlines()[1:]]
        check(steps == list(range(0, 101, 10)), f"leapfrog --dt 0.01 --diagnostics-dt 0.1 sampled steps {steps}")
        # Samples closer than the block steps: one a block time, and the warning of the first one past the bound
        # is said even when the chunk after it makes no block step (the next block time past the next multiple).
        r = run([*H, "--bodies", "32", "--precision", "fp64", "--eta", "2", "--t-end", "1", "--diagnostics",
                 p("close.csv"), "--diagnostics-dt", "0.03", "--json", p("close.json")])
        steps = [int(line.split(",")[0]) for line in open(p("close.csv")).read().splitlines()[1:]]
        check(len(steps) == len(set(steps)) and steps == sorted(steps), f"samples of --diagnostics-dt 0.03: {steps}")
        check(r.stderr.startswith("warning: at step ") and r.stderr.count("\n") == 2,
              f"--diagnostics-dt 0.03's warnings: {r.stderr!r}")
        # A cadence too fine for the time to resolve (below a few units in its last place): a sample at every block
        # step, as fixed steps have one at every step.
        r = run([*H, "--bodies", "32", "--t-end", "0.25", "--diagnostics", p("fine.csv"), "--diagnostics-dt", "1e-30",
                 "--json", p("fine.json")])
        steps = [int(line.split(",")[0]) for line in open(p("fine.csv")).read().splitlines()[1:]]
        made = json.load(open(p("fine.json")))["steps"]
        check(r.returncode == 0 and steps == list(range(0, made + 1)),
              f"--diagnostics-dt 1e-30 sampled steps {steps[:12]} of {made}")
        # The notice is in --json's notices; so is one for a start off the longest step's grid (a leapfrog state at
        # 0.3), where even a multiple of it is no block time of every body.
        j = json.load(open(p("close.json")))
        check(any(n.startswith("--diagnostics-dt 0.03: not a multiple of the longest step 0.0625") for n in j["notices"]),
              f"--json's notices: {j['notices']}")
        run(["--run", "--bodies", "64", "--t-end", "0.3", "-q", "--checkpoint", p("lf03.h5")])
        r = run(["--run", "--restart", p("lf03.h5"), "--integrator", "hermite4", "--t-end", "0.5", "--diagnostics",
                 p("e.csv"), "--diagnostics-dt", "0.125"])
        check("notice: --diagnostics-dt 0.125: each sample is at the first block time at or past its multiple, most "
              "bodies predicted to it (every body is at the start time 0.3" in r.stderr, f"epoch 0.3: {r.stderr!r}")
        run([*H, "--bodies", "64", "--t-end", "0.1875", "--checkpoint", p("mid.h5")])
        run(["--run", "--restart", p("mid.h5"), "--t-end", "0.75", "--quiet", "--diagnostics", p("mid.csv"),
             "--diagnostics-dt", "0.25"])
        times = [float(line.split(",")[1]) for line in open(p("mid.csv")).read().splitlines()[1:]]
        check(times == [0.1875, 0.25, 0.5, 0.75], f"samples of a restart at 0.1875: {times}")
        for args, message in [(["--diagnostics-dt", "0.1"], "--diagnostics-dt 0.1: give --diagnostics FILE too"),
                              (["--diagnostics", p("x.csv"), "--diagnostics-dt", "0"],
                               "--diagnostics-dt 0: must be a time in (0, 1e+27]"),
                              (["--diagnostics", p("x.csv"), "--diagnostics-dt", "0.1", "--diagnostics-every", "3"],
                               "--diagnostics-dt 0.1 and --diagnostics-every 3 both given; give one of them")]:
            r = run([*H, "--bodies", "64", "--t-end", "1", *args])
            check(r.returncode == 2 and message in r.stderr and r.stderr.count("\n") == 1, f"{args}: {r.stderr!r}")
        # --json's state hash is --benchmark's for the same state (5 warm-up + 20 timed block steps, 25 run).
        run(["--benchmark", "--integrator", "hermite4", "--bodies", "256", "--steps", "20", "--warmup", "5", "--json",
             p("bench.json")])
        run([*H, "--bodies", "256", "--steps", "25", "--json", p("run.json")])
        bench_hash = json.load(open(p("bench.json")))["hermite4"]["state_hash"]
        run_hash = json.load(open(p("run.json")))["hermite4"]["state_hash"]
        check(bench_hash == run_hash, f"--run's state hash {run_hash}, --benchmark's {bench_hash}")
        # A time already reached: a new run's 0, a checkpoint's own time; a new run's time before its start is a
        # mistake, refused.
        r = run(["--run", "--integrator", "hermite4", "--bodies", "64", "--t-end", "0"])
        check(r.returncode == 0 and "notice: --t-end 0: the run is already at time 0; no block steps" in r.stderr,
              f"--t-end 0: {r.stderr!r}")
        r = run(["--run", "--integrator", "hermite4", "--bodies", "64", "--t-end", "-1"])
        check(r.returncode == 2 and r.stderr == "error: --t-end -1: the run starts at time 0 and goes forward; give a "
              "later time\n", f"--t-end -1: {r.stderr!r}")
        # A --t-end off the block times ends at it, every body there (its checkpoint: the epoch moved to it, every
        # body's block time 0), with no notice; one on them likewise.
        r = run(["--run", "--integrator", "hermite4", "--bodies", "256", "--t-end", "1.03", "--json", p("c.json"),
                 "--checkpoint", p("c.h5")])
        j = json.load(open(p("c.json")))
        check(r.returncode == 0 and j["time"] == 1.03 and "notice" not in r.stderr,
              f"--t-end 1.03 ended at {j['time']}: {r.stderr!r}")
        try:
            import h5py
            with h5py.File(p("c.h5"), "r") as f:
                check(f["Header"].attrs["Time"] == 1.03 and f["Hermite"].attrs["Epoch"] == 1.03 and
                      (f["Hermite/Times"][:] == 0).all(), "--t-end 1.03: the checkpoint's bodies all at 1.03")
        except ImportError:
            pass
        # A restart of the periodic checkpoint at the last block step before 1.03 (a signal could stop a run there
        # too) goes on to the run's end by itself, and ends with the bits of the run that never stopped.
        before = j["hermite4"]["block_steps"] - 1
        r = run(["--run", "--integrator", "hermite4", "--bodies", "256", "--t-end", "1.03", "--checkpoint", p("k.h5"),
                 "--checkpoint-every", str(before), "--quiet"])
        r = run(["--run", "--restart", p(f"k_{before:08d}.h5"), "--json", p("k.json")])
        k = json.load(open(p("k.json")))
        check(r.returncode == 0 and k["time"] == 1.03 and k["steps"] == 1 and
              k["hermite4"]["state_hash"] == j["hermite4"]["state_hash"],
              f"restart of the block step before 1.03: {k['time']}, {k['steps']} steps: {r.stderr!r}")
        r = run(["--run", "--integrator", "hermite4", "--bodies", "256", "--t-end", "0.25"])
        check(r.returncode == 0 and "notice" not in r.stderr, f"--t-end 0.25: {r.stderr!r}")
        # Before the first block time: the one step of every body to it.
        r = run(["--run", "--integrator", "hermite4", "--bodies", "64", "--t-end", "1e-5", "--json", p("z.json")])
        z = json.load(open(p("z.json")))
        check(r.returncode == 0 and "notice" not in r.stderr and "time 1e-05 after 1 block step" in r.stdout,
              f"--t-end 1e-5: {r.stdout!r} {r.stderr!r}")
        check(z["steps"] == 1 and z["hermite4"]["force_evaluations"] == 64, f"--t-end 1e-5: {z['hermite4']}")
        # Samples and periodic checkpoints due at the last block step of a run to a time are written once.
        blocks = json.load(open(p("b.json")))["hermite4"]["block_steps"]
        r = run(["--run", "--integrator", "hermite4", "--bodies", "256", "--t-end", "0.25", "--diagnostics",
                 p("d.csv"), "--diagnostics-every", str(blocks), "--checkpoint", p("e.h5"), "--checkpoint-every",
                 str(blocks)])
        steps = [line.split(",")[0] for line in open(p("d.csv")).read().splitlines()[1:]]
        check(steps == ["0", str(blocks)], f"diagnostics rows at steps {steps}, block steps {blocks}")
        check(r.stdout.count("periodic checkpoint") + r.stderr.count("periodic checkpoint") == 1,
              f"periodic checkpoints: {r.stdout!r} {r.stderr!r}")
        run([*H, "--bodies", "64", "--t-end", "0.25", "--checkpoint", p("q.h5")])
        r = run(["--run", "--restart", p("q.h5"), "--t-end", "0.125"])
        check(r.returncode == 0 and "notice: --t-end 0.125: the run is already at time 0.25" in r.stderr,
              f"a restart past --t-end: {r.stderr!r}")
        # Leapfrog from a hermite4 file: the file's Dt is its dt_max, which a --dt does not override; without one,
        # leapfrog's own, said.
        r = run(["--run", "--restart", p("q.h5"), "--integrator", "leapfrog", "--steps", "2"])
        check(r.returncode == 0 and "hermite4 run, which has no fixed step, at leapfrog's dt 0.01 (--dt chooses "
              "another)" in r.stderr, f"leapfrog from hermite4: {r.stderr!r}")
        r = run(["--run", "--restart", p("q.h5"), "--eta-start", "0.5", "--steps", "2"])
        check(r.returncode == 0 and "--eta-start 0.5 overrides " + p("q.h5") + "'s 0.01 (it chooses first steps: the "
              "file's bodies go on from their own, so it changes nothing now)" in r.stderr, f"--eta-start: {r.stderr!r}")
        r = run(["--run", "--restart", p("q.h5"), "--integrator", "leapfrog", "--dt", "0.001", "--steps", "2"])
        check(r.returncode == 0 and "--dt" not in r.stderr, f"leapfrog from hermite4 with --dt: {r.stderr!r}")

    elif case == "restart_bitwise":
        h5py_or_skip()
        common = [*H, "--bodies", "300", "--precision", "fp64"]
        check(run([*common, "--steps", "200", "--checkpoint", p("a.h5"), "--json", p("a.json")]).returncode == 0,
              "200 steps")
        check(run([*common, "--steps", "100", "--checkpoint", p("b.h5"), "--numgpus", "3", "--threading", "workers",
                   "--json", p("b.json")]).returncode == 0, "100 steps on 3 devices")
        check(run(["--run", "--restart", p("b.h5"), "--steps", "100", "--checkpoint", p("c.h5"), "--quiet",
                   "--numgpus", "2", "--json", p("c.json")]).returncode == 0, "100 more on 2 devices")
        same_checkpoints(p("a.h5"), p("c.h5"), "restart")
        # --json's state hash: the end state's, so equal for the same state and not for another.
        hashes = [json.load(open(p(name)))["hermite4"]["state_hash"] for name in ["a.json", "b.json", "c.json"]]
        check(all(len(h) == 16 and int(h, 16) >= 0 for h in hashes), f"state hashes {hashes}")
        check(hashes[0] == hashes[2] != hashes[1], f"state hashes of 200, 100 and 100 + 100 block steps: {hashes}")
        # A checkpoint of step 0 (--steps 0) in each precision: the run that starts again from it has the bits of
        # the run that never stopped. (An fp32 file's synchronised velocities are floats; the Hermite group's are
        # the state.)
        for precision in ["fp64", "fp32"]:
            start = [*H, "--bodies", "256", "--precision", precision]
            check(run([*start, "--steps", "0", "--checkpoint", p(f"z_{precision}.h5")]).returncode == 0,
                  f"step 0 in {precision}")
            check(run([*start, "--steps", "30", "--checkpoint", p(f"d_{precision}.h5")]).returncode == 0,
                  f"30 steps in {precision}")
            check(run(["--run", "--restart", p(f"z_{precision}.h5"), "--steps", "30", "--checkpoint",
                       p(f"r_{precision}.h5"), "--quiet"]).returncode == 0, f"30 steps from step 0 in {precision}")
            same_checkpoints(p(f"d_{precision}.h5"), p(f"r_{precision}.h5"), f"restart from step 0 in {precision}")
        # A step below the floor stops the run between whole block steps: its checkpoint holds that state (each body's
        # Hermite state with it), from which a softening continues, as the error's advice says.
        plunge = [*H, "--scenario", "two-body", "--eccentricity", "0.99999999999", "--softening", "0", "--precision",
                  "fp64", "--t-end", "20"]
        r = run([*plunge, "--checkpoint", p("floor.h5"), "--json", p("floor.json")])
        failed = json.load(open(p("floor.json"))) if os.path.exists(p("floor.json")) else {}
        saved = failed.get("saved_step")
        check(failed.get("saved_state") == "where the run stopped", f"--json's saved_state: {failed.get('saved_state')!r}")
        check(r.returncode == 1 and "below the floor" in r.stderr and saved and
              f"checkpoint {p('floor.h5')} holds step {saved}, where the run stopped" in r.stderr,
              f"the floor's checkpoint: exit status {r.returncode}, saved step {saved}: {r.stderr!r}")
        import h5py
        with h5py.File(p("floor.h5"), "r") as f:
            check(f["Header"].attrs["Step"] == saved and f["Header"].attrs["Time"] > 3 and "Hermite" in f,
                  f"the floor's checkpoint holds step {f['Header'].attrs['Step']} at time {f['Header'].attrs['Time']}")
            check(failed.get("step") == saved and failed.get("time") == f["Header"].attrs["Time"],
                  f"--json's end: step {failed.get('step')}, time {failed.get('time')}")
        r = run(["--run", "--restart", p("floor.h5"), "--softening", "1e-3", "--eta-start", "100", "--t-end", "4"])
        check(r.returncode == 0, f"a softening from the floor's checkpoint: exit status {r.returncode}: {r.stderr!r}")
        # Softening 0 (hermite4's alone): a restart keeps the file's 0, whether it names it or not.
        unsoftened = [*H, "--bodies", "128", "--precision", "fp64", "--softening", "0"]
        check(run([*unsoftened, "--steps", "40", "--checkpoint", p("s40.h5")]).returncode == 0, "40 unsoftened")
        check(run([*unsoftened, "--steps", "20", "--checkpoint", p("s20.h5")]).returncode == 0, "20 unsoftened")
        for name, extra in [("plain.h5", []), ("named.h5", ["--softening", "0"])]:
            r = run(["--run", "--restart", p("s20.h5"), "--steps", "20", "--checkpoint", p(name), "--quiet", *extra])
            check(r.returncode == 0, f"unsoftened restart {extra}: exit status {r.returncode}: {r.stderr!r}")
            if r.returncode == 0:
                same_checkpoints(p("s40.h5"), p(name), f"unsoftened restart {extra}")
        r = run(["--run", "--restart", p("s20.h5"), "--steps", "1", "--integrator", "leapfrog", "--quiet"])
        check(r.returncode == 2 and f"{p('s20.h5')}'s softening 0" in r.stderr, f"leapfrog from softening 0: {r.stderr!r}")
        r = run(["--run", "--restart", p("s20.h5"), "--steps", "1", "--integrator", "leapfrog", "--softening", "0"])
        check(r.returncode == 2 and "--softening 0: must be a length in (0, 1e+12]" in r.stderr and
              r.stderr.count("\n") == 1, f"leapfrog with --softening 0 on a restart: {r.stderr!r}")

        # A restart with another softening: the file's accelerations and jerks are of the old potential, so every
        # body starts again from the synchronised state (before, the first correctors mixed the two potentials:
        # an energy error of 5e-3 over the next half time unit, where a start gives 2e-8).
        run([*common, "--softening", "0.5", "--t-end", "0.5", "--checkpoint", p("soft.h5")])
        r = run(["--run", "--restart", p("soft.h5"), "--softening", "0.01", "--t-end", "1", "--json", p("re.json")])
        error = json.load(open(p("re.json")))["end"]["relative_energy_error"]
        check(r.returncode == 0 and "hermite4 starts every body again at time 0.5: " in r.stderr and
              "accelerations and jerks were of the softening 0.5" in r.stderr, f"softening restart: {r.stderr!r}")
        check(error < 1e-6, f"a restart with another softening: energy error {error}")

    elif case == "bad_checkpoint":
        h5py_or_skip()
        import h5py
        import numpy as np
        import shutil
        check(run([*H, "--bodies", "100", "--steps", "20", "--checkpoint", p("a.h5")]).returncode == 0, "write")
        # A finish's state (a run to a time off the block times) says so in /Hermite's Finish, a whole number 1.
        check(run([*H, "--bodies", "100", "--t-end", "0.3", "--checkpoint", p("fin.h5")]).returncode == 0, "finish")
        with h5py.File(p("fin.h5"), "r") as f:
            check(f["Hermite"].attrs.get("Finish") == 1, f"Finish: {dict(f['Hermite'].attrs)}")
        for name, value, message in [("finish_real.h5", 1.9, "Hermite/Finish is not a whole number"),
                                     ("finish_two.h5", np.int32(2), "Hermite/Finish is 2; must be at most 1")]:
            shutil.copy(p("fin.h5"), p(name))
            with h5py.File(p(name), "r+") as f:
                del f["Hermite"].attrs["Finish"]
                f["Hermite"].attrs["Finish"] = value
            r = run(["--run", "--restart", p(name), "--steps", "1", "--quiet"])
            check(r.returncode == 2 and message in r.stderr, f"{name}: {r.returncode} {r.stderr!r}")
        for name, change, message in [
            ("eta.h5", lambda f: f["Header"].attrs.modify("HermiteEta", 1e9), "Header/HermiteEta 1e+09: must be in"),
            ("dtmax.h5", lambda f: f["Header"].attrs.modify("HermiteDtMax", -1.0), "Header/HermiteDtMax -1"),
            ("step.h5", lambda f: f["Hermite/Steps"].__setitem__(3, 0.3), "/Hermite: body 3 has the Hermite step 0.2999"),
        ]:
            shutil.copy(p("a.h5"), p(name))
            with h5py.File(p(name), "r+") as f:
                change(f)
                if "Checksum" in f["Header"].attrs:
                    del f["Header"].attrs["Checksum"]  # the bounds, not the checksum, must catch it
            r = run(["--run", "--restart", p(name), "--steps", "1", "--quiet"])
            check(r.returncode == 2, f"{name}: exit status {r.returncode}")
            check(p(name) in r.stderr and message in r.stderr, f"{name}: message {r.stderr!r}")

    elif case == "interrupt":
        import signal
        import time
        cmd = [nbody, "--backend", "cpu", "--run", "--integrator", "hermite4", "--bodies", "1024", "--t-end", "1000",
               "--checkpoint", p("i.h5")]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = proc.stdout.readline()  # "nbody run: ...": the block steps are under way once the start is done
        check(line.startswith("nbody run:"), f"first line {line!r}")
        time.sleep(1.5)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        print("$", " ".join(cmd), "-> SIGINT ->", proc.returncode)
        print(out[-1000:], err[-1000:])
        check(proc.returncode == 130, f"exit status {proc.returncode}")
        check(err.startswith("interrupted (Ctrl-C) after ") and " block steps, at time " in err and " of 1000; state "
              "saved" in err, f"message {err!r}")
        r = run(["--run", "--restart", p("i.h5"), "--steps", "5", "--quiet"])
        check(r.returncode == 0, "the interrupted run's checkpoint continues")

    elif case == "files":
        import struct
        # nbody's own tipsy file of an unsoftened run: every body's eps 0.
        r = run([*H, "--bodies", "64", "--softening", "0", "--t-end", "0.25", "--save", p("soft0.bin")])
        check(r.returncode == 0, "an unsoftened run saves")
        r = run(["--run", "--integrator", "hermite4", "--load", p("soft0.bin"), "--steps", "2", "--json", p("h.json")])
        check(r.returncode == 0 and json.load(open(p("h.json")))["softening"] == 0,
              f"hermite4 runs the file's eps 0 unsoftened: {r.stderr!r}")
        check(f"notice: softening 0 from {p('soft0.bin')}: no softening, which hermite4 takes" in r.stderr,
              f"and says so: {r.stderr!r}")
        check("softening 0, eta 0.02" in r.stdout, f"the header shows the softening: {r.stdout!r}")
        r = run(["--run", "--load", p("soft0.bin"), "--steps", "2", "--json", p("l.json")])
        check(r.returncode == 0 and json.load(open(p("l.json")))["softening"] == 0.01, f"leapfrog: 0.01 {r.stderr!r}")
        check(f"notice: {p('soft0.bin')}'s bodies carry eps 0 (no softening), which only hermite4 takes: this run's "
              "is 0.01 (--softening sets it)" in r.stderr, f"leapfrog says which softening it runs: {r.stderr!r}")
        # Bodies of different eps: one softening for all, said with the file's range.
        with open(p("soft0.bin"), "rb") as f:
            raw = bytearray(f.read())
        count = struct.unpack(">i", raw[8:12])[0]
        check(count == 64 and len(raw) == 32 + 44 * 64, "64 stars of 44 bytes")
        raw[32 + 36:32 + 40] = struct.pack(">f", 0.05)  # star 0's eps
        raw[32 + 44 + 36:32 + 44 + 40] = struct.pack(">f", 0.002)  # star 1's
        with open(p("mixed.bin"), "wb") as f:
            f.write(raw)
        r = run(["--run", "--integrator", "hermite4", "--load", p("mixed.bin"), "--steps", "2", "--json", p("m.json")])
        check(r.returncode == 0 and json.load(open(p("m.json")))["softening"] == 0.01, f"mixed eps: {r.stderr!r}")
        check(f"notice: {p('mixed.bin')}'s bodies carry eps from 0 to 0.05, and nbody has one softening for every "
              "body: this run's is 0.01 (--softening sets it)" in r.stderr, f"mixed eps said: {r.stderr!r}")

        # A hermite4 checkpoint edited with h5py: its particle groups, as edited, are the bodies.
        h5py_or_skip()
        import h5py
        import numpy as np
        r = run([*H, "--bodies", "128", "--t-end", "0.5", "--checkpoint", p("h.h5")])
        check(r.returncode == 0, "a checkpoint at t = 0.5")
        with h5py.File(p("h.h5"), "r+") as f:
            f["PartType4/Velocities"][:] = 0  # every star stopped
            del f["Header"].attrs["Checksum"]
        r = run(["--run", "--restart", p("h.h5"), "--steps", "0", "--json", p("e.json")])
        j = json.load(open(p("e.json"))) if r.returncode == 0 else {}
        check(r.returncode == 0 and j["start"]["kinetic"] == 0, f"the edit is the start: {r.stderr!r}")
        check(j.get("start", {}).get("relative_energy_error") == 0,
              f"another system: its error is measured from its own start: {j.get('start')}")
        check(f"notice: hermite4 starts every body again at time 0.5 from {p('h.h5')}'s particle groups (PartType*), "
              "as edited" in r.stderr, f"and says so: {r.stderr!r}")

        # Stopped at the floor with an eta far above the usual (a plunging orbit reaches the floor at its first
        # pericentre whatever the build's arithmetic): the advice is a smaller eta; the report is whole.
        plunge = [*H, "--scenario", "two-body", "--eccentricity", "0.99999999999", "--softening", "0", "--precision",
                  "fp64", "--t-end", "20", "--eta", "0.5"]
        r = run([*plunge, "--json", p("f.json")])
        check(r.returncode == 1 and "eta far above the usual 0.01 to 0.05 (this run: 0.5)" in r.stderr and
              "a smaller eta or a larger softening resolves it" in r.stderr, f"the floor's advice: {r.stderr!r}")
        failed = json.load(open(p("f.json")))
        r = run([*H, "--bodies", "256", "--softening", "0", "--t-end", "0.5", "--json", p("ok.json")])
        ended = json.load(open(p("ok.json")))
        check(set(ended) <= set(failed), f"keys a failed run's report lacks: {sorted(set(ended) - set(failed))}")
        check(failed["end"] is None and failed["interrupted"] is False and failed["softening"] == 0,
              f"a failed run's end, interruption and softening: {failed}")
        # A run that warned on the way and then failed keeps the warning (a chaotic cluster: where this build's
        # arithmetic takes it to the floor).
        r = run([*H, "--bodies", "256", "--softening", "0", "--eta", "2", "--t-end", "4", "--diagnostics",
                 p("d.csv"), "--diagnostics-dt", "0.25", "--json", p("w.json")])
        warned = json.load(open(p("w.json")))
        if r.returncode == 1:
            check(warned["energy_warning"] is not None and "did not resolve" in warned["energy_warning"],
                  f"its energy warning, said on the way: {warned['energy_warning']!r}")
        # One stopped in its start pass, before its first step, reports so too, with the same keys.
        r = run([*H, "--bodies", "64", "--eta-start", "1e-12", "--steps", "3", "--json", p("s.json")])
        check(r.returncode == 1 and "cannot start" in r.stderr, f"a start below the floor: {r.stderr!r}")
        started = json.load(open(p("s.json"))) if os.path.exists(p("s.json")) else {}
        check(set(ended) <= set(started), f"keys its report lacks: {sorted(set(ended) - set(started))}")
        check("cannot start" in str(started.get("failure")) and started.get("steps") == 0 and
              started.get("saved_step") is None, f"its report: {started}")

    elif case == "ranks":
        h5py_or_skip()
        if not mpirun:
            print("no mpirun: skipped")
            sys.exit(77)
        common = [*H, "--bodies", "300", "--precision", "fp64", "--steps", "120"]
        check(run([*common, "--checkpoint", p("one.h5")]).returncode == 0, "one process")
        for ranks, extra in [(1, []), (2, ["--numgpus", "2"]), (3, [])]:
            name = p(f"ranks{ranks}.h5")
            r = run([*common, "--checkpoint", name, *extra], prefix=(mpirun, "-np", str(ranks), "--oversubscribe"))
            check(r.returncode == 0, f"{ranks} ranks")
            if r.returncode == 0:
                same_checkpoints(p("one.h5"), name, f"{ranks} ranks")
        part = [*H, "--bodies", "300", "--precision", "fp64"]
        r = run([*part, "--steps", "50", "--checkpoint", p("half.h5")], prefix=(mpirun, "-np", "2", "--oversubscribe"))
        check(r.returncode == 0, "50 steps on 2 ranks")
        r = run(["--run", "--restart", p("half.h5"), "--steps", "70", "--checkpoint", p("rest.h5"), "--quiet"],
                prefix=(mpirun, "-np", "3", "--oversubscribe"))
        check(r.returncode == 0, "70 more on 3 ranks")
        if r.returncode == 0:
            same_checkpoints(p("one.h5"), p("rest.h5"), "restart on 3 ranks")
        # A point-symmetric cluster around a moving body at its centre (body 0): its forces cancel, so it starts from
        # its strongest pull's criterion, which every rank finds on the host from the gathered state: the bits of one process.
        import struct
        import numpy as np
        rng = np.random.default_rng(3)
        pairs = [(rng.normal(size=3), 0.3 * rng.normal(size=3)) for _ in range(100)]
        stars = [((0.0, 0.0, 0.0), (0.3, -0.2, 0.1))]
        for x, v in pairs:
            stars += [(tuple(x), tuple(v)), (tuple(-x), tuple(-v))]
        with open(p("symmetric.tipsy"), "wb") as f:
            f.write(struct.pack(">diiiiii", 0.0, len(stars), 3, 0, 0, len(stars), 0))
            for x, v in stars:
                f.write(struct.pack(">11f", 1.0 / len(stars), *x, *v, 0.0, 0.0, 0.0, 0.0))
        def same_bits_on_ranks(args, stem, what):
            check(run([*args, "--checkpoint", p(f"{stem}_one.h5")]).returncode == 0, f"{what} in one process")
            for ranks in (2, 3):
                name = p(f"{stem}_ranks{ranks}.h5")
                r = run([*args, "--checkpoint", name], prefix=(mpirun, "-np", str(ranks), "--oversubscribe"))
                check(r.returncode == 0, f"{what} on {ranks} ranks")
                if r.returncode == 0:
                    same_checkpoints(p(f"{stem}_one.h5"), name, f"{what} on {ranks} ranks")

        same_bits_on_ranks([*H, "--load", p("symmetric.tipsy"), "--softening", "0.01", "--precision", "fp64", "--steps",
                            "60"], "sym", "the symmetric cluster")
        # A run to a time off the block times (0.3): the finish at it is the same bits on 1 to 3 ranks as in one
        # process.
        same_bits_on_ranks([*H, "--bodies", "300", "--precision", "fp64", "--t-end", "0.3"], "t", "to 0.3")

    else:
        print("unknown case", case)
        sys.exit(2)

if failures:
    print(len(failures), "failure(s)")
    sys.exit(1)
print("ok")
