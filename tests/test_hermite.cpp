// tests/test_hermite.cpp - hermite4: the algorithm's order (Kepler orbits), energy conservation (Plummer), the
// steps (powers of two, commensurate, the floor), the force+jerk pass against a plain reference, bitwise equality
// across host devices, threading models and restarts, and the CPU force+jerk rate.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/errors.h"
#include "multigpu/simulation.h"
#include "sim/engines/hermite_cpu_forces.h"
#include "sim/engines/hermite_engine.h"
#include "sim/kernels/segments.h"
#include "sim/physics/diagnostics.h"
#include "sim/physics/hermite.h"
#include "sim/physics/integrator.h"
#include "sim/physics/scenarios.h"

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

// A Plummer sphere.
sim::BodySet plummer(std::size_t n, std::uint64_t seed = 7) {
  sim::ScenarioParams p;
  p.scenario = sim::Scenario::plummer;
  p.bodies = n;
  p.seed = seed;
  return sim::make_scenario(p);
}

double energy(multigpu::Simulation& s) { return s.diagnostics().total(); }

TEST(Hermite, PlummerEnergyShort) {
  for (double eps : {0.01, 1e-4}) {
    sim::BodySet const b = plummer(1024);
    multigpu::Simulation s(b, hermite_program(0.02, 0.01, 1.0 / 16), cpu_config(eps));
    double const e0 = energy(s);
    s.set_time_limit(1.0);
    s.advance(std::uint64_t(1) << 40);
    double const e1 = energy(s);
    auto const c = s.hermite_counters();
    std::printf("eps %g: t %g, blocks %llu, evaluations/body %.1f, dE/E %.3e\n", eps, s.time(),
                (unsigned long long)c.block_steps, double(c.force_evaluations) / 1024.0,
                sim::relative_energy_error(e1, e0));
    EXPECT_LT(sim::relative_energy_error(e1, e0), 1e-6);
  }
}

}  // namespace
}  // namespace nbody

namespace nbody {
namespace {

// Every body active at N = 1,024: the CPU force+jerk rate (interactions/s per core, fp64 and fp32).
TEST(HermiteBenchmark, ForceJerkRate) {
  std::size_t const n = 1024;
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
    }
  }
}

}  // namespace
}  // namespace nbody
