// tests/test_layouts.cpp - the multi-device properties, written once and run on every backend: host
// devices on the CPU, CUDA devices exchanging by peer copies, through pinned host memory, and by
// the drift's direct stores. Compiled twice: layout_tests_cpu (label cpu) instantiates the CPU
// backend, layout_tests_gpu (labels gpu, multigpu) the three CUDA ones; a CUDA backend skips
// where no GPU is visible. With fewer GPUs than a layout's devices, the devices share GPUs (slices
// on one GPU still run every copy, event and wait of the exchange).
#include <gtest/gtest.h>

#include <filesystem>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "core/errors.h"
#include "gpu/devices.h"
#include "multigpu/simulation.h"
#include "sim/io/checkpoint.h"
#include "sim/physics/integrator.h"
#include "test_support.h"

namespace nbody {
namespace {

using multigpu::Threading;

// A backend: whether it can run here (empty: yes; else why not), and the configuration of
// `devices` devices on it.
struct Backend {
  const char* name;
  std::string (*unavailable)();
  multigpu::SimulationConfig (*config)(int devices);
  std::size_t long_run_bodies;  // the 1000-step run costs N^2 x 1000: smaller on the CPU
};
void PrintTo(const Backend& b, std::ostream* os) { *os << b.name; }

class Layouts : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    std::string const why = GetParam().unavailable();
    if (!why.empty()) GTEST_SKIP() << why;
  }

  static multigpu::SimulationConfig config(int devices, Threading threading, Precision precision = Precision::fp32,
                                           std::vector<double> weights = {}) {
    multigpu::SimulationConfig c = GetParam().config(devices);
    c.threading = threading;
    c.engine.precision = precision;
    c.weights = std::move(weights);
    return c;
  }

  static sim::BodySet run(const sim::BodySet& b, const sim::StepProgram& program, const multigpu::SimulationConfig& c,
                          int steps) {
    multigpu::Simulation sim(b, program, c);
    sim.advance(std::uint64_t(steps));
    EXPECT_EQ(sim.steps_done(), std::uint64_t(steps));
    return sim.state();
  }
};

#if NBODY_LAYOUT_TESTS_CUDA
std::string no_gpu() {
  std::string why;
  return gpu::devices(&why).empty() ? why : std::string{};
}

template <multigpu::ExchangeMode kMode>
multigpu::SimulationConfig cuda_devices(int devices) {
  int const gpus = int(gpu::devices().size());
  multigpu::SimulationConfig c;
  c.backend = sim::Backend::cuda;
  c.exchange = kMode;
  c.devices.clear();
  for (int d = 0; d < devices; ++d) c.devices.push_back(d % gpus);  // distinct GPUs first
  return c;
}

INSTANTIATE_TEST_SUITE_P(Cuda, Layouts,
                         ::testing::Values(Backend{"peer", no_gpu, cuda_devices<multigpu::ExchangeMode::peer>, 8192},
                                           Backend{"staged", no_gpu, cuda_devices<multigpu::ExchangeMode::staged>, 8192},
                                           Backend{"direct", no_gpu, cuda_devices<multigpu::ExchangeMode::direct>, 8192}),
                         [](auto const& param_info) { return std::string(param_info.param.name); });
#else
multigpu::SimulationConfig host_devices(int devices) {
  multigpu::SimulationConfig c;
  c.backend = sim::Backend::cpu;
  c.devices.assign(std::size_t(devices), 0);
  c.engine.cpu_threads = 2;
  return c;
}

INSTANTIATE_TEST_SUITE_P(Cpu, Layouts,
                         ::testing::Values(Backend{"host_devices", [] { return std::string{}; }, host_devices, 512}),
                         [](auto const& param_info) { return std::string(param_info.param.name); });
#endif

sim::StepProgram program(sim::Integrator integrator) { return sim::make_step_program({integrator, 0.0, 0.995}); }

