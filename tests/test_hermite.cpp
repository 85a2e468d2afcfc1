// tests/test_hermite.cpp - hermite4: the algorithm's order (Kepler orbits), energy conservation (Plummer), the
// steps (powers of two, commensurate, the floor), the force+jerk pass against a plain reference, bitwise equality
// across host devices, threading models and restarts, and the CPU force+jerk rate.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <vector>

#include "core/errors.h"
#include "multigpu/hermite_blocks.h"
#include "multigpu/simulation.h"
#include "sim/engines/hermite_cpu_forces.h"
#include "sim/engines/hermite_engine.h"
#include "sim/kernels/segments.h"
#include "sim/physics/diagnostics.h"
#include "sim/physics/hermite.h"
#include "sim/physics/integrator.h"
#include "sim/physics/scenarios.h"
#include "test_support.h"

namespace nbody {
namespace {

using sim::hermite::HermiteParams;
using sim::hermite::V3;

constexpr double kPi = 3.14159265358979323846;

sim::StepProgram hermite_program(double eta, double eta_start, double dt_max) {
  sim::IntegratorParams p;
  p.integrator = sim::Integrator::hermite4;
  p.hermite.eta = eta;
  p.hermite.eta_start = eta_start;
  p.hermite.dt_max = dt_max;
  return sim::make_step_program(p);
}

multigpu::SimulationConfig cpu_config(double softening, int devices = 1,
                                      multigpu::Threading threading = multigpu::Threading::single,
                                      Precision precision = Precision::fp64) {
  multigpu::SimulationConfig c;
  c.backend = sim::Backend::cpu;
  c.engine.precision = precision;
  c.softening = softening;
  c.devices.assign(std::size_t(devices), 0);
  c.threading = threading;
  return c;
}

// A Kepler binary with period 1 (a = 1, G M = 4 pi^2), starting at apocentre: after whole periods the exact
// orbit is back where it began.
sim::BodySet kepler(double e) {
  double const gm = 4.0 * kPi * kPi, m = gm / 2.0;
  double const r = 1.0 + e, v = std::sqrt(gm * (1.0 - e) / (1.0 + e));
  sim::BodySet b;
  b.append({0.5 * r, 0, 0, m}, {0, 0.5 * v, 0}, sim::BodyType::star);
  b.append({-0.5 * r, 0, 0, m}, {0, -0.5 * v, 0}, sim::BodyType::star);
  return b;
}

// Distance between the relative position after `periods` periods and the exact one.
double kepler_error(double e, const sim::StepProgram& program, int periods) {
  sim::BodySet const b = kepler(e);
  multigpu::Simulation s(b, program, cpu_config(0.0));
  s.set_time_limit(double(periods));
  s.advance(std::uint64_t(1) << 40);
  EXPECT_EQ(s.time(), double(periods));
  sim::BodySet const end = s.state();
  V3 const r0{b.pos_mass[0].x - b.pos_mass[1].x, b.pos_mass[0].y - b.pos_mass[1].y, 0};
  V3 const r1{end.pos_mass[0].x - end.pos_mass[1].x, end.pos_mass[0].y - end.pos_mass[1].y,
              end.pos_mass[0].z - end.pos_mass[1].z};
  return std::sqrt((r1.x - r0.x) * (r1.x - r0.x) + (r1.y - r0.y) * (r1.y - r0.y) + r1.z * r1.z);
}

double slope(double x0, double y0, double x1, double y1) { return std::log(y1 / y0) / std::log(x1 / x0); }

// Shared steps: eta so large that every step is dt_max. Halving dt_max divides the error by 16.
TEST(Hermite, FourthOrderOnKeplerOrbitsWithSharedSteps) {
  for (double e : {0.5, 0.9}) {
    // e = 0.9 needs smaller steps at pericentre before the error is in its asymptotic range.
    double const h = e == 0.5 ? 1.0 / 256 : 1.0 / 8192;
    double const coarse = kepler_error(e, hermite_program(100, 100, h), 2);
    double const fine = kepler_error(e, hermite_program(100, 100, h / 2), 2);
    double const finer = kepler_error(e, hermite_program(100, 100, h / 4), 2);
    double const s1 = slope(h, coarse, h / 2, fine), s2 = slope(h / 2, fine, h / 4, finer);
    std::printf("e = %.1f: dt_max %g %g %g: errors %.3e %.3e %.3e, slopes %.2f %.2f\n", e, h, h / 2, h / 4, coarse,
                fine, finer, s1, s2);
    EXPECT_NEAR(s1, 4.0, 0.35) << "e = " << e;
    EXPECT_NEAR(s2, 4.0, 0.35) << "e = " << e;
  }
}

// Individual (Aarseth) steps: dt ~ sqrt(eta), so the error falls as eta^2 (dt^4).
TEST(Hermite, KeplerErrorFallsWithEtaAtFourthOrderInTheStep) {
  for (double e : {0.5, 0.9}) {
    double const big = kepler_error(e, hermite_program(0.02, 0.01, 1.0 / 16), 2);
    double const small = kepler_error(e, hermite_program(0.02 / 16, 0.01 / 16, 1.0 / 16), 2);
    double const s = slope(0.02, big, 0.02 / 16, small);
    std::printf("e = %.1f: eta 0.02 -> %.3e, eta 0.00125 -> %.3e: slope in eta %.2f (in sqrt(eta): %.2f)\n", e, big,
                small, s, 2 * s);
    EXPECT_NEAR(s, 2.0, 0.4) << "e = " << e;
  }
}

// The exact relative position (body 0 minus body 1) of kepler(e) at time t: Kepler's equation by Newton's method,
// the orbit's mean anomaly pi at t = 0 (apocentre, on +x, moving towards +y).
V3 kepler_exact(double e, double t) {
  double const mean = kPi + 2.0 * kPi * t;
  double ecc = mean;
  for (int k = 0; k < 50; ++k) ecc -= (ecc - e * std::sin(ecc) - mean) / (1.0 - e * std::cos(ecc));
  return {-(std::cos(ecc) - e), -std::sqrt(1.0 - e * e) * std::sin(ecc), 0.0};
}

// A run to a time that is no block time (1.3: the longest step is 1/16) ends there, every body corrected at it by a
// last step of its own: as close to the exact orbit as a run to a multiple of the longest step is, where the last
// block time before it (1.25), with the bodies predicted to 1.3, was 0.05 time units of the orbit short. The epoch
// moves there, every body's block time is 0 and its step a power of two, and the run goes on from it.
TEST(Hermite, ARunToATimeOffTheBlockTimesEndsThereEveryBodyCorrected) {
  for (double e : {0.5, 0.9}) {
    sim::BodySet const b = kepler(e);
    sim::StepProgram const program = hermite_program(0.02, 0.01, 1.0 / 16);
    multigpu::Simulation s(b, program, cpu_config(0.0));
    for (double t_end : {1.3, 1.7}) {
      s.set_time_limit(t_end, true);
      s.advance(std::uint64_t(1) << 40);
      ASSERT_EQ(s.time(), t_end) << "e = " << e;
      EXPECT_TRUE(s.stopped_at_time_limit());
      sim::BodySet const end = s.state();
      V3 const exact = kepler_exact(e, t_end);
      double const error = std::hypot(end.pos_mass[0].x - end.pos_mass[1].x - exact.x,
                                      end.pos_mass[0].y - end.pos_mass[1].y - exact.y);
      // A run straight to t = 2 with these settings: 8.6e-5 (e = 0.5) and 4.1e-5 (e = 0.9) from the exact orbit.
      double const bound = 5e-4;
      std::printf("e = %.1f: at t = %g, %.3e from the exact orbit\n", e, t_end, error);
      EXPECT_LT(error, bound) << "e = " << e << ", t = " << t_end;
      sim::BodySet own;
      sim::hermite::HermiteState hs;
      s.hermite_state(own, hs);
      EXPECT_EQ(hs.epoch, t_end);
      EXPECT_EQ(sim::hermite::state_problem(hs, own.size(), "the finished state"), "");
      for (std::size_t i = 0; i < hs.size(); ++i) EXPECT_EQ(hs.time[i], 0.0) << "body " << i;
      // The state read there is the bodies' own, not a prediction.
      for (std::size_t i = 0; i < own.size(); ++i) {
        EXPECT_EQ(std::memcmp(&own.pos_mass[i], &end.pos_mass[i], sizeof own.pos_mass[i]), 0) << "body " << i;
        EXPECT_EQ(std::memcmp(&own.velocity[i], &end.velocity[i], sizeof own.velocity[i]), 0) << "body " << i;
      }
    }
    // Whole periods from there: a multiple of the longest step after the new epoch is 1.7 + k / 16, so 2 is a finish
    // too, and lands on the orbit as a run straight to it does.
    s.set_time_limit(2.0, true);
    s.advance(std::uint64_t(1) << 40);
    ASSERT_EQ(s.time(), 2.0);
    double const straight = kepler_error(e, program, 2);
    sim::BodySet const end = s.state();
    V3 const exact = kepler_exact(e, 2.0);
    double const error = std::hypot(end.pos_mass[0].x - end.pos_mass[1].x - exact.x,
                                    end.pos_mass[0].y - end.pos_mass[1].y - exact.y);
    std::printf("e = %.1f: at t = 2 after finishing at 1.3 and 1.7: %.3e; straight to 2: %.3e\n", e, error, straight);
    EXPECT_LT(error, 3.0 * straight + 1e-6) << "e = " << e;
  }
}

// A Plummer sphere.
sim::BodySet plummer(std::size_t n, std::uint64_t seed = 7) {
  sim::ScenarioParams p;
  p.scenario = sim::Scenario::plummer;
  p.bodies = n;
  p.seed = seed;
  return sim::make_scenario(p);
}

double energy(multigpu::Simulation& s) { return s.diagnostics().total(); }

bool same_bits(const sim::BodySet& a, const sim::BodySet& b) {
  return a.size() == b.size() &&
         std::memcmp(a.pos_mass.data(), b.pos_mass.data(), a.size() * sizeof(a.pos_mass[0])) == 0 &&
         std::memcmp(a.velocity.data(), b.velocity.data(), a.size() * sizeof(a.velocity[0])) == 0;
}
bool same_bits(const sim::hermite::HermiteState& a, const sim::hermite::HermiteState& b) {
  std::size_t const n = a.size();
  return n == b.size() && std::memcmp(a.time.data(), b.time.data(), n * sizeof(double)) == 0 &&
         std::memcmp(a.step.data(), b.step.data(), n * sizeof(double)) == 0 &&
         std::memcmp(a.acceleration.data(), b.acceleration.data(), n * sizeof(Vec3d)) == 0 &&
         std::memcmp(a.jerk.data(), b.jerk.data(), n * sizeof(Vec3d)) == 0;
}

struct Blocks {
  sim::BodySet state, own;
  sim::hermite::HermiteState hermite;
  double time = 0;
};

Blocks run_blocks(const sim::BodySet& b, const multigpu::SimulationConfig& c, std::uint64_t blocks,
               const sim::hermite::HermiteState* from = nullptr) {
  multigpu::Simulation s(b, hermite_program(0.02, 0.01, 1.0 / 16), c, multigpu::RunClock{0, b.time}, from);
  s.advance(blocks);
  EXPECT_EQ(s.steps_done(), blocks);
  Blocks r;
  r.state = s.state();
  s.hermite_state(r.own, r.hermite);
  r.time = s.time();
  return r;
}

// N = 300 is 5 groups of 64 (the last one short): 2 and 3 devices split them 3 + 2 and 2 + 2 + 1, and 7
// devices leave two without a group. Every layout and threading model gives the bits of one device (whose
// blocks run in the engine's advance_blocks), in both precisions.
TEST(Hermite, EveryHostLayoutAndThreadingGivesTheSameBits) {
  sim::BodySet const b = plummer(300);
  for (Precision precision : {Precision::fp64, Precision::fp32}) {
    Blocks const one = run_blocks(b, cpu_config(0.01, 1, multigpu::Threading::single, precision), 60);
    EXPECT_GT(one.time, 0.0);
    for (int devices : {2, 3, 7})
      for (auto threading : {multigpu::Threading::single, multigpu::Threading::workers}) {
        Blocks const other = run_blocks(b, cpu_config(0.01, devices, threading, precision), 60);
        EXPECT_TRUE(same_bits(one.state, other.state)) << devices << " devices, " << name_of(threading) << ", "
                                                       << name_of(precision);
        EXPECT_TRUE(same_bits(one.hermite, other.hermite)) << devices << " devices, " << name_of(threading);
        EXPECT_EQ(one.time, other.time);
      }
  }
}

// The CPU takes a block of many active bodies a chunk of them at a time (each engine's partials bounded whatever N):
// one engine alone 4,096, the devices' protocol as many as its start's chunks (3,728 here); each body's sum is its
// own, so the bits are the same. N = 9,001 with every step the longest: every block step has every body active,
// three chunks, the last of them short of a whole SIMD block; then a finish at a time off the blocks, every body
// behind it. One device gives the bits of two, in both precisions (fp64 alone under a sanitizer: the chunks are the
// same code, and each pass of 81 million pairs takes seconds there).
TEST(Hermite, ABlockOfEveryBodyGivesTheSameBitsInChunksAsWhole) {
  sim::BodySet const b = plummer(9001);
  sim::StepProgram const shared = hermite_program(100.0, 100.0, 1.0 / 64);
  for (Precision precision : {Precision::fp64, Precision::fp32}) {
    if (precision == Precision::fp32 && test::kSanitized) continue;
    auto run = [&](int devices) {
      multigpu::Simulation s(b, shared, cpu_config(0.01, devices, multigpu::Threading::single, precision));
      s.advance(2);
      EXPECT_EQ(s.hermite_counters().force_evaluations, 2u * b.size()) << "every body in every block";
      EXPECT_EQ(s.hermite_counters().interactions, 3u * b.size() * b.size()) << "the start and two blocks";
      s.set_time_limit(2.5 / 64, true);
      s.advance(std::uint64_t(1) << 40);
      EXPECT_EQ(s.time(), 2.5 / 64);
      Blocks r;
      r.state = s.state();
      s.hermite_state(r.own, r.hermite);
      r.time = s.time();
      return r;
    };
    Blocks const one = run(1), two = run(2);
    EXPECT_TRUE(same_bits(one.state, two.state)) << name_of(precision);
    EXPECT_TRUE(same_bits(one.hermite, two.hermite)) << name_of(precision);
  }
}

// Outputs at times more often than the steps (a script's loop of integrate(t), or a chain of restarts each a little
// further): every body takes a last step to each time, and then goes on with the step the criterion gives at its end,
// so the pericentre passages still get their short steps and the run stays as close to the exact orbit as one straight
// through. (Before, a body kept the step it held through every finish: 1,000 outputs of e = 0.9 left the orbit.)
TEST(Hermite, ARunCutIntoManyFinishesKeepsTheStepsItsOrbitNeeds) {
  double const e = 0.9;
  sim::StepProgram const program = hermite_program(0.02, 0.01, 1.0 / 16);
  double const straight = kepler_error(e, program, 3);
  multigpu::Simulation s(kepler(e), program, cpu_config(0.0));
  int const outputs = 997;  // 3 k / 997: no block time but the last
  for (int k = 1; k <= outputs; ++k) {
    s.set_time_limit(3.0 * k / outputs, true);
    s.advance(std::uint64_t(1) << 40);
  }
  ASSERT_EQ(s.time(), 3.0);
  sim::BodySet const end = s.state();
  V3 const exact = kepler_exact(e, 3.0);
  double const error = std::hypot(end.pos_mass[0].x - end.pos_mass[1].x - exact.x,
                                  end.pos_mass[0].y - end.pos_mass[1].y - exact.y);
  std::printf("e = %.1f: 3 periods in %d finishes: %.3e from the exact orbit (%llu block steps); straight: %.3e\n", e,
              outputs, error, (unsigned long long)s.steps_done(), straight);
  EXPECT_LT(error, 3.0 * straight + 1e-6);
  EXPECT_GT(s.steps_done(), std::uint64_t(outputs));  // more steps than finishes: pericentres shortened them
  // The steps it holds are powers of two at most the longest, every body at block time 0 of the new epoch.
  sim::BodySet own;
  sim::hermite::HermiteState hs;
  s.hermite_state(own, hs);
  EXPECT_EQ(sim::hermite::state_problem(hs, own.size(), "the finished state"), "");
}

// A finish a moment after a block time gives its derivatives no interval to measure the orbit by: the criterion's
// a2 and a3 from (a0 - a1) / dt^2 are the rounding of a0 over dt^2, and a step from them would be a few hundred
// times the moment (before, the orbit's next step was 4.5e-13 and the run stopped at the floor). Such a finish
// halves a step at most; the run goes on as accurate as straight through.
TEST(Hermite, AFinishAMomentAfterABlockTimeKeepsTheStepsItsOrbitNeeds) {
  double const e = 0.9;
  sim::StepProgram const program = hermite_program(0.02, 0.01, 1.0 / 16);
  multigpu::Simulation s(kepler(e), program, cpu_config(0.0));
  sim::BodySet own;
  sim::hermite::HermiteState before, after;
  s.set_time_limit(0.6875, true);  // a multiple of the longest step: every body there
  s.advance(std::uint64_t(1) << 40);
  s.hermite_state(own, before);
  s.set_time_limit(0.6875 + 1e-15, true);
  s.advance(std::uint64_t(1) << 40);
  s.hermite_state(own, after);
  for (std::size_t i = 0; i < own.size(); ++i) EXPECT_GE(after.step[i], before.step[i] / 2) << i;
  s.set_time_limit(3.0, true);
  ASSERT_NO_THROW(s.advance(std::uint64_t(1) << 40));
  ASSERT_EQ(s.time(), 3.0);
  sim::BodySet const end = s.state();
  V3 const exact = kepler_exact(e, 3.0);
  double const error = std::hypot(end.pos_mass[0].x - end.pos_mass[1].x - exact.x,
                                  end.pos_mass[0].y - end.pos_mass[1].y - exact.y);
  EXPECT_LT(error, 3.0 * kepler_error(e, program, 3) + 1e-6);
}

// Outputs at times an epoch's rounding puts an ulp past a block time (0.3 + 1/32 - 0.3 is not 1/32) are that block
// time: no body takes a step of an ulp to them (before, the run stopped at the floor by the seventh). The run
// conserves energy as one straight through.
TEST(Hermite, OutputsAtTimesThatRoundPastABlockTimeAreThatBlockTime) {
  sim::StepProgram const program = hermite_program(0.02, 0.01, 1.0 / 16);
  multigpu::Simulation s(plummer(64, 3), program, cpu_config(0.01, 1, multigpu::Threading::single, Precision::fp32));
  multigpu::Simulation straight(plummer(64, 3), program,
                                cpu_config(0.01, 1, multigpu::Threading::single, Precision::fp32));
  double const start = energy(s);
  {
    // The bodies whose block time 0.3 + 7/32 is (0.21875000000000006 after the epoch 0.3) go on with the steps their
    // block step gave, as where no finish follows.
    multigpu::Simulation unfinished(plummer(64, 3), program,
                                    cpu_config(0.01, 1, multigpu::Threading::single, Precision::fp32));
    for (multigpu::Simulation* run : {&s, &unfinished}) {
      run->set_time_limit(0.3, true);
      run->advance(std::uint64_t(1) << 40);
      run->set_time_limit(0.3 + 7 / 32.0, run == &s);
      run->advance(std::uint64_t(1) << 40);
    }
    sim::BodySet own;
    sim::hermite::HermiteState finished, there;
    s.hermite_state(own, finished);
    unfinished.hermite_state(own, there);
    int at_block_time = 0;
    for (std::size_t i = 0; i < own.size(); ++i)
      if (there.time[i] == unfinished.block_time()) {
        ++at_block_time;
        EXPECT_EQ(finished.step[i], there.step[i]) << i;
      }
    EXPECT_GT(at_block_time, 0);
  }
  for (int k = 0; k < 40; ++k) {
    s.set_time_limit(0.3 + k / 32.0, true);
    ASSERT_NO_THROW(s.advance(std::uint64_t(1) << 40)) << "to 0.3 + " << k << "/32";
  }
  straight.set_time_limit(0.3 + 39 / 32.0, true);
  straight.advance(std::uint64_t(1) << 40);
  double const error = std::abs(energy(s) / start - 1), straight_error = std::abs(energy(straight) / start - 1);
  std::printf("40 outputs: |dE/E| %.3e in %llu block steps; straight %.3e in %llu\n", error,
              (unsigned long long)s.steps_done(), straight_error, (unsigned long long)straight.steps_done());
  EXPECT_LT(error, 3 * straight_error + 1e-7);
}

// Bodies at rest have no jerk, so |a| / |a1| gives no first step; the start criterion's other time, sqrt(|phi|) / |a|
// (a free fall's), does, in every choice of units: the Pythagorean problem (masses 3, 4, 5 at rest) scaled in size
// by L and run to L^1.5 (the same orbits) conserves energy alike. (Before, every body started at dt_max, whatever
// the units: at L = 0.1 the whole run was one step, |dE/E| 1e-3.)
TEST(Hermite, BodiesAtRestStartWithAFreeFallStepInEveryChoiceOfUnits) {
  std::vector<double> errors;
  for (double scale : {1.0, 0.1, 0.01}) {
    sim::BodySet b;
    b.append({1 * scale, 3 * scale, 0, 3}, {0, 0, 0}, sim::BodyType::star);
    b.append({-2 * scale, -1 * scale, 0, 4}, {0, 0, 0}, sim::BodyType::star);
    b.append({1 * scale, -1 * scale, 0, 5}, {0, 0, 0}, sim::BodyType::star);
    multigpu::Simulation s(b, hermite_program(0.02, 0.01, 1.0 / 16), cpu_config(0.0));
    sim::BodySet own;
    sim::hermite::HermiteState hs;
    s.hermite_state(own, hs);
    // A time of the orbits (scale^1.5): the first steps scale with it (eta_start sqrt(|phi|) / |a| is about 3 of it
    // here, rounded down to a power of two), where before they were dt_max at every scale.
    double const free_fall = std::sqrt(scale * scale * scale);
    for (std::size_t i = 0; i < 3; ++i) EXPECT_LT(hs.step[i], 0.04 * free_fall) << "scale " << scale << ", body " << i;
    double const e0 = energy(s);
    s.set_time_limit(free_fall, true);
    s.advance(std::uint64_t(1) << 40);
    ASSERT_EQ(s.time(), free_fall);
    errors.push_back(std::abs(energy(s) / e0 - 1.0));
    std::printf("scale %g: to t = %g in %llu block steps, |dE/E| %.2e\n", scale, free_fall,
                (unsigned long long)s.steps_done(), errors.back());
    EXPECT_LT(errors.back(), 2e-6) << "scale " << scale;
  }
}

// A point-symmetric cluster around a moving body at its centre (body 0): the other bodies' pulls on it cancel to
// rounding, its jerk does not, so eta_start |a| / |a1| asks for a step far below the floor. It starts from its
// strongest pull's criterion instead (hermite::cancelled_start_criterion; the figure-eight's middle body is the three-body
// case), with the same step on every layout and threading model, and the run goes on with the same bits.
TEST(Hermite, ABodyWhoseForcesCancelStartsFromItsStrongestPullOnEveryLayout) {
  sim::BodySet const b = test::symmetric_around_a_moving_centre(150);
  HermiteParams params;  // eta 0.02, eta_start 0.01, dt_max 1/16, as hermite_program below
  multigpu::Simulation started(b, hermite_program(0.02, 0.01, 1.0 / 16), cpu_config(0.01));
  sim::BodySet own;
  sim::hermite::HermiteState hs;
  started.hermite_state(own, hs);
  Vec3d const a = hs.acceleration[0], j = hs.jerk[0];
  V3 const a3{a.x, a.y, a.z}, j3{j.x, j.y, j.z};
  EXPECT_LT(sim::hermite::norm3(a3), 1e-12 * sim::hermite::norm3(j3));
  EXPECT_TRUE(sim::hermite::below_floor(sim::hermite::start_step(a3, j3, /*phi, whose term sqrt(|phi|) / |a| is the longer*/ 1.0, 0.0, params), 0.0, params));
  double const wanted = sim::hermite::cancelled_start_criterion(b, 0, a, j, 0.01, params.eta_start);
  EXPECT_GT(wanted, 0.0);
  EXPECT_EQ(hs.step[0], sim::hermite::start_step(wanted, 0.0, params));
  EXPECT_FALSE(sim::hermite::below_floor(hs.step[0], 0.0, params));
  // Every other body's forces do not cancel: the criterion leaves them to eta_start |a| / |a1|.
  EXPECT_EQ(sim::hermite::cancelled_start_criterion(b, 1, hs.acceleration[1], hs.jerk[1], 0.01, params.eta_start),
            0.0);

  Blocks const one = run_blocks(b, cpu_config(0.01), 60);
  EXPECT_GT(one.time, 0.0);
  EXPECT_GT(one.hermite.time[0], 0.0);  // the centre body took its steps
  // The figure-eight's middle body, by hand: each other body (mass 1 at r, relative velocity w) pulls it 1 / r^2 and
  // the two jerks add up to 2 |w / r^3 - 3 (d.w) d / r^5|; the start is eta_start times the one over the other, as a
  // power of two.
  double const x1 = 0.97000436, y1 = -0.24308753, vx = -0.93240737, vy = -0.86473146;
  sim::BodySet eight;
  eight.append({x1, y1, 0, 1}, {-vx / 2, -vy / 2, 0}, sim::BodyType::star);
  eight.append({-x1, -y1, 0, 1}, {-vx / 2, -vy / 2, 0}, sim::BodyType::star);
  eight.append({0, 0, 0, 1}, {vx, vy, 0}, sim::BodyType::star);
  double const r2 = x1 * x1 + y1 * y1, r = std::sqrt(r2), wx = -1.5 * vx, wy = -1.5 * vy;
  double const k = 3.0 * (x1 * wx + y1 * wy) / r2;
  double const jerk = 2.0 * std::hypot(wx - k * x1, wy - k * y1) / (r2 * r);
  double const by_hand = 0.01 * (1.0 / r2) / jerk;
  multigpu::Simulation figure(eight, hermite_program(0.02, 0.01, 1.0 / 16), cpu_config(0.0));
  figure.hermite_state(own, hs);
  EXPECT_EQ(hs.step[2], sim::hermite::pow2_at_most(by_hand)) << "by hand " << by_hand;
  for (int devices : {2, 3, 7})
    for (auto threading : {multigpu::Threading::single, multigpu::Threading::workers}) {
      Blocks const other = run_blocks(b, cpu_config(0.01, devices, threading), 60);
      EXPECT_TRUE(same_bits(one.state, other.state)) << devices << " devices, " << name_of(threading);
      EXPECT_TRUE(same_bits(one.hermite, other.hermite)) << devices << " devices, " << name_of(threading);
    }
}

// The finish at a time that is no block time is the same on every layout and threading model, is counted as one block
// step, conserves energy as block steps do, and goes on bit for bit from its state on another layout.
TEST(Hermite, TheFinishAtATimeIsTheSameOnEveryLayoutAndGoesOnFromItsState) {
  sim::BodySet const b = plummer(300);
  sim::StepProgram const program = hermite_program(0.02, 0.01, 1.0 / 16);
  auto run_to = [&](const sim::BodySet& from, const multigpu::SimulationConfig& c, double t_end,
                    const sim::hermite::HermiteState* state = nullptr) {
    multigpu::Simulation s(from, program, c, multigpu::RunClock{0, from.time}, state);
    double const e0 = energy(s);
    s.set_time_limit(t_end, true);
    s.advance(std::uint64_t(1) << 40);
    EXPECT_EQ(s.time(), t_end);
    EXPECT_LT(std::abs((energy(s) - e0) / e0), 1e-6);
    Blocks r;
    r.state = s.state();
    s.hermite_state(r.own, r.hermite);
    r.time = s.time();
    EXPECT_EQ(s.hermite_counters().block_steps, s.steps_done());
    return r;
  };
  for (Precision precision : {Precision::fp64, Precision::fp32}) {
    Blocks const one = run_to(b, cpu_config(0.01, 1, multigpu::Threading::single, precision), 0.3);
    for (int devices : {2, 3})
      for (auto threading : {multigpu::Threading::single, multigpu::Threading::workers}) {
        Blocks const other = run_to(b, cpu_config(0.01, devices, threading, precision), 0.3);
        EXPECT_TRUE(same_bits(one.state, other.state)) << devices << " devices, " << name_of(threading);
        EXPECT_TRUE(same_bits(one.hermite, other.hermite)) << devices << " devices, " << name_of(threading);
      }
  }
  // On from 0.3 in the same simulation, and from its state on three devices: the same bits at 0.55.
  multigpu::Simulation straight(b, program, cpu_config(0.01));
  straight.set_time_limit(0.3, true);
  straight.advance(std::uint64_t(1) << 40);
  straight.set_time_limit(0.55, true);
  straight.advance(std::uint64_t(1) << 40);
  ASSERT_EQ(straight.time(), 0.55);
  Blocks const first = run_to(b, cpu_config(0.01, 2, multigpu::Threading::workers), 0.3);
  sim::BodySet restart = first.own;
  restart.time = first.hermite.epoch;
  Blocks const second = run_to(restart, cpu_config(0.01, 3), 0.55, &first.hermite);
  EXPECT_TRUE(same_bits(straight.state(), second.state));
}

// Continuing from the Hermite state (x, v at each body's own time, a, jerk, t_i, dt_i) on another layout gives
// the bits of the run that never stopped.
TEST(Hermite, ContinuesBitForBitFromItsStateOnAnotherLayout) {
  sim::BodySet const b = plummer(300);
  Blocks const straight = run_blocks(b, cpu_config(0.01), 80);
  Blocks const first = run_blocks(b, cpu_config(0.01, 3, multigpu::Threading::workers), 30);
  sim::BodySet restart = first.own;
  restart.time = b.time;  // the epoch: the state's own times are block times
  Blocks const second = run_blocks(restart, cpu_config(0.01, 2), 50, &first.hermite);
  EXPECT_TRUE(same_bits(straight.state, second.state));
  EXPECT_TRUE(same_bits(straight.hermite, second.hermite));
  EXPECT_EQ(straight.time, second.time);
}

// The step rules' multiple test (is_multiple: trunc and one FMA, no fmod loop) is fmod(t, p) == 0 exactly, for
// times on and off every power-of-two grid the steps use, near the floor's 2^44 ratio included.
TEST(Hermite, TheMultipleTestIsFmodsExactly) {
  std::uint64_t x = 12345;
  auto next = [&] { return x = x * 6364136223846793005ull + 1442695040888963407ull; };
  std::size_t multiples = 0, checked = 0;
  for (int k = 0; k < 200000; ++k) {
    int const level = int(next() >> 58) % 48;  // p = 2^-4 .. 2^-51
    double const p = std::ldexp(1.0, -4 - level);
    double t = double(next() >> 28) * std::ldexp(p, int(next() >> 61));  // a multiple of p * 2^j, j < 8
    if ((next() >> 40) & 1) t = std::nextafter(t, 1e300);                    // or one ulp past it
    if (t / p >= 0x1p44) continue;                                    // the floor keeps t / p below 2^44
    bool const exact = std::fmod(t, p) == 0.0;
    ASSERT_EQ(sim::hermite::is_multiple(t, p), exact) << "t = " << t << ", p = " << p;
    multiples += exact;
    ++checked;
  }
  EXPECT_GT(multiples, checked / 4);
  EXPECT_LT(multiples, checked);
  EXPECT_TRUE(sim::hermite::is_multiple(0.0, 1.0 / 16));
}

// Steps are powers of two, each body's time a multiple of its step, every body at or before the block time
// and some body's next time after it.
TEST(Hermite, StepsArePowersOfTwoCommensurateWithTime) {
  sim::BodySet const b = plummer(300);
  Blocks const r = run_blocks(b, cpu_config(0.01, 2), 100);
  std::size_t at_block = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    int e = 0;
    double const dt = r.hermite.step[i], t = r.hermite.time[i];
    EXPECT_EQ(std::frexp(dt, &e), 0.5) << "body " << i << " step " << dt;
    EXPECT_LE(dt, 1.0 / 16);
    EXPECT_EQ(std::fmod(t, dt), 0.0) << "body " << i;
    EXPECT_LE(t, r.time);
    EXPECT_GT(t + dt, r.time);
    at_block += t == r.time;
  }
  EXPECT_GT(at_block, 0u);
  EXPECT_TRUE(sim::hermite::state_problem(r.hermite, b.size(), "run").empty());
  // A body moved past the others' next times (an edited file) leaves them overdue: refused, naming both.
  std::size_t const waiting = std::size_t(std::find_if(r.hermite.time.begin(), r.hermite.time.end(),
                                                       [&](double t) { return t < r.time; }) -
                                          r.hermite.time.begin());
  ASSERT_LT(waiting, b.size());
  sim::hermite::HermiteState edited = r.hermite;
  std::size_t const moved = waiting == 0 ? 1 : 0;
  edited.time[moved] = std::floor(r.time * 16.0 + 80.0) / 16.0;  // a multiple of its step, 5 later
  edited.step[moved] = 1.0 / 16;
  std::string const why = sim::hermite::state_problem(edited, b.size(), "f.h5");
  EXPECT_NE(why.find("f.h5: body "), std::string::npos) << why;
  EXPECT_NE(why.find("before body " + std::to_string(moved) + "'s time "), std::string::npos) << why;
}

// The diagnostics' potential (a force pass with every body active, in the canonical order) against the fp64
// reference of the same predicted positions, in either precision: fp32's pairs would leave an error of about 1e-8
// at a few bodies (each term rounded to fp32), over the integration's own energy error.
TEST(Hermite, PotentialOfThePredictedStateMatchesTheReference) {
  for (Precision const precision : {Precision::fp64, Precision::fp32})
    for (std::size_t const n : {std::size_t(16), std::size_t(500)}) {
      sim::BodySet const b = plummer(n);
      multigpu::Simulation s(b, hermite_program(0.02, 0.01, 1.0 / 16),
                             cpu_config(0.01, 2, multigpu::Threading::single, precision));
      s.advance(37);
      sim::BodySet now;
      s.begin_sample();
      double const potential = s.end_sample(now);
      double const reference = sim::reference_potential(now, 0.01);
      EXPECT_NEAR(potential / reference, 1.0, 1e-13) << name_of(precision) << ", N = " << n;
      EXPECT_EQ(now.time, s.time());
    }
}

// A front end that no longer wants the work (the viewer closed during the start, a new run asked for) has hermite4's
// start given up between its chunks, as the fixed steps' engines give up theirs: the O(N^2) pass, seconds at large
// N, ends after its first chunk. A potential pass changes nothing of the run and goes on: the run stays usable.
TEST(Hermite, ACancelledStartIsGivenUpBetweenItsChunks) {
  sim::BodySet const b = plummer(8192);
  std::atomic<bool> cancel{true};
  multigpu::SimulationConfig c = cpu_config(0.01);
  c.cancel = &cancel;
  EXPECT_THROW(multigpu::Simulation(b, hermite_program(0.02, 0.01, 1.0 / 16), c), sim::StepCancelled);
  cancel = false;
  multigpu::Simulation s(b, hermite_program(0.02, 0.01, 1.0 / 16), c);
  s.advance(2);
  cancel = true;
  EXPECT_NO_THROW(s.diagnostics());
  EXPECT_NO_THROW(s.advance(1));
}

// The force+jerk pass against the formula written out plainly (fp64: within rounding; fp32 differences:
// within fp32's).
TEST(Hermite, ForceAndJerkMatchAPlainSum) {
  std::size_t const n = 200;
  sim::BodySet const b = plummer(n, 3);
  std::vector<sim::hermite::ActiveBody> active;
  for (std::size_t i = 0; i < n; i += 3) {
    auto const& p = b.pos_mass[i];
    active.push_back({p.x, p.y, p.z, p.w, b.velocity[i].x, b.velocity[i].y, b.velocity[i].z, i});
  }
  std::size_t const count = active.size();
  while (active.size() % sim::kHermiteLanes) active.push_back(active.back()), active.back().index = ~std::uint64_t(0);
  std::vector<double> x(n), y(n), z(n), vx(n), vy(n), vz(n), m(n);
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = b.pos_mass[i].x, y[i] = b.pos_mass[i].y, z[i] = b.pos_mass[i].z, m[i] = b.pos_mass[i].w;
    vx[i] = b.velocity[i].x, vy[i] = b.velocity[i].y, vz[i] = b.velocity[i].z;
  }
  sim::HermiteJBodies const j{x.data(), y.data(), z.data(), vx.data(), vy.data(), vz.data(), m.data(), 0, n};
  auto const layout = sim::kernels::segment_layout(n);
  double const eps2 = 1e-4;
  for (bool fp32 : {false, true}) {
    std::vector<sim::hermite::ForceJerk> out(layout.count * count);
    sim::hermite_partials(active.data(), count, j, layout.length, eps2, fp32, 0, out.data());
    double worst_a = 0, worst_j = 0;
    for (std::size_t k = 0; k < count; ++k) {
      std::size_t const i = active[k].index;
      double ax = 0, ay = 0, az = 0, jx = 0, jy = 0, jz = 0;
      for (std::size_t q = 0; q < n; ++q) {
        if (q == i) continue;
        double const dx = x[q] - x[i], dy = y[q] - y[i], dz = z[q] - z[i];
        double const wx = vx[q] - vx[i], wy = vy[q] - vy[i], wz = vz[q] - vz[i];
        double const r2 = dx * dx + dy * dy + dz * dz + eps2, r = std::sqrt(r2);
        double const mr3 = m[q] / (r2 * r), rv = 3.0 * (dx * wx + dy * wy + dz * wz) / r2;
        ax += mr3 * dx, ay += mr3 * dy, az += mr3 * dz;
        jx += mr3 * (wx - rv * dx), jy += mr3 * (wy - rv * dy), jz += mr3 * (wz - rv * dz);
      }
      sim::hermite::ForceJerk t{};
      for (std::size_t g = 0; g < layout.count; ++g) sim::hermite::add_partial(t, out[g * count + k]);
      double const na = std::sqrt(ax * ax + ay * ay + az * az), nj = std::sqrt(jx * jx + jy * jy + jz * jz);
      worst_a = std::max(worst_a, std::sqrt((t.ax - ax) * (t.ax - ax) + (t.ay - ay) * (t.ay - ay) + (t.az - az) * (t.az - az)) / na);
      worst_j = std::max(worst_j, std::sqrt((t.jx - jx) * (t.jx - jx) + (t.jy - jy) * (t.jy - jy) + (t.jz - jz) * (t.jz - jz)) / nj);
    }
    std::printf("%s: worst relative error of a %.2e, of the jerk %.2e\n", fp32 ? "fp32" : "fp64", worst_a, worst_j);
    EXPECT_LT(worst_a, fp32 ? 1e-5 : 1e-13);
    EXPECT_LT(worst_j, fp32 ? 1e-4 : 1e-12);
  }
}

