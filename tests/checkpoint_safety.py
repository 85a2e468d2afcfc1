#!/usr/bin/env python3
"""tests/checkpoint_safety.py - checkpoints as a full disk, a damaged file and a hostile one meet them.

    checkpoint_safety.py NBODY_EXECUTABLE CASE

Cases:
  full_disk       checkpoints written onto a nearly full file system (a small tmpfs where this process
                  may mount one, else a file-size limit): refused with exit 1 and one line, or written
                  whole; never a corrupt file with exit 0, never a crash; an older file stays as it was
  huge_count      a 10 KB file that declares a billion bodies is refused for memory before any is read
  time_chain      restarts with another dt go on from the time reached, through a chain of them
  header_bounds   Step, Dt, Softening, Damping, NumPart_ThisFile out of bounds: refused, naming the
                  file and the attribute (never an option the user did not give)
  hostile         external storage (a FIFO, /etc/passwd), external and soft links, virtual datasets
  bit_flips       random bit flips: refused, or harmless (the restart is bit for bit the same)
  checksum        Header/Checksum is FNV-1a over the layout checkpoint.h documents (computed here
                  independently); a file edited on purpose is refused until its checksum is deleted

h5py writes the hostile files, as an attacker or a user with a script would. Exit 77 (skipped)
where h5py is missing.
"""
import ctypes
import json
import os
import random
import resource
import shutil
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import time

try:
    import h5py
    import numpy as np
except ImportError as e:
    print(f"skipped: {e}")
    sys.exit(77)

nbody, case = sys.argv[1], sys.argv[2]
failures = []
RUN_TIMEOUT = 60  # seconds; every run here takes well under 2 s on 2 cores


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL:", what)


def run(*args, preexec=None, timeout=RUN_TIMEOUT):
    return subprocess.run([nbody, "--backend", "cpu", *args], capture_output=True, text=True, timeout=timeout,
                          preexec_fn=preexec)


def one_line_error(r, *words):
    message = r.stderr.strip().splitlines()
    errors = [m for m in message if m.startswith("error: ")]
    return len(errors) == 1 and all(w in errors[0] for w in words)


def refused(path, r, *words):
    """Exit 2 and one error line naming the file and saying each of `words`."""
    check(r.returncode == 2, f"{os.path.basename(path)}: exit {r.returncode}, expected 2 ({r.stderr.strip()})")
    check(one_line_error(r, path, *words), f"{os.path.basename(path)}: message '{r.stderr.strip()}' should name "
                                           f"the file and say {words}")


def datasets(path):
    with h5py.File(path, "r") as f:
        return {f"{g}/{k}": f[g][k][()] for g in f if g.startswith("PartType") for k in f[g]}


def same_state(a, b):
    da, db = datasets(a), datasets(b)
    return da.keys() == db.keys() and all(np.array_equal(da[k], db[k]) and da[k].dtype == db[k].dtype for k in da)


def make_good(d, precision="fp32", bodies=300, steps=5, name="good.h5", extra=()):
    path = os.path.join(d, name)
    r = run("--run", "--bodies", str(bodies), "--steps", str(steps), "--precision", precision, "--checkpoint", path,
            "-q", *extra)
    check(r.returncode == 0, f"writing {name}: exit {r.returncode} {r.stderr.strip()}")
    return path


# --- full_disk ---------------------------------------------------------------------------------

def try_mount_tmpfs(where, kib):
    """A tmpfs of `kib` KiB at `where`, when this process may mount one (root, or a user namespace)."""
    libc = ctypes.CDLL(None, use_errno=True)
    rc = libc.mount(b"tmpfs", where.encode(), b"tmpfs", 0, f"size={kib}k".encode())
    return rc == 0


def unmount(where):
    ctypes.CDLL(None, use_errno=True).umount2(where.encode(), 2)  # MNT_DETACH


