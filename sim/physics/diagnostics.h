// sim/physics/diagnostics.h - what a state says of the system: energies, momentum, angular momentum,
// centre of mass, virial ratio and Lagrangian radii.
#pragma once

#include <array>

#include <cmath>
#include <limits>

#include "sim/physics/body_set.h"

namespace nbody::sim {

struct Diagnostics {
  double kinetic = 0.0;    // sum m v^2 / 2
  double internal_kinetic = 0.0;  // sum m (v - V)^2 / 2: the kinetic energy about the centre of mass moving with V
  double potential = 0.0;  // sum over pairs of -m_i m_j / sqrt(r^2 + eps^2) (softened, G = 1)
  double total() const { return kinetic + potential; }
  Vec3d momentum{0, 0, 0};
  Vec3d angular_momentum{0, 0, 0};  // sum m (x - X) x (v - V), about the centre of mass X moving with V
  Vec3d centre_of_mass{0, 0, 0};
  double mass = 0.0;
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

// |E - E0| / |E0|, or |E - E0| when E0 is 0.
double relative_energy_error(double e, double e0);

}  // namespace nbody::sim
