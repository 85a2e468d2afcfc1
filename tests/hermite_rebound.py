#!/usr/bin/env python3
"""tests/hermite_rebound.py - nbody's hermite4 against REBOUND's IAS15 (PyPI), on the same initial conditions.

    hermite_rebound.py NBODY

Three few-body problems to t = 10, softening 0: a hierarchical triple (a binary of two 1e-3 masses 0.05 apart on
a circular orbit of radius 1 around a unit mass), the Pythagorean three-body problem (Burrau 1913: masses 3,
4, 5 at rest at the corners of a 3-4-5 triangle) and the figure-eight orbit (Chenciner & Montgomery 2000: three
unit masses, the middle one starting at the centre, where its forces cancel), with --eta 0.002 (0.02 for the
triple and the figure-eight; --eta-start eta / 2). The bodies go in as a
tipsy file (float32: both codes start from its values), the end comes back from nbody's checkpoint (/Hermite,
float64; t = 10 is a multiple of every step, so each body is at t = 10). IAS15 (adaptive, machine precision)
is the reference. The triple also runs to t = 9.7, which is no block time (the longest step is 1/16): nbody's
last step of each body to it is held to the same bound as at t = 10, against IAS15 ending at 9.7 exactly. The
largest position error over the bodies, relative to the system's size, and the relative energy errors are
printed and held to the bounds below, measured 2026-11-24 with REBOUND 5.2.2 (t = 9.7: 2026-12-03; errors fall
as eta^2, i.e. as the 4th power of the step, which goes as sqrt(eta)):

    triple, eta 0.02:          position error 4.3e-05 (bound 1e-4), |dE/E| 4.4e-07 (bound 1e-6)
    triple, eta 0.02, t = 9.7: position error 2.4e-05 (bound 1e-4), |dE/E| 6.4e-07 (bound 1e-6)
    triple, eta 0.005:         position error 1.4e-06,              |dE/E| 6.5e-09
    Pythagorean, eta 0.02:     position error 7.0e-04,              |dE/E| 1.5e-04
    Pythagorean, eta 0.005:    position error 2.2e-05,              |dE/E| 5.2e-06
    Pythagorean, eta 0.002:    position error 2.3e-06 (bound 1e-5), |dE/E| 3.2e-07 (bound 1e-6)
    Pythagorean, eta 0.001:    position error 5.4e-07,              |dE/E| 8.8e-08
    figure-eight, eta 0.02:    position error 4.2e-05 (bound 1e-4), |dE/E| 4.5e-06 (bound 1e-5)  (2026-12-04)
    figure-eight, eta 0.005:   position error 1.6e-06,              |dE/E| 1.5e-07
    figure-eight, eta 0.002:   position error 2.0e-07,              |dE/E| 1.6e-08
    (IAS15's own |dE/E|: below 1e-13)

and, as the negative control that shows the bound can fail, the Pythagorean problem with --eta 0.2 (position
error 0.62) exceeds it.
"""
import os
import struct
import subprocess
import sys
import tempfile

try:
    import h5py
    import numpy as np
    import rebound
except ImportError as e:
    print(f"skipped: {e} (scripts/python-env.sh installs REBOUND)")
    sys.exit(77)

nbody = sys.argv[1]
failures = []

# (system, eta, position bound, energy bound); measured values in the docstring.
CASES = [("triple", 0.02, 1e-4, 1e-6, 10.0), ("triple", 0.02, 1e-4, 1e-6, 9.7), ("pythagorean", 0.002, 1e-5, 1e-6, 10.0),
         ("figure-eight", 0.02, 1e-4, 1e-5, 10.0)]
CONTROL = ("pythagorean", 0.2)


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL:", what)


def bodies(name):
    if name == "figure-eight":
        # Chenciner & Montgomery (2000), the values of Simo: the middle body starts at the centre, where the other two
        # bodies' pulls cancel exactly (|a| = 0, its jerk not), so hermite4 starts it from its strongest pull's criterion.
        x, v = (0.97000436, -0.24308753, 0.0), (-0.93240737, -0.86473146, 0.0)
        return [(1.0, x, tuple(-c / 2 for c in v)), (1.0, tuple(-c for c in x), tuple(-c / 2 for c in v)),
                (1.0, (0.0, 0.0, 0.0), v)]
    if name == "pythagorean":
        return [(3.0, (1, 3, 0), (0, 0, 0)), (4.0, (-2, -1, 0), (0, 0, 0)), (5.0, (1, -1, 0), (0, 0, 0))]
    b = [(1.0, (0, 0, 0), (0, 0, 0)), (1e-3, (1, 0, 0), (0, 1, 0)), (1e-3, (1.05, 0, 0), (0, 1 + (1e-3 / 0.05) ** 0.5, 0))]
    total = sum(m for m, _, _ in b)
    com = [sum(m * x[k] for m, x, _ in b) / total for k in range(3)]
    vcom = [sum(m * v[k] for m, _, v in b) / total for k in range(3)]
    return [(m, tuple(x[k] - com[k] for k in range(3)), tuple(v[k] - vcom[k] for k in range(3))) for m, x, v in b]


