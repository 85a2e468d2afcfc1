#!/usr/bin/env python3
"""tools/plot_diagnostics.py - a diagnostics series (nbody --run --diagnostics FILE) as a picture.

    plot_diagnostics.py OUT.png SERIES [SERIES...]

Four panels against simulation time, one line (or set of lines) per series: the relative energy
error |E - E0| / |E0| (log scale), the virial ratio 2K/|W|, the Lagrangian radii holding 10, 50 and
90% of the mass, and the drift of the angular momentum |L - L0| / |L0| (log scale; a leapfrog keeps
it to rounding). Times and radii are in the run's units (G = 1), as the series holds them. Reads .csv and .jsonl (JSON lines) series as nbody writes them; with several
series, the legend names each by its file.

Needs matplotlib (Debian: python3-matplotlib).
"""
import csv
import json
import math
import os
import sys
import tempfile


def number(v):
    """A JSON value as a float: null (a virial ratio where W = 0) is NaN, as the CSV writes it."""
    return math.nan if v is None else float(v)


def load(path):
    """A series as a dict of column name -> list of floats; vectors as name_x, name_y, name_z."""
    needed = ("time", "relative_energy_error", "virial_ratio", "r10", "r50", "r90", "angular_momentum_x")
    wrong = SystemExit(f"{path}: not a diagnostics series written by nbody --diagnostics "
                       f"(columns {', '.join(needed)} expected)")
    rows = []
    # A series still being written, or left by a run that stopped early, is FILE.partial: read as FILE.
    name = path[:-len(".partial")] if path.endswith(".partial") else path
    try:
        if name.endswith(".csv"):
            with open(path, newline="") as f:
                reader = csv.DictReader(f)
                if any(k not in (reader.fieldnames or []) for k in needed):
                    raise wrong
                rows = [{k: float(v) for k, v in r.items()} for r in reader]
        elif name.endswith(".jsonl") or name.endswith(".json"):
            with open(path) as f:
                for line in f:
                    if not line.strip():
                        continue
                    r = json.loads(line)
                    flat = {}
                    for k, v in r.items():
                        if isinstance(v, list):
                            for axis, x in zip("xyz", v):
                                flat[f"{k}_{axis}"] = number(x)
                        elif isinstance(v, dict):
                            flat.update({kk: number(vv) for kk, vv in v.items()})
                        else:
                            flat[k] = number(v)
                    rows.append(flat)
        else:
            raise SystemExit(f"{path}: not a diagnostics series (name a .csv or .jsonl file)")
    except (OSError, ValueError, KeyError) as e:
        raise SystemExit(f"{path}: cannot read a diagnostics series: {e}")
    if not rows or any(k not in rows[0] for k in needed):
        raise wrong
    return {k: [r[k] for r in rows] for k in rows[0]}


def angular_momentum_drift(s):
    lx, ly, lz = s["angular_momentum_x"], s["angular_momentum_y"], s["angular_momentum_z"]
    l0 = (lx[0], ly[0], lz[0])
    norm0 = math.sqrt(sum(c * c for c in l0))
    drift = []
    for x, y, z in zip(lx, ly, lz):
        d = math.sqrt((x - l0[0]) ** 2 + (y - l0[1]) ** 2 + (z - l0[2]) ** 2)
        drift.append(d / norm0 if norm0 > 0 else d)
    return drift


def positive(t, values):
    """The points of (t, values) with a positive value, for a log scale."""
    kept = [(x, y) for x, y in zip(t, values) if y > 0]
    return [x for x, _ in kept], [y for _, y in kept]


def draw(series, plt):
    """The four panels of [(name, series)] as a matplotlib figure: one colour a file in every panel,
    the Lagrangian radii's fractions told apart by line style."""
    fig, axes = plt.subplots(2, 2, figsize=(11, 7.5), sharex=True)
    (energy, virial), (radii, angular) = axes
    drawn = {energy: False, angular: False}  # a log scale needs a positive value drawn
    for index, (name, s) in enumerate(series):
        t = s["time"]
        label = name if len(series) > 1 else None
        colour = f"C{index}"
        # Zeros (the first sample's, by definition) have no place on a log scale: they are left out.
        kept = positive(t, s["relative_energy_error"])
        drawn[energy] |= bool(kept[0])
        energy.plot(*kept, color=colour, label=label)
        virial.plot(t, s["virial_ratio"], color=colour, label=label)
        for key, style in (("r10", ":"), ("r50", "-"), ("r90", "--")):
            radii.plot(t, s[key], style, color=colour, label=f"{key[1:]}%" + (f" {name}" if label else ""))
        kept = positive(t, angular_momentum_drift(s))
        drawn[angular] |= bool(kept[0])
        angular.plot(*kept, color=colour, label=label)
    # A quantity that is 0 at every sample (one body; a series of its first sample alone) has nothing to put on a log
    # scale, where matplotlib would fail: the panel says so instead.
    for ax, has_values in drawn.items():
        if has_values:
            ax.set_yscale("log")
        else:
            ax.text(0.5, 0.5, "0 at every sample", transform=ax.transAxes, ha="center", va="center", color="grey")
    energy.set_ylabel("|E - E0| / |E0|")
    energy.set_title("energy error")
    if all(math.isnan(v) for _, s in series for v in s["virial_ratio"]):
        virial.text(0.5, 0.5, "undefined at every sample (W = 0)", transform=virial.transAxes, ha="center",
                    va="center", color="grey")
    virial.axhline(1.0, color="grey", lw=0.8, ls=":")
    virial.set_ylabel("2K / |W|")
    virial.set_title("virial ratio")
    # The series is in the run's units (G = 1), whatever physical scale the run had (its --json's "units" says it).
    radii.set_ylabel("radius (N-body units)")
    radii.set_title("Lagrangian radii (10, 50, 90% of the mass)")
    radii.legend(fontsize="small")
    angular.set_ylabel("|L - L0| / |L0|")
    angular.set_title("angular momentum drift")
    for ax in (radii, angular):
        ax.set_xlabel("time (N-body units)")
    if len(series) > 1:
        energy.legend(fontsize="small")
    return fig


def main(argv):
    if len(argv) < 3:
        raise SystemExit(__doc__)
    out, paths = argv[1], argv[2:]
    series = [(os.path.basename(p), load(p)) for p in paths]
    try:
        import matplotlib
    except ImportError:
        raise SystemExit("plot_diagnostics.py: needs matplotlib (Debian: python3-matplotlib; or a Python that has it)")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = draw(series, plt)
    fig.tight_layout()
    # Whole or not at all: a temporary file beside OUT, renamed over it once written.
    folder = os.path.dirname(os.path.abspath(out))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(out) + ".", suffix=".png", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            fig.savefig(f, dpi=110, format="png")
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)  # as a new file would have, not mkstemp's 0600
        os.replace(tmp, out)
    except BaseException:
        os.unlink(tmp)
        raise
    print(f"wrote {out}")


if __name__ == "__main__":
    main(sys.argv)