// The protocol's last stage: each slice's add_own_groups continues the sums of the slices before it (null on the
// first); the last gives every slice's partials added in group order from zero, bit for bit.
TEST(Hermite, AddOwnGroupsChainsTheGroupSumsAcrossSlices) {
  std::size_t const n = 2000, L = sim::kernels::segment_layout(n).length;
  sim::BodySet const b = plummer(n, 5);
  std::vector<std::unique_ptr<sim::HermiteEngine>> engines;
  std::size_t begin = 0;
  for (std::size_t end : {3 * L, 9 * L, n}) {
    sim::HermiteEngineConfig c;
    c.bodies = n;
    c.slice = Slice{begin, end - begin};
    c.softening = 1e-4;
    engines.push_back(sim::make_hermite_cpu_engine(c));
    engines.back()->upload_unstarted(b);
    begin = end;
  }
  std::vector<sim::hermite::ActiveBody> list;
  for (std::size_t i = 1; i < n; i += 3) {
    auto const& p = b.pos_mass[i];
    list.push_back({p.x, p.y, p.z, p.w, b.velocity[i].x, b.velocity[i].y, b.velocity[i].z, i});
  }
  std::size_t const count = list.size();
  // The partials of every group, [global group][body], and their sums in group order from zero (the reference)
  // and in the reverse order (how much the order shows in these bits).
  std::vector<sim::hermite::ForceJerk> partials, chained(count);
  const sim::hermite::ForceJerk* prefix = nullptr;
  for (auto& e : engines) {
    e->set_active(list.data(), count);
    e->partial_forces();
    const sim::hermite::ForceJerk* p = e->partials();
    partials.insert(partials.end(), p, p + e->own_groups() * count);
    const sim::hermite::ForceJerk* q = e->add_own_groups(prefix);
    std::copy_n(q, count, chained.begin());
    prefix = chained.data();
  }
  std::size_t const groups = partials.size() / count;
  ASSERT_EQ(groups, sim::kernels::segment_layout(n).count);
  std::vector<sim::hermite::ForceJerk> in_order(count, sim::hermite::ForceJerk{}), reversed = in_order;
  for (std::size_t g = 0; g < groups; ++g)
    for (std::size_t k = 0; k < count; ++k) {
      sim::hermite::add_partial(in_order[k], partials[g * count + k]);
      sim::hermite::add_partial(reversed[k], partials[(groups - 1 - g) * count + k]);
    }
  EXPECT_EQ(0, std::memcmp(in_order.data(), chained.data(), count * sizeof(in_order[0])));
  EXPECT_NE(0, std::memcmp(in_order.data(), reversed.data(), count * sizeof(in_order[0])))
      << "these partials give the same bits in either order: the test could not see a wrong one";
}

