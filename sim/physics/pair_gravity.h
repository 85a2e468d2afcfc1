// sim/physics/pair_gravity.h - the one softened body-body interaction, for host and device code.
#pragma once

#include <cmath>

#include "core/real4.h"

namespace nbody::sim {

// 1/sqrt(x): on the GPU the hardware reciprocal square root (MUFU.RSQ for float); on the host
// the correctly rounded 1/std::sqrt. Kernels that refine an fp32 seed for fp64 have their own.
NBODY_HOST_DEVICE inline float rsqrt_of(float x) {
#if defined(__CUDA_ARCH__)
  return rsqrtf(x);
#else
  return 1.0f / std::sqrt(x);
#endif
}
NBODY_HOST_DEVICE inline double rsqrt_of(double x) {
#if defined(__CUDA_ARCH__)
  return rsqrt(x);
#else
  return 1.0 / std::sqrt(x);
#endif
}

// The default policy for m r^-3 = m (r^2)^(-3/2): y = rsqrt_of(r^2) (hardware on the GPU, correctly
// rounded on the host), then (m y)(y y). The two products on the right are independent; on an
// H100/H200 that grouping ran 3% faster than ((y y) y) m (docs/benchmarks.md).
struct RsqrtDefault {
  template <class Real>
  NBODY_HOST_DEVICE static Real mass_over_r3(Real mass, Real r2) {
    Real const y = rsqrt_of(r2);
    return (mass * y) * (y * y);
  }
};

// The two stages of one interaction, for kernels that interleave the stages of several pairs
// (force_kernels.cuh); accumulate() below is the interaction itself.
// Softened squared distance, grouped so that eps2 enters the innermost multiply-add: 3 FMAs, no
// separate add.
template <class Real>
NBODY_HOST_DEVICE inline Real softened_r2(Real dx, Real dy, Real dz, Real eps2) {
  return dz * dz + (dy * dy + (dx * dx + eps2));
}
// a += s d, with s = m r^-3 from the Rsqrt policy.
template <class Real>
NBODY_HOST_DEVICE inline void add_scaled(Real s, Real dx, Real dy, Real dz, Real& ax, Real& ay, Real& az) {
  ax += s * dx;
  ay += s * dy;
  az += s * dz;
}

// Adds the acceleration that body j (mass_j at offset (dx, dy, dz) from body i) gives body i,
// with Plummer softening eps2 = softening^2 and G = 1 (Aarseth 2003, "Gravitational N-Body
// Simulations", eq. 1.2 with softening). With eps2 > 0 the self term (dx = dy = dz = 0) adds 0.
// 13 GPU instructions per interaction: 3 FADD, 6 FFMA, 3 FMUL, 1 MUFU.RSQ.
template <class Real, class Rsqrt = RsqrtDefault>
NBODY_HOST_DEVICE inline void accumulate(Real dx, Real dy, Real dz, Real mass_j, Real eps2, Real& ax, Real& ay,
                                         Real& az) {
  Real const r2 = softened_r2(dx, dy, dz, eps2);
  add_scaled(Rsqrt::mass_over_r3(mass_j, r2), dx, dy, dz, ax, ay, az);
}

}  // namespace nbody::sim
