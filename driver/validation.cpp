// driver/validation.cpp - sampled comparison with the fp64 reference forces.
#include "driver/validation.h"

#include <algorithm>
#include <cmath>

#include "core/interrupt.h"
#include "core/ranks.h"
#include "sim/physics/reference_forces.h"

namespace nbody::driver {

ValidationResult validate_forces(multigpu::Simulation& sim, double tolerance) {
  auto const accel = sim.accelerations();
  sim::BodySet const state = sim.state();
  ValidationResult r;
  std::size_t const n = state.size();
  r.bodies = n;
  r.samples = std::min<std::size_t>(n, n <= 65536 ? 4096 : 1024);
  std::vector<std::size_t> index(r.samples);
  for (std::size_t k = 0; k < r.samples; ++k) index[k] = k * n / r.samples;  // spread evenly
  std::vector<Vec3d> ref(r.samples);
  double const eps2 = sim.config().softening * sim.config().softening;
  // In chunks, with a check for a signal between them: at N = 1M the reference takes minutes. Every rank computes the
  // reference alike and they agree on a signal at each chunk, so that they stop together (not by an abort).
  constexpr long kChunk = 64;
  Ranks const& ranks = sim.ranks();
  for (long first = 0; first < long(r.samples); first += kChunk) {
    if (int const sig = agreed_interrupt(ranks)) throw Interrupted(sig, ranks.size() > 1);
    long const last = std::min(long(r.samples), first + kChunk);
#pragma omp parallel for schedule(dynamic, 4)
    for (long k = first; k < last; ++k)
      sim::reference_accelerations(state.pos_mass.data(), n, index[std::size_t(k)], 1, eps2, &ref[std::size_t(k)]);
  }
  double err2 = 0, ref2 = 0;
  for (std::size_t k = 0; k < r.samples; ++k) {
    Vec3d const a = accel[index[k]];
    r.finite = r.finite && std::isfinite(a.x) && std::isfinite(a.y) && std::isfinite(a.z);
    Vec3d const d = a - ref[k];
    err2 += dot(d, d);
    ref2 += dot(ref[k], ref[k]);
    if (norm(ref[k]) > 0) r.max_relative_error = std::max(r.max_relative_error, norm(d) / norm(ref[k]));
  }
  r.l2_relative_error = ref2 > 0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);
  r.tolerance = tolerance > 0 ? tolerance : sim::force_error_bound(sim.config().engine.precision, n);
  r.pass = r.finite && r.l2_relative_error < r.tolerance;
  return r;
}

}  // namespace nbody::driver