// Softening 0 is allowed: the self pair adds nothing (a NaN would spread to every body).
TEST(Hermite, SofteningZeroRunsAndStaysFinite) {
  sim::BodySet const b = plummer(64);
  Blocks const r = run_blocks(b, cpu_config(0.0), 50);
  for (std::size_t i = 0; i < b.size(); ++i) {
    ASSERT_TRUE(std::isfinite(r.state.pos_mass[i].x) && std::isfinite(r.state.velocity[i].x)) << "body " << i;
    ASSERT_TRUE(std::isfinite(r.hermite.jerk[i].x)) << "body " << i;
  }
}

// Two bodies on a head-on collision with no softening: their step halves below the floor, and the run stops
// naming the pair and their distance, before another block step: on one device and through the protocol of two and
// three, a block step at a time or many at once. Light bodies on wide orbits give every device groups of its own.
// The block step that gave the step is whole and counted: the step count, the time and the state are the same
// whichever way the steps were asked for; and the state it leaves, continued, can be read but takes no step (the one
// below the floor), whatever eta.
TEST(Hermite, AStepBelowTheFloorStopsTheRunNamingThePair) {
  sim::BodySet const b = test::head_on_collision(197);
  ASSERT_EQ(sim::kernels::segment_layout(b.size()).count, 4u);
  std::uint64_t stopped_after = 0;
  double stopped_at = 0.0;
  sim::BodySet first_state;
  sim::hermite::HermiteState first_hermite;
  for (int devices : {1, 2, 3})
    for (std::uint64_t chunk : {std::uint64_t(1), std::uint64_t(100000)}) {
      SCOPED_TRACE(std::to_string(devices) + " device(s), " + std::to_string(chunk) + " a call");
      multigpu::Simulation s(b, hermite_program(0.02, 0.01, 1.0 / 16), cpu_config(0.0, devices));
      try {
        for (std::uint64_t k = 0; k < 100000; k += chunk) s.advance(chunk);  // the floor comes after 512
        FAIL() << "the collision did not stop the run";
      } catch (const RuntimeFailure& e) {
        std::string const what = e.what();
        std::printf("%d device(s), %llu a call: %s\n", devices, (unsigned long long)chunk, what.c_str());
        EXPECT_NE(what.find("below the floor"), std::string::npos) << what;
        EXPECT_TRUE(what.find("body 0") != std::string::npos || what.find("body 1") != std::string::npos) << what;
        EXPECT_NE(what.find("nearest neighbour is body"), std::string::npos) << what;
        // The time to 10 digits (1.110722244), where the numbers around it take 3: to 3, a time of 1001.1 is 1e+03.
        char at[64];
        std::snprintf(at, sizeof at, "hermite4: at t = %.10g body ", s.time());
        EXPECT_EQ(what.rfind(at, 0), 0u) << what;
        std::uint64_t const blocks = s.hermite_counters().block_steps;
        std::printf("stopped after %llu block steps\n", (unsigned long long)blocks);
        EXPECT_EQ(s.steps_done(), blocks);
        sim::BodySet own;
        sim::hermite::HermiteState hs;
        s.hermite_state(own, hs);
        if (stopped_after == 0) {
          stopped_after = blocks;
          stopped_at = s.time();
          first_state = own;
          first_hermite = hs;
        }
        EXPECT_EQ(blocks, stopped_after);
        EXPECT_EQ(s.time(), stopped_at);
        EXPECT_TRUE(test::bitwise_equal(own, first_state));
        EXPECT_EQ(0, std::memcmp(hs.step.data(), first_hermite.step.data(), hs.step.size() * sizeof(double)));
      }
    }
  EXPECT_GT(stopped_after, 0u);
  // Continued (a checkpoint written as the run stopped, a front end's change of another setting), the state is
  // there to read and save, and its first block step is refused before it is taken.
  multigpu::Simulation again(first_state, hermite_program(0.05, 0.01, 1.0 / 16), cpu_config(0.0, 2),
                             multigpu::RunClock{stopped_after, b.time}, &first_hermite);
  sim::BodySet own;
  sim::hermite::HermiteState hs;
  again.hermite_state(own, hs);
  EXPECT_TRUE(test::bitwise_equal(own, first_state));
  double const time = again.time();
  try {
    again.advance(1);
    FAIL() << "a state whose next step is below the floor took it";
  } catch (const RuntimeFailure& e) {
    std::string const what = e.what();
    EXPECT_NE(what.find("holds a step of"), std::string::npos) << what;
    EXPECT_NE(what.find("continue from an earlier checkpoint, or give another eta, eta_start, dt_max or softening"),
              std::string::npos)
        << what;
  }
  EXPECT_EQ(again.steps_done(), stopped_after);
  EXPECT_EQ(again.time(), time);
}

