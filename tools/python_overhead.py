#!/usr/bin/env python3
# tools/python_overhead.py - what the Python front end adds: sim.step() per call against the same
# step timed in C++ (`nbody --benchmark --json`, and the same driver::measure via sim.benchmark),
# and reading sim.positions (and, on one GPU, sim.device_positions) at a large N. Prints a table.
#
#   PYTHONPATH=build/python python3 tools/python_overhead.py --backend cuda --nbody build/app/nbody
#
# Both sides use the same settings (backend, precision, threading single, launch stream, leapfrog,
# plummer seed 42). Times are wall clock: the Python loop's mean per step includes the final wait
# for the device, like the benchmark's wall_mean_step_ms; median_step_ms is the device's own time.
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import nbody


def cli_benchmark(exe, args, steps, warmup):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "bench.json")
        cmd = [exe, "--benchmark", "--quiet", "--backend", args.backend, "--precision", args.precision,
               "--bodies", str(args.step_bodies), "--steps", str(steps), "--warmup", str(warmup), "--json", out]
        if args.backend == "cuda":
            cmd += ["--numgpus", "1"]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, timeout=600)
        with open(out) as f:
            return json.load(f)


def python_step_loop(sim, steps):
    """Mean wall time per step() call over `steps` calls, the last step waited for."""
    sim.synchronize()
    t0 = time.perf_counter()
    for _ in range(steps):
        sim.step()
    sim.synchronize()
    return (time.perf_counter() - t0) / steps


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--backend", default="auto", choices=["auto", "cpu", "cuda"])
    p.add_argument("--precision", default="fp32", choices=["fp32", "fp64"])
    p.add_argument("--step-bodies", type=int, default=1024, help="N for the step overhead (default 1024)")
    p.add_argument("--bodies", type=int, default=1 << 20, help="N for reading positions (default 1M)")
    p.add_argument("--steps", type=int, default=0, help="timed steps per repeat (0: about 0.5 s worth)")
    p.add_argument("--repeats", type=int, default=5, help="repeats; the median is reported")
    p.add_argument("--reads", type=int, default=10, help="positions reads (each after a step)")
    p.add_argument("--nbody", default=os.environ.get("NBODY_EXECUTABLE") or shutil.which("nbody"),
                   help="the nbody executable for the C++ figure (default: $NBODY_EXECUTABLE, else PATH)")
    args = p.parse_args()
    backend = args.backend
    if backend == "auto":
        backend = "cuda" if nbody.cuda_built() and nbody.devices() else "cpu"
    args.backend = backend
    gpu = dict(numgpus=1) if backend == "cuda" else {}
    rows = []  # (what, value, unit, note)

    # (a) step overhead at N = step_bodies.
    sim = nbody.Simulation(n=args.step_bodies, backend=backend, precision=args.precision, **gpu)
    sim.step(20)
    probe = python_step_loop(sim, 50)
    steps = args.steps or max(100, min(100000, int(0.5 / max(probe, 1e-7))))
    py = statistics.median(python_step_loop(sim, steps) for _ in range(args.repeats))
    inproc = [sim.benchmark(steps=steps, warmup=20) for _ in range(args.repeats)]
    cpp_wall = statistics.median(r["wall_mean_step_ms"] for r in inproc) * 1e-3
    cpp_median = statistics.median(r["median_step_ms"] for r in inproc) * 1e-3
    rows.append(("sim.step() per call, Python loop", py * 1e6, "us", f"{steps} calls x {args.repeats}"))
    rows.append(("C++ step, sim.benchmark wall mean", cpp_wall * 1e6, "us", "driver::measure in-process"))
    rows.append(("C++ step, sim.benchmark median", cpp_median * 1e6, "us", "device/clock time per step"))
    if args.nbody:
        cli = [cli_benchmark(args.nbody, args, steps, 20) for _ in range(args.repeats)]
        cli_wall = statistics.median(r["wall_mean_step_ms"] for r in cli) * 1e-3
        rows.append(("C++ step, nbody --benchmark wall mean", cli_wall * 1e6, "us", args.nbody))
        rows.append(("C++ step, nbody --benchmark median",
                     statistics.median(r["median_step_ms"] for r in cli) * 1e6 * 1e-3, "us", ""))
        reference = cli_wall
    else:
        reference = cpp_wall
        rows.append(("(no nbody executable: C++ figure in-process)", 0.0, "", "give --nbody"))
    rows.append(("Python overhead per step (loop - C++ wall)", (py - reference) * 1e6, "us",
                 "target: within 5 us"))
    description = sim.description
    del sim

    # (b) reading positions at N = bodies.
    t0 = time.perf_counter()
    big = nbody.Simulation(n=args.bodies, backend=backend, precision=args.precision, **gpu)
    setup = time.perf_counter() - t0
    first, again = [], []
    for _ in range(args.reads):
        big.step()
        big.synchronize()
        t = time.perf_counter()
        a = big.positions
        first.append(time.perf_counter() - t)
        t = time.perf_counter()
        b = big.positions
        again.append(time.perf_counter() - t)
        assert a.shape == (args.bodies, 3) and b.shape == a.shape
        del a, b  # the next state may reuse the memory
    rows.append((f"sim.positions, first read after a step, N={args.bodies}", statistics.median(first) * 1e3, "ms",
                 f"median of {args.reads}; target <= 5 ms"))
    rows.append(("sim.positions, again at the same step", statistics.median(again) * 1e3, "ms", "the same view"))
    held = []
    big.step()
    big.synchronize()
    held.append(big.positions)
    big.step()
    big.synchronize()
    t = time.perf_counter()
    held.append(big.positions)
    rows.append(("sim.positions, first read, an older array held", (time.perf_counter() - t) * 1e3, "ms",
                 "new memory for the new step"))
    if backend == "cuda":
        t = time.perf_counter()
        view = big.device_positions
        cai = view.__cuda_array_interface__
        rows.append(("sim.device_positions (no copy)", (time.perf_counter() - t) * 1e3, "ms",
                     f"{cai['typestr']} {cai['shape']} at {cai['data'][0]:#x}"))

    print(f"nbody Python overhead: backend {backend}, {args.precision}; {description}")
    print(f"  (N={args.bodies} set up in {setup:.1f} s)")
    print(f"{'measurement':<52} {'value':>12}  unit  note")
    for what, value, unit, note in rows:
        print(f"{what:<52} {value:12.3f}  {unit:<4}  {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
