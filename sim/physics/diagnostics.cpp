// sim/physics/diagnostics.cpp - conserved quantities.
#include "sim/physics/diagnostics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "sim/physics/reference_forces.h"

namespace nbody::sim {

namespace {
Vec3d cross(Vec3d a, Vec3d b) { return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x}; }
}  // namespace

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
  Vec3d const v_cm = centre_of_mass_velocity(b);
  std::vector<std::pair<double, double>> by_distance(b.size());  // (r^2 from the centre of mass, m)
  for (std::size_t i = 0; i < b.size(); ++i) {
    auto const& p = b.pos_mass[i];
    Vec3d const x = Vec3d{p.x, p.y, p.z} - d.centre_of_mass;
    Vec3d const v = b.velocity[i] - v_cm;
    d.angular_momentum = d.angular_momentum + p.w * cross(x, v);
    d.internal_kinetic += 0.5 * p.w * dot(v, v);
    by_distance[i] = {dot(x, x), p.w};
  }
  if (!(d.mass > 0.0)) {  // no mass to enclose a fraction of (every body massless): no radius, not the first body's
    d.lagrangian_radii.fill(std::nan(""));
    return d;
  }
  std::sort(by_distance.begin(), by_distance.end());
  // A fraction reached exactly (0.3 + 876 x 0.7/1022 of the mass = 90%) is reached, whatever the order of the two
  // sums' roundings: the mass enclosed counts as the fraction within a few roundings of a sum of N terms.
  double const slack = 1.0 - 4.0 * double(b.size()) * std::numeric_limits<double>::epsilon();
  double enclosed = 0.0;
  std::size_t next = 0;
  for (auto const& [r2, m] : by_distance) {
    enclosed += m;
    while (next < kLagrangianFractions.size() && enclosed >= kLagrangianFractions[next] * d.mass * slack)
      d.lagrangian_radii[next++] = std::sqrt(r2);
  }
  return d;
}

double reference_potential(const BodySet& b, double softening) {
  std::vector<double> terms(b.size());
  reference_potential_terms(b.pos_mass.data(), b.size(), 0, b.size(), softening * softening, terms.data());
  double total = 0.0;
  for (double t : terms) total += t;  // index order: the same sum for any thread count
  return 0.5 * total;
}

double relative_energy_error(double e, double e0, double bulk) {
  double const internal = e0 - bulk;
  return internal != 0.0 ? std::abs((e - e0) / internal) : std::abs(e - e0);
}

}  // namespace nbody::sim
