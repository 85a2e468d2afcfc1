#!/usr/bin/env python3
"""tests/science_files.py - checkpoints and snapshots as yt and pynbody users meet them.

    science_files.py NBODY_EXECUTABLE DATA_DIR

- units: with --mass-unit 1e5Msun --length-unit 1pc, pynbody and yt give lengths, masses, velocities
  and the time in cgs equal to the file's raw values times units computed here from CODATA/IAU
  constants (the time unit sqrt(L^3/(G M))); with the default N-body units both give the raw values
  unscaled (time 0.2 is 0.2, never a cosmological age)
- families: a disk's central mass (dark matter) and its stars arrive in their own groups, with the
  right counts, in both tools
- box: every body of several scenarios lies inside yt's default box, and yt keeps them all
- series: yt opens the snapshots of a run as a time series, in step order, with their times
- steps 0: the checkpoint and the snapshot of --steps 0 equal the generated initial state (the
  tipsy file --save writes of it), and the checkpoint continues bit for bit
- format 1: a checkpoint written by nbody before particle families (DATA_DIR, written by that
  build, with its own 3-step continuation) restarts and continues bit for bit

Exit 77 (skipped) where h5py, pynbody or yt is missing.
"""
import glob
import math
import os
import subprocess
import sys
import tempfile
import warnings

try:
    import h5py
    import numpy as np
    warnings.simplefilter("ignore")
    import pynbody
    import yt
except ImportError as e:
    print(f"skipped: {e}")
    sys.exit(77)

yt.set_log_level(50)
nbody, data_dir = sys.argv[1], sys.argv[2]
failures = []

# CODATA 2018 G; IAU 2015 nominal GM of the Sun; IAU 2012 au; parsec = 648000/pi au.
G = 6.67430e-8
MSUN = 1.3271244e26 / G
PC = 1.495978707e13 * 648000 / math.pi
# float32 values converted by the tools in float32 arithmetic: measured 6e-8 relative at most.
FLOAT32_RTOL = 1e-6
FLOAT64_RTOL = 1e-12  # float64 values and the time: measured 2e-16
# The tools' own solar mass and parsec differ from IAU 2015's: measured 5e-6 relative (pynbody's Msol).
CONSTANTS_RTOL = 1e-4
# pynbody derives a tipsy file's velocity and time units with rounded factors (8.0285, 0.97781311): measured 1.1e-4.
DERIVED_RTOL = 5e-4


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL:", what)


def run(*args):
    r = subprocess.run([nbody, "--backend", "cpu", "-q", *args], capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, f"nbody {' '.join(args)}: exit {r.returncode} {r.stderr.strip()}")
    return r


def raw(path):
    """Per group: IDs, coordinates (as stored), centred positions, velocities, masses; and the header."""
    out = {}
    with h5py.File(path, "r") as f:
        h = dict(f["Header"].attrs)
        for g in f:
            if g.startswith("PartType"):
                x = f[g]["Coordinates"][()]
                centred = x - x.dtype.type(h["Shift"][0])
                if "CoordinateRoundoff" in f[g]:
                    centred = centred + f[g]["CoordinateRoundoff"][()]
                out[g] = dict(ids=f[g]["ParticleIDs"][()], coordinates=x, centred=centred,
                              velocities=f[g]["Velocities"][()], masses=f[g]["Masses"][()])
    return out, h


def close(a, b, rtol):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return a.shape == b.shape and np.allclose(a, b, rtol=rtol, atol=0)


def by_id(ids, values):
    return np.asarray(values)[np.argsort(ids)]