def full_disk(d):
    # Sizes about those a 200 KiB disk cannot hold whole (a file is 48 or 88 bytes a body, and 26 KB:
    # fp32 up to about 3,600 bodies fit, fp64 up to about 2,000), and beyond.
    sizes = [("fp32", n) for n in (1000, 3000, 3500, 3700, 4000, 5000)] + \
            [("fp64", n) for n in (1000, 1800, 2000, 2200, 3500)]
    disk = os.path.join(d, "disk")
    os.mkdir(disk)
    limit = None
    if not try_mount_tmpfs(disk, 200):
        # No mount here: a file-size limit of 200 KiB makes writes past it fail as a full disk would.
        limit = 200 * 1024
        print("note: cannot mount a tmpfs here; using a 200 KiB file-size limit instead")

    def preexec():
        if limit:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    try:
        reference_dir = os.path.join(d, "ref")
        os.mkdir(reference_dir)
        for precision, n in sizes:
            for f in os.listdir(disk):
                os.unlink(os.path.join(disk, f))
            target = os.path.join(disk, "x.h5")
            args = ("--run", "--bodies", str(n), "--steps", "1", "--precision", precision, "-q")
            r = run(*args, "--checkpoint", target, preexec=preexec)
            label = f"{precision} N = {n}"
            check(r.returncode in (0, 1), f"{label}: exit {r.returncode} (a crash?) {r.stderr.strip()}")
            left = sorted(os.listdir(disk))
            if r.returncode == 1:
                check(one_line_error(r, target, "cannot write checkpoint"), f"{label}: message {r.stderr.strip()}")
                check(left == [], f"{label}: refused, but left {left}")
            elif r.returncode == 0:
                check(left == ["x.h5"], f"{label}: written, but the folder holds {left}")
                reference = os.path.join(reference_dir, f"{precision}-{n}.h5")
                run(*args, "--checkpoint", reference)
                check(same_state(target, reference), f"{label}: written with exit 0 but not whole")
                r = run("--run", "--restart", target, "--steps", "1", "-q")
                check(r.returncode == 0, f"{label}: written, but refused on restart: {r.stderr.strip()}")
        # A disk holding an earlier checkpoint, too full for the next: the run says so, exits 1 (not a
        # crash in HDF5's exit), and the earlier file is untouched.
        for f in os.listdir(disk):
            os.unlink(os.path.join(disk, f))
        target = os.path.join(disk, "a.h5")
        r = run("--run", "--bodies", "2048", "--steps", "1", "--checkpoint", target, "-q", preexec=preexec)
        check(r.returncode == 0, f"the first checkpoint: exit {r.returncode} {r.stderr.strip()}")
        before = open(target, "rb").read()
        if limit:
            limit = len(before) + 20 * 1024  # room for the old file, not for a second one beside it
        r = run("--run", "--bodies", "4096", "--steps", "20", "--checkpoint", target, "-q", preexec=preexec)
        check(r.returncode == 1, f"the second checkpoint on a full disk: exit {r.returncode} {r.stderr.strip()}")
        check(open(target, "rb").read() == before, "the earlier checkpoint changed")
        check(sorted(os.listdir(disk)) == ["a.h5"], f"left behind: {sorted(os.listdir(disk))}")
    finally:
        if not limit:
            unmount(disk)


# --- huge_count --------------------------------------------------------------------------------

def with_count(good, path, n, chunked=True):
    """A copy of `good` that declares `n` bodies, with datasets of that shape and no data."""
    shutil.copy(good, path)
    with h5py.File(path, "r+") as f:
        counts = np.array([0, 0, 0, 0, n & 0xffffffff, 0], np.uint32)  # the plummer sphere: stars
        f["Header"].attrs["NumPart_Total"] = counts
        f["Header"].attrs["NumPart_ThisFile"] = counts
        g = f["PartType4"]
        for name, cols, dtype in (("Coordinates", 3, "f4"), ("CoordinateRoundoff", 3, "f4"), ("Velocities", 3, "f4"),
                                  ("Masses", 1, "f4"), ("ParticleIDs", 1, "u8")):
            del g[name]
            shape = (n, cols) if cols > 1 else (n,)
            g.create_dataset(name, shape=shape, dtype=dtype, chunks=(min(n, 65536),) + shape[1:] if chunked else None)
    return path


def huge_count(d):
    good = make_good(d)
    path = with_count(good, os.path.join(d, "huge.h5"), 10**9)
    check(os.path.getsize(path) < 100_000, f"the hostile file is {os.path.getsize(path)} bytes")
    t0 = time.monotonic()
    r = run("--run", "--restart", path, "--steps", "2")
    seconds = time.monotonic() - t0
    refused(path, r, "holds 1000000000 bodies", "MiB")
    check(seconds < 10, f"a billion declared bodies took {seconds:.1f} s to refuse")