// Determinism across layouts: 1 to 4 devices under both schedulers, and unequal weights, give
// the positions and velocities of one device bit for bit, for N larger and smaller than the
// device count, both precisions, and programs of one and three publications per step.
TEST_P(Layouts, EveryLayoutMatchesOneDeviceBitwise) {
  struct Case {
    std::size_t n;
    Precision precision;
    sim::Integrator integrator;
  };
  std::vector<Case> cases{{1000, Precision::fp32, sim::Integrator::leapfrog},
                          {1001, Precision::fp64, sim::Integrator::leapfrog},
                          {997, Precision::fp32, sim::Integrator::euler_damped},
                          {1000, Precision::fp32, sim::Integrator::yoshida4},
                          {5, Precision::fp64, sim::Integrator::yoshida4},
                          {3, Precision::fp32, sim::Integrator::leapfrog},
                          {2, Precision::fp64, sim::Integrator::leapfrog}};
  if (GetParam().long_run_bodies > 1000) cases.push_back({65536 + 7, Precision::fp32, sim::Integrator::leapfrog});
  for (auto const& c : cases) {
    auto const b = test::scenario("plummer", c.n);
    auto const p = program(c.integrator);
    auto const one = run(b, p, config(1, Threading::single, c.precision), 12);
    ASSERT_FALSE(test::bitwise_equal(one, b)) << "nothing moved";
    std::string const what = "N = " + std::to_string(c.n) + ", " + name_of(c.precision) + ", " + p.integrator;
    for (int devices = 2; devices <= 4; ++devices)
      for (auto threading : {Threading::single, Threading::workers})
        EXPECT_TRUE(test::bitwise_equal(one, run(b, p, config(devices, threading, c.precision), 12)))
            << devices << " devices, " << name_of(threading) << ", " << what;
    EXPECT_TRUE(
        test::bitwise_equal(one, run(b, p, config(3, Threading::workers, c.precision, {1, 2, 5}), 12)))
        << "weighted 1,2,5, " << what;
  }
}

// The step contract: a hand-written program with two drift/forces pairs per step publishes twice
// per step; an exchange keyed on steps instead of publications fails this test.
TEST_P(Layouts, TwoDriftProgramMatchesOnOneAndThreeDevices) {
  using K = sim::StageKind;
  sim::StepProgram const dkd{"drift-kick-drift",
                             0.01,
                             {{K::drift, 0.005}, {K::forces}, {K::kick, 0.01}, {K::drift, 0.005}, {K::forces}}};
  auto const b = test::scenario("plummer", 600);
  auto const one = run(b, dkd, config(1, Threading::single), 13);
  ASSERT_FALSE(test::bitwise_equal(one, b)) << "nothing moved";
  for (auto threading : {Threading::single, Threading::workers}) {
    multigpu::Simulation sim(b, dkd, config(3, threading));
    sim.advance(7);  // split, so the second call starts on an odd publication
    sim.advance(6);
    EXPECT_TRUE(test::bitwise_equal(one, sim.state())) << name_of(threading);
  }
}

TEST_P(Layouts, ThousandStepsWithoutDriftBetweenLayouts) {
  auto const b = test::scenario("plummer", GetParam().long_run_bodies);
  auto const p = program(sim::Integrator::leapfrog);
  auto const one = run(b, p, config(1, Threading::single), 1000);
  EXPECT_TRUE(test::bitwise_equal(one, run(b, p, config(2, Threading::workers), 1000)));
}

TEST_P(Layouts, ManyShortAdvancesEqualOneLong) {
  auto const b = test::scenario("plummer", 300);
  auto const p = program(sim::Integrator::leapfrog);
  multigpu::Simulation sim(b, p, config(3, Threading::workers));
  for (int k = 0; k < 10; ++k) sim.advance(1);
  EXPECT_TRUE(test::bitwise_equal(sim.state(), run(b, p, config(1, Threading::single), 10)));
  EXPECT_EQ(sim.time(), 10 * 0.01);
}

// The viewer switches threading model and device count live by rebuilding the simulation from its
// state: the run must carry on exactly as if nothing had happened.
TEST_P(Layouts, SwitchingLayoutMidRunLosesNothing) {
  auto const b = test::scenario("plummer", 700);
  auto const p = program(sim::Integrator::leapfrog);
  multigpu::Simulation straight(b, p, config(1, Threading::single));
  straight.advance(20);
  multigpu::Simulation first(b, p, config(1, Threading::single));
  first.advance(10);
  multigpu::Simulation second(first.state(), p, config(3, Threading::workers), first.clock());
  second.advance(10);
  EXPECT_TRUE(test::bitwise_equal(straight.state(), second.state()));
  EXPECT_EQ(second.time(), straight.time());
}

