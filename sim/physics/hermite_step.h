// sim/physics/hermite_step.h - the 4th-order Hermite block-step algorithm, one definition for host and device:
// the settings, the pair force+jerk, the predictor, the corrector, the Aarseth step and its quantisation.
//
// Makino & Aarseth 1992 (PASJ 44, 141), in the time-symmetric form of Hut, Makino & McMillan 1995 (ApJ 443,
// L93). Every engine (CPU, CUDA) calls these functions; none has a second copy of the physics.
//
// Times. A body's time t_i and step dt_i are block times: offsets from the time the Hermite run began (its
// epoch, HermiteState::epoch), so that a run started at any time (0.3, say, from a leapfrog checkpoint) has
// steps that are powers of two and commensurate with its clock: t_i is a whole multiple of dt_i, and every
// t_i + dt_i is exact in fp64. The simulation's time is epoch + block time.
//
// Softening may be 0: the self pair is skipped (given zero mass and unit distance, it adds +0), and close
// encounters are not regularised: a pair that forces a step below the floor stops the run, named.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "core/real4.h"
#include "sim/physics/pair_gravity.h"

namespace nbody::sim::hermite {

// The settings of a Hermite run (driver::IntegratorParams carries them; a checkpoint stores them).
struct HermiteParams {
  // Aarseth's accuracy parameter, inside the square root (the standard form, Aarseth 2003, eq. 2.13):
  //   dt = sqrt(eta (|a| |a2| + |a1|^2) / (|a1| |a3| + |a2|^2)),  a1 = jerk, a2, a3 its derivatives.
  double eta = 0.02;
  // The start step, from the first two derivatives and the potential: dt = eta_start min(|a| / |a1|,
  // sqrt(|phi|) / |a|) (the second a free fall's time, for bodies at rest).
  double eta_start = 0.01;
  // The largest step, simulation time units; steps are the powers of two at or below it.
  double dt_max = 1.0 / 16;
  // The floor: a step below max(dt_min, block time x 2^-44) stops the run (the pair that forced it is
  // named). The relative term keeps t_i / dt_i below 2^44, so t_i + dt_i stays exact in fp64.
  double dt_min = 0x1p-40;
};

inline constexpr double kRelativeFloor = 0x1p-44;
// Step levels for the histograms: level k is a step of pow2_at_most(dt_max) x 2^-k.
inline constexpr int kLevels = 64;

// ---- small fp64 vector helpers usable on the device (core/real4.h's operators are host-only) ----
using V3 = Real3<double>;
NBODY_HOST_DEVICE inline double norm3(const V3& a) { return sqrt(a.x * a.x + a.y * a.y + a.z * a.z); }

// The largest power of two at or below x (x > 0, finite).
NBODY_HOST_DEVICE inline double pow2_at_most(double x) {
  int e = 0;
  double const m = frexp(x, &e);  // x = m 2^e, m in [0.5, 1)
  (void)m;
  return ldexp(1.0, e - 1);
}

// The floor below which a step stops the run, at block time t.
NBODY_HOST_DEVICE inline double step_floor(double t, const HermiteParams& p) {
  double const relative = t * kRelativeFloor;
  return relative > p.dt_min ? relative : p.dt_min;
}

// The level of a step (see kLevels), clamped to [0, kLevels - 1].
NBODY_HOST_DEVICE inline int step_level(double dt, const HermiteParams& p) {
  double const top = pow2_at_most(p.dt_max);
  int level = 0;
  for (double s = top; s > dt && level < kLevels - 1; s *= 0.5) ++level;
  return level;
}

// ---- the pair interaction: force, jerk and potential ----
// What body j (mass m, at offset d = x_j - x_i with relative velocity w = v_j - v_i) gives body i, with
// Plummer softening eps2 and G = 1:
//   a   = m d / r^3,   jerk = m (w - 3 (d.w) d / r^2) / r^3,   phi = -m / r,   r^2 = |d|^2 + eps2.
// In Real (fp64, or fp32 on differences taken in fp64); the caller accumulates the result in fp64.
// About 60 flops by the usual convention (Nitadori & Makino 2008 count 60 for force+jerk).
template <class Real>
struct PairTerms {
  Real ax, ay, az, jx, jy, jz, phi;
};

// `self` is 1 for the pair of a body with itself and 0 otherwise: the self pair then gets unit distance and zero
// mass, so it adds +0 to every sum (softening 0 would give 0/0); a factor, not a branch, so that the loop over
// pairs vectorises. For any other pair r2 + 0 and m (1 - 0) are exact: the result is the formula's.
template <class Real>
NBODY_HOST_DEVICE inline PairTerms<Real> pair_force_jerk(Real dx, Real dy, Real dz, Real wx, Real wy, Real wz, Real m,
                                                         Real eps2, Real self) {
  Real const r2 = softened_r2(dx, dy, dz, eps2) + self;
  Real const mass = m * (Real(1) - self);
  Real const inv_r = rsqrt_of(r2);
  Real const inv_r2 = inv_r * inv_r;
  Real const m_inv_r = mass * inv_r;
  Real const m_inv_r3 = m_inv_r * inv_r2;
  Real const alpha = Real(3) * (dx * wx + dy * wy + dz * wz) * inv_r2;
  return {m_inv_r3 * dx,
          m_inv_r3 * dy,
          m_inv_r3 * dz,
          m_inv_r3 * (wx - alpha * dx),
          m_inv_r3 * (wy - alpha * dy),
          m_inv_r3 * (wz - alpha * dz),
          -m_inv_r};
}

// One active body's force, jerk and potential, accumulated in fp64 (a span's sum, a group's partial, the
// total): the unit the canonical order adds (docs/architecture.md). 64 bytes, so a packed array of them
// copies as whole cache lines.
// Trivial (no member initialisers) so a kernel may keep them in shared memory: zero one with ForceJerk{}.
struct ForceJerk {
  double ax, ay, az, jx, jy, jz, phi, pad;
};

template <class Real>
NBODY_HOST_DEVICE inline void add_terms(ForceJerk& s, const PairTerms<Real>& t) {
  s.ax += double(t.ax);
  s.ay += double(t.ay);
  s.az += double(t.az);
  s.jx += double(t.jx);
  s.jy += double(t.jy);
  s.jz += double(t.jz);
  s.phi += double(t.phi);
}
NBODY_HOST_DEVICE inline void add_partial(ForceJerk& s, const ForceJerk& p) {
  s.ax += p.ax;
  s.ay += p.ay;
  s.az += p.az;
  s.jx += p.jx;
  s.jy += p.jy;
  s.jz += p.jz;
  s.phi += p.phi;
}

// An active body as every device needs it for the force pass: predicted position and velocity, mass and
// index (to skip its own pair). 64 bytes.
struct ActiveBody {
  double x, y, z, m, vx, vy, vz;
  std::uint64_t index;
};

// ---- the canonical order's spans (docs/architecture.md): groups are kernels::segment_layout(n) ----
// j-bodies per span: min(256, group length); a power of two that divides the group length.
NBODY_HOST_DEVICE inline std::size_t hermite_span_length(std::size_t group_length) {
  return group_length < 256 ? group_length : 256;
}

// ---- predictor ----
// x and v of a body from t_i to t_i + dt, to third order in x and second in v.
NBODY_HOST_DEVICE inline void predict(const V3& x, const V3& v, const V3& a, const V3& j, double dt, V3& xp, V3& vp) {
  double const h2 = dt * dt * 0.5, h3 = dt * dt * dt * (1.0 / 6.0);
  xp = {x.x + dt * v.x + h2 * a.x + h3 * j.x, x.y + dt * v.y + h2 * a.y + h3 * j.y, x.z + dt * v.z + h2 * a.z + h3 * j.z};
  vp = {v.x + dt * a.x + h2 * j.x, v.y + dt * a.y + h2 * j.y, v.z + dt * a.z + h2 * j.z};
}

// Aarseth's criterion (HermiteParams::eta). A body with no jerk and no higher derivatives (alone, or far
// from everything) gets +inf: no limit but dt_max. NaN (0/0, an isolated body) counts as no limit too.
NBODY_HOST_DEVICE inline double aarseth_step(const V3& a, const V3& a1, const V3& a2, const V3& a3, double eta) {
  double const na = norm3(a), n1 = norm3(a1), n2 = norm3(a2), n3 = norm3(a3);
  double const dt = sqrt(eta * (na * n2 + n1 * n1) / (n1 * n3 + n2 * n2));
  return dt == dt ? dt : INFINITY;
}

// ---- corrector ----
// The time-symmetric Hermite corrector (Hut, Makino & McMillan 1995, eqs. 6-7):
//   v1 = v0 + dt/2 (a0 + a1) + dt^2/12 (j0 - j1),   x1 = x0 + dt/2 (v0 + v1) + dt^2/12 (a0 - a1),
// and the second and third derivatives at the end of the step from the Hermite interpolant:
//   a2(t0) = (-6 (a0 - a1) - dt (4 j0 + 2 j1)) / dt^2,   a3 = (12 (a0 - a1) + 6 dt (j0 + j1)) / dt^3,
//   a2(t1) = a2(t0) + dt a3.
// The criterion's step at the end of a step of `dt` from a, j (at t0) to a1, j1 (at t0 + dt), from those derivatives
// (not yet quantised; see aarseth_step).
NBODY_HOST_DEVICE inline double step_criterion(const V3& a, const V3& j, const V3& a1, const V3& j1, double dt,
                                               double eta) {
  double const inv_dt = 1.0 / dt, inv_dt2 = inv_dt * inv_dt, inv_dt3 = inv_dt2 * inv_dt;
  V3 const da{a.x - a1.x, a.y - a1.y, a.z - a1.z};
  V3 const a3{(12.0 * da.x + 6.0 * dt * (j.x + j1.x)) * inv_dt3, (12.0 * da.y + 6.0 * dt * (j.y + j1.y)) * inv_dt3,
              (12.0 * da.z + 6.0 * dt * (j.z + j1.z)) * inv_dt3};
  V3 const a2_0{(-6.0 * da.x - dt * (4.0 * j.x + 2.0 * j1.x)) * inv_dt2,
                (-6.0 * da.y - dt * (4.0 * j.y + 2.0 * j1.y)) * inv_dt2,
                (-6.0 * da.z - dt * (4.0 * j.z + 2.0 * j1.z)) * inv_dt2};
  V3 const a2{a2_0.x + dt * a3.x, a2_0.y + dt * a3.y, a2_0.z + dt * a3.z};
  return aarseth_step(a1, j1, a2, a3, eta);
}

// x, v, a, j hold the state at t0 and get the state at t0 + dt; a1, j1 are the force and jerk at the
// predicted position. Returns the criterion's step (step_criterion).
NBODY_HOST_DEVICE inline double correct(V3& x, V3& v, V3& a, V3& j, const V3& a1, const V3& j1, double dt,
                                        const HermiteParams& p) {
  double const half = 0.5 * dt, twelfth = dt * dt * (1.0 / 12.0);
  V3 const v1{v.x + half * (a.x + a1.x) + twelfth * (j.x - j1.x), v.y + half * (a.y + a1.y) + twelfth * (j.y - j1.y),
              v.z + half * (a.z + a1.z) + twelfth * (j.z - j1.z)};
  V3 const x1{x.x + half * (v.x + v1.x) + twelfth * (a.x - a1.x), x.y + half * (v.y + v1.y) + twelfth * (a.y - a1.y),
              x.z + half * (v.z + v1.z) + twelfth * (a.z - a1.z)};
  double const wanted = step_criterion(a, j, a1, j1, dt, p.eta);
  x = x1;
  v = v1;
  a = a1;
  j = j1;
  return wanted;
}

// ---- steps: powers of two, commensurate with time ----
// Whether t is a whole multiple of p (fmod(t, p) == 0, for finite t and finite p > 0), exactly and without
// fmod's loop over the exponents (a long serial chain in a GPU's corrector): q = trunc(t / p) leaves t - q p
// == 0 exactly when t is a multiple, and one FMA computes t - q p exactly (q is exact: t / p < 2^44 by the
// floor).
NBODY_HOST_DEVICE inline bool is_multiple(double t, double p) {
  double const q = trunc(t / p);
  return q - q == 0.0 && fma(-q, p, t) == 0.0;  // q - q == 0: q is finite
}

// The next step of a body that just finished a step of `dt` at block time `t` (a multiple of dt), given the
// criterion's `wanted`: halved until at most `wanted` (and at most the floor below which the run stops: the
// caller checks below_floor), kept, or doubled once when `wanted` allows it, t is a multiple of the doubled
// step and it is at most dt_max; and never above the largest power of two at or below dt_max (a restart may
// have lowered it).
// (This form takes `top` = pow2_at_most(dt_max) and `floor` = step_floor(t): the same for every body of a
// block, so a GPU finds them once; the form below finds them.)
NBODY_HOST_DEVICE inline double next_step(double wanted, double dt, double t, double top, double floor) {
  double s = dt;
  while (s > top) s *= 0.5;
  if (wanted < s) {
    while (s > wanted && s >= floor) s *= 0.5;
  } else if (wanted >= 2.0 * s && 2.0 * s <= top && is_multiple(t, 2.0 * s)) {
    s *= 2.0;
  }
  return s;
}

NBODY_HOST_DEVICE inline double next_step(double wanted, double dt, double t, const HermiteParams& p) {
  return next_step(wanted, dt, t, pow2_at_most(p.dt_max), step_floor(t, p));
}

// The first step of a body at block time t for a start criterion that came to `wanted`: a power of two at most
// dt_max and at most `wanted`, halved until t is a multiple of it (never below half the floor: the caller checks
// below_floor).
NBODY_HOST_DEVICE inline double start_step(double wanted, double t, const HermiteParams& p) {
  double const top = pow2_at_most(p.dt_max);
  if (!(wanted < top)) wanted = top;  // +inf (no jerk) and NaN (an isolated body) included
  double const floor = step_floor(t, p);
  double s = top;
  while ((s > wanted || !is_multiple(t, s)) && s >= floor) s *= 0.5;
  return s;
}

// The start criterion of a body with acceleration a, jerk a1 and potential phi (G = 1; its sign does not matter):
// eta_start times the shorter of two times, |a| / |a1|, in which the acceleration changes by itself, and
// sqrt(|phi|) / |a|, in which it would bring the body from rest to the speed of its potential: a free fall's time
// (about sqrt(r^3 / m) from a mass m at r), which bounds the first step of bodies at rest, whose jerk is 0 (a cold
// start, the Pythagorean problem), in every choice of units. NaN (0 / 0: an isolated body) where both are.
NBODY_HOST_DEVICE inline double start_criterion(const V3& a, const V3& a1, double phi, double eta_start) {
  double const na = norm3(a);
  return eta_start * fmin(na / norm3(a1), sqrt(fabs(phi)) / na);
}

// The first step of a body at block time t from its start criterion.
NBODY_HOST_DEVICE inline double start_step(const V3& a, const V3& a1, double phi, double t, const HermiteParams& p) {
  return start_step(start_criterion(a, a1, phi, p.eta_start), t, p);
}

NBODY_HOST_DEVICE inline bool below_floor(double dt, double t, const HermiteParams& p) { return dt < step_floor(t, p); }

// Whether two runs choose their steps alike: the settings a user names (eta, eta_start, dt_max; the floor is fixed).
inline bool same_step_settings(const HermiteParams& a, const HermiteParams& b) {
  return a.eta == b.eta && a.eta_start == b.eta_start && a.dt_max == b.dt_max;
}

}  // namespace nbody::sim::hermite
