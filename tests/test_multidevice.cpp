// tests/test_multidevice.cpp - partitioning, exchange and both schedulers on host "devices":
// any layout must give bitwise-identical results to one device.
#include <gtest/gtest.h>

#include "core/errors.h"
#include "multigpu/partition.h"
#include "multigpu/simulation.h"
#include "test_support.h"

namespace nbody {
namespace {

TEST(Partition, CoversEverythingContiguously) {
  for (std::size_t n : {0u, 1u, 2u, 3u, 7u, 1000u, 1001u}) {
    for (std::size_t k = 1; k <= 5; ++k) {
      auto const s = multigpu::make_partition(n, k);
      ASSERT_EQ(s.size(), k);
      std::size_t next = 0, largest = 0, smallest = n;
      for (auto const& slice : s) {
        EXPECT_EQ(slice.begin, next);
        next = slice.end();
        largest = std::max(largest, slice.count);
        smallest = std::min(smallest, slice.count);
      }
      EXPECT_EQ(next, n);
      EXPECT_LE(largest - smallest, 1u) << "n=" << n << " k=" << k;
    }
  }
}

TEST(Partition, FollowsWeights) {
  auto const s = multigpu::make_partition(1000, 3, {1, 1, 2});
  EXPECT_EQ(s[0].count, 250u);
  EXPECT_EQ(s[1].count, 250u);
  EXPECT_EQ(s[2].count, 500u);
  EXPECT_THROW(multigpu::make_partition(10, 2, {1, 0}), InputError);
  EXPECT_THROW(multigpu::make_partition(10, 2, {1, 2, 3}), InputError);
}

struct Layout {
  int devices;
  multigpu::Threading threading;
  std::vector<double> weights;
};

sim::BodySet run(const sim::BodySet& b, const Layout& l, Precision precision, sim::Integrator integrator,
                 int steps) {
  multigpu::SimulationConfig c;
  c.backend = sim::Backend::cpu;
  c.precision = precision;
  c.devices.assign(std::size_t(l.devices), 0);
  c.threading = l.threading;
  c.weights = l.weights;
  c.cpu_threads = 2;
  multigpu::Simulation sim(b, sim::make_step_program({integrator, 0.0, 0.995}), c);
  sim.advance(std::uint64_t(steps));
  EXPECT_EQ(sim.steps_done(), std::uint64_t(steps));
  return sim.state();
}

class Layouts : public ::testing::TestWithParam<std::tuple<std::size_t, Precision, sim::Integrator>> {};

TEST_P(Layouts, EveryLayoutMatchesOneDeviceBitwise) {
  auto const [n, precision, integrator] = GetParam();
  auto const b = test::scenario("plummer", n);
  auto const one = run(b, {1, multigpu::Threading::single, {}}, precision, integrator, 12);
  ASSERT_FALSE(test::bitwise_equal(one, b)) << "nothing moved";
  for (int devices = 1; devices <= 4; ++devices) {
    for (auto threading : {multigpu::Threading::single, multigpu::Threading::workers}) {
      auto const s = run(b, {devices, threading, {}}, precision, integrator, 12);
      EXPECT_TRUE(test::bitwise_equal(one, s))
          << devices << " devices, " << name_of(threading) << ", N = " << n;
    }
  }
  auto const weighted = run(b, {3, multigpu::Threading::workers, {1, 2, 5}}, precision, integrator, 12);
  EXPECT_TRUE(test::bitwise_equal(one, weighted)) << "weighted 1,2,5";
}

INSTANTIATE_TEST_SUITE_P(
    Cpu, Layouts,
    ::testing::Values(std::make_tuple(std::size_t(1000), Precision::fp32, sim::Integrator::leapfrog),
                      std::make_tuple(std::size_t(1001), Precision::fp64, sim::Integrator::leapfrog),
                      std::make_tuple(std::size_t(997), Precision::fp32, sim::Integrator::euler_damped),
                      std::make_tuple(std::size_t(1000), Precision::fp32, sim::Integrator::yoshida4),
                      std::make_tuple(std::size_t(5), Precision::fp64, sim::Integrator::yoshida4),
                      std::make_tuple(std::size_t(3), Precision::fp32, sim::Integrator::leapfrog),
                      std::make_tuple(std::size_t(2), Precision::fp64, sim::Integrator::leapfrog)),
    [](auto const& param_info) {
      std::string s = "N" + std::to_string(std::get<0>(param_info.param)) + "_" +
                      name_of(std::get<1>(param_info.param)) + "_" + name_of(std::get<2>(param_info.param));
      for (auto& c : s)
        if (c == '-') c = '_';
      return s;
    });

// A program with two drift/forces pairs per step publishes twice per step: the exchange must key
// its buffers on publications, not steps, or peers read stale slices (an exchange keyed on the
// step number fails this test and the yoshida4 layouts above).
TEST(StepContract, TwoDriftProgramMatchesOnOneAndThreeDevices) {
  using K = sim::StageKind;
  sim::StepProgram const dkd{"drift-kick-drift",
                             0.01,
                             {{K::drift, 0.005}, {K::forces}, {K::kick, 0.01}, {K::drift, 0.005}, {K::forces}}};
  auto const b = test::scenario("plummer", 600);
  auto run_on = [&](int devices, multigpu::Threading t) {
    multigpu::SimulationConfig c;
    c.backend = sim::Backend::cpu;
    c.devices.assign(std::size_t(devices), 0);
    c.threading = t;
    c.cpu_threads = 2;
    multigpu::Simulation sim(b, dkd, c);
    sim.advance(7);
    sim.advance(6);
    return sim.state();
  };
  auto const one = run_on(1, multigpu::Threading::single);
  ASSERT_FALSE(test::bitwise_equal(one, b)) << "nothing moved";
  for (auto t : {multigpu::Threading::single, multigpu::Threading::workers})
    EXPECT_TRUE(test::bitwise_equal(one, run_on(3, t))) << name_of(t);
}

TEST(StepContract, ASimulationRefusesAnInvalidProgram) {
  using K = sim::StageKind;
  sim::StepProgram const lost_drift{"dkd-without-forces", 0.01, {{K::drift, 0.005}, {K::kick, 0.01}, {K::drift, 0.005}}};
  multigpu::SimulationConfig c;
  c.backend = sim::Backend::cpu;
  EXPECT_THROW(multigpu::Simulation(test::scenario("plummer", 10), lost_drift, c), InputError);
}

TEST(Schedulers, ManyShortAdvancesEqualOneLong) {
  auto const b = test::scenario("plummer", 300);
  multigpu::SimulationConfig c;
  c.backend = sim::Backend::cpu;
  c.devices = {0, 0, 0};
  c.threading = multigpu::Threading::workers;
  multigpu::Simulation sim(b, sim::make_step_program({sim::Integrator::leapfrog, 0.0, 1.0}), c);
  for (int k = 0; k < 10; ++k) sim.advance(1);
  auto const one = run(b, {1, multigpu::Threading::single, {}}, Precision::fp32, sim::Integrator::leapfrog, 10);
  EXPECT_TRUE(test::bitwise_equal(sim.state(), one));
  EXPECT_DOUBLE_EQ(sim.time(), 10 * 0.01);
}

// The viewer switches threading model and device count live by rebuilding the simulation from its
// state: the run must carry on exactly as if nothing had happened.
TEST(Schedulers, SwitchingLayoutMidRunLosesNothing) {
  auto const b = test::scenario("plummer", 700);
  auto const program = sim::make_step_program({sim::Integrator::leapfrog, 0.0, 1.0});
  multigpu::SimulationConfig one;
  one.backend = sim::Backend::cpu;
  multigpu::Simulation straight(b, program, one);
  straight.advance(20);

  multigpu::Simulation first(b, program, one);
  first.advance(10);
  multigpu::SimulationConfig other = one;
  other.devices = {0, 0, 0};
  other.threading = multigpu::Threading::workers;
  multigpu::Simulation second(first.state(), program, other);
  second.advance(10);
  EXPECT_TRUE(test::bitwise_equal(straight.state(), second.state()));
  EXPECT_DOUBLE_EQ(second.time(), straight.time());
}

TEST(Schedulers, DiagnosticsDoNotDependOnTheLayout) {
  auto const b = test::scenario("plummer", 500);
  auto diag = [&](int devices, multigpu::Threading t) {
    multigpu::SimulationConfig c;
    c.backend = sim::Backend::cpu;
    c.devices.assign(std::size_t(devices), 0);
    c.threading = t;
    multigpu::Simulation sim(b, sim::make_step_program({sim::Integrator::leapfrog, 0.0, 1.0}), c);
    sim.advance(3);
    return sim.diagnostics();
  };
  auto const a = diag(1, multigpu::Threading::single);
  auto const d = diag(4, multigpu::Threading::workers);
  EXPECT_DOUBLE_EQ(a.kinetic, d.kinetic);
  EXPECT_NEAR(a.potential, d.potential, 1e-12 * std::abs(a.potential));  // slice sums added in another grouping
}

}  // namespace
}  // namespace nbody