// A CPU engine that stalls or gives up on request: stands in for a GPU whose bounded wait expired, so that what
// HermiteBlocks does with the other engines can be seen without one.
struct EngineLog {
  int abandoned = 0;  // abandon() calls, every engine
};

class StallingEngine final : public sim::HermiteEngine {
 public:
  enum class Fault { none, never_idle, gives_up_at_start, gives_up_later };
  StallingEngine(std::unique_ptr<sim::HermiteEngine> inner, Fault fault, EngineLog& log)
      : inner_(std::move(inner)), fault_(fault), log_(log) {}

  void bind_thread() override { inner_->bind_thread(); }
  void upload(const sim::BodySet& b, const sim::hermite::HermiteState& s) override { inner_->upload(b, s); }
  void upload_unstarted(const sim::BodySet& b) override { inner_->upload_unstarted(b); }
  void download(sim::BodySet& b, sim::hermite::HermiteState& s) override { inner_->download(b, s); }
  void download_predicted(sim::BodySet& b) override { inner_->download_predicted(b); }
  double own_next_time() override { return inner_->own_next_time(); }
  void predict(double t) override { inner_->predict(t); }
  std::size_t pack_active(double t, bool all) override { return inner_->pack_active(t, all); }
  const sim::hermite::ActiveBody* own_active_data() const override { return inner_->own_active_data(); }
  void set_active(const sim::hermite::ActiveBody* b, std::size_t n) override { inner_->set_active(b, n); }
  void partial_forces() override { inner_->partial_forces(); }
  void partial_forces_fp64() override { inner_->partial_forces_fp64(); }
  std::size_t own_groups() const override { return inner_->own_groups(); }
  const sim::hermite::ForceJerk* partials() override { return inner_->partials(); }
  const sim::hermite::ForceJerk* add_own_groups(const sim::hermite::ForceJerk* prefix) override {
    return inner_->add_own_groups(prefix);
  }
  void correct(const sim::hermite::ForceJerk* totals, std::size_t n, double t) override { inner_->correct(totals, n, t); }
  void initialise(const sim::hermite::ForceJerk* totals, std::size_t n, double t) override {
    inner_->initialise(totals, n, t);
  }
  std::int64_t floor_violation() override {
    bool const give_up = fault_ == Fault::gives_up_at_start || (fault_ == Fault::gives_up_later && floor_checks_++ > 0);
    if (give_up) {  // as a bounded wait that expired: the engine lets go, then throws
      abandon();
      throw RuntimeFailure("the test's engine has not finished after 0 s");
    }
    return inner_->floor_violation();
  }
  std::uint64_t advance_blocks(std::uint64_t blocks, double t_stop) override {
    return inner_->advance_blocks(blocks, t_stop);
  }
  double block_time() const override { return inner_->block_time(); }
  sim::hermite::HermiteCounters counters() override { return inner_->counters(); }
  void synchronize() override { inner_->synchronize(); }
  bool idle() override { return fault_ != Fault::never_idle && inner_->idle(); }
  void abandon() noexcept override {
    abandoned_ = true;
    ++log_.abandoned;
  }
  bool abandoned() const noexcept override { return abandoned_; }
  int device() const override { return inner_->device(); }
  const sim::HermiteEngineConfig& config() const override { return inner_->config(); }
  std::string kernel_name() const override { return inner_->kernel_name(); }

