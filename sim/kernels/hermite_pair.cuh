// sim/kernels/hermite_pair.cuh - the pair arithmetic of the GPU Hermite force pass (sim/kernels/hermite.cuh):
// force, jerk and potential of one pair in fp64, or in fp32 on double-single differences, with every rounding
// explicit so that every path of the pass computes the same bits. Device functions only (no kernel), so that a test
// can call the very functions the force pass calls.
#pragma once

#include <cuda_runtime.h>

namespace nbody::sim::kernels {

// The runs of a span: kHermiteRun j-bodies a run (see below).
inline constexpr int kHermiteRun = 32;

// The physics of sim/physics/hermite_step.h's pair_force_jerk (a = m d / r^3, jerk = m (w - 3 (d.w) d / r^2) / r^3,
// phi = -m / r, self pair +0), arranged for the GPU's instruction count and written with explicit rounding
// intrinsics (__fma_rn, __dmul_rn, ...: never contracted or reordered by the compiler), so that every code path of
// the pass computes the same bits:
//  - each pair adds into the running sums with fused multiply-adds: a += mr3 d (one FMA a component),
//    jerk += mr3 (w - alpha d) (two FMAs), alpha = 3 ((d.w) r^-2), mr3 = (m r^-1) r^-2; phi -= m r^-1;
//  - fp64: r^-1 from the hardware estimate y0 (rsqrt.approx.ftz.f64) with the second-order correction
//    y = y0 + y0 e (1/2 + 3/8 e), e = 1 - r^2 y0^2: five fp64 operations in place of the library's rsqrt. The
//    estimate reads only the high word and is within 2^-20.04 of r^-1 (measured on an H200 over every high word), so
//    |e| < 2^-19.04 and the dropped 5/16 e^3 is below 0.02 x 2^-53: y is within 1.02 x 2^-53 of r^-1, relatively,
//    where the fourth-order form, one operation more, was within 1.00 x 2^-53
//    (HermiteGpu.PairRsqrtIsWithinAnUlpOverEveryHighWord measures each on the GPU at hand);
//  - fp32: the differences from fp64 positions and velocities held as double-single pairs (hi = fp32(x),
//    lo = fp32(x - hi)): d = (hi_j - hi_i) + (lo_j - lo_i), within about one fp32 ulp of the fp64 difference (the
//    fp64 difference rounded to fp32 is within half of one), with no fp64 operation or conversion in the pair;
//  - the pairs of each run of kHermiteRun j-bodies of a span are summed from zero, in index order (fp32 sums in
//    fp32), and the run's sum is added to the span's fp64 sum (runs start at span starts; every span length is a
//    multiple of 32). The runs are independent of each other: a span's runs can be summed side by side, by
//    different warps, for blocks too small to fill the GPU a body a thread.
// kSelf: some pair may be a body with itself or padding (then r^2 + self and m (1 - self)); else self is 0 and
// both fold to what they are (r^2 >= +0). kPotential: phi is summed (the protocol's passes, which the diagnostics'
// potential reads); the block steps of advance_blocks need no potential and leave it 0.

template <class Acc>
struct PairSums {
  Acc ax, ay, az, jx, jy, jz, phi;
};

// The hardware's fp64 reciprocal square root estimate (MUFU.RSQ64H, from the high word: no conversion to fp32 and
// back, which Hopper issues at a quarter of the fp64 rate).
__device__ __forceinline__ double approximate_rsqrt(double x) {
  double y;
  asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(x));
  return y;
}
// r^-1 of the fp64 pair arithmetic: the estimate and its second-order correction (above).
__device__ __forceinline__ double pair_rsqrt(double r2) {
  double const y0 = approximate_rsqrt(r2);
  double const e = __fma_rn(-r2, __dmul_rn(y0, y0), 1.0);  // y0 has 21 significant bits: y0^2 is exact
  return __fma_rn(__dmul_rn(y0, e), __fma_rn(e, 0.375, 0.5), y0);
}

// r^-1 of the fp32 pair arithmetic: the hardware's (MUFU.RSQ).
__device__ __forceinline__ float pair_rsqrt(float r2) { return rsqrtf(r2); }

// The roundings of the pair, one name for each precision (the intrinsics are never contracted or reordered).
__device__ __forceinline__ double fma_rn(double a, double b, double c) { return __fma_rn(a, b, c); }
__device__ __forceinline__ float fma_rn(float a, float b, float c) { return __fmaf_rn(a, b, c); }
__device__ __forceinline__ double mul_rn(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ float mul_rn(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double add_rn(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ float add_rn(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double sub_rn(double a, double b) { return __dsub_rn(a, b); }
__device__ __forceinline__ float sub_rn(float a, float b) { return __fsub_rn(a, b); }

// One pair's factors: what add_pair adds into the sums (a pass may compute several pairs' factors before it adds any).
template <class Real>
struct PairFactors {
  Real dx, dy, dz, wx, wy, wz, mr3, alpha, my;
};
template <bool kSelf, class Real>
__device__ __forceinline__ PairFactors<Real> pair_factors(Real dx, Real dy, Real dz, Real wx, Real wy, Real wz,
                                                          Real m, Real eps2, Real self) {
  Real r2 = fma_rn(dz, dz, fma_rn(dy, dy, fma_rn(dx, dx, eps2)));
  Real mass = m;
  if constexpr (kSelf) {
    r2 = add_rn(r2, self);
    mass = mul_rn(m, sub_rn(Real(1), self));
  }
  Real const y = pair_rsqrt(r2);
  Real const y2 = mul_rn(y, y);
  Real const my = mul_rn(mass, y);
  Real const mr3 = mul_rn(my, y2);
  Real const rv = fma_rn(dz, wz, fma_rn(dy, wy, mul_rn(dx, wx)));
  Real const alpha = mul_rn(Real(3), mul_rn(rv, y2));
  return {dx, dy, dz, wx, wy, wz, mr3, alpha, my};
}
template <bool kPotential, class Real>
__device__ __forceinline__ void add_factors(const PairFactors<Real>& t, PairSums<Real>& s) {
  s.ax = fma_rn(t.mr3, t.dx, s.ax);
  s.ay = fma_rn(t.mr3, t.dy, s.ay);
  s.az = fma_rn(t.mr3, t.dz, s.az);
  s.jx = fma_rn(t.mr3, fma_rn(-t.alpha, t.dx, t.wx), s.jx);
  s.jy = fma_rn(t.mr3, fma_rn(-t.alpha, t.dy, t.wy), s.jy);
  s.jz = fma_rn(t.mr3, fma_rn(-t.alpha, t.dz, t.wz), s.jz);
  if constexpr (kPotential) s.phi = sub_rn(s.phi, t.my);
}

// One pair added into the run's sums, in fp64 or fp32 (Real: the precision of the arithmetic and of the sums).
template <bool kSelf, bool kPotential, class Real>
__device__ __forceinline__ void add_pair(Real dx, Real dy, Real dz, Real wx, Real wy, Real wz, Real m, Real eps2,
                                         Real self, PairSums<Real>& s) {
  add_factors<kPotential>(pair_factors<kSelf>(dx, dy, dz, wx, wy, wz, m, eps2, self), s);
}

// (hi_j - hi_i) + (lo_j - lo_i)
__device__ __forceinline__ float ds_difference(float hj, float lj, float hi, float li) {
  return __fadd_rn(__fsub_rn(hj, hi), __fsub_rn(lj, li));
}

}  // namespace nbody::sim::kernels
