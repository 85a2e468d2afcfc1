#!/usr/bin/env python3
"""tests/check_colormaps.py - nbody's colour maps against matplotlib's, the published tables they copy.

    check_colormaps.py SAMPLES     SAMPLES: the tests/colormap_samples program

For viridis, inferno, magma and plasma: at the 256 entries (t = k / 255), nbody's colour must be
matplotlib's colormap(t) to float precision (1e-6); between entries (t = (k + 0.5) / 255) nbody
interpolates linearly while matplotlib takes the lower entry, so there the bound is the step between
the two entries, and nbody's value must lie between them. Exit 77 (skipped) without matplotlib.
"""
import subprocess
import sys

try:
    import matplotlib
except ImportError:
    print("matplotlib is not installed (Debian: python3-matplotlib); skipped")
    sys.exit(77)

MAPS = ["viridis", "inferno", "magma", "plasma"]


def main():
    samples = sys.argv[1]
    points = [(name, k / 255.0) for name in MAPS for k in range(256)]
    points += [(name, (k + 0.5) / 255.0) for name in MAPS for k in range(255)]
    text = "".join("%s %.9g\n" % p for p in points)
    out = subprocess.run([samples], input=text, capture_output=True, text=True, check=True).stdout.split("\n")
    problems = []
    checked = 0
    for (name, t), line in zip(points, out):
        fields = line.split()
        got = [float(x) for x in fields[2:5]]
        cmap = matplotlib.colormaps[name]
        k = t * 255.0
        if abs(k - round(k)) < 1e-6:
            want = cmap(round(k) / 255.0)[:3]
            bad = max(abs(g - w) for g, w in zip(got, want)) > 1e-6
        else:
            lo, hi = cmap(int(k) / 255.0)[:3], cmap((int(k) + 1) / 255.0)[:3]
            mid = [(a + b) / 2 for a, b in zip(lo, hi)]
            want = mid
            bad = max(abs(g - w) for g, w in zip(got, mid)) > 1e-6
        checked += 1
        if bad:
            problems.append("%s at t = %.6f: nbody %s, matplotlib %s" % (name, t, got, [round(w, 6) for w in want]))
    if len(out) - 1 != len(points):
        problems.append("%d answers for %d points" % (len(out) - 1, len(points)))
    for p in problems[:20]:
        print(p)
    print("%d points of %d maps checked against matplotlib %s: %d differ" % (checked, len(MAPS), matplotlib.__version__,
                                                                           len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