 private:
  std::unique_ptr<sim::HermiteEngine> inner_;
  Fault fault_;
  EngineLog& log_;
  bool abandoned_ = false;
  int floor_checks_ = 0;
};

// Two devices' block steps, the second engine's fault as given.
std::unique_ptr<multigpu::HermiteBlocks> blocks_with_fault(const sim::BodySet& b, StallingEngine::Fault fault,
                                                           EngineLog& log,
                                                           multigpu::Threading threading = multigpu::Threading::single) {
  multigpu::HermiteBlocksSetup setup;
  setup.backend = sim::Backend::cpu;
  setup.softening = 0.01;
  setup.devices = {0, 0};
  setup.threading = threading;
  setup.all_slices = multigpu::hermite_partition(b.size(), 2, {});
  setup.rank_devices = {2};
  int made = 0;
  setup.make_engine = [&log, fault, made](const sim::HermiteEngineConfig& c) mutable -> std::unique_ptr<sim::HermiteEngine> {
    auto const mine = made++ == 1 ? fault : StallingEngine::Fault::none;
    return std::make_unique<StallingEngine>(sim::make_hermite_cpu_engine(c), mine, log);
  };
  return std::make_unique<multigpu::HermiteBlocks>(b, sim::hermite::HermiteState{}, setup);
}