def check_tools(path, length_cm, mass_g, counts, label):
    """pynbody and yt read PATH with lengths, masses, velocities and time in cgs as the raw values times
    the units; `counts` is {group: bodies}."""
    groups, h = raw(path)
    physical = mass_g != 1.0
    time_s = math.sqrt(length_cm ** 3 / (G * mass_g)) if physical else 1.0  # N-body units: 1 for every unit
    velocity = length_cm / time_s
    rtol = FLOAT64_RTOL if groups["PartType4"]["coordinates"].dtype == np.float64 else FLOAT32_RTOL
    check({g: len(v["ids"]) for g, v in groups.items()} == counts, f"{label}: groups {list(groups)}")
    # pynbody: the SWIFT reader, dm and star families.
    s = pynbody.load(path)
    check(type(s).__name__ == "SwiftSnap", f"{label}: pynbody reads it as {type(s).__name__}")
    families = {"PartType1": s.dm, "PartType4": s.star}
    check(sorted(f.name for f in s.families()) == sorted({"PartType1": "dm", "PartType4": "star"}[g] for g in counts),
          f"{label}: pynbody families {s.families()}")
    check(close(float(s.properties["time"].in_units("s")), h["Time"] * time_s, FLOAT64_RTOL),
          f"{label}: pynbody time {s.properties['time']}, expected {h['Time'] * time_s} s")
    for g, n in counts.items():
        sub, mine = families[g], groups[g]
        check(len(sub) == n, f"{label}: pynbody {g} has {len(sub)} bodies, expected {n}")
        ids = sub["iord"]
        for name, unit, scale, key in (("pos", "cm", length_cm, "coordinates"), ("vel", "cm s**-1", velocity, "velocities"),
                                       ("mass", "g", mass_g, "masses")):
            got = by_id(ids, sub[name].in_units(unit) if physical else sub[name])
            check(close(got, by_id(mine["ids"], mine[key]) * scale, rtol), f"{label}: pynbody {g} {name} in {unit}")
    if physical:
        total = float(s["mass"].in_units("Msol").sum())
        check(abs(total / (sum(float(v["masses"].sum()) for v in groups.values()) * mass_g / MSUN) - 1) < CONSTANTS_RTOL,
              f"{label}: pynbody total mass {total} Msol")
    else:  # N-body units: dimensionless values, nothing invented
        check(str(s["pos"].units) in ("1", "1.00e+00"), f"{label}: pynbody positions carry units {s['pos'].units}")
    # yt: the SWIFT reader keeps every body in its default box.
    ds = yt.load(path)
    check(type(ds).__name__ == "SwiftDataset", f"{label}: yt reads it as {type(ds).__name__}")
    check(close(float(ds.current_time.to("s")), h["Time"] * time_s, FLOAT64_RTOL),
          f"{label}: yt time {ds.current_time.to('s')}, expected {h['Time'] * time_s} s")
    ad = ds.all_data()
    check(int(ad["all", "particle_mass"].size) == sum(counts.values()),
          f"{label}: yt keeps {ad['all', 'particle_mass'].size} of {sum(counts.values())} bodies")
    for g, n in counts.items():
        mine = groups[g]
        ids = ad[g, "ParticleIDs"].d
        check(len(ids) == n, f"{label}: yt {g} has {len(ids)} bodies, expected {n}")
        for field, unit, scale, key in (("Coordinates", "cm", length_cm, "coordinates"),
                                        ("Velocities", "cm/s", velocity, "velocities"), ("Mass", "g", mass_g, "masses")):
            check(close(by_id(ids, ad[g, field].to(unit).d), by_id(mine["ids"], mine[key]) * scale, rtol),
                  f"{label}: yt {g} {field} in {unit}")
    if physical:
        check(abs(float(ad["all", "particle_mass"].sum().to("Msun")) / 1e5 - 1) < CONSTANTS_RTOL, f"{label}: yt mass in Msun")
        check(abs(float(ds.current_time.to("Myr")) / (h["Time"] * time_s / 3.15576e13) - 1) < CONSTANTS_RTOL,
              f"{label}: yt time in Myr")


