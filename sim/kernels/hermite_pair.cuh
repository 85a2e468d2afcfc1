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

template <bool kSelf, bool kPotential>
__device__ __forceinline__ void pair_fp64(double dx, double dy, double dz, double wx, double wy, double wz, double m,
                                          double eps2, double self, PairSums<double>& s) {
  double r2 = __fma_rn(dz, dz, __fma_rn(dy, dy, __fma_rn(dx, dx, eps2)));
  double mass = m;
  if constexpr (kSelf) {
    r2 = __dadd_rn(r2, self);
    mass = __dmul_rn(m, __dsub_rn(1.0, self));
  }
  double const y = pair_rsqrt(r2);
  double const y2 = __dmul_rn(y, y);
  double const my = __dmul_rn(mass, y);
  double const mr3 = __dmul_rn(my, y2);
  double const rv = __fma_rn(dz, wz, __fma_rn(dy, wy, __dmul_rn(dx, wx)));
  double const alpha = __dmul_rn(3.0, __dmul_rn(rv, y2));
  s.ax = __fma_rn(mr3, dx, s.ax);
  s.ay = __fma_rn(mr3, dy, s.ay);
  s.az = __fma_rn(mr3, dz, s.az);
  s.jx = __fma_rn(mr3, __fma_rn(-alpha, dx, wx), s.jx);
  s.jy = __fma_rn(mr3, __fma_rn(-alpha, dy, wy), s.jy);
  s.jz = __fma_rn(mr3, __fma_rn(-alpha, dz, wz), s.jz);
  if constexpr (kPotential) s.phi = __dsub_rn(s.phi, my);
}

template <bool kSelf, bool kPotential>
__device__ __forceinline__ void pair_fp32(float dx, float dy, float dz, float wx, float wy, float wz, float m,
                                          float eps2, float self, PairSums<float>& s) {
  float r2 = __fmaf_rn(dz, dz, __fmaf_rn(dy, dy, __fmaf_rn(dx, dx, eps2)));
  float mass = m;
  if constexpr (kSelf) {
    r2 = __fadd_rn(r2, self);
    mass = __fmul_rn(m, __fsub_rn(1.0f, self));
  }
  float const y = rsqrtf(r2);
  float const y2 = __fmul_rn(y, y);
  float const my = __fmul_rn(mass, y);
  float const mr3 = __fmul_rn(my, y2);
  float const rv = __fmaf_rn(dz, wz, __fmaf_rn(dy, wy, __fmul_rn(dx, wx)));
  float const alpha = __fmul_rn(3.0f, __fmul_rn(rv, y2));
  s.ax = __fmaf_rn(mr3, dx, s.ax);
  s.ay = __fmaf_rn(mr3, dy, s.ay);
  s.az = __fmaf_rn(mr3, dz, s.az);
  s.jx = __fmaf_rn(mr3, __fmaf_rn(-alpha, dx, wx), s.jx);
  s.jy = __fmaf_rn(mr3, __fmaf_rn(-alpha, dy, wy), s.jy);
  s.jz = __fmaf_rn(mr3, __fmaf_rn(-alpha, dz, wz), s.jz);
  if constexpr (kPotential) s.phi = __fsub_rn(s.phi, my);
}

// (hi_j - hi_i) + (lo_j - lo_i)
__device__ __forceinline__ float ds_difference(float hj, float lj, float hi, float li) {
  return __fadd_rn(__fsub_rn(hj, hi), __fsub_rn(lj, li));
}

}  // namespace nbody::sim::kernels
