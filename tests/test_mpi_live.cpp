// tests/test_mpi_live.cpp - the viewer's simulation over MPI ranks, run by mpirun with 2 ranks: rank 0 leads
// (LiveSimulation::update) and the others follow its plans (follow()). hermite4's frames colour by time-step
// level: rank 0's frames carry every body's level, those one process computes, and only while asked.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "app/live_simulation.h"
#include "core/ranks.h"
#include "driver/setup.h"
#include "mpi/mpi_ranks.h"
#include "multigpu/simulation.h"
#include "sim/physics/hermite.h"

namespace nbody {
namespace {

driver::RunConfig hermite_run() {
  driver::RunConfig run;
  run.devices.backend = driver::BackendChoice::cpu;
  run.devices.engine.cpu_threads = 1;  // the ranks share this machine's cores
  run.initial.scenario = sim::Scenario::plummer;
  run.initial.bodies = 256;
  run.physics.integrator = sim::Integrator::hermite4;
  run.physics.softening = 0.001;
  run.given.integrator = run.given.softening = true;
  return run;
}

// Every body's step level after `blocks` block steps of one process alone.
std::vector<std::uint8_t> levels_alone(std::uint64_t blocks) {
  driver::RunConfig run = hermite_run();
  run.devices.ranks = &solo_ranks();  // rank 0 alone: no collective call the others would not make
  driver::Setup const s = driver::make_setup(run);
  multigpu::SimulationConfig config = s.config;
  config.ranks = &solo_ranks();
  multigpu::Simulation sim(s.bodies, s.program, config);
  sim.advance(blocks);
  sim::BodySet bodies;
  sim::hermite::HermiteState state;
  sim.hermite_state(bodies, state);
  std::vector<std::uint8_t> levels(state.step.size());
  for (std::size_t i = 0; i < levels.size(); ++i)
    levels[i] = std::uint8_t(sim::hermite::step_level(state.step[i], *s.program.hermite));
  return levels;
}

// The block steps one process alone makes to the time `t`.
std::uint64_t steps_alone_to(double t) {
  driver::RunConfig run = hermite_run();
  run.devices.ranks = &solo_ranks();
  driver::Setup const s = driver::make_setup(run);
  multigpu::SimulationConfig config = s.config;
  config.ranks = &solo_ranks();
  multigpu::Simulation sim(s.bodies, s.program, config);
  sim.set_time_limit(t);
  sim.advance(std::uint64_t(1) << 40);
  return sim.steps_done();
}

TEST(MpiLiveHermite, FramesCarryTheStepLevelsOfOneProcess) {
  ASSERT_GE(world().size(), 2) << "run under mpirun with 2 or more ranks";
  app::LiveSimulation live(hermite_run(), std::nullopt, false);
  if (world().rank() != 0) {
    EXPECT_EQ(live.follow(), 0);
    return;
  }
  auto levels_of_frame = [&] {
    std::vector<std::uint8_t> got;
    live.with_frame([&](std::uint64_t, const sim::BodySet&, const render::DeviceFrames*,
                        const std::vector<std::uint8_t>& levels) { got = levels; });
    return got;
  };
  live.step(40);
  live.update();  // the start and 40 block steps (as n makes them)
  EXPECT_TRUE(levels_of_frame().empty()) << "levels downloaded while nobody asked";
  live.want_levels(true);
  live.step(40);
  live.update();
  std::vector<std::uint8_t> const levels = levels_of_frame();
  std::uint64_t const blocks = live.stats().step;
  live.want_levels(false);
  live.step(40);
  live.update();  // no levels, and no collective call for them the followers would not make
  EXPECT_TRUE(levels_of_frame().empty());
  EXPECT_EQ(live.stats().step, blocks + 40);
  // Running, a frame is spans of dt max (1/16): every rank makes the block steps of one process to the span's end.
  live.set_steps_per_update(2);
  live.update();
  double const span_end = 16.0 * live.stats().time;
  EXPECT_EQ(span_end, std::floor(span_end)) << "a frame ended off the multiples of dt max: " << live.stats().time;
  EXPECT_EQ(live.stats().step, steps_alone_to(live.stats().time));

  ASSERT_EQ(levels.size(), 256u) << "the frame of 2 ranks carries no levels";
  std::vector<std::uint8_t> const expected = levels_alone(blocks);
  EXPECT_TRUE(levels == expected) << "levels differ from one process's after " << blocks << " block steps";
  auto const [lo, hi] = std::minmax_element(levels.begin(), levels.end());
  std::printf("levels %d..%d after %llu block steps over %d ranks\n", int(*lo), int(*hi),
              (unsigned long long)blocks, world().size());
  EXPECT_LT(*lo, *hi) << "a Plummer sphere with softening 0.001 has bodies on several step levels";
}

}  // namespace
}  // namespace nbody

// MPI is started before the test and finalised after it; every rank's verdict is rank 0's exit status.
int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  auto const mpi = nbody::mpi::start(argc, argv);
  int const status = RUN_ALL_TESTS();
  return nbody::world().max(status);
}