# --- time_chain --------------------------------------------------------------------------------

def header(path):
    with h5py.File(path, "r") as f:
        return dict(f["Header"].attrs)


def time_chain(d):
    a = os.path.join(d, "a.h5")
    r = run("--run", "--bodies", "256", "--steps", "30", "--dt", "0.005", "--checkpoint", a, "-q")
    check(r.returncode == 0, f"a: {r.stderr}")
    check(abs(header(a)["Time"] - 0.15) < 1e-12, f"a: Time {header(a)['Time']}")
    previous, expected, step = a, 0.15, 30
    for name, dt, steps in (("b", 0.01, 10), ("c", 0.001, 10), ("d", 0.001, 5)):
        out = os.path.join(d, name + ".h5")
        js = os.path.join(d, name + ".json")
        r = run("--run", "--restart", previous, "--dt", str(dt), "--steps", str(steps), "--checkpoint", out,
                "--json", js, "-q")
        check(r.returncode == 0, f"{name}: {r.stderr}")
        expected += dt * steps
        step += steps
        h = header(out)
        check(abs(h["Time"] - expected) < 1e-12, f"{name}: Time {h['Time']}, expected {expected}")
        check(abs(json.load(open(js))["time"] - expected) < 1e-12, f"{name}: the JSON's time")
        check(h["Step"] == step, f"{name}: Step {h['Step']}, expected {step}")
        previous = out
    # d kept c's dt: its clock is c's, continued.
    h = header(previous)
    check(h["DtSinceStep"] == 40, f"d: DtSinceStep {h['DtSinceStep']}, expected 40 (where dt became 0.001)")
    check(h["Time"] == h["DtSinceTime"] + (h["Step"] - h["DtSinceStep"]) * h["Dt"], "Time is DtSinceTime + ...")


# --- header_bounds -----------------------------------------------------------------------------

def header_bounds(d):
    good = make_good(d)

    def broken(name, edit, *words):
        path = os.path.join(d, f"broken-{name}.h5")
        shutil.copy(good, path)
        with h5py.File(path, "r+") as f:
            edit(f["Header"].attrs)
        refused(path, run("--run", "--restart", path, "--steps", "1"), *words)
        return path

    broken("step-wraps", lambda a: a.__setitem__("Step", np.uint64(2**64 - 1)), "Header/Step", "at most")
    broken("step-negative", lambda a: a.__setitem__("Step", np.int64(-5)), "Header/Step is -5")
    broken("step-fraction", lambda a: a.__setitem__("Step", np.float64(3.5)), "Header/Step is not a whole number")
    broken("dt-subnormal", lambda a: a.__setitem__("Dt", 1e-320), "Header/Dt", "too small")
    broken("dt-huge", lambda a: a.__setitem__("Dt", 1e30), "Header/Dt 1e+30", "at most 1e12")
    p = broken("damping-2", lambda a: a.__setitem__("Damping", 2.0), "Header/Damping 2", "(0, 1]")
    r = run("--run", "--restart", p, "--steps", "1")
    check("--damping" not in r.stderr, f"a file's damping blamed on --damping: {r.stderr.strip()}")
    broken("damping-0", lambda a: a.__setitem__("Damping", 0.0), "Header/Damping 0")
    broken("softening-underflow", lambda a: a.__setitem__("Softening", 1e-30), "Header/Softening 1e-30",
           "too small for fp32")
    broken("this-file", lambda a: a.__setitem__("NumPart_ThisFile", np.array([0, 200, 0, 0, 0, 0], np.uint32)),
           "NumPart_ThisFile disagrees")
    broken("time", lambda a: a.__setitem__("Time", 99.0), "Header/Time 99")
    broken("diagnostics-every-0", lambda a: a.__setitem__("DiagnosticsEvery", np.uint64(0)),
           "Header/DiagnosticsEvery is 0; must be 1 or more")
    broken("diagnostics-every-negative", lambda a: a.__setitem__("DiagnosticsEvery", np.int64(-3)),
           "Header/DiagnosticsEvery is -3; must be 1 or more")
    broken("checkpoint-every-0", lambda a: a.__setitem__("CheckpointEvery", np.uint64(0)),
           "Header/CheckpointEvery is 0; must be 1 or more")
    broken("snapshot-dt-infinite", lambda a: a.__setitem__("SnapshotDt", np.inf), "Header/SnapshotDt is not a finite number")
    broken("diagnostics-dt-negative", lambda a: a.__setitem__("DiagnosticsDt", -0.5), "Header/DiagnosticsDt -0.5",
           "(0, 1e27]")
    # The same bound from the command line, before any work: a softening whose square underflows.
    r = run("--run", "--bodies", "64", "--steps", "2", "--softening", "1e-30")
    check(r.returncode == 2 and one_line_error(r, "--softening 1e-30", "too small for fp32"),
          f"--softening 1e-30: {r.returncode} {r.stderr.strip()}")
    r = run("--run", "--bodies", "64", "--steps", "2", "--softening", "1e-15", "--precision", "fp64", "-q")
    check(r.returncode == 0, f"--softening 1e-15 in fp64 is fine: {r.returncode} {r.stderr.strip()}")


