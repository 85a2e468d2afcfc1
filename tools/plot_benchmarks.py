#!/usr/bin/env python3
"""tools/plot_benchmarks.py - nbody's --json and --csv results as pictures.

    plot_benchmarks.py rate OUT.png BENCH.json...        interactions/s against N, one line per kernel and
                                                          launch mode (nbody --benchmark --json), with NVIDIA's
                                                          CUDA samples' reference figures
    plot_benchmarks.py threading OUT.png COMPARE...      step time against N for each threading model and
                                                          launch mode, one panel per device count
                                                          (nbody --compare-threading --json or --csv)
    plot_benchmarks.py gpus OUT.png COMPARE...           speed-up against the number of GPUs, one line per N
                                                          (the best way of driving them at each count)

Reads only what nbody writes; needs matplotlib (Debian: python3-matplotlib).
"""
import csv
import json
import sys
from collections import defaultdict

# NVIDIA's CUDA samples `nbody -benchmark` on one H200, read on the project's GPU machines on
# 2026-11-22 and 2026-11-24 (reference figures, not this project's code; docs/benchmarks.md quotes the
# large-N ones): N -> interactions/s.
CUDA_SAMPLES_H200 = {1024: 1024**2 / 35.6e-6, 4096: 4096**2 / 136.5e-6, 16384: 16384**2 / 540e-6,
                     65536: 1.410e12, 262144: 1.523e12, 1048576: 1.576e12}


def step_ms(row):
    """A row's time a step in ms: the median step, or for hermite4 (whose block steps differ in size
    and are timed as one run) the mean time a block step."""
    if "median_step_ms" in row:
        return float(row["median_step_ms"])
    return float(row["microseconds_per_block_step"]) * 1e-3


def load_rows(path):
    """--compare-threading rows from its JSON or CSV, as dicts with numbers where numbers are, each
    with its time a step as "step_ms"."""
    if path.endswith(".json"):
        data = json.load(open(path))
        if data.get("mode") != "compare-threading":
            raise SystemExit(f"{path}: not a --compare-threading result (mode {data.get('mode')!r})")
        rows = data["rows"]
    else:
        with open(path, newline="") as f:
            rows = [{"model": r["model"], "launch": r.get("launch", "stream"), "devices": int(r["devices"]),
                     "bodies": int(r["bodies"]), **{k: r[k] for k in ("median_step_ms", "microseconds_per_block_step")
                                                    if k in r}}
                    for r in csv.DictReader(f)]
    for r in rows:
        r["step_ms"] = step_ms(r)
    return rows


def figure():
    try:
        import matplotlib
    except ImportError:
        raise SystemExit("plot_benchmarks.py: needs matplotlib (Debian: python3-matplotlib; or a Python that has it)")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def plot_rate(out, paths):
    plt = figure()
    lines = defaultdict(dict)
    hardware = set()
    for p in paths:
        b = json.load(open(p))
        if b.get("mode") != "benchmark":
            raise SystemExit(f"{p}: not a --benchmark result (mode {b.get('mode')!r})")
        label = f"{b['kernel'].replace('/small-N', '').split()[0]} ({b.get('launch', 'stream')}, {b['devices']} device{'s' if b['devices'] > 1 else ''})"
        lines[label][b["bodies"]] = b["interactions_per_second"]
        hardware.add(b.get("hardware", ""))
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    for label, points in sorted(lines.items()):
        n = sorted(points)
        ax.plot(n, [points[k] for k in n], "o-", label="nbody " + label)
    n = sorted(CUDA_SAMPLES_H200)
    ax.plot(n, [CUDA_SAMPLES_H200[k] for k in n], "k--", alpha=0.6, label="CUDA samples, one H200 (docs/benchmarks.md)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("N (bodies)")
    ax.set_ylabel("interactions / s")
    ax.set_title("Force rate against N" + (f": {'; '.join(sorted(h for h in hardware if h))}" if hardware else ""),
                 fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def plot_threading(out, paths):
    plt = figure()
    rows = [r for p in paths for r in load_rows(p)]
    counts = sorted({r["devices"] for r in rows})
    fig, axes = plt.subplots(1, len(counts), figsize=(5 * len(counts), 4.2), squeeze=False)
    for ax, g in zip(axes[0], counts):
        series = defaultdict(dict)
        for r in rows:
            if r["devices"] == g:
                series[f"{r['model']} / {r.get('launch', 'stream')}"][r["bodies"]] = r["step_ms"] * 1e3
        for label, points in sorted(series.items()):
            n = sorted(points)
            ax.plot(n, [points[k] for k in n], "o-", label=label)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("N (bodies)")
        ax.set_ylabel("median step (us; hermite4: mean block step)")
        ax.set_title(f"{g} device{'s' if g > 1 else ''}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("Threading models and launch modes (nbody --compare-threading)", fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def plot_gpus(out, paths):
    plt = figure()
    rows = [r for p in paths for r in load_rows(p)]
    best = defaultdict(dict)  # N -> devices -> best step
    for r in rows:
        d = best[r["bodies"]]
        d[r["devices"]] = min(d.get(r["devices"], float("inf")), r["step_ms"])
    fig, ax = plt.subplots(figsize=(7, 4.5))
    top = 1
    for n in sorted(best):
        steps = best[n]
        if 1 not in steps:
            continue
        g = sorted(steps)
        top = max(top, g[-1])
        ax.plot(g, [steps[1] / steps[k] for k in g], "o-", label=f"N = {n:,}")
    ax.plot([1, top], [1, top], "k:", label="ideal")
    ax.set_xlabel("devices")
    ax.set_ylabel("speed-up over one device (best mode)")
    ax.set_title("Scaling with the device count (nbody --compare-threading)", fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def main(argv):
    if len(argv) < 4 or argv[1] not in ("rate", "threading", "gpus"):
        print(__doc__, file=sys.stderr)
        return 2
    {"rate": plot_rate, "threading": plot_threading, "gpus": plot_gpus}[argv[1]](argv[2], argv[3:])
    print("wrote", argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
