// sim/physics/diagnostics.h - conserved quantities of a state: energies, momentum, centre of mass.
#pragma once

#include "sim/physics/body_set.h"

namespace nbody::sim {

struct Diagnostics {
  double kinetic = 0.0;    // sum m v^2 / 2
  double potential = 0.0;  // sum over pairs of -m_i m_j / sqrt(r^2 + eps^2) (softened, G = 1)
  double total() const { return kinetic + potential; }
  Vec3d momentum{0, 0, 0};
  Vec3d centre_of_mass{0, 0, 0};
  double mass = 0.0;
};

// Kinetic energy, momentum and centre of mass from `bodies`; `potential` computed elsewhere
// (a backend's O(N^2) potential kernel, or reference_potential).
Diagnostics measure(const BodySet& bodies, double potential);

// The fp64 reference potential energy of all bodies (O(N^2) on the CPU).
double reference_potential(const BodySet& bodies, double softening);

// |E - E0| / |E0|, or |E - E0| when E0 is 0.
double relative_energy_error(double e, double e0);

}  // namespace nbody::sim