// A device still busy when the block steps end (a stalled GPU whose queued work may wait on the other's) is polled
// for a few seconds, not waited for; then every engine gives up its work.
TEST(HermiteBlocks, ADeviceThatNeverFinishesIsGivenUpAtTheEnd) {
  sim::BodySet const b = plummer(256);
  EngineLog log;
  auto blocks = blocks_with_fault(b, StallingEngine::Fault::never_idle, log);
  EXPECT_EQ(blocks->advance(10, std::numeric_limits<double>::infinity()), 10u);
  EXPECT_EQ(log.abandoned, 0);
  auto const start = std::chrono::steady_clock::now();
  blocks.reset();
  double const seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(log.abandoned, 2) << "every engine gives up its work";
  EXPECT_GT(seconds, 4.0) << "the busy device was given a few seconds";
  EXPECT_LT(seconds, 30.0);
}

// An engine that gave up (its bounded wait expired, here in the start's floor check) has the others give up theirs
// at once, also when the constructor throws, with one host thread or a worker a device; engines that are all idle
// are freed as they are.
TEST(HermiteBlocks, AnEngineThatGaveUpHasEveryEngineGiveUp) {
  sim::BodySet const b = plummer(256);
  for (auto threading : {multigpu::Threading::single, multigpu::Threading::workers}) {
    SCOPED_TRACE(name_of(threading));
    EngineLog log;
    auto const start = std::chrono::steady_clock::now();
    EXPECT_THROW(blocks_with_fault(b, StallingEngine::Fault::gives_up_at_start, log, threading), RuntimeFailure);
    EXPECT_EQ(log.abandoned, 1 + 2) << "the engine itself, then every engine";
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 4.0);
    EngineLog healthy;
    blocks_with_fault(b, StallingEngine::Fault::none, healthy, threading)
        ->advance(10, std::numeric_limits<double>::infinity());
    EXPECT_EQ(healthy.abandoned, 0);
  }
}

