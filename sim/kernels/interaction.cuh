// sim/kernels/interaction.cuh - what every force kernel shares: the pair interaction on Real4
// positions, the fp64 m r^-3 policies, and the kernels' arguments.
//
// Summation order (see segments.h): every kernel computes, for body i,
//   a_i = (((0 + P_0) + P_1) + ...) + P_{S-1},   P_s = sum over j in segment s, in index order,
// with the same interaction arithmetic, so results are bitwise-identical across kernels, block
// sizes, split/unsplit launches and partitions. Threads with no body of their own load a valid
// position, take part in every barrier, and store nothing.
#pragma once

#include <cuda_runtime.h>

#include "core/real4.h"
#include "sim/kernels/drift_signal.cuh"
#include "sim/physics/pair_gravity.h"

namespace nbody::sim::kernels {

// m r^-3 policies. RsqrtDefault (pair_gravity.h): rsqrtf (MUFU.RSQ) for float, CUDA's rsqrt()
// (within 1 ulp) for double. For double, the fp32 hardware estimate y0 (rel. error < 2^-22)
// refined without a double rsqrt:
//  - RsqrtNewtonFromFloat: one Newton-Raphson step y = y0 + y0/2 (1 - x y0^2), then y^3
//    (7 double operations from y0 to r^-3);
//  - InvR3FromFloat: r^-3 = y0^3 (1 - e)^(-3/2) ~ y0^3 (1 + 3e/2) with e = 1 - x y0^2, dropping
//    15/8 e^2 < 2e-13 (6 double operations). The fp64 default.
using RsqrtHardware = RsqrtDefault;
struct RsqrtNewtonFromFloat {
  __device__ static double mass_over_r3(double m, double x) {
    double const y0 = static_cast<double>(rsqrtf(static_cast<float>(x)));
    double const e = fma(-x * y0, y0, 1.0);
    double const y = fma(0.5 * y0, e, y0);
    return m * (y * y * y);
  }
};
struct InvR3FromFloat {
  __device__ static double mass_over_r3(double m, double x) {
    double const y0 = static_cast<double>(rsqrtf(static_cast<float>(x)));
    double const y2 = y0 * y0;
    double const e = fma(-x, y2, 1.0);
    return m * ((y2 * y0) * fma(e, 1.5, 1.0));
  }
};

// The one pair interaction (pair_gravity.h) on Real4 positions.
template <class Real, class Rsqrt>
__device__ __forceinline__ void interact(Real4<Real> const& pi, Real4<Real> const& pj, Real eps2, Real& ax, Real& ay,
                                         Real& az) {
  accumulate<Real, Rsqrt>(pj.x - pi.x, pj.y - pi.y, pj.z - pi.z, pj.w, eps2, ax, ay, az);
}

struct ForceArgs {
  int segment_length;  // bodies per segment (segments.h)
  int segments;        // number of segments; positions hold segment_length * segments bodies
  int begin;           // first body of the slice
  int count;           // bodies in the slice
  PeerWait wait = {};  // peers' drifts to wait for before reading positions (drift_signal.cuh)
};

}  // namespace nbody::sim::kernels
