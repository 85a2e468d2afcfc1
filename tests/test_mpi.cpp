// tests/test_mpi.cpp - one simulation over MPI ranks, run by mpirun with 1, 2 and 3 ranks: every
// layout of ranks x devices gives the positions of one process, bit for bit, and a failure on one
// rank reaches every rank. Each rank runs every test; rank 0 prints.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/errors.h"
#include "core/ranks.h"
#include "mpi/mpi_ranks.h"
#include "multigpu/rank_exchange.h"
#include "multigpu/scheduler.h"
#include "multigpu/simulation.h"
#include "sim/engines/engine.h"
#include "sim/physics/integrator.h"
#include "test_support.h"

namespace nbody {
namespace {

struct Layout {
  std::size_t bodies;
  int devices_per_rank;
  multigpu::Threading threading;
  sim::Integrator integrator;
};

std::string layout_name(const Layout& l) {
  return "N" + std::to_string(l.bodies) + "_" + std::to_string(l.devices_per_rank) + "dev_" + name_of(l.threading) +
         "_" + name_of(l.integrator);
}

class RanksLayout : public ::testing::TestWithParam<Layout> {};

// The state after `steps` steps (taken in uneven calls of advance) on `config`.
sim::BodySet evolve(const sim::BodySet& initial, const sim::StepProgram& program, multigpu::SimulationConfig config,
                    std::uint64_t steps) {
  config.engine.cpu_threads = 1;  // several ranks share this machine's cores
  multigpu::Simulation s(initial, program, config);
  std::uint64_t done = 0;
  for (std::uint64_t chunk = 1; done < steps; chunk = chunk * 2 + 1) {
    std::uint64_t const n = std::min(chunk, steps - done);
    s.advance(n);
    done += n;
  }
  s.synchronize();
  return s.state();
}

TEST_P(RanksLayout, PositionsAreBitwiseThoseOfOneProcess) {
  Layout const l = GetParam();
  sim::BodySet const initial = test::scenario("plummer", l.bodies);
  sim::StepProgram const program = sim::make_step_program({l.integrator, 0.01, 1.0});
  multigpu::SimulationConfig c;
  c.backend = sim::Backend::cpu;
  c.softening = 0.05;
  c.threading = l.threading;

  multigpu::SimulationConfig alone = c;  // one process, one device: no exchange at all
  alone.ranks = &solo_ranks();
  sim::BodySet const expected = evolve(initial, program, alone, 25);

  c.devices.assign(std::size_t(l.devices_per_rank), 0);
  sim::BodySet const spread = evolve(initial, program, c, 25);
  EXPECT_TRUE(test::bitwise_equal(spread, expected)) << "rank " << world().rank() << " of " << world().size();
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, RanksLayout,
    ::testing::Values(Layout{1001, 1, multigpu::Threading::single, sim::Integrator::leapfrog},   // N not divisible
                      Layout{1001, 2, multigpu::Threading::single, sim::Integrator::leapfrog},
                      Layout{1001, 2, multigpu::Threading::workers, sim::Integrator::leapfrog},
                      Layout{1001, 1, multigpu::Threading::workers, sim::Integrator::yoshida4},  // 3 drifts a step
                      Layout{5, 2, multigpu::Threading::workers, sim::Integrator::leapfrog},     // N < devices
                      Layout{2, 1, multigpu::Threading::single, sim::Integrator::leapfrog}),
    [](const ::testing::TestParamInfo<Layout>& p) { return layout_name(p.param); });

TEST(Ranks, DiagnosticsAndAccelerationsAreEveryRanksAndAgree) {
  sim::BodySet const initial = test::scenario("plummer", 700);
  sim::StepProgram const program = sim::make_step_program({sim::Integrator::leapfrog, 0.01, 1.0});
  multigpu::SimulationConfig c;
  c.backend = sim::Backend::cpu;
  c.engine.cpu_threads = 1;
  c.devices.assign(2, 0);
  multigpu::Simulation spread(initial, program, c);
  spread.advance(3);
  sim::Diagnostics const d = spread.diagnostics();
  auto const a = spread.accelerations();
  auto const t = [&] {
    spread.start_timing(2);
    spread.advance(2);
    spread.synchronize();
    return spread.step_times_ms();
  }();
  // EXPECT, not ASSERT, up to the last collective call: a rank that returned early would leave the
  // others waiting in it.
  EXPECT_EQ(spread.all_slices().size(), std::size_t(2 * world().size()));
  EXPECT_EQ(t.size(), spread.all_slices().size());  // every device of every rank
  for (auto const& device : t) EXPECT_EQ(device.size(), 2u);

  // The same layout of devices in one process: the potential's partial sums go in the same order.
  multigpu::SimulationConfig alone = c;
  alone.ranks = &solo_ranks();
  alone.devices.assign(spread.all_slices().size(), 0);
  multigpu::Simulation one(initial, program, alone);
  one.advance(3);
  sim::Diagnostics const e = one.diagnostics();
  EXPECT_EQ(d.potential, e.potential);
  EXPECT_EQ(d.kinetic, e.kinetic);
  auto const b = one.accelerations();
  EXPECT_EQ(a.size(), b.size());
  if (a.size() == b.size()) {
    EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(Vec3d)));
  }

