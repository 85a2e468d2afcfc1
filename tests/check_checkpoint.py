#!/usr/bin/env python3
"""tests/check_checkpoint.py - a checkpoint as a Python user meets it.

h5py opens what `nbody --checkpoint` writes and finds the SWIFT layout docs/guide.md promises (Header
attributes, the dark matter in PartType1 and the stars in PartType4, values in the run's precision,
coordinates shifted into the box, consistent time and step); and `nbody --restart` refuses checkpoints
broken in the ways a hand-edited or foreign file is broken, with exit code 2 and a message naming the
file. Exit 77 (skipped) where h5py is missing.

    check_checkpoint.py NBODY_EXECUTABLE
"""
import os
import shutil
import subprocess
import sys
import tempfile

try:
    import h5py
    import numpy as np
except ImportError as e:
    print(f"skipped: {e}")
    sys.exit(77)

nbody = sys.argv[1]
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL:", what)


def run(*args):
    return subprocess.run([nbody, "--backend", "cpu", *args], capture_output=True, text=True, timeout=120)


with tempfile.TemporaryDirectory() as d:
    for precision, dtype in (("fp32", np.float32), ("fp64", np.float64)):
        path = os.path.join(d, f"{precision}.h5")
        r = run("--run", "--scenario", "disk", "--bodies", "300", "--steps", "7", "--precision", precision,
                "--checkpoint", path, "-q")
        check(r.returncode == 0, f"{precision}: nbody exited {r.returncode}: {r.stderr}")
        with h5py.File(path, "r") as f:
            # Strings are fixed-length ASCII, as in GADGET and SWIFT files: h5py gives bytes.
            h = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in f["Header"].attrs.items()}
            # The disk: its central mass is dark matter (body 0), its 299 stars follow.
            check(list(h["NumPart_ThisFile"]) == [0, 1, 0, 0, 299, 0], f"{precision}: NumPart_ThisFile {h['NumPart_ThisFile']}")
            check(list(h["NumPart_Total"]) == [0, 1, 0, 0, 299, 0], f"{precision}: NumPart_Total")
            check(list(h["NumPart_Total_HighWord"]) == [0] * 6, f"{precision}: NumPart_Total_HighWord")
            check(list(h["MassTable"]) == [0.0] * 6, f"{precision}: MassTable")
            check(h["NumFilesPerSnapshot"] == 1 and h["Redshift"] == 0.0, f"{precision}: one file, no redshift")
            check(h["Omega0"] == 0.0 and h["OmegaLambda"] == 0.0 and h["HubbleParam"] == 1.0, f"{precision}: cosmology")
            check(h["Flag_DoublePrecision"] == (precision == "fp64"), f"{precision}: Flag_DoublePrecision")
            check(h["Code"] == "SWIFT" and f["Code"].attrs["Code"].decode().startswith("nbody"), f"{precision}: Code")
            check(h["NbodyFormat"] == 2 and h["NbodyFile"] == "checkpoint", f"{precision}: format")
            check(h["Step"] == 7 and h["Dt"] == 0.01, f"{precision}: Step {h['Step']} Dt {h['Dt']}")
            check(h["Time"] == h["StartTime"] + h["Step"] * h["Dt"], f"{precision}: Time is StartTime + Step x Dt")
            check(h["Softening"] == 0.05, f"{precision}: the disk's softening {h['Softening']}")
            check(h["Integrator"] == "leapfrog" and h["Precision"] == precision, f"{precision}: run settings")
            check(h["Scenario"] == "disk" and h["Seed"] == 42, f"{precision}: scenario and seed")
            check(h["MassUnit"] == "" and h["LengthUnit"] == "", f"{precision}: N-body units")
            check(np.isfinite(h["InitialEnergy"]) and h["InitialEnergy"] < 0, f"{precision}: InitialEnergy")
            ids = []
            for group, n in (("PartType1", 1), ("PartType4", 299)):
                g = f[group]
                for name, shape in (("Coordinates", (n, 3)), ("CoordinateRoundoff", (n, 3)), ("Velocities", (n, 3)),
                                    ("Masses", (n,))):
                    check(g[name].shape == shape and g[name].dtype == dtype,
                          f"{precision}: {group}/{name} {g[name].shape} {g[name].dtype}")
                ids += list(g["ParticleIDs"][()])
                # Every body strictly inside [0, BoxSize) (yt's default box), its position recovered exactly.
                x = g["Coordinates"][()]
                check(np.all(x > 0) and np.all(x < h["BoxSize"]), f"{precision}: {group} inside [0, BoxSize)")
                centred = (x - dtype(h["Shift"][0])) + g["CoordinateRoundoff"][()]
                check(np.all(np.abs(centred) < h["Shift"][0]), f"{precision}: {group} within the shift")
            check(ids == list(range(300)), f"{precision}: ParticleIDs 0..N-1 in body order")
            masses = np.concatenate([f[g]["Masses"][()] for g in ("PartType1", "PartType4")])
            check(abs(float(np.sum(masses)) - 1.0) < 1e-5, f"{precision}: total mass 1")
            check(list(h["BoxSize"]) == [h["BoxSize"][0]] * 3 and list(h["Shift"]) == [h["BoxSize"][0] / 2] * 3,
                  f"{precision}: BoxSize {h['BoxSize']}, Shift {h['Shift']}")
        r = run("--restart", path, "--run", "--steps", "1", "-q")
        check(r.returncode == 0, f"{precision}: the checkpoint restarts ({r.stderr.strip()})")

    # Broken checkpoints, each made from a good one with h5py.
    good = os.path.join(d, "fp32.h5")

    def broken(name, edit, words):
        path = os.path.join(d, f"broken-{name}.h5")
        shutil.copy(good, path)
        with h5py.File(path, "r+") as f:
            edit(f)
        r = run("--restart", path, "--run", "--steps", "1")
        message = r.stderr.strip()
        check(r.returncode == 2, f"{name}: exit {r.returncode}, expected 2 ({message})")
        check(message.startswith("error: ") and path in message and words in message and message.count("\n") == 0,
              f"{name}: message '{message}' should name the file and say '{words}'")
        return message

    def replace(f, name, data):
        del f[name]
        f[name] = data

    broken("no-dt", lambda f: f["Header"].attrs.__delitem__("Dt"), "no Header/Dt attribute")
    broken("flat-coordinates", lambda f: replace(f, "PartType4/Coordinates", np.zeros(897, np.float32)),
           "PartType4/Coordinates has shape (897), expected (299, 3)")
    broken("duplicate-id", lambda f: replace(f, "PartType4/ParticleIDs", np.zeros(299, np.uint64)),
           "ParticleIDs must hold 0..299 once each; 0 appears twice")
    broken("id-out-of-range", lambda f: replace(f, "PartType1/ParticleIDs", np.array([300], np.uint64)),
           "ParticleIDs must hold 0..299 once each; 300 is out of range")
    # Whole numbers stored as floats would be cut (2.5 to 2) by HDF5's conversion, unseen by the checksum of the cut ones.
    broken("float-ids", lambda f: replace(f, "PartType1/ParticleIDs", f["PartType1/ParticleIDs"][()].astype(np.float64)),
           "PartType1/ParticleIDs holds floating-point numbers; it must hold integers")
    broken("nan-velocity", lambda f: f["PartType4/Velocities"].__setitem__((4, 1), np.nan),
           "body 5: velocity y is nan; nbody reads finite values only")
    broken("nan-roundoff", lambda f: f["PartType4/CoordinateRoundoff"].__setitem__((4, 1), np.nan),
           "body 5: position y is nan; nbody reads finite values only")

    # A file edited on purpose, read unverified once its checksum is deleted.
    def unverified(f, edit):
        del f["Header"].attrs["Checksum"]
        edit(f)

    # Values beyond what the tipsy reader and from_arrays take (1e15) are refused as the file is read, naming the body
    # and the field as they do, not blamed on --dt or --softening at a later step.
    broken("huge-coordinates", lambda f: unverified(f, lambda f: f["PartType4/Coordinates"].__setitem__((4, 0), 1e30)),
           "body 5: position x is 1e+30; nbody reads magnitudes up to 1e15")
    broken("huge-velocity", lambda f: unverified(f, lambda f: f["PartType4/Velocities"].__setitem__((4, 2), -2e15)),
           "body 5: velocity z is -2e+15; nbody reads magnitudes up to 1e15")
    broken("huge-mass", lambda f: unverified(f, lambda f: f["PartType1/Masses"].__setitem__(0, 1e16)),
           "body 0: mass is 1e+16; nbody reads magnitudes up to 1e15")
    # The count as the file stores it, however it is stored: not the 32 bits HDF5 clamped it to (4294967295).
    def counts(f, values):
        for name in ("NumPart_Total", "NumPart_ThisFile"):
            f["Header"].attrs[name] = np.array(values, np.int64)

    broken("five-billion", lambda f: unverified(f, lambda f: counts(f, [0, 0, 0, 0, 5 * 10**9, 0])),
           "Header/NumPart_Total says 5000000000 bodies; must be 1 to 1073741824")
    broken("negative-count", lambda f: unverified(f, lambda f: counts(f, [0, 1, 0, 0, -299, 0])),
           "Header/NumPart_Total holds -299; a count must be >= 0")
    # A dataset's shape as stored: a scalar's is (), not (0).
    broken("scalar-masses", lambda f: unverified(f, lambda f: replace(f, "PartType4/Masses", 1.0)),
           "PartType4/Masses has shape (), expected (299)")
    broken("cube-masses", lambda f: unverified(f, lambda f: replace(f, "PartType4/Masses", np.zeros((299, 1, 1)))),
           "PartType4/Masses has shape (299, 1, 1), expected (299)")
    # The file's units are named as the file has them, never as an option the user did not give.
    said = broken("mass-unit-alone",
                  lambda f: unverified(f, lambda f: f["Header"].attrs.__setitem__("MassUnit", np.bytes_(b"banana"))),
                  "Header/MassUnit 'banana': give Header/LengthUnit too")
    check("--mass-unit" not in said and "--length-unit" not in said, f"a file's units blamed on options: {said}")
    broken("shift", lambda f: f["Header"].attrs.__setitem__("Shift", np.array([1.0, 2.0, 1.0])),
           "Header/Shift is not 3 equal finite numbers")
    broken("type-2", lambda f: f["Header"].attrs.__setitem__("NumPart_Total", np.array([0, 1, 1, 0, 299, 0], np.uint32)),
           "bodies of particle type 2")
    broken("units", lambda f: f["Header"].attrs.__setitem__("MassUnit", np.bytes_(b"1e5 suns")),
           "Header/MassUnit '1e5 suns'")
    broken("fp16", lambda f: f["Header"].attrs.__setitem__("Precision", np.bytes_(b"fp16")), "Header/Precision 'fp16'")
    broken("unknown-integrator", lambda f: f["Header"].attrs.__setitem__("Integrator", "rk45"),  # a str: variable-length
           "integrator 'rk45' is not one this nbody has")
    broken("too-many", lambda f: f["Header"].attrs.__setitem__("NumPart_Total", np.array([0, 0, 0, 0, 0, 0], np.uint32)),
           "must be 1 to 1073741824")
    # The count as the file states it, however large.
    broken("two-billion", lambda f: f["Header"].attrs.__setitem__(
        "NumPart_Total", np.array([0, 1, 0, 0, 2000000000, 0], np.uint32)),
           "Header/NumPart_Total says 2000000001 bodies; must be 1 to 1073741824")
    broken("high-words", lambda f: f["Header"].attrs.__setitem__(
        "NumPart_Total_HighWord", np.array([0, 0xFFFFFFFF, 0, 0, 0xFFFFFFFF, 0], np.uint32)),
           "Header/NumPart_Total with NumPart_Total_HighWord (2^32 each) says more than 2^64 bodies; must be 1 to "
           "1073741824")
    broken("no-particles", lambda f: f.__delitem__("PartType4"), "no /PartType4 group")
    broken("no-header", lambda f: f.__delitem__("Header"), "an HDF5 file with no /Header group: another program's")
    broken("header-dataset", lambda f: (f.__delitem__("Header"), f.create_dataset("Header", data=np.arange(3.0))),
           "an HDF5 file with no /Header group: another program's")
    # Another program's HDF5 file (h5py's own, one dataset): named as such, not as a damaged checkpoint.
    other = os.path.join(d, "other.h5")
    with h5py.File(other, "w") as f:
        f["x"] = np.arange(3.0)
    r = run("--restart", other, "--run")
    check(r.returncode == 2 and r.stderr.strip() == f"error: {other}: an HDF5 file with no /Header group: another "
          "program's (not a checkpoint nbody can continue)", f"another program's HDF5 file: {r.returncode} {r.stderr.strip()}")
    with open(os.path.join(d, "not-hdf5.h5"), "w") as f:
        f.write("not HDF5 at all\n")
    r = run("--restart", os.path.join(d, "not-hdf5.h5"), "--run")
    check(r.returncode == 2 and "not an HDF5 file" in r.stderr, f"a text file: {r.returncode} {r.stderr.strip()}")

print("checkpoint layout and refusals:", "FAILED" if failures else "passed")
sys.exit(1 if failures else 0)
