// tests/test_multigpu.cpp - one simulation over several physical GPUs (labels gpu, multigpu;
// skipped with the reason where fewer than 2 GPUs are visible).
#include <gtest/gtest.h>

#include "gpu/devices.h"
#include "multigpu/cuda_exchange.h"
#include "multigpu/simulation.h"
#include "sim/engines/cuda_engine.h"
#include "test_support.h"

namespace nbody {
namespace {

int gpu_count() { return int(gpu::devices().size()); }

multigpu::SimulationConfig config(Precision p, int gpus, multigpu::Threading t, multigpu::ExchangeMode x) {
  multigpu::SimulationConfig c;
  c.backend = sim::Backend::cuda;
  c.precision = p;
  c.devices.clear();
  for (int d = 0; d < gpus; ++d) c.devices.push_back(d);
  c.threading = t;
  c.exchange = x;
  return c;
}

sim::BodySet run(const sim::BodySet& b, const multigpu::SimulationConfig& c, int steps) {
  multigpu::Simulation sim(b, sim::make_step_program({sim::Integrator::leapfrog, 0.0, 1.0}), c);
  sim.advance(std::uint64_t(steps));
  return sim.state();
}

TEST(MultiGpu, EveryLayoutMatchesOneGpuBitwise) {
  int const gpus = gpu_count();
  if (gpus < 2) GTEST_SKIP() << "needs 2 GPUs, " << gpus << " visible";
  for (std::size_t n : {1000u, 65536u + 7u, 3u}) {
    auto const b = test::scenario("plummer", n);
    for (auto p : {Precision::fp32, Precision::fp64}) {
      auto const one = run(b, config(p, 1, multigpu::Threading::single, multigpu::ExchangeMode::automatic), 20);
      for (int g : {2, 3, gpus}) {
        if (g > gpus) continue;
        for (auto x : {multigpu::ExchangeMode::peer, multigpu::ExchangeMode::staged})
          for (auto t : {multigpu::Threading::single, multigpu::Threading::workers})
            EXPECT_TRUE(test::bitwise_equal(one, run(b, config(p, g, t, x), 20)))
                << g << " GPUs, " << name_of(x) << ", " << name_of(t) << ", N=" << n << ", "
                << name_of(p);
      }
    }
  }
}

TEST(MultiGpu, ThousandStepsWithoutDriftBetweenLayouts) {
  int const gpus = gpu_count();
  if (gpus < 2) GTEST_SKIP() << "needs 2 GPUs, " << gpus << " visible";
  auto const b = test::scenario("plummer", 8192);
  auto const one = run(b, config(Precision::fp32, 1, multigpu::Threading::single, multigpu::ExchangeMode::automatic), 1000);
  auto const all = run(b, config(Precision::fp32, gpus, multigpu::Threading::workers, multigpu::ExchangeMode::automatic), 1000);
  EXPECT_TRUE(test::bitwise_equal(one, all));
}

TEST(MultiGpu, TopologyIsReported) {
  int const gpus = gpu_count();
  if (gpus < 2) GTEST_SKIP() << "needs 2 GPUs, " << gpus << " visible";
  std::vector<int> d;
  for (int i = 0; i < gpus; ++i) d.push_back(i);
  auto const t = gpu::query_topology(d);
  ASSERT_EQ(t.can_access.size(), std::size_t(gpus));
  for (int i = 0; i < gpus; ++i) EXPECT_TRUE(t.can_access[i][i]);
}

}  // namespace
}  // namespace nbody