  // Every rank holds the same answer: rank 0's energy, compared on every rank.
  std::string const mine(reinterpret_cast<const char*>(&d.potential), sizeof d.potential);
  for (auto const& theirs : world().all_gather(mine)) EXPECT_EQ(theirs, mine);
}

TEST(Ranks, AFailureOnOneRankReachesEveryRank) {
  int const last = world().size() - 1;
  try {
    agree(world(), [&] {
      if (world().rank() == last) throw InputError("--bodies 7: too few for rank " + std::to_string(last));
    });
    FAIL() << "no failure reported";
  } catch (const JobFailure& e) {
    // With several ranks, the one every rank throws, naming the rank.
    EXPECT_GT(world().size(), 1) << "with one rank the InputError passes unchanged";
    EXPECT_NE(std::string(e.what()).find("rank " + std::to_string(last) + " of"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("too few for rank"), std::string::npos) << e.what();
    EXPECT_EQ(e.exit_code, 2);
  } catch (const InputError& e) {
    EXPECT_EQ(world().size(), 1) << "with several ranks every rank throws JobFailure: " << e.what();
  }
}

TEST(Ranks, RanksThatWouldSimulateDifferentThingsAreRefused) {
  sim::BodySet const initial = test::scenario("plummer", 100);
  // Rank 1 takes another time step: every rank refuses, before any work.
  double const dt = world().rank() == 1 ? 0.02 : 0.01;
  multigpu::SimulationConfig c;
  c.backend = sim::Backend::cpu;
  c.engine.cpu_threads = 1;
  auto const make = [&] {
    multigpu::Simulation s(initial, sim::make_step_program({sim::Integrator::leapfrog, dt, 1.0}), c);
  };
  if (world().size() == 1) {
    EXPECT_NO_THROW(make());
  } else {
    try {
      make();
      FAIL() << "ranks with different time steps were accepted";
    } catch (const JobFailure& e) {
      EXPECT_NE(std::string(e.what()).find("rank 1 would simulate"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("dt 0.02"), std::string::npos) << e.what();
    }
  }
}

TEST(Ranks, WeightsCoverEveryRanksDevices) {
  sim::BodySet const initial = test::scenario("plummer", 999);
  sim::StepProgram const program = sim::make_step_program({sim::Integrator::leapfrog, 0.01, 1.0});
  multigpu::SimulationConfig c;
  c.backend = sim::Backend::cpu;
  c.engine.cpu_threads = 1;
  c.weights.assign(std::size_t(world().size()), 1.0);
  c.weights.back() = 2.0;  // the last rank takes twice the bodies
  multigpu::Simulation s(initial, program, c);
  auto const all = s.all_slices();
  ASSERT_EQ(all.size(), std::size_t(world().size()));
  if (world().size() > 1) {
    EXPECT_GT(all.back().count, all.front().count);
  }
  EXPECT_EQ(s.slices().front().begin, all[std::size_t(world().rank())].begin);

  c.weights.push_back(1.0);  // one too many: refused on every rank alike
  if (world().size() == 1) {
    EXPECT_THROW(multigpu::Simulation(initial, program, c), InputError);
  } else {
    EXPECT_THROW(multigpu::Simulation(initial, program, c), JobFailure);
  }
}

// A worker thread that fails under MPI ends the job (the other ranks are mid-step and cannot
// learn of it in time), and the failing rank's own error reaches stderr before it does. Since it
// ends the job, ctest's runs of this program leave it out (DISABLED_): tests/mpi_cli.py
// worker_failure runs it alone under mpirun and reads what the ranks printed.
TEST(Ranks, DISABLED_AWorkerFailureEndsTheJobWithItsError) {
  if (world().size() == 1) GTEST_SKIP() << "needs several ranks";
  // 2 host devices a rank, over 100 bodies: the exchange between ranks of a real run.
  std::size_t const bodies = 100, ranks = std::size_t(world().size());
  std::vector<Slice> rank_ranges;
  for (std::size_t r = 0; r < ranks; ++r) rank_ranges.push_back({bodies * r / ranks, bodies * (r + 1) / ranks - bodies * r / ranks});
  Slice const mine = rank_ranges[std::size_t(world().rank())];
  std::vector<std::unique_ptr<sim::SliceEngine>> engines;
  std::vector<sim::SliceEngine*> raw;
  for (std::size_t d = 0; d < 2; ++d) {
    sim::EngineConfig e;
    e.bodies = bodies;
    e.slice = {mine.begin + mine.count * d / 2, mine.count * (d + 1) / 2 - mine.count * d / 2};
    e.engine.cpu_threads = 1;
    e.split_forces = true;
    engines.push_back(sim::make_engine(sim::Backend::cpu, e));
    raw.push_back(engines.back().get());
  }
  auto exchange = multigpu::make_rank_exchange(world(), multigpu::make_host_exchange(raw), multigpu::make_host_staging(raw),
                                               rank_ranges, raw.front()->bytes_per_body(), raw.size());
  auto scheduler = multigpu::make_scheduler(multigpu::Threading::workers, raw, *exchange);
  int const last = world().size() - 1;
  scheduler->for_each_device([&](int d) {
    if (world().rank() == last && d == 1)
      throw RuntimeFailure("device 1 of rank " + std::to_string(last) + ": a failure injected into its worker");
  });
  // The other ranks go on into a collective call the failing rank never joins: the job ends there.
  world().max(0);
  ADD_FAILURE() << "rank " << world().rank() << " went on after a worker of rank " << last << " failed";
}

}  // namespace
}  // namespace nbody

namespace {
// The other ranks print their failures only, each line naming the rank.
class RankFailurePrinter : public ::testing::EmptyTestEventListener {
  void OnTestStart(const ::testing::TestInfo& t) override { test_ = std::string(t.test_suite_name()) + "." + t.name(); }
  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (r.failed())
      std::fprintf(stderr, "rank %d: %s: %s:%d: %s\n", nbody::world().rank(), test_.c_str(),
                   r.file_name() ? r.file_name() : "", r.line_number(), r.message());
  }
  std::string test_;
};
}  // namespace

// MPI is started before the tests and finalised after them; rank 0 prints the results, the other
// ranks their failures (which also fail rank 0's exit status).
int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  auto const mpi = nbody::mpi::start(argc, argv);
  if (nbody::world().rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new RankFailurePrinter);
  }
  int const status = RUN_ALL_TESTS();
  // Every rank's verdict: a failure anywhere fails rank 0's exit status too.
  return nbody::world().max(status);
}
