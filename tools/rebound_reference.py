#!/usr/bin/env python3
"""tools/rebound_reference.py - the REBOUND figures that tests/test_physics.cpp holds nbody's integrators to.

    python3 -m pip install rebound      # PyPI; these figures: REBOUND 5.2.2
    python3 tools/rebound_reference.py

For each system of the test (the two-body scenario with e = 0.5 and e = 0.9, and a hierarchical triple),
REBOUND's order-4 leapfrog (`sim.integrator = "leapfrog"; sim.integrator.order = 4`: a drift-kick-drift
composition, three force evaluations a step) runs one period at `steps` steps, softening 1e-4, G = 1,
and prints the largest relative energy error seen after any step. The test runs nbody's fourth-order
integrators with the same number of force evaluations and compares.
"""
import math

import rebound

SOFTENING = 1e-4


def two_body(e):
    # sim/physics/scenarios.cpp: two bodies of mass 0.5 at apocentre, a = 1; period 2 pi.
    r, v = 1 + e, math.sqrt((1 - e) / (1 + e))
    return [(0.5, (r / 2, 0, 0), (0, v / 2, 0)), (0.5, (-r / 2, 0, 0), (0, -v / 2, 0))], 2 * math.pi


def triple():
    # tests/test_physics.cpp's hierarchical_triple(): a binary of two 1e-3 masses 0.05 apart on a
    # circular orbit of radius 1 around a unit mass; one outer period, 2 pi.
    bodies = [(1.0, (0, 0, 0), (0, 0, 0)), (1e-3, (1, 0, 0), (0, 1, 0)),
              (1e-3, (1.05, 0, 0), (0, 1 + math.sqrt(1e-3 / 0.05), 0))]
    total = sum(m for m, _, _ in bodies)
    com = [sum(m * x[k] for m, x, _ in bodies) / total for k in range(3)]
    vcom = [sum(m * v[k] for m, _, v in bodies) / total for k in range(3)]
    return [(m, tuple(x[k] - com[k] for k in range(3)), tuple(v[k] - vcom[k] for k in range(3)))
            for m, x, v in bodies], 2 * math.pi


def max_energy_error(bodies, period, steps):
    sim = rebound.Simulation()
    sim.softening = SOFTENING
    for m, x, v in bodies:
        sim.add(m=m, x=x[0], y=x[1], z=x[2], vx=v[0], vy=v[1], vz=v[2])
    sim.integrator = "leapfrog"
    sim.integrator.order = 4
    sim.dt = period / steps
    e0 = sim.energy()
    worst = 0.0
    for _ in range(steps):
        sim.steps(1)
        worst = max(worst, abs((sim.energy() - e0) / e0))
    return worst


print(f"REBOUND {rebound.__version__}, order-4 leapfrog, softening {SOFTENING}")
for name, (bodies, period), steps in (("two-body e=0.5", two_body(0.5), 400), ("two-body e=0.9", two_body(0.9), 1600),
                                      ("triple", triple(), 800)):
    print(f"  {name}: {steps} steps ({3 * steps} force evaluations) a period: max |dE/E| "
          f"{max_energy_error(bodies, period, steps):.3e}")
