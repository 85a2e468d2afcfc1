// sim/physics/diagnostics.cpp - conserved quantities.
#include "sim/physics/diagnostics.h"

#include <cmath>

#include "sim/physics/reference_forces.h"

namespace nbody::sim {

Diagnostics measure(const BodySet& b, double potential) {
  Diagnostics d;
  d.potential = potential;
  for (std::size_t i = 0; i < b.size(); ++i) {
    double const m = b.pos_mass[i].w;
    d.kinetic += 0.5 * m * dot(b.velocity[i], b.velocity[i]);
    d.momentum = d.momentum + m * b.velocity[i];
    d.mass += m;
  }
  d.centre_of_mass = centre_of_mass(b);
  return d;
}

double reference_potential(const BodySet& b, double softening) {
  return 0.5 * reference_slice_potential(b.pos_mass.data(), b.size(), 0, b.size(), softening * softening);
}

double relative_energy_error(double e, double e0) {
  return e0 != 0.0 ? std::abs((e - e0) / e0) : std::abs(e - e0);
}

}  // namespace nbody::sim