// Once an engine gave up, its device memory is no longer its own: the block steps refuse every further call that
// would reach the engines (a viewer's save after the error, say) with one line, and only free them.
TEST(HermiteBlocks, GivenUpBlockStepsRefuseFurtherCalls) {
  sim::BodySet const b = plummer(256);
  EngineLog log;
  auto blocks = blocks_with_fault(b, StallingEngine::Fault::gives_up_later, log);
  EXPECT_THROW(blocks->advance(10, std::numeric_limits<double>::infinity()), RuntimeFailure);
  sim::BodySet state;
  sim::hermite::HermiteState hermite;
  for (auto const& call : std::vector<std::function<void()>>{
           [&] { blocks->state(state); }, [&] { blocks->own_time_state(state, hermite); },
           [&] { blocks->state_and_potential(state); }, [&] { blocks->accelerations(); },
           [&] { blocks->counters(); }, [&] { blocks->advance(1, std::numeric_limits<double>::infinity()); }}) {
    try {
      call();
      ADD_FAILURE() << "a call on given-up block steps went on";
    } catch (const RuntimeFailure& e) {
      EXPECT_NE(std::string(e.what()).find("can only be destroyed"), std::string::npos) << e.what();
    }
  }
  blocks.reset();
  EXPECT_EQ(log.abandoned, 1 + 2);
}