def as_float32(b):
    f = lambda v: float(np.float32(v))
    return [(f(m), tuple(map(f, x)), tuple(map(f, v))) for m, x, v in b]


def write_tipsy(path, b):
    # Standard tipsy (big-endian): header (time, n, ndim, nsph, ndark, nstar, pad), then star records
    # (mass, pos[3], vel[3], metals, tform, eps, phi).
    with open(path, "wb") as f:
        f.write(struct.pack(">diiiiii", 0.0, len(b), 3, 0, 0, len(b), 0))
        for m, x, v in b:
            f.write(struct.pack(">11f", m, *x, *v, 0.0, 0.0, 0.0, 0.0))


def ias15(b, t_end):
    sim = rebound.Simulation()
    for m, x, v in b:
        sim.add(m=m, x=x[0], y=x[1], z=x[2], vx=v[0], vy=v[1], vz=v[2])
    sim.integrator = "ias15"
    e0 = sim.energy()
    sim.integrate(t_end, exact_finish_time=1)
    pos = np.array([[p.x, p.y, p.z] for p in sim.particles])
    return pos, abs((sim.energy() - e0) / e0)


def hermite(b, eta, d, t_end):
    tipsy, checkpoint = os.path.join(d, "ic.tipsy"), os.path.join(d, "end.h5")
    write_tipsy(tipsy, b)
    cmd = [nbody, "--backend", "cpu", "--run", "--load", tipsy, "--integrator", "hermite4", "--eta", str(eta),
           "--eta-start", str(eta / 2), "--softening", "0", "--precision", "fp64", "--t-end", repr(t_end), "--quiet",
           "--checkpoint", checkpoint]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        print(r.stderr)
        return None
    with h5py.File(checkpoint, "r") as f:
        # Each body's own time: the epoch (where hermite4's block times count from) plus its block time.
        times = f["Hermite"].attrs["Epoch"] + f["Hermite/Times"][:]
        check(f["Header"].attrs["Time"] == t_end, f"nbody ended at t = {t_end}")
        check(np.all(times == t_end), f"every body at t = {t_end}")
        return np.array(f["Hermite/Positions"][:]), np.array(f["Hermite/Velocities"][:])


def energy(b, pos, vel):
    m = np.array([x[0] for x in b])
    k = 0.5 * np.sum(m * np.sum(vel * vel, axis=1))
    w = 0.0
    for i in range(len(m)):
        for j in range(i + 1, len(m)):
            w -= m[i] * m[j] / np.linalg.norm(pos[i] - pos[j])
    return k + w


def errors(name, eta, d, t_end=10.0):
    b = as_float32(bodies(name))
    reference, ias_de = ias15(b, t_end)
    out = hermite(b, eta, d, t_end)
    if out is None:
        return None
    pos, vel = out
    size = np.max(np.linalg.norm(reference, axis=1))
    dx = np.max(np.linalg.norm(pos - reference, axis=1)) / size
    e0 = energy(b, np.array([x[1] for x in b]), np.array([x[2] for x in b]))
    de = abs((energy(b, pos, vel) - e0) / e0)
    print(f"{name}, eta {eta}, t = {t_end}: position error {dx:.2e} of the system's size, |dE/E| {de:.2e} (IAS15 {ias_de:.2e})")
    return dx, de


with tempfile.TemporaryDirectory() as d:
    print(f"REBOUND {rebound.__version__}")
    for name, eta, dx_bound, de_bound, t_end in CASES:
        got = errors(name, eta, d, t_end)
        check(got is not None, f"{name}, t = {t_end}: nbody ran")
        if got:
            check(got[0] <= dx_bound, f"{name}, t = {t_end}: position error {got[0]:.2e} > {dx_bound}")
            check(got[1] <= de_bound, f"{name}, t = {t_end}: energy error {got[1]:.2e} > {de_bound}")
    got = errors(CONTROL[0], CONTROL[1], d)
    check(got is not None and got[0] > dict((c[0], c[2]) for c in CASES)[CONTROL[0]],
          "the negative control (a coarse eta) exceeds the bound")

if failures:
    print(len(failures), "failure(s)")
    sys.exit(1)
print("ok")
