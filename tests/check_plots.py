#!/usr/bin/env python3
"""tests/check_plots.py - the plotting tools on what nbody writes: a few CPU benchmarks and
threading comparisons (hermite4's too) become PNGs (tools/plot_benchmarks.py), and so do diagnostics series in CSV
and JSON lines (tools/plot_diagnostics.py); a file of the wrong kind is refused. Exit 77 without
matplotlib.

    check_plots.py NBODY_EXECUTABLE PLOT_SCRIPT DIAGNOSTICS_PLOT_SCRIPT
"""
import importlib.util
import os
import subprocess
import shutil
import sys
import tempfile

try:
    import matplotlib  # noqa: F401
except ImportError as e:
    print(f"skipped: {e}")
    sys.exit(77)

nbody, script, diagnostics_script = sys.argv[1], sys.argv[2], sys.argv[3]
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL:", what)


def run(*args):
    r = subprocess.run(list(args), capture_output=True, text=True, timeout=300)
    print("$", " ".join(args), "->", r.returncode, r.stdout[-500:], r.stderr[-500:])
    return r


with tempfile.TemporaryDirectory() as d:
    p = lambda name: os.path.join(d, name)
    benches = []
    for n in (256, 1024):
        out = p(f"bench-{n}.json")
        check(run(nbody, "--backend", "cpu", "--benchmark", "--bodies", str(n), "--steps", "3", "--json", out)
              .returncode == 0, f"benchmark N={n}")
        benches.append(out)
    check(run(nbody, "--backend", "cpu", "--compare-threading", "--numgpus", "2", "--bodies", "256,512", "--steps", "2",
              "-q", "--json", p("compare.json"), "--csv", p("compare.csv")).returncode == 0, "compare-threading")
    for kind, inputs in (("rate", benches), ("threading", [p("compare.json")]), ("gpus", [p("compare.csv")])):
        png = p(f"{kind}.png")
        r = run(sys.executable, script, kind, png, *inputs)
        check(r.returncode == 0, f"{kind}: the script succeeds")
        check(os.path.exists(png) and open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n", f"{kind}: a PNG is written")
    # hermite4's comparison times block steps as one run: its rows carry a mean block step, not a median
    check(run(nbody, "--backend", "cpu", "--compare-threading", "--integrator", "hermite4", "--numgpus", "2",
              "--bodies", "128,256", "--steps", "20", "-q", "--json", p("hermite.json"), "--csv", p("hermite.csv"))
          .returncode == 0, "compare-threading, hermite4")
    for kind, inputs in (("threading", [p("hermite.json")]), ("gpus", [p("hermite.csv")])):
        png = p(f"hermite-{kind}.png")
        check(run(sys.executable, script, kind, png, *inputs).returncode == 0, f"{kind}, hermite4: the script succeeds")
        check(os.path.exists(png) and open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n",
              f"{kind}, hermite4: a PNG is written")
    r = run(sys.executable, script, "rate", p("wrong.png"), p("compare.json"))
    check(r.returncode != 0 and "not a --benchmark result" in r.stderr, "a comparison is refused as a benchmark")
    check(not os.path.exists(p("wrong.png")), "nothing written for the wrong input")

    for ext in ("csv", "jsonl"):
        check(run(nbody, "--backend", "cpu", "--run", "--bodies", "128", "--steps", "60", "--diagnostics-every", "10",
                  "-q", "--diagnostics", p(f"series.{ext}")).returncode == 0, f"a diagnostics series as {ext}")
    r = run(sys.executable, diagnostics_script, p("series.png"), p("series.csv"), p("series.jsonl"))
    check(r.returncode == 0, "diagnostics: the script succeeds on CSV and JSON lines")
    check(os.path.exists(p("series.png")) and open(p("series.png"), "rb").read(8) == b"\x89PNG\r\n\x1a\n",
          "diagnostics: a PNG is written")
    r = run(sys.executable, diagnostics_script, p("wrong-series.png"), p("compare.csv"))
    check(r.returncode != 0 and "not a diagnostics series" in r.stderr, "a comparison is refused as a series")

    # One body: W = 0, and its virial ratio is undefined (nan in CSV, null in JSON lines); the series is drawn.
    for ext in ("csv", "jsonl"):
        check(run(nbody, "--backend", "cpu", "--run", "--bodies", "1", "--steps", "4", "--diagnostics-every", "1",
                  "-q", "--diagnostics", p(f"one.{ext}")).returncode == 0, f"a one-body series as {ext}")
    r = run(sys.executable, diagnostics_script, p("one.png"), p("one.csv"), p("one.jsonl"))
    check(r.returncode == 0 and open(p("one.png"), "rb").read(8) == b"\x89PNG\r\n\x1a\n",
          "diagnostics: a one-body series (virial ratio undefined) is drawn")

    # Several series: each file keeps one colour in every panel (the radii's fractions differ by line style
    # only), so the lower-left panel tells the files apart as the others do.
    spec = importlib.util.spec_from_file_location("plot_diagnostics", diagnostics_script)
    plot_diagnostics = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plot_diagnostics)
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    names = ("series.csv", "series.jsonl")
    fig = plot_diagnostics.draw([(n, plot_diagnostics.load(p(n))) for n in names], plt)
    for ax in fig.axes:
        lines = [line for line in ax.get_lines() if line.get_label() and not line.get_label().startswith("_")]
        colours = {name: {line.get_color() for line in lines if line.get_label().endswith(name)} for name in names}
        title = ax.get_title()
        check(all(len(c) == 1 for c in colours.values()) and colours[names[0]] != colours[names[1]],
              f"diagnostics, panel '{title}': one colour a file, another for the other file ({colours})")
    energy = [ax for ax in fig.axes if ax.get_title().startswith("energy error")][0]
    check("Kb = |P|²/2M" in energy.get_title(), f"diagnostics: the panel says what Kb is ({energy.get_title()!r})")
    radii = [ax for ax in fig.axes if ax.get_title().startswith("Lagrangian")][0]
    styles = {line.get_linestyle() for line in radii.get_lines() if line.get_label().endswith(names[0])}
    check(len(styles) == 3, f"diagnostics: the three Lagrangian radii of a file in three line styles ({styles})")
    check(radii.get_ylabel() == "radius (the run's units)" and radii.get_xlabel() == "time (the run's units, G = 1)",
          f"diagnostics: the axes name the series' units ({radii.get_xlabel()!r}, {radii.get_ylabel()!r})")
    # A run in physical units: the series holds its own units' numbers, which --units (its --json report, or its
    # checkpoint) puts in Myr and pc; a 2 Myr run's axis ends at 2, not at 13.4.
    check(run(nbody, "--backend", "cpu", "--run", "--bodies", "128", "--mass-unit", "1e4Msun", "--length-unit", "1pc",
              "--t-end", "2Myr", "--diagnostics-dt", "0.5Myr", "-q", "--diagnostics", p("physical.csv"), "--json",
              p("physical.json")).returncode == 0, "a series in physical units")
    # Its checkpoint, where this nbody writes them (built with HDF5).
    run(nbody, "--backend", "cpu", "--run", "--bodies", "128", "--mass-unit", "1e4Msun", "--length-unit", "1pc",
        "--t-end", "2Myr", "-q", "--checkpoint", p("physical.h5"))
    # (An HDF5 file's units need h5py, which the interpreter running this may lack.)
    has_h5py = importlib.util.find_spec("h5py") is not None and os.path.exists(p("physical.h5"))
    for recorded in ("physical.json", "physical.h5") if has_h5py else ("physical.json",):
        fig = plot_diagnostics.draw([("physical.csv", plot_diagnostics.load(p("physical.csv")))], plt,
                                    plot_diagnostics.units_of(p(recorded)))
        radii = [ax for ax in fig.axes if ax.get_title().startswith("Lagrangian")][0]
        ends = max(x for line in radii.get_lines() for x in line.get_xdata())
        check(radii.get_xlabel() == "time (Myr)" and radii.get_ylabel() == "radius (pc)" and abs(ends - 2.0) < 0.01,
              f"diagnostics, units from {recorded}: time in Myr to 2, radii in pc ({radii.get_xlabel()!r}, "
              f"{radii.get_ylabel()!r}, last time {ends})")
    r = run(sys.executable, diagnostics_script, "--units", p("physical.csv"), p("u.png"), p("physical.csv"))
    check(r.returncode != 0 and "neither a report of nbody --json" in r.stderr and not os.path.exists(p("u.png")),
          f"diagnostics: --units of a file that records none is refused ({r.stderr.strip()})")
    r = run(sys.executable, diagnostics_script, "--units", p("physical.json"), p("u.png"), p("physical.csv"))
    check(r.returncode == 0 and os.path.exists(p("u.png")), f"diagnostics: --units on the command line ({r.stderr})")
    # The output forgotten (two series, or a series and its report): the first is not replaced by the picture.
    shutil.copy(p("series.csv"), p("first.csv"))
    before = open(p("first.csv"), "rb").read()
    r = run(sys.executable, diagnostics_script, p("first.csv"), p("series.csv"))
    check(r.returncode != 0 and "name it *.png" in r.stderr and open(p("first.csv"), "rb").read() == before,
          f"diagnostics: a series named as the output is refused and kept ({r.stderr.strip()})")
    # Two runs' series of one name, in two folders: the legend tells them apart by their folders.
    os.makedirs(p("base")), os.makedirs(p("job"))
    shutil.copy(p("series.csv"), p(os.path.join("base", "d.csv"))), shutil.copy(p("series.csv"), p(os.path.join("job", "d.csv")))
    check(plot_diagnostics.legend_names([p("base/d.csv"), p("job/d.csv")]) == ["base/d.csv", "job/d.csv"],
          "diagnostics: two series named d.csv are told apart by their folders")
    # One body: L0 = 0 about its centre, and the panel says it draws |L - L0| itself.
    fig = plot_diagnostics.draw([("one.csv", plot_diagnostics.load(p("one.csv")))], plt)
    angular = [ax for ax in fig.axes if ax.get_title().startswith("angular")][0]
    check(angular.get_ylabel().endswith("(|L - L0| where L0 = 0)"), f"diagnostics: L0 = 0 is said ({angular.get_ylabel()!r})")
    check(not os.path.exists(p("wrong-series.png")), "nothing written for the wrong series")
    # A series left unfinished (FILE.partial, where nbody's messages send the user) is read as its FILE.
    shutil.copy(p("series.csv"), p("left.csv.partial"))
    check(plot_diagnostics.load(p("left.csv.partial")) == plot_diagnostics.load(p("series.csv")),
          "diagnostics: a partial series is read as its file")

print("FAILED:" if failures else "ok", *failures, sep="\n  ")
sys.exit(1 if failures else 0)