// A checkpoint continues the run exactly: N steps straight equal N/2 steps, a checkpoint written and
// read back, and N/2 more steps, bit for bit in the state and the time, in both precisions, with a
// program of one and of three publications per step, on another device count and threading model.
TEST_P(Layouts, RestartFromACheckpointIsBitForBit) {
  if (!sim::checkpoints_built()) GTEST_SKIP() << "built without HDF5";
  test::TestDir const dir("nbody-restart");
  auto const b = test::scenario("plummer", 777);
  for (auto precision : {Precision::fp32, Precision::fp64})
    for (auto integrator : {sim::Integrator::leapfrog, sim::Integrator::yoshida4}) {
      auto const p = program(integrator);
      std::string const what = name_of(precision) + ", " + p.integrator;
      multigpu::Simulation straight(b, p, config(1, Threading::single, precision));
      straight.advance(16);

      multigpu::Simulation first(b, p, config(2, Threading::single, precision));
      first.advance(9);
      sim::RunRecord record;
      record.step = first.clock().step;
      record.start_time = first.clock().start_time;
      record.precision = precision;
      record.integrator = p.integrator;
      record.dt = p.dt;
      record.softening = first.config().softening;
      std::string const path = (dir / "restart.h5").string();
      sim::write_checkpoint(path, first.state(), record);

      sim::Checkpoint const c = sim::read_checkpoint(path);
      multigpu::Simulation second(c.bodies, p, config(3, Threading::workers, precision),
                                  multigpu::RunClock{c.run.step, c.run.start_time});
      second.advance(7);
      EXPECT_TRUE(test::bitwise_equal(straight.state(), second.state())) << what;
      EXPECT_EQ(second.time(), straight.time()) << what;
      EXPECT_EQ(second.steps_done(), 16u) << what;
    }
}

// The energies too, bit for bit: every body's potential term is its own fixed sum, and the terms are
// added in body order, whatever the slices and the host threads that computed them. N = 1,500 gives one
// device's CPU pass threads of its own (over 1e6 pairs) and four devices' slices none.
TEST_P(Layouts, DiagnosticsDoNotDependOnTheLayout) {
  auto const b = test::scenario("plummer", 1500);
  auto diagnostics = [&](int devices, Threading t, int cpu_threads, Precision precision) {
    multigpu::SimulationConfig c = config(devices, t, precision);
    c.engine.cpu_threads = cpu_threads;
    multigpu::Simulation sim(b, program(sim::Integrator::leapfrog), c);
    sim.advance(3);
    return sim.diagnostics();
  };
  for (Precision p : {Precision::fp32, Precision::fp64}) {
    auto const a = diagnostics(1, Threading::single, 2, p);
    for (auto [devices, t, threads] : {std::tuple{4, Threading::workers, 2}, std::tuple{3, Threading::single, 1},
                                       std::tuple{1, Threading::single, 1}, std::tuple{2, Threading::workers, 2}}) {
      auto const d = diagnostics(devices, t, threads, p);
      EXPECT_EQ(a.kinetic, d.kinetic) << devices << " devices, " << threads << " threads";
      EXPECT_EQ(a.potential, d.potential) << devices << " devices, " << threads << " threads";
    }
  }
}

// A diagnostics series begins a sample at its step and ends it after the next steps are enqueued:
// the sample holds its own step's state and potential, bit for bit, on every layout and threading.
TEST_P(Layouts, ASampleHoldsItsStepWhileTheNextStepsRun) {
  auto const b = test::scenario("plummer", 500);
  for (auto [devices, t] : {std::pair{1, Threading::single}, std::pair{3, Threading::workers}}) {
    multigpu::Simulation at_step(b, program(sim::Integrator::leapfrog), config(devices, t));
    at_step.advance(5);
    sim::BodySet const want = at_step.state();
    double const want_potential = at_step.diagnostics().potential;

    multigpu::Simulation sampled(b, program(sim::Integrator::leapfrog), config(devices, t));
    sampled.advance(5);
    sampled.begin_sample();
    sampled.advance(7);
    sim::BodySet got;
    double const potential = sampled.end_sample(got);
    EXPECT_TRUE(test::bitwise_equal(got, want)) << devices << " devices";
    EXPECT_EQ(got.time, want.time);
    EXPECT_EQ(potential, want_potential);
    sampled.synchronize();
    EXPECT_EQ(sampled.steps_done(), 12u);
    EXPECT_FALSE(test::bitwise_equal(sampled.state(), want)) << "the steps after the sample ran";
  }
}

}  // namespace
}  // namespace nbody
