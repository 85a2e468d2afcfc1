#!/usr/bin/env python3
"""tools/plot_diagnostics.py - a diagnostics series (nbody --run --diagnostics FILE) as a picture.

    plot_diagnostics.py [--units FILE] OUT.png SERIES [SERIES...]

Four panels against simulation time, one line (or set of lines) per series: the relative energy
error |E - E0| / |E0 - Kb| (log scale), the virial ratio 2K/|W|, the Lagrangian radii holding 10, 50 and
90% of the mass, and the drift of the angular momentum |L - L0| / |L0| (log scale; a leapfrog keeps
it to rounding; |L - L0| itself where L0 = 0). Reads .csv and .jsonl (JSON lines) series as nbody writes them; with
several series, the legend names each by its file.

A series holds times and radii in the run's units (G = 1), whatever physical scale the run had. --units FILE takes
that scale from a file of the run that records it: its --json report, or one of its HDF5 checkpoints or snapshots
(needs h5py); the axes are then in years (Gyr, Myr, kyr, yr) and in the run's length unit. Every series drawn is
taken to be in those units.

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


# The time units the axis may be in, largest first (a year is the Julian year, as nbody's and astropy's yr).
TIME_UNITS = (("Gyr", 3.15576e16), ("Myr", 3.15576e13), ("kyr", 3.15576e10), ("yr", 3.15576e7), ("d", 86400.0),
              ("s", 1.0))


def units_of(path):
    """The scale a run's file records, as {"time_s", "length_cm", "length"} ("length" as given: "1pc"), or None where
    the run was in N-body units. SystemExit for a file that records no run."""
    try:
        if path.endswith(".json"):
            with open(path) as f:
                report = json.load(f)
            if not isinstance(report, dict) or "units" not in report:
                raise SystemExit(f"--units {path}: not a report of nbody --json (no \"units\" in it)")
            u = report["units"]
            if u is None:
                return None
            return {"time_s": float(u["time_s"]), "length_cm": float(u["length_cm"]), "length": str(u["length"])}
        with open(path, "rb") as f:
            if f.read(8) != b"\x89HDF\r\n\x1a\n":
                raise SystemExit(f"--units {path}: neither a report of nbody --json (.json) nor an HDF5 file of the "
                                 "run")
        try:
            import h5py
        except ImportError:
            raise SystemExit(f"--units {path}: reading an HDF5 file needs h5py (Debian: python3-h5py); or give the "
                             "run's --json report")
        with h5py.File(path, "r") as f:
            header = f["Header"].attrs if "Header" in f else {}
            mass, length = header.get("MassUnit"), header.get("LengthUnit")
            if "Units" not in f or mass is None or length is None:
                raise SystemExit(f"--units {path}: records no units of an nbody run (Header/MassUnit, "
                                 "Header/LengthUnit, Units)")
            length = length.decode() if isinstance(length, bytes) else str(length)
            if not length:
                return None  # N-body units
            u = f["Units"].attrs
            return {"time_s": float(u["Unit time in cgs (U_t)"]), "length_cm": float(u["Unit length in cgs (U_L)"]),
                    "length": length}
    except FileNotFoundError as e:
        raise SystemExit(f"--units {path}: cannot read it: {e.strerror}")
    except OSError as e:
        raise SystemExit(f"--units {path}: neither a report of nbody --json (.json) nor an HDF5 file of the run ({e})")
    except (KeyError, TypeError, ValueError) as e:
        raise SystemExit(f"--units {path}: records no units of an nbody run ({e})")


def time_scale(units, times):
    """(factor, name) that puts the series' times on the axis: the largest time unit the longest time is at least
    one of; (1, "the run's units, G = 1") without units."""
    if units is None:
        return 1.0, "the run's units, G = 1"
    longest = max((abs(t) for t in times if math.isfinite(t)), default=0.0) * units["time_s"]
    for name, seconds in TIME_UNITS:
        if longest >= seconds:
            return units["time_s"] / seconds, name
    return units["time_s"], "s"


def angular_momentum_drift(s):
    """|L - L0| / |L0| at each sample (|L - L0| where L0 = 0), and |L0|."""
    lx, ly, lz = s["angular_momentum_x"], s["angular_momentum_y"], s["angular_momentum_z"]
    l0 = (lx[0], ly[0], lz[0])
    norm0 = math.sqrt(sum(c * c for c in l0))
    drift = []
    for x, y, z in zip(lx, ly, lz):
        d = math.sqrt((x - l0[0]) ** 2 + (y - l0[1]) ** 2 + (z - l0[2]) ** 2)
        drift.append(d / norm0 if norm0 > 0 else d)
    return drift, norm0


def positive(t, values):
    """The points of (t, values) with a positive value, for a log scale."""
    kept = [(x, y) for x, y in zip(t, values) if y > 0]
    return [x for x, _ in kept], [y for _, y in kept]


def draw(series, plt, units=None):
    """The four panels of [(name, series)] as a matplotlib figure: one colour a file in every panel,
    the Lagrangian radii's fractions told apart by line style. `units` (units_of) puts the axes in physical units."""
    fig, axes = plt.subplots(2, 2, figsize=(11, 7.5), sharex=True)
    (energy, virial), (radii, angular) = axes
    drawn = {energy: False, angular: False}  # a log scale needs a positive value drawn
    per_time, time_name = time_scale(units, [t for _, s in series for t in s["time"]])
    # Radii in the run's length unit as given ("1pc": pc; "2.5kpc": its multiples, named so).
    length_name = "the run's units" if units is None else units["length"]
    if units is not None and units["length"].startswith("1") and units["length"][1:].isalpha():
        length_name = units["length"][1:]
    absolute_l = False
    for index, (name, s) in enumerate(series):
        t = [x * per_time for x in s["time"]]
        label = name if len(series) > 1 else None
        colour = f"C{index}"
        # Zeros (the first sample's, by definition) have no place on a log scale: they are left out.
        kept = positive(t, s["relative_energy_error"])
        drawn[energy] |= bool(kept[0])
        energy.plot(*kept, color=colour, label=label)
        virial.plot(t, s["virial_ratio"], color=colour, label=label)
        for key, style in (("r10", ":"), ("r50", "-"), ("r90", "--")):
            radii.plot(t, s[key], style, color=colour, label=f"{key[1:]}%" + (f" {name}" if label else ""))
        drift, l0 = angular_momentum_drift(s)
        absolute_l |= l0 == 0
        kept = positive(t, drift)
        drawn[angular] |= bool(kept[0])
        angular.plot(*kept, color=colour, label=label)
    # A quantity that is 0 at every sample (one body; a series of its first sample alone) has nothing to put on a log
    # scale, where matplotlib would fail: the panel says so instead.
    for ax, has_values in drawn.items():
        if has_values:
            ax.set_yscale("log")
        else:
            ax.text(0.5, 0.5, "0 at every sample", transform=ax.transAxes, ha="center", va="center", color="grey")
    energy.set_ylabel("|E - E0| / |E0 - Kb|")
    energy.set_title("energy error (Kb = |P|²/2M, the bulk motion's kinetic energy)", fontsize="medium")
    if all(math.isnan(v) for _, s in series for v in s["virial_ratio"]):
        virial.text(0.5, 0.5, "undefined at every sample (W = 0)", transform=virial.transAxes, ha="center",
                    va="center", color="grey")
    virial.axhline(1.0, color="grey", lw=0.8, ls=":")
    virial.set_ylabel("2K / |W|")
    virial.set_title("virial ratio")
    # The series is in the run's units (G = 1), whatever physical scale the run had (--units gives it).
    radii.set_ylabel(f"radius ({length_name})")
    radii.set_title("Lagrangian radii (10, 50, 90% of the mass)")
    radii.legend(fontsize="small")
    angular.set_ylabel("|L - L0| / |L0|" + (" (|L - L0| where L0 = 0)" if absolute_l else ""))
    angular.set_title("angular momentum drift")
    for ax in (radii, angular):
        ax.set_xlabel(f"time ({time_name})")
    if len(series) > 1:
        energy.legend(fontsize="small")
    return fig


