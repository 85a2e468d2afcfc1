// sim/physics/diagnostics.h - what a state says of the system: energies, momentum, angular momentum,
// centre of mass, virial ratio and Lagrangian radii.
#pragma once

#include <array>

#include <cmath>
#include <limits>

#include "sim/physics/body_set.h"

namespace nbody::sim {

// |P|^2 / (2M): the kinetic energy of a system's bulk motion, conserved with its momentum (0 without mass).
inline double bulk_kinetic(const Vec3d& momentum, double mass) {
  return mass > 0.0 ? dot(momentum, momentum) / (2.0 * mass) : 0.0;
}

struct Diagnostics {
  double kinetic = 0.0;    // sum m v^2 / 2
  double internal_kinetic = 0.0;  // sum m (v - V)^2 / 2: the kinetic energy about the centre of mass moving with V
  double potential = 0.0;  // sum over pairs of -m_i m_j / sqrt(r^2 + eps^2) (softened, G = 1)
  double total() const { return kinetic + potential; }
  Vec3d momentum{0, 0, 0};
  Vec3d angular_momentum{0, 0, 0};  // sum m (x - X) x (v - V), about the centre of mass X moving with V
  Vec3d centre_of_mass{0, 0, 0};
  double mass = 0.0;
  double bulk_kinetic() const { return sim::bulk_kinetic(momentum, mass); }
  // 2K / |W|, K the kinetic energy about the centre of mass (a system's bulk motion is not its equilibrium's): 1 in
  // virial equilibrium (a Plummer sphere in Henon units), 0 for a cold start. Undefined (NaN; null in JSON) where
  // W = 0: one body, or bodies without mass.
  double virial_ratio() const {
    return potential != 0.0 ? 2.0 * internal_kinetic / std::abs(potential) : std::numeric_limits<double>::quiet_NaN();
  }
  // Radii about the centre of mass that hold kLagrangianFractions of the mass (the nearest bodies'
  // masses added until the fraction is reached). A Plummer sphere in Henon units: 0.309, 0.769, 2.18.
  std::array<double, 3> lagrangian_radii{0, 0, 0};  // NaN where the bodies have no mass
};

inline constexpr std::array<double, 3> kLagrangianFractions{0.1, 0.5, 0.9};

// Everything but the potential from `bodies` (O(N log N): the Lagrangian radii sort the distances);
// `potential` computed elsewhere (a backend's O(N^2) potential kernel, or reference_potential).
Diagnostics measure(const BodySet& bodies, double potential);

// The fp64 reference potential energy of all bodies (O(N^2) on the CPU).
double reference_potential(const BodySet& bodies, double softening);

// |E - E0| / |E0 - Kb|, or |E - E0| where that is 0: the change of the energy over the energy in the centre-of-mass
// frame, Kb the kinetic energy of the bulk motion (bulk_kinetic; conserved, as the momentum is). A system that moves
// as a whole is no more accurate for it: over |E0| the error of a cluster given a drift of 10 velocity units read 200
// times smaller, and the run's energy warning never came.
double relative_energy_error(double e, double e0, double bulk);
// The energy error of the state `now` against the baseline e0.
inline double relative_energy_error(const Diagnostics& now, double e0) {
  return relative_energy_error(now.total(), e0, now.bulk_kinetic());
}

}  // namespace nbody::sim
