#!/usr/bin/env python3
"""tests/hermite_benchmark.py - nbody --benchmark and --compare-threading with --integrator hermite4, as a
benchmarker runs them.

    hermite_benchmark.py NBODY CASE [MPIRUN]

benchmark   --steps block steps timed after the warm-up; the --json figures agree with each other (pairs = force
            evaluations x N, the step levels sum to the force evaluations, rates = counts / wall seconds, the
            simulation time advanced) and with --run's counters over the same block steps; 2 and 3 host devices
            (both threading models, weights) end in the same state; --t-end times the block steps --run takes
            to that time; options that mean nothing here are refused with one line.
compare     --compare-threading over two sizes and 1..2 host devices: a row per model and device count, block
            steps/s and pairs/s in its table, --json and --csv, every row of a size in the same end state.
ranks       (MPIRUN) mpirun -np 2 --benchmark and --compare-threading: the end state of one process.
"""
import csv
import json
import os
import subprocess
import sys
import tempfile

nbody, case = sys.argv[1], sys.argv[2]
mpirun = sys.argv[3] if len(sys.argv) > 3 else None
failures = []
H = ["--integrator", "hermite4", "--softening", "0.01", "--threads", "1"]


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


def close(a, b, rel=1e-9):
    return abs(a - b) <= rel * max(abs(a), abs(b))


def benchmark(path, *args, prefix=()):
    r = run(["--benchmark", *H, "--json", path, *args], prefix=prefix)
    check(r.returncode == 0, f"--benchmark {' '.join(args)} runs")
    return json.load(open(path)) if r.returncode == 0 else None