with tempfile.TemporaryDirectory() as d:
    p = lambda name: os.path.join(d, name)

    # Units and families: a disk of 300 (its central mass is dark matter), physical and N-body units.
    for label, units, (length_cm, mass_g) in (("1e5Msun,1pc", ("--mass-unit", "1e5Msun", "--length-unit", "1pc"),
                                               (PC, 1e5 * MSUN)),
                                              ("N-body", (), (1.0, 1.0))):
        for precision in ("fp32", "fp64"):
            tag = f"{label}-{precision}".replace(",", "_")
            run("--run", "--scenario", "disk", "--bodies", "300", "--steps", "20", "--precision", precision,
                "--snapshots", p(f"{tag}/snap"), "--snapshot-every", "10", "--checkpoint", p(f"{tag}.h5"), *units) \
                if os.makedirs(p(tag)) is None else None
            counts = {"PartType1": 1, "PartType4": 299}
            check_tools(p(f"{tag}.h5"), length_cm, mass_g, counts, f"{tag} checkpoint")
            check_tools(p(f"{tag}/snap_00000010.hdf5"), length_cm, mass_g, counts, f"{tag} snapshot")
            # The softening, which the bodies' potential needs, in the snapshot as in the checkpoint.
            softenings = [raw(f)[1].get("Softening") for f in (p(f"{tag}.h5"), p(f"{tag}/snap_00000010.hdf5"))]
            check(softenings == [0.05, 0.05], f"{tag}: softening of the checkpoint and the snapshot {softenings}")
            # The series: the start, every 10 steps, the end; yt opens it in step order, with their times.
            names = sorted(os.path.basename(n) for n in glob.glob(p(f"{tag}/snap_*.hdf5")))
            check(names == ["snap_00000000.hdf5", "snap_00000010.hdf5", "snap_00000020.hdf5"], f"{tag}: series {names}")
            ts = yt.load(p(f"{tag}/snap_*.hdf5"))
            times = [float(ds.current_time.to("s")) for ds in ts]
            t_unit = math.sqrt(length_cm ** 3 / (G * mass_g)) if units else 1.0
            check(close(times, [0.0, 0.1 * t_unit, 0.2 * t_unit], FLOAT64_RTOL), f"{tag}: yt series times {times}")
            # A restart keeps the units, and the run goes on bit for bit.
            run("--run", "--restart", p(f"{tag}.h5"), "--steps", "1", "--checkpoint", p(f"{tag}-more.h5"))
            check(raw(p(f"{tag}-more.h5"))[1]["MassUnit"] == raw(p(f"{tag}.h5"))[1]["MassUnit"], f"{tag}: units kept")

    # Every body inside the default box: several scenarios, at the start and after some steps.
    for scenario, bodies in (("plummer", 500), ("random-sphere", 200), ("disk", 200), ("collision", 400),
                             ("two-body", 2)):
        for steps in ("0", "15"):
            c, s = p(f"box-{scenario}-{steps}.h5"), p(f"box-{scenario}-{steps}")
            run("--run", "--scenario", scenario, "--bodies", str(bodies), "--steps", steps, "--checkpoint", c,
                "--snapshots", s)
            for path in (c, f"{s}_{int(steps):08d}.hdf5"):
                groups, h = raw(path)
                box = h["BoxSize"][0]
                inside = all(np.all(v["coordinates"] > 0) and np.all(v["coordinates"] < box) for v in groups.values())
                check(inside, f"{scenario} step {steps}: a body outside [0, {box}) in {os.path.basename(path)}")
                extent = max(float(np.abs(v["centred"]).max()) for v in groups.values())
                check(2 * extent < box <= 2.5 * extent + 1e-12 or box == 1.0, f"{scenario}: box {box} for extent {extent}")
                kept = int(yt.load(path).all_data()["all", "particle_mass"].size)
                check(kept == bodies, f"{scenario} step {steps}: yt keeps {kept} of {bodies} bodies")
                check(len(pynbody.load(path)) == bodies, f"{scenario} step {steps}: pynbody's count")

    # Tipsy: --save states the units beside the file (FILE.param, gasoline's keys), where pynbody and yt take them:
    # lengths in kpc and masses in Msun are the file's values times the units' (exactly, in float32), velocities and
    # the time follow with G = 1 (to the tools' own constants).
    os.makedirs(p("tipsy"))
    run("--run", "--scenario", "disk", "--bodies", "300", "--steps", "20", "--mass-unit", "1e5Msun", "--length-unit",
        "1pc", "--save", p("tipsy/run.bin"))
    with open(p("tipsy/run.bin"), "rb") as f:
        time, n, _, ngas, ndark, nstar = np.frombuffer(f.read(28), ">f8,>i4,>i4,>i4,>i4,>i4")[0]
        f.read(4)
        dark = np.frombuffer(f.read(ndark * 36), ">f4").reshape(ndark, 9)
        star = np.frombuffer(f.read(nstar * 44), ">f4").reshape(nstar, 11)
    stored = np.vstack([dark[:, :7], star[:, :7]]).astype(np.float64)  # mass, position, velocity: the file's order
    time_s = math.sqrt(PC ** 3 / (G * 1e5 * MSUN))
    s = pynbody.load(p("tipsy/run.bin"))
    check(type(s).__name__ == "TipsySnap" and len(s) == 300, f"tipsy: pynbody reads {type(s).__name__} of {len(s)}")
    check(close(s["pos"].in_units("kpc"), stored[:, 1:4] * 1e-3, FLOAT32_RTOL), "tipsy: pynbody positions in kpc")
    check(close(s["mass"].in_units("Msol"), stored[:, 0] * 1e5, FLOAT32_RTOL), "tipsy: pynbody masses in Msol")
    check(close(s["vel"].in_units("cm s**-1"), stored[:, 4:7] * PC / time_s, DERIVED_RTOL), "tipsy: pynbody velocities")
    check(close(float(s.properties["time"].in_units("s")), time * time_s, DERIVED_RTOL),
          f"tipsy: pynbody time {s.properties['time']}, expected {time * time_s} s")
    ad = yt.load(p("tipsy/run.bin")).all_data()
    for family, rows in (("DarkMatter", dark), ("Stars", star)):  # each in the file's order
        rows = rows[:, :7].astype(np.float64)
        check(close(ad[family, "particle_position"].to("kpc").d, rows[:, 1:4] * 1e-3, FLOAT32_RTOL),
              f"tipsy: yt {family} positions in kpc")
        check(close(ad[family, "particle_mass"].to("Msun").d, rows[:, 0] * 1e5, FLOAT32_RTOL),
              f"tipsy: yt {family} masses in Msun")
        check(close(ad[family, "particle_velocity"].to("cm/s").d, rows[:, 4:7] * PC / time_s, CONSTANTS_RTOL),
              f"tipsy: yt {family} velocities")
    check(close(float(ad.ds.current_time.to("s")), time * time_s, CONSTANTS_RTOL),
          f"tipsy: yt time {ad.ds.current_time.to('s')}, expected {time * time_s} s")

    # --steps 0: the initial state, as generated (tipsy holds the fp32 engine's values exactly).
    run("--run", "--scenario", "disk", "--bodies", "100", "--steps", "0", "--precision", "fp32", "--save", p("init.bin"),
        "--checkpoint", p("init.h5"), "--snapshots", p("init"))
    with open(p("init.bin"), "rb") as f:
        time, n, _, ngas, ndark, nstar = np.frombuffer(f.read(28), ">f8,>i4,>i4,>i4,>i4,>i4")[0]
        f.read(4)
        dark = np.frombuffer(f.read(ndark * 36), ">f4").reshape(ndark, 9)
        star = np.frombuffer(f.read(nstar * 44), ">f4").reshape(nstar, 11)
    generated = {"PartType1": dark, "PartType4": star}
    for path, exact in ((p("init.h5"), True), (p("init_00000000.hdf5"), False)):
        groups, h = raw(path)
        check(h["Step"] == 0 and h["Time"] == 0.0, f"{path}: step {h['Step']} time {h['Time']}")
        for g, rows in generated.items():
            mine = groups[g]
            order = np.argsort(mine["ids"])  # tipsy: dark then stars, each in body order
            x, v, m = mine["centred"][order], mine["velocities"][order], mine["masses"][order]
            if exact:
                same = (np.array_equal(x, rows[:, 1:4]) and np.array_equal(v, rows[:, 4:7]) and np.array_equal(m, rows[:, 0]))
                check(same, f"--steps 0 checkpoint {g}: not the generated state bit for bit")
            else:  # float32 of position + shift: within half an ulp of the shifted value
                ulp = np.spacing(np.float32(h["BoxSize"][0]))
                check(np.all(np.abs(x - rows[:, 1:4]) <= ulp) and np.array_equal(v, rows[:, 4:7]) and
                      np.array_equal(m, rows[:, 0]), f"--steps 0 snapshot {g}: not the generated state")
    run("--run", "--restart", p("init.h5"), "--steps", "7", "--checkpoint", p("via.h5"))
    run("--run", "--scenario", "disk", "--bodies", "100", "--steps", "7", "--precision", "fp32", "--checkpoint",
        p("direct.h5"))
    a, b = raw(p("via.h5"))[0], raw(p("direct.h5"))[0]
    check(all(np.array_equal(a[g][k], b[g][k]) for g in a for k in a[g]), "--steps 0, restarted: not bit for bit")

    # Format 1, as nbody wrote it before particle families: restarts, verified, and goes on bit for bit.
    old = os.path.join(data_dir, "checkpoint_format1.h5")
    r = run("--run", "--restart", old, "--steps", "3", "--checkpoint", p("from-old.h5"))
    check("read unverified" not in r.stderr, f"format 1 read unverified: {r.stderr.strip()}")
    new, _ = raw(p("from-old.h5"))
    with h5py.File(os.path.join(data_dir, "checkpoint_format1_continued.h5"), "r") as f:
        g = f["PartType1"]
        ids, body_type = g["ParticleIDs"][()], g["BodyType"][()]
        for group, t in (("PartType1", 1), ("PartType4", 2)):
            rows = np.sort(ids[body_type == t])
            mine = new[group]
            order = np.argsort(mine["ids"])
            check(np.array_equal(mine["ids"][order], rows), f"format 1: {group} IDs")
            for key, name in (("centred", "Coordinates"), ("velocities", "Velocities"), ("masses", "Masses")):
                check(np.array_equal(mine[key][order], g[name][()][rows]),
                      f"format 1 continued by this nbody: {group} {name} differ from the old build's")

    # Bad units and series options: one line naming the value and what is allowed, exit 2, nothing written. (A
    # snapshot folder that is missing is made; one that is a file is refused.)
    with open(p("afile"), "w") as f:
        f.write("not a folder")
    for args, words in ((("--mass-unit", "1e5suns", "--length-unit", "1pc"), ("--mass-unit '1e5suns'", "Msun, Mjup")),
                        (("--mass-unit", "-3Msun", "--length-unit", "1pc"), ("'-3Msun'", "positive")),
                        (("--mass-unit", "1e5Msun", "--length-unit", "1 parsec"), ("'1 parsec'", "kpc, pc, au")),
                        (("--mass-unit", "1e5Msun"), ("give --length-unit too",)),
                        (("--snapshot-every", "5"), ("--snapshot-every", "give --snapshots")),
                        (("--snapshots", p("afile/x")), ("--snapshots", "afile is not a folder"))):
        r = subprocess.run([nbody, "--backend", "cpu", "--run", "--bodies", "64", "--steps", "2", *args],
                           capture_output=True, text=True, timeout=60)
        lines = r.stderr.strip().splitlines()
        check(r.returncode == 2 and len(lines) == 1 and all(w in lines[0] for w in words),
              f"{' '.join(args)}: exit {r.returncode}, {r.stderr.strip()!r}")
    # A restart that names other units relabels the whole run, with a warning (--quiet does not hide it).
    r = subprocess.run([nbody, "--backend", "cpu", "--run", "--restart", p("N-body-fp64.h5"), "--steps", "1",
                        "--mass-unit", "1Msun", "--length-unit", "1au", "--checkpoint", p("relabelled.h5")],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 0 and "warning: --mass-unit and --length-unit 1Msun, 1au override" in r.stderr,
          f"a restart with other units: {r.returncode} {r.stderr.strip()}")
    check(os.path.exists(p("relabelled.h5")) and raw(p("relabelled.h5"))[1]["LengthUnit"] == b"1au", "relabelled units")

print("science files:", "FAILED" if failures else "passed")
sys.exit(1 if failures else 0)
