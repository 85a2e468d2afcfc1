// tests/test_multidevice.cpp - partitioning N bodies over devices, and what a Simulation refuses.
// The properties of every layout (bitwise equal to one device) are in test_layouts.cpp.
#include <gtest/gtest.h>

#include <string>

#include "core/errors.h"
#include "multigpu/partition.h"
#include "multigpu/scheduler.h"
#include "multigpu/simulation.h"
#include "test_support.h"

namespace nbody {
namespace {

// The passes a step takes: a kick runs with the drift after it, and the last kick, after a forces
// stage, with the forces; a kick between forces and a drift goes with the drift.
std::string passes(sim::Integrator integrator) {
  auto const stages = sim::make_step_program({integrator, 0.0, 0.995}).stages;
  std::string out;
  for (std::size_t k = 0; k < stages.size(); ++k) {
    if (!out.empty()) out += ' ';
    out += name_of(stages[k].kind);
    if (multigpu::fused_with_next(stages, k)) out += '+' + std::string(name_of(stages[++k].kind));
  }
  return out;
}

TEST(StageFusion, KickWithTheDriftAfterItAndTheLastKickWithTheForces) {
  EXPECT_EQ(passes(sim::Integrator::leapfrog), "kick+drift forces+kick");
  EXPECT_EQ(passes(sim::Integrator::yoshida4), "kick+drift forces kick+drift forces kick+drift forces+kick");
  EXPECT_EQ(passes(sim::Integrator::euler_damped), "kick damp drift forces");
}

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

TEST(StepContract, ASimulationRefusesAnInvalidProgram) {
  using K = sim::StageKind;
  sim::StepProgram const lost_drift{"dkd-without-forces", 0.01, {{K::drift, 0.005}, {K::kick, 0.01}, {K::drift, 0.005}}};
  multigpu::SimulationConfig c;
  c.backend = sim::Backend::cpu;
  EXPECT_THROW(multigpu::Simulation(test::scenario("plummer", 10), lost_drift, c), InputError);
}

}  // namespace
}  // namespace nbody

namespace nbody {
namespace {

TEST(Launch, GraphsNeedTheCudaBackend) {
  multigpu::SimulationConfig c;
  c.backend = sim::Backend::cpu;
  c.launch = multigpu::Launch::graph;
  try {
    multigpu::Simulation(test::scenario("plummer", 10), sim::make_step_program({sim::Integrator::leapfrog, 0.01, 1.0}), c);
    FAIL() << "graphs on the CPU backend were accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--launch graph"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace nbody