# --- hostile -----------------------------------------------------------------------------------

def hostile(d):
    good = make_good(d)
    n = 300

    def variant(name, edit):
        path = os.path.join(d, f"hostile-{name}.h5")
        shutil.copy(good, path)
        with h5py.File(path, "r+") as f:
            edit(f)
        return path

    def external(target):
        def edit(f):
            del f["PartType4/Coordinates"]
            f["PartType4"].create_dataset("Coordinates", shape=(n, 3), dtype="f4",
                                          external=[(target, 0, h5py.h5f.UNLIMITED)])
        return edit

    fifo = os.path.join(d, "fifo")
    os.mkfifo(fifo)
    for name, edit, words in (
            ("external-fifo", external(fifo), "stored in external files"),
            ("external-passwd", external("/etc/passwd"), "stored in external files"),
            ("external-link", lambda f: (f.__delitem__("PartType4"),
                                         f.__setitem__("PartType4", h5py.ExternalLink(good, "PartType4"))),
             "/PartType4 is a link"),
            ("soft-link", lambda f: (f.move("PartType4/Masses", "Elsewhere"),
                                     f["PartType4"].__setitem__("Masses", h5py.SoftLink("/Elsewhere"))),
             "/PartType4/Masses is a link"),
    ):
        path = variant(name, edit)
        t0 = time.monotonic()
        r = run("--run", "--restart", path, "--steps", "1", timeout=20)
        refused(path, r, *((words,) if isinstance(words, str) else words))
        check(time.monotonic() - t0 < 10, f"{name}: took {time.monotonic() - t0:.1f} s")

    # A virtual dataset whose values come from another file.
    def virtual(f):
        source = os.path.join(d, "source.h5")
        with h5py.File(source, "w") as s:
            s["v"] = np.zeros(n, np.float32)
        layout = h5py.VirtualLayout(shape=(n,), dtype="f4")
        layout[:] = h5py.VirtualSource(source, "v", shape=(n,))
        del f["PartType4/Masses"]
        f["PartType4"].create_virtual_dataset("Masses", layout)
    path = variant("virtual", virtual)
    refused(path, run("--run", "--restart", path, "--steps", "1"), "virtual dataset")


# --- bit_flips ---------------------------------------------------------------------------------

