// sim/physics/body_set.cpp - BodySet helpers.
#include "sim/physics/body_set.h"

#include "core/fnv1a.h"

namespace nbody::sim {

void BodySet::resize(std::size_t n) {
  pos_mass.resize(n);
  velocity.resize(n);
  type.resize(n, BodyType::star);
}

void BodySet::reserve(std::size_t n) {
  pos_mass.reserve(n);
  velocity.reserve(n);
  type.reserve(n);
}

void BodySet::append(Real4<double> p, Vec3d v, BodyType t) {
  pos_mass.push_back(p);
  velocity.push_back(v);
  type.push_back(t);
}

double total_mass(const BodySet& b) {
  double m = 0.0;
  for (auto const& p : b.pos_mass) m += p.w;
  return m;
}

Vec3d centre_of_mass(const BodySet& b) {
  Vec3d c{0, 0, 0};
  double m = 0.0;
  for (auto const& p : b.pos_mass) {
    c = c + p.w * Vec3d{p.x, p.y, p.z};
    m += p.w;
  }
  return m > 0 ? (1.0 / m) * c : c;
}

Vec3d centre_of_mass_velocity(const BodySet& b) {
  Vec3d c{0, 0, 0};
  double m = 0.0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    c = c + b.pos_mass[i].w * b.velocity[i];
    m += b.pos_mass[i].w;
  }
  return m > 0 ? (1.0 / m) * c : c;
}

void move_to_centre_of_mass_frame(BodySet& b) {
  Vec3d const x = centre_of_mass(b);
  Vec3d const v = centre_of_mass_velocity(b);
  for (std::size_t i = 0; i < b.size(); ++i) {
    b.pos_mass[i].x -= x.x;
    b.pos_mass[i].y -= x.y;
    b.pos_mass[i].z -= x.z;
    b.velocity[i] = b.velocity[i] - v;
  }
}

std::uint64_t state_hash(const BodySet& b) {
  Fnv1a h(kStateHashBasis);
  h.bytes(b.pos_mass.data(), b.pos_mass.size() * sizeof(b.pos_mass[0]));
  h.bytes(b.velocity.data(), b.velocity.size() * sizeof(b.velocity[0]));
  return h.get();
}

}  // namespace nbody::sim