// Plummer N = 1,024 in Henon units, eta 0.02, softening 0.01 and 1e-4: |dE/E| <= 1e-6 at t_end.
void plummer_energy(double t_end) {
  for (double eps : {0.01, 1e-4}) {
    sim::BodySet const b = plummer(1024);
    multigpu::Simulation s(b, hermite_program(0.02, 0.01, 1.0 / 16), cpu_config(eps));
    double const e0 = energy(s);
    s.set_time_limit(t_end);
    s.advance(std::uint64_t(1) << 40);
    EXPECT_EQ(s.time(), t_end);
    double const e1 = energy(s);
    auto const c = s.hermite_counters();
    std::printf("eps %g: t %g, blocks %llu, evaluations/body %.1f, dE/E %.3e\n", eps, s.time(),
                (unsigned long long)c.block_steps, double(c.force_evaluations) / 1024.0,
                sim::relative_energy_error(e1, e0, 0.0));
    EXPECT_LT(sim::relative_energy_error(e1, e0, 0.0), 1e-6);
  }
}

// To t = 1 in CI (about 1 s). Measured: 3.3e-8 (softening 0.01), 1.0e-8 (1e-4); 2,361 and 3,725 block steps.
TEST(Hermite, PlummerEnergyToTime1) { plummer_energy(1.0); }

// To t = 10 (about 20 s on one core): NBODY_LONG_TESTS=1 runs it. Measured 2026-11-24 (see docs/benchmarks.md).
TEST(Hermite, PlummerEnergyToTime10) {
  if (!std::getenv("NBODY_LONG_TESTS")) GTEST_SKIP() << "set NBODY_LONG_TESTS=1 for the run to t = 10";
  plummer_energy(10.0);
}

}  // namespace
}  // namespace nbody

namespace nbody {
namespace {

// Every body active at N = 1,024: the CPU force+jerk rate (interactions/s per core, fp64 and fp32), against the
// issue's 5e8 per core in fp64. A timing, so opt-in (NBODY_BENCHMARK=1): on a shared machine it measures the
// other users too. Measured 2026-11-24 on the 2-core AMD EPYC (Zen 5, AVX-512) dev machine, loaded by other
// builds: fp64 9.8e8 - 1.7e9 per core on one thread (docs/benchmarks.md).
TEST(HermiteBenchmark, ForceJerkRate) {
  if (!std::getenv("NBODY_BENCHMARK")) GTEST_SKIP() << "set NBODY_BENCHMARK=1 to time the force+jerk pass";
  std::size_t const n = 1024;
  double fp64_one_thread = 0;
  sim::BodySet const b = plummer(n);
  std::vector<sim::hermite::ActiveBody> active(n);
  std::vector<double> x(n), y(n), z(n), vx(n), vy(n), vz(n), m(n);
  for (std::size_t i = 0; i < n; ++i) {
    auto const& p = b.pos_mass[i];
    active[i] = {p.x, p.y, p.z, p.w, b.velocity[i].x, b.velocity[i].y, b.velocity[i].z, i};
    x[i] = p.x, y[i] = p.y, z[i] = p.z, m[i] = p.w, vx[i] = b.velocity[i].x, vy[i] = b.velocity[i].y,
    vz[i] = b.velocity[i].z;
  }
  sim::HermiteJBodies const j{x.data(), y.data(), z.data(), vx.data(), vy.data(), vz.data(), m.data(), 0, n};
  auto const layout = sim::kernels::segment_layout(n);
  std::vector<sim::hermite::ForceJerk> out(layout.count * n);
  for (bool fp32 : {false, true}) {
    for (int threads : {1, 2}) {
      int const reps = 20;
      sim::hermite_partials(active.data(), n, j, layout.length, 1e-4, fp32, threads, out.data());
      auto const t0 = std::chrono::steady_clock::now();
      for (int r = 0; r < reps; ++r) sim::hermite_partials(active.data(), n, j, layout.length, 1e-4, fp32, threads, out.data());
      double const s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      double const rate = double(reps) * double(n) * double(n) / s;
      std::printf("%s, %d thread(s): %.3e interactions/s (%.3e per thread)\n", fp32 ? "fp32" : "fp64", threads, rate,
                  rate / threads);
      if (!fp32 && threads == 1) fp64_one_thread = rate;
    }
  }
  EXPECT_GE(fp64_one_thread, 5e8);
}

}  // namespace
}  // namespace nbody