def bit_flips(d):
    good = make_good(d, bodies=200)
    data = open(good, "rb").read()
    clean = os.path.join(d, "clean-out.h5")
    r = run("--run", "--restart", good, "--steps", "1", "--checkpoint", clean, "-q")
    check(r.returncode == 0, f"the clean restart: {r.stderr}")
    rng = random.Random(0xF11B)
    trials, accepted_harmless = 60, 0
    for t in range(trials):
        flipped = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            bit = rng.randrange(len(flipped) * 8)
            flipped[bit // 8] ^= 1 << (bit % 8)
        path = os.path.join(d, f"flip-{t}.h5")
        open(path, "wb").write(flipped)
        out = os.path.join(d, f"flip-{t}-out.h5")
        r = run("--run", "--restart", path, "--steps", "1", "--checkpoint", out, "-q", timeout=30)
        if r.returncode == 0:
            # Accepted: only if the flips touched nothing the run reads (unused bytes of the file).
            harmless = same_state(out, clean) and header(out)["Time"] == header(clean)["Time"]
            check(harmless, f"flip {t}: accepted, and the run differs")
            accepted_harmless += harmless
        else:
            check(r.returncode == 2 and one_line_error(r, path), f"flip {t}: exit {r.returncode} {r.stderr.strip()}")
    print(f"{trials} files with 1-8 flipped bits: {trials - accepted_harmless} refused, "
          f"{accepted_harmless} accepted with the run unchanged")


# --- checksum ----------------------------------------------------------------------------------

def fnv1a(chunks):
    h = 0xcbf29ce484222325
    for chunk in chunks:
        for byte in chunk:
            h = ((h ^ byte) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def documented_checksum(path):
    """Header/Checksum as checkpoint.h documents it, from h5py's reading alone (either format)."""
    with h5py.File(path, "r") as f:
        a = f["Header"].attrs
        text = lambda k: (a[k].decode() if isinstance(a[k], bytes) else str(a[k])).encode() + b"\0"
        version = int(a["NbodyFormat"]) if "NbodyFormat" in a else 1
        counts = [int(c) for c in a["NumPart_Total"]]
        parts = [struct.pack("<Q", 2)] if version == 2 else []
        parts += [struct.pack("<QQQQ", sum(counts), int(a["Step"]), int(a["DtSinceStep"]), int(a["Seed"])),
                  struct.pack("<5d", *(float(a[k]) for k in ("StartTime", "DtSinceTime", "Dt", "Softening", "Damping")))]
        parts.append(struct.pack("<Bd", 1, float(a["InitialEnergy"])) if "InitialEnergy" in a else b"\0")
        parts += [text("Precision"), text("Integrator"), text("Scenario")]
        if version == 1:
            g = f["PartType1"]
            parts += [g["ParticleIDs"][()].astype("<u8").tobytes(), g["BodyType"][()].astype("u1").tobytes()]
            parts += [g[k][()].astype("<f8").tobytes() for k in ("Coordinates", "Velocities", "Masses")]
            return fnv1a(parts), int(a["Checksum"])
        u = f["Units"].attrs
        parts += [text("MassUnit"), text("LengthUnit")]
        parts.append(struct.pack("<4d", float(u["Unit length in cgs (U_L)"]), float(u["Unit mass in cgs (U_M)"]),
                                 float(u["Unit time in cgs (U_t)"]), float(a["Shift"][0])))
        if "EndTime" in a:
            parts.append(struct.pack("<Bd", ord("T"), float(a["EndTime"])))
        elif "EndStep" in a:
            parts.append(struct.pack("<BQ", ord("S"), int(a["EndStep"])))
        for name, every_tag, dt_tag in (("Diagnostics", "K", "D"), ("Checkpoint", "P", "p"), ("Snapshot", "N", "n")):
            if f"{name}Every" in a:
                parts.append(struct.pack("<BQ", ord(every_tag), int(a[f"{name}Every"])))
            elif f"{name}Dt" in a:
                parts.append(struct.pack("<Bd", ord(dt_tag), float(a[f"{name}Dt"])))
        if "DiagnosticsDigest" in a:
            digest = a["DiagnosticsDigest"]
            parts.append(b"G" + (digest if isinstance(digest, bytes) else digest.encode()) + b"\0")
        if "Course" in a:
            course = a["Course"]
            parts.append(b"R" + (course if isinstance(course, bytes) else course.encode()) + b"\0")
        for t in (0, 1, 4):
            if counts[t] == 0:
                continue
            g = f[f"PartType{t}"]
            parts += [struct.pack("<Q", counts[t]), g["ParticleIDs"][()].astype("<u8").tobytes()]
            parts += [g[k][()].astype("<f8").tobytes()
                      for k in ("Coordinates", "CoordinateRoundoff", "Velocities", "Masses")]
        return fnv1a(parts), int(a["Checksum"])


def write_format1(path, source):
    """`source` (a format 2 checkpoint) rewritten in format 1, with format 1's checksum: the layout of
    nbody before particle families and units (tests/science_files.py restarts such files too)."""
    with h5py.File(source, "r") as f, h5py.File(path, "w", libver=("v108", "v108")) as o:
        a = f["Header"].attrs
        counts = [int(c) for c in a["NumPart_Total"]]
        shift = a["Shift"][0]
        rows = {}
        for t, body_type in ((0, 0), (1, 1), (4, 2)):
            if counts[t]:
                g = f[f"PartType{t}"]
                dtype = g["Coordinates"].dtype
                x = (g["Coordinates"][()] - dtype.type(shift)) + g["CoordinateRoundoff"][()]
                for k, i in enumerate(g["ParticleIDs"][()]):
                    rows[int(i)] = (body_type, x[k], g["Velocities"][k], g["Masses"][k])
        n = len(rows)
        h = o.create_group("Header")
        for k in ("Time", "Step", "StartTime", "DtSinceStep", "DtSinceTime", "Precision", "Integrator", "Dt",
                  "Softening", "Damping", "Scenario", "Seed", "InitialEnergy", "Redshift", "NumFilesPerSnapshot",
                  "MassTable", "Flag_DoublePrecision"):
            h.attrs[k] = a[k]
        h.attrs["NumPart_ThisFile"] = h.attrs["NumPart_Total"] = np.array([0, n, 0, 0, 0, 0], np.uint32)
        h.attrs["Code"] = np.bytes_(b"nbody 0.1.0")
        g = o.create_group("PartType1")
        g["ParticleIDs"] = np.arange(n, dtype=np.uint64)
        g["BodyType"] = np.array([rows[i][0] for i in range(n)], np.uint8)
        g["Coordinates"] = np.array([rows[i][1] for i in range(n)])
        g["Velocities"] = np.array([rows[i][2] for i in range(n)])
        g["Masses"] = np.array([rows[i][3] for i in range(n)])
    computed, _ = documented_checksum_format1(path)
    with h5py.File(path, "r+") as o:
        o["Header"].attrs["Checksum"] = np.uint64(computed)


def documented_checksum_format1(path):
    with h5py.File(path, "r+") as f:
        f["Header"].attrs["Checksum"] = np.uint64(0)
    return documented_checksum(path)


def checksum(d):
    for precision in ("fp32", "fp64"):
        for scenario, units in (("plummer", ()), ("disk", ("--mass-unit", "1e5Msun", "--length-unit", "1pc"))):
            path = make_good(d, precision=precision, bodies=100, name=f"{precision}-{scenario}.h5",
                             extra=("--scenario", scenario, *units))
            computed, stored = documented_checksum(path)
            check(computed == stored, f"{precision} {scenario}: Header/Checksum {stored:x}, the documented FNV-1a "
                                      f"gives {computed:x}")
    # Where the run was going: a run by steps records its end step, a run to a time that time.
    with h5py.File(os.path.join(d, "fp32-plummer.h5"), "r") as f:
        check(int(f["Header"].attrs.get("EndStep", -1)) == 5 and "EndTime" not in f["Header"].attrs,
              f"a run by steps records EndStep 5: {dict(f['Header'].attrs)}")
    to_time = os.path.join(d, "to-time.h5")
    r = run("--run", "--bodies", "100", "--t-end", "0.05", "--checkpoint", to_time, "-q")
    check(r.returncode == 0, f"writing to-time.h5: exit {r.returncode} {r.stderr.strip()}")
    with h5py.File(to_time, "r") as f:
        check(float(f["Header"].attrs.get("EndTime", -1)) == 0.05 and "EndStep" not in f["Header"].attrs,
              "a run to a time records EndTime 0.05")
    computed, stored = documented_checksum(to_time)
    check(computed == stored, f"EndTime: Header/Checksum {stored:x}, the documented FNV-1a gives {computed:x}")
    both = os.path.join(d, "both-ends.h5")
    shutil.copy(to_time, both)
    with h5py.File(both, "r+") as f:
        f["Header"].attrs["EndStep"] = np.uint64(7)
        del f["Header"].attrs["Checksum"]
    refused(both, run("--run", "--restart", both), "Header/EndTime and Header/EndStep are both given")
    # How often the run wrote its series: every so many steps, or at multiples of a time; nothing without them (the
    # checkpoint itself is no series without --checkpoint-every or --checkpoint-dt).
    with h5py.File(to_time, "r") as f:
        cadences = [k for k in f["Header"].attrs if k.endswith(("Every", "Dt")) and k != "Dt"]
        check(cadences == [], f"a run without series records no cadence: {cadences}")
    for option, value, key, series in (
            ("--diagnostics-every", "3", "DiagnosticsEvery", ("--diagnostics", "x.csv")),
            ("--diagnostics-dt", "0.01", "DiagnosticsDt", ("--diagnostics", "x.csv")),
            ("--checkpoint-every", "2", "CheckpointEvery", ()),
            ("--checkpoint-dt", "0.02", "CheckpointDt", ()),
            ("--snapshot-every", "4", "SnapshotEvery", ("--snapshots", "snap")),
            ("--snapshot-dt", "0.03", "SnapshotDt", ("--snapshots", "snap"))):
        sampled = os.path.join(d, f"{key}.h5")
        where = [os.path.join(d, key + "-" + v) if i % 2 else v for i, v in enumerate(series)]
        r = run("--run", "--bodies", "100", "--steps", "5", option, value, *where, "--checkpoint", sampled, "-q")
        check(r.returncode == 0, f"writing {key}.h5: exit {r.returncode} {r.stderr.strip()}")
        with h5py.File(sampled, "r") as f:
            check(str(f["Header"].attrs.get(key)) == value, f"{option} {value} is recorded as {key}: "
                                                             f"{dict(f['Header'].attrs)}")
        computed, stored = documented_checksum(sampled)
        check(computed == stored, f"{key}: Header/Checksum {stored:x}, the documented FNV-1a gives {computed:x}")
    both = os.path.join(d, "both-cadences.h5")
    shutil.copy(os.path.join(d, "DiagnosticsDt.h5"), both)
    with h5py.File(both, "r+") as f:
        f["Header"].attrs["DiagnosticsEvery"] = np.uint64(7)
        del f["Header"].attrs["Checksum"]
    refused(both, run("--run", "--restart", both), "Header/DiagnosticsEvery and Header/DiagnosticsDt are both given")
    both = os.path.join(d, "both-snapshot-cadences.h5")
    shutil.copy(os.path.join(d, "SnapshotEvery.h5"), both)
    with h5py.File(both, "r+") as f:
        f["Header"].attrs["SnapshotDt"] = 0.5
        del f["Header"].attrs["Checksum"]
    refused(both, run("--run", "--restart", both), "Header/SnapshotEvery and Header/SnapshotDt are both given")
    # Format 1 (every body in PartType1 with a BodyType), as nbody wrote it before particle families.
    old = os.path.join(d, "format1.h5")
    write_format1(old, os.path.join(d, "fp64-disk.h5"))
    computed, stored = documented_checksum(old)
    check(computed == stored, "the format 1 recipe")
    r = run("--run", "--restart", old, "--steps", "1")
    check(r.returncode == 0 and "read unverified" not in r.stderr, f"format 1 restarts verified: {r.stderr.strip()}")
    # Edited on purpose, checksum kept: refused, saying how to proceed; checksum deleted: accepted,
    # with a notice that it was not verified.
    path = os.path.join(d, "edited.h5")
    shutil.copy(os.path.join(d, "fp32-plummer.h5"), path)
    with h5py.File(path, "r+") as f:
        f["PartType4/Velocities"][0, 0] += 0.25
    refused(path, run("--run", "--restart", path, "--steps", "1"), "checksum", "delete Header/Checksum")
    with h5py.File(path, "r+") as f:
        del f["Header"].attrs["Checksum"]
    r = run("--run", "--restart", path, "--steps", "1")
    check(r.returncode == 0 and "read unverified" in r.stderr, f"no checksum: {r.returncode} {r.stderr.strip()}")
    # Its bodies are another system: the energy error is measured from this run's start, not the file's.
    check("the energy error is measured from this run's start, not " + path + "'s: its bodies, unverified, may have "
          "been edited" in r.stderr, f"edited bodies' energy baseline: {r.stderr.strip()}")
    check(" energy error 0.000e+00" in r.stdout, f"the start's error is 0: {r.stdout.strip()}")


cases = {"full_disk": full_disk, "huge_count": huge_count, "time_chain": time_chain, "header_bounds": header_bounds,
         "hostile": hostile, "bit_flips": bit_flips, "checksum": checksum}
if case not in cases:
    print(f"unknown case {case}; valid: {', '.join(cases)}")
    sys.exit(2)
with tempfile.TemporaryDirectory() as d:
    cases[case](d)
print(f"{case}:", "FAILED" if failures else "passed")
sys.exit(1 if failures else 0)
