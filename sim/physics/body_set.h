// sim/physics/body_set.h - the host-side state of a simulation: positions, masses, velocities, types.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/real4.h"

namespace nbody::sim {

// Tipsy's particle families; kept so snapshots round-trip and the viewer can colour by type.
enum class BodyType : std::uint8_t { gas = 0, dark = 1, star = 2 };

// All bodies in fp64 on the host. Simulation backends convert to their working precision.
struct BodySet {
  std::vector<Real4<double>> pos_mass;  // (x, y, z, m), simulation units (G = 1)
  std::vector<Vec3d> velocity;
  std::vector<BodyType> type;
  double time = 0.0;  // simulation time of this state

  std::size_t size() const { return pos_mass.size(); }
  void resize(std::size_t n);
  void reserve(std::size_t n);  // room for n bodies: a scenario of 10^8 grows its arrays once
  void append(Real4<double> p, Vec3d v, BodyType t);
};

double total_mass(const BodySet& b);
Vec3d centre_of_mass(const BodySet& b);
Vec3d centre_of_mass_velocity(const BodySet& b);

// Shifts positions and velocities so that the centre of mass is at rest at the origin.
void move_to_centre_of_mass_frame(BodySet& b);

// FNV-1a of the positions, masses and velocities' bytes from kStateHashBasis (core/fnv1a.h): equal for two states
// that are the same bit for bit (the types and time are not in it).
std::uint64_t state_hash(const BodySet& b);

}  // namespace nbody::sim