with tempfile.TemporaryDirectory() as d:
    p = lambda name: os.path.join(d, name)

    if case == "benchmark":
        n, steps, warmup = 700, 150, 3
        j = benchmark(p("one.json"), "--bodies", str(n), "--steps", str(steps), "--warmup", str(warmup))
        if j:
            h = j["hermite4"]
            check(j["mode"] == "benchmark" and j["integrator"] == "hermite4", "mode and integrator")
            check(j["timed_steps"] == steps == h["block_steps"], "--steps block steps timed")
            check(j["warmup_steps"] == warmup, "warm-up steps reported")
            check("median_step_ms" not in j, "no per-step device median: block steps have none")
            check(h["interactions"] == h["force_evaluations"] * n > 0, "pairs = force evaluations x N")
            check(sum(h["step_level_histogram"]) == h["force_evaluations"], "the levels sum to the force evaluations")
            check(close(h["mean_active_bodies"], h["force_evaluations"] / steps), "mean active = evaluations / steps")
            check(close(h["interactions_per_second"], h["interactions"] / h["wall_seconds"]), "pairs/s")
            check(close(j["interactions_per_second"], h["interactions_per_second"]), "the headline is the pairs/s")
            check(close(h["block_steps_per_second"], steps / h["wall_seconds"]), "block steps/s")
            check(close(h["microseconds_per_block_step"], 1e6 * h["wall_seconds"] / steps), "us a block step")
            check(close(j["wall_mean_step_ms"], 1e3 * h["wall_seconds"] / steps), "wall mean per block step")
            check(close(j["gflops"], 60e-9 * h["interactions_per_second"]), "60 flops a pair")
            check(0 <= h["simulation_time_start"] < h["simulation_time_end"], "simulation time advances")
            check(close(h["simulation_time_per_second"],
                        (h["simulation_time_end"] - h["simulation_time_start"]) / h["wall_seconds"]), "time/s")
            check(len(h["state_hash"]) == 16, "the end state's hash")
            # At the top too, as a fixed-step report has them, with the block steps made to that state.
            check(j["state_hash"] == h["state_hash"] and j["steps_made"] == warmup + steps, "state_hash, steps_made")
            check(j["dt"] is None and j["softening"] == 0.01, "no dt (each body its own), the softening")
            # --run's counters of the warm-up alone and of the warm-up and the timed block steps: the benchmark's
            # are the difference (the start's pass of all N x N pairs is in both).
            counts = {}
            for k in (warmup, warmup + steps):
                r = run(["--run", *H, "--bodies", str(n), "--steps", str(k), "--quiet", "--json", p(f"run{k}.json")])
                check(r.returncode == 0, f"--run --steps {k}")
                if r.returncode == 0:
                    counts[k] = json.load(open(p(f"run{k}.json")))["hermite4"]
            if len(counts) == 2:
                a, b = counts[warmup], counts[warmup + steps]
                check(b["block_steps"] - a["block_steps"] == steps, "--run: the same block steps")
                check(b["force_evaluations"] - a["force_evaluations"] == h["force_evaluations"],
                      "the force evaluations of --run's same block steps")
                check(b["interactions"] - a["interactions"] == h["interactions"], "the pairs of --run's same block steps")
                check(b["interactions"] == b["force_evaluations"] * n + n * n, "--run: the start's N x N pairs and active x N")
            for extra in (["--numgpus", "2"], ["--numgpus", "3", "--threading", "workers"],
                          ["--numgpus", "2", "--weights", "1,3"]):
                o = benchmark(p("layout.json"), "--bodies", str(n), "--steps", str(steps), "--warmup", str(warmup),
                              *extra)
                if o:
                    check(o["devices"] == int(extra[1]), f"{extra}: devices reported")
                    check(o["hermite4"]["state_hash"] == h["state_hash"], f"{extra}: the end state of one device")
                    check(o["hermite4"]["interactions"] == h["interactions"], f"{extra}: the same pairs")
        # To a time: every block step from the warm-up's end up to it, as many as --run takes there.
        t = benchmark(p("t.json"), "--bodies", str(n), "--t-end", "0.25", "--warmup", str(warmup))
        r = run(["--run", *H, "--bodies", str(n), "--t-end", "0.25", "--quiet", "--json", p("run_t.json")])
        check(r.returncode == 0, "--run --t-end 0.25")
        if t and r.returncode == 0:
            c = json.load(open(p("run_t.json")))["hermite4"]
            check(t["hermite4"]["t_end"] == 0.25 and t["hermite4"]["simulation_time_end"] == 0.25, "--t-end reached")
            check(t["timed_steps"] == t["hermite4"]["block_steps"] == c["block_steps"] - warmup,
                  "--t-end: the block steps --run takes to that time, less the warm-up")
        # What hermite4 cannot do, or what means nothing here: one line each, exit status 2.
        for args, says in [(["--launch", "graph"], "--launch graph"), (["--dt", "0.01"], "--dt 0.01"),
                           (["--steps", "0"], "--steps 0"), (["--t-end", "0.0001"], "--t-end 0.0001: the run is at"),
                           (["--t-end", "1"], "hermite4 only")]:
            hermite = "hermite4 only" not in says  # the last: leapfrog
            r = run(["--benchmark", *(H if hermite else []), "--bodies", "64", *args])
            lines = r.stderr.strip().splitlines()
            check(r.returncode == 2 and len(lines) == 1 and says in lines[0], f"{args} refused with one line")
        r = run(["--compare-threading", *H, "--bodies", "64", "--t-end", "1"])
        check(r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, "--compare-threading --t-end refused")

    elif case == "compare":
        r = run(["--compare-threading", *H, "--bodies", "300,1000", "--numgpus", "2", "--steps", "60",
                 "--json", p("c.json"), "--csv", p("c.csv"), "--quiet"])
        check(r.returncode == 0, "--compare-threading runs")
        check("block steps/s" in r.stdout and "interactions/s" in r.stdout, "the table's figures")
        check("same state, bit for bit" in r.stdout, "the rows agree, and it says so")
        if r.returncode == 0:
            rows = json.load(open(p("c.json")))["rows"]
            check(len(rows) == 2 * 2 * 2, "sizes x models x device counts")
            for size in (300, 1000):
                mine = [x for x in rows if x["bodies"] == size]
                check(len({x["state_hash"] for x in mine}) == 1 and mine[0]["bitwise_agrees"] is None and
                      all(x["bitwise_agrees"] for x in mine[1:]),
                      f"N = {size}: every row in one end state (the first with none before it to agree with)")
                check(all(x["block_steps"] == 60 and x["interactions"] == x["force_evaluations"] * size > 0
                          for x in mine), f"N = {size}: 60 block steps of active x N pairs")
                check(all(close(x["block_steps_per_second"], 60 / x["wall_seconds"]) for x in mine),
                      f"N = {size}: block steps/s")
            check({(x["model"], x["devices"]) for x in rows} ==
                  {("single", 1), ("single", 2), ("workers", 1), ("workers", 2)}, "both models on 1 and 2 devices")
            table = list(csv.DictReader(open(p("c.csv"))))
            check(len(table) == len(rows) and
                  [t["bitwise_agrees"] for t in table] == ["", "true", "true", "true"] * 2, "the CSV")

    elif case == "ranks":
        if not mpirun:
            print("no mpirun: skipped")
            sys.exit(77)
        mpi = (mpirun, "-np", "2", "--oversubscribe")
        one = benchmark(p("one.json"), "--bodies", "500", "--steps", "80")
        two = benchmark(p("two.json"), "--bodies", "500", "--steps", "80", prefix=mpi)
        if one and two:
            check(two["hermite4"]["state_hash"] == one["hermite4"]["state_hash"], "2 ranks: the end state of one")
            check(two["hermite4"]["interactions"] == one["hermite4"]["interactions"], "2 ranks: the same pairs")
            check(two["devices"] == 2, "2 ranks: 2 devices")
        r = run(["--compare-threading", *H, "--bodies", "500", "--steps", "40", "--json", p("c.json"), "--quiet"],
                prefix=mpi)
        check(r.returncode == 0, "--compare-threading over 2 ranks")
        if r.returncode == 0:
            rows = json.load(open(p("c.json")))["rows"]
            check(len(rows) == 4 and len({x["state_hash"] for x in rows}) == 1, "2 ranks: every row in one end state")
    else:
        print("unknown case", case)
        sys.exit(2)

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("ok")
