// sim/physics/reference_forces.cpp - the fp64 reference forces and potentials (strict arithmetic, no fast-math).
#include "sim/physics/reference_forces.h"

#include <algorithm>
#include <cmath>

#include "core/interrupt.h"
#include "sim/physics/pair_gravity.h"

namespace nbody::sim {

namespace {
bool raised(const std::atomic<bool>* cancel) { return cancel && cancel->load(std::memory_order_relaxed); }
}  // namespace

void reference_accelerations(const Real4<double>* pos_mass, std::size_t n, std::size_t begin, std::size_t count,
                             double eps2, Real3<double>* acc, const std::atomic<bool>* cancel) {
  auto const end = static_cast<long>(begin + count);
  // Threads only when there is enough work: a team costs microseconds, a pair a nanosecond.
#pragma omp parallel for schedule(static) if (double(count) * double(n) > 1e6)
  for (long i = static_cast<long>(begin); i < end; ++i) {
    if (raised(cancel)) continue;  // one relaxed load per N pairs: nothing against the pairs' cost
    Real4<double> const pi = pos_mass[i];
    double ax = 0.0, ay = 0.0, az = 0.0;
    for (std::size_t j = 0; j < n; ++j) {
      Real4<double> const pj = pos_mass[j];
      accumulate(pj.x - pi.x, pj.y - pi.y, pj.z - pi.z, pj.w, eps2, ax, ay, az);
    }
    acc[std::size_t(i) - begin] = {ax, ay, az};
  }
}

namespace {
// In chunks of about 1e8 pairs (a fraction of a second), each row looking for a signal first (one relaxed load per
// N pairs), and the pass throwing at the chunk's end: a diagnostic is never worth keeping a user waiting after Ctrl-C
// (at N = 65,536 the pass takes about ten force steps), nor is a signal that came during its last chunk lost to a
// pass that then ran to its end. Each body's term is its own serial sum over j, whatever thread takes it.
template <class Real>
void potential(const Real4<Real>* pos_mass, std::size_t n, std::size_t begin, std::size_t count, double eps2,
               double* terms, const std::atomic<bool>* cancel, bool interruptible) {
  long const rows = std::max<long>(1, long(1e8 / double(std::max<std::size_t>(n, 1))));
  for (long first = static_cast<long>(begin), end = static_cast<long>(begin + count); first < end; first += rows) {
    if (interruptible) throw_if_interrupted();
    if (raised(cancel)) return;
    long const last = std::min(end, first + rows);
#pragma omp parallel for schedule(static) if (double(last - first) * double(n) > 1e6)
    for (long i = first; i < last; ++i) {
      if (raised(cancel) || (interruptible && interrupt_signal())) continue;
      double const xi = pos_mass[i].x, yi = pos_mass[i].y, zi = pos_mass[i].z;
      double phi = 0.0;
      for (std::size_t j = 0; j < n; ++j) {
        if (j == std::size_t(i)) continue;
        double const dx = pos_mass[j].x - xi, dy = pos_mass[j].y - yi, dz = pos_mass[j].z - zi;
        phi -= pos_mass[j].w / std::sqrt(dx * dx + dy * dy + dz * dz + eps2);
      }
      terms[std::size_t(i) - begin] = double(pos_mass[i].w) * phi;
    }
  }
  if (interruptible) throw_if_interrupted();  // rows skipped for it: the terms are not whole
}
}  // namespace

void reference_potential_terms(const Real4<double>* pos_mass, std::size_t n, std::size_t begin, std::size_t count,
                               double eps2, double* terms, const std::atomic<bool>* cancel, bool interruptible) {
  potential(pos_mass, n, begin, count, eps2, terms, cancel, interruptible);
}

void potential_terms(const Real4<float>* pos_mass, std::size_t n, std::size_t begin, std::size_t count, double eps2,
                     double* terms, const std::atomic<bool>* cancel, bool interruptible) {
  potential(pos_mass, n, begin, count, eps2, terms, cancel, interruptible);
}

double force_error_bound(Precision precision, std::size_t n) {
  if (precision == Precision::fp64) return 1e-12;
  return 1e-5 * std::max(1.0, std::sqrt(double(n) / 4096.0));
}

}  // namespace nbody::sim
