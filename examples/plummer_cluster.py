#!/usr/bin/env python3
# examples/plummer_cluster.py - a star cluster from NumPy: a Plummer sphere sampled here, run by nbody
# with a callback that records its Lagrangian radii and energy error, plotted with matplotlib.
"""Build a Plummer cluster in NumPy, evolve it with nbody, plot its Lagrangian radii and energy error.

    python examples/plummer_cluster.py                          # 4096 bodies, t = 0..10, on the GPU if any
    python examples/plummer_cluster.py --bodies 512 --steps 60  # a quick look (what the tests run)

The environment variable NBODY_EXAMPLE_BODIES sets the default --bodies.
"""
import argparse
import math
import os
import sys

import numpy as np

import nbody


def plummer(n, seed):
    """A Plummer sphere (Aarseth, Henon & Wielen 1974) in Henon units (G = M = 1, E = -1/4): positions,
    velocities and masses as NumPy arrays, centre of mass at rest at the origin."""
    rng = np.random.default_rng(seed)
    # Radii from the cumulative mass m(r) = r^3 / (1 + r^2)^(3/2), cut at 99.9% of the mass.
    x = rng.uniform(0.0, 0.999, n)
    r = 1.0 / np.sqrt(x ** (-2.0 / 3.0) - 1.0)
    direction = rng.normal(size=(n, 3))
    positions = r[:, None] * direction / np.linalg.norm(direction, axis=1)[:, None]
    # Speeds by rejection from g(q) = q^2 (1 - q^2)^(7/2), q = v / v_escape (peak below 0.1).
    q = np.empty(n)
    todo = np.arange(n)
    while todo.size:
        trial, height = rng.uniform(0, 1, todo.size), rng.uniform(0, 0.1, todo.size)
        ok = height < trial**2 * (1 - trial**2) ** 3.5
        q[todo[ok]] = trial[ok]
        todo = todo[~ok]
    speed = q * math.sqrt(2.0) * (1.0 + r**2) ** -0.25
    direction = rng.normal(size=(n, 3))
    velocities = speed[:, None] * direction / np.linalg.norm(direction, axis=1)[:, None]
    # Plummer units to Henon units: lengths x 3 pi / 16, velocities / sqrt(3 pi / 16).
    scale = 3.0 * math.pi / 16.0
    positions *= scale
    velocities /= math.sqrt(scale)
    masses = np.full(n, 1.0 / n)
    positions -= positions.mean(axis=0)
    velocities -= velocities.mean(axis=0)
    return positions, velocities, masses


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bodies", type=int, default=int(os.environ.get("NBODY_EXAMPLE_BODIES", 4096)))
    parser.add_argument("--steps", type=int, default=1000, help="steps of dt (default 1000: t = 10)")
    parser.add_argument("--every", type=int, default=20, help="steps between two records")
    parser.add_argument("--dt", type=float, default=0.01)
    parser.add_argument("--backend", default="auto", choices=("auto", "cuda", "cpu"),
                        help="auto (the GPU if any, else the CPU), cuda or cpu")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--output", default="plummer_cluster.png")
    args = parser.parse_args()

    positions, velocities, masses = plummer(args.bodies, args.seed)
    try:
        sim = nbody.Simulation.from_arrays(positions, velocities, masses, dt=args.dt, softening=0.01,
                                           backend=args.backend)
    except ValueError as error:  # a bad --dt, --backend cuda without a GPU: nbody's one line says which
        sys.exit(f"error: {error}")
    print(sim)

    records = []

    def record(s):
        d = s.diagnostics()
        records.append((s.time, *d["lagrangian_radii"], d["relative_energy_error"], d["virial_ratio"]))

    record(sim)
    sim.run(steps=args.steps, callback=record, every=args.every)
    t, r10, r50, r90, error, virial = np.array(records).T

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (radii, energy) = plt.subplots(2, 1, sharex=True, figsize=(7, 6))
    for values, fraction in ((r10, "10%"), (r50, "50%"), (r90, "90%")):
        radii.plot(t, values, label=f"{fraction} of the mass")
    radii.set_ylabel("Lagrangian radius (Henon units)")
    radii.set_yscale("log")
    radii.legend()
    radii.set_title(f"Plummer cluster, {args.bodies} bodies, leapfrog dt = {args.dt} ({sim.backend})")
    energy.semilogy(t[1:], np.maximum(error[1:], 1e-17))
    energy.set_xlabel("time (Henon units)")
    energy.set_ylabel("|E - E0| / |E0 - Kb|")
    figure.tight_layout()
    figure.savefig(args.output, dpi=100)
    print(f"t = {t[-1]:g}: half-mass radius {r50[0]:.3f} -> {r50[-1]:.3f}, virial ratio {virial[-1]:.3f}, "
          f"energy error {error[-1]:.2e}; plot in {args.output}")

    # A cluster in equilibrium keeps its half-mass radius, and leapfrog its energy: anything else
    # means the example no longer shows what it says it shows.
    if not os.path.getsize(args.output) > 0:
        sys.exit(f"error: {args.output} was not written")
    if not error.max() < 1e-2:
        sys.exit(f"error: energy error {error.max():.2e} exceeds 1e-2")
    if not 0.5 < r50[-1] / r50[0] < 2.0:
        sys.exit(f"error: the half-mass radius went from {r50[0]:.3f} to {r50[-1]:.3f}")


if __name__ == "__main__":
    main()