def legend_names(paths):
    """What the legend calls each series: its file name, with as many of its folders as tell it from the others
    ("base/d.csv" and "job/d.csv")."""
    parts = [os.path.abspath(p).split(os.sep) for p in paths]  # (whole paths: "/d.csv" is not "d.csv")
    names = []
    for i, mine in enumerate(parts):
        for k in range(1, len(mine)):
            tail = mine[-k:]
            if all(other[-k:] != tail for j, other in enumerate(parts) if j != i):
                names.append(os.path.join(*tail))
                break
        else:  # every folder needed: the path as given
            names.append(os.path.normpath(paths[i]))
    return names


def main(argv):
    args, units = [], None
    rest = iter(argv[1:])
    for arg in rest:  # --units FILE anywhere
        if arg == "--units":
            given = next(rest, None)
            if given is None:
                raise SystemExit(__doc__)
            units = units_of(given)
        else:
            args.append(arg)
    if len(args) < 2:
        raise SystemExit(__doc__)
    out, paths = args[0], args[1:]
    # The picture is a new PNG: a series or a report named first (the output forgotten, or the arguments swapped)
    # would be replaced by it.
    if not out.lower().endswith(".png"):
        raise SystemExit(f"{out}: the picture is written as a PNG; name it *.png (usage: plot_diagnostics.py "
                         "[--units FILE] OUT.png SERIES [SERIES...])")
    if any(os.path.exists(p) and os.path.exists(out) and os.path.samefile(p, out) for p in paths):
        raise SystemExit(f"{out}: is also a series to draw; name the picture another file")
    series = [(name, load(p)) for name, p in zip(legend_names(paths), paths)]
    try:
        import matplotlib
    except ImportError:
        raise SystemExit(f"plot_diagnostics.py: needs matplotlib, which this Python ({sys.executable}) lacks: run it "
                         "with one that has it (Debian's python3-matplotlib, which scripts/run.sh installs, is "
                         "/usr/bin/python3's; .venv/bin/python after scripts/test.sh)")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = draw(series, plt, units)
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
