// sim/pair_gravity.h - the one softened body-body interaction, for host and device code.
#pragma once

#include <cmath>

#include "sim/real4.h"

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

// The default policy for r^-3 = (r^2)^(-3/2): y = rsqrt_of(r^2) (hardware on the GPU, correctly
// rounded on the host), then y * y * y.
struct RsqrtDefault {
  template <class Real>
  NBODY_HOST_DEVICE static Real inv_r3(Real r2) {
    Real const y = rsqrt_of(r2);
    return y * y * y;
  }
};

// Adds the acceleration that body j (mass_j at offset (dx, dy, dz) from body i) gives body i,
// with Plummer softening eps2 = softening^2 and G = 1 (Aarseth 2003, "Gravitational N-Body
// Simulations", eq. 1.2 with softening). With eps2 > 0 the self term (dx = dy = dz = 0) adds 0.
// r2 is grouped so that eps2 enters the innermost multiply-add: 3 FMAs, no separate add
// (13 GPU instructions per interaction in all).
template <class Real, class Rsqrt = RsqrtDefault>
NBODY_HOST_DEVICE inline void accumulate(Real dx, Real dy, Real dz, Real mass_j, Real eps2, Real& ax, Real& ay,
                                         Real& az) {
  Real const r2 = dx * dx + (dy * dy + (dz * dz + eps2));
  Real const s = mass_j * Rsqrt::inv_r3(r2);
  ax += s * dx;
  ay += s * dy;
  az += s * dz;
}

}  // namespace nbody::sim
