// tests/test_multidevice.cpp - partitioning N bodies over devices, what a Simulation refuses, which
// exchange it picks, and the watchdog on its waits.
// The properties of every layout (bitwise equal to one device) are in test_layouts.cpp.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "core/errors.h"
#include "multigpu/exchange_choice.h"
#include "multigpu/partition.h"
#include "multigpu/scheduler.h"
#include "multigpu/simulation.h"
#include "multigpu/watchdog.h"
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

namespace nbody {
namespace {

using multigpu::ExchangeConditions;
using multigpu::ExchangeMode;

// Two distinct GPUs that reach each other, one process alone, nothing in the environment.
ExchangeConditions two_gpus() {
  ExchangeConditions c;
  c.devices = 2;
  return c;
}

std::string refusal(const ExchangeConditions& c) {
  try {
    multigpu::choose_exchange(ExchangeMode::direct, c);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(ExchangeChoice, AutoIsDirectOnlyWhereNothingCanStandBetweenADriftAndItsForces) {
  EXPECT_EQ(multigpu::choose_exchange(ExchangeMode::automatic, two_gpus()), ExchangeMode::direct);
  ExchangeConditions c = two_gpus();
  c.all_pairs_peer = false;
  EXPECT_EQ(multigpu::choose_exchange(ExchangeMode::automatic, c), ExchangeMode::staged);
  c = two_gpus();
  c.devices = 17;  // more peers than a drift stores into
  EXPECT_EQ(multigpu::choose_exchange(ExchangeMode::automatic, c), ExchangeMode::peer);

  std::vector<std::pair<const char*, ExchangeConditions>> hazards(6, {"", two_gpus()});
  hazards[0].first = "CUDA_LAUNCH_BLOCKING", hazards[0].second.launch_blocking = true;
  hazards[1].first = "NBODY_DEBUG_SYNC", hazards[1].second.debug_sync = true;  // one host thread by default
  hazards[2].first = "MPS", hazards[2].second.mps = true;
  hazards[3].first = "3 ranks on this host share its 2 GPU(s)";
  hazards[3].second.local_ranks = 3, hazards[3].second.host_gpus = 2;
  hazards[4].first = "GPU 1 of rank 0 is also used by rank 1";
  hazards[4].second.local_ranks = 2, hazards[4].second.host_gpus = 4;
  hazards[4].second.shared_gpu = "GPU 1 of rank 0 is also used by rank 1";
  hazards[5].first = "CUDA_LAUNCH_BLOCKING";  // with worker threads too: a blocked launch is a blocked launch
  hazards[5].second.launch_blocking = true, hazards[5].second.one_host_thread = false;
  for (auto const& [reason, conditions] : hazards) {
    EXPECT_EQ(multigpu::choose_exchange(ExchangeMode::automatic, conditions), ExchangeMode::peer) << reason;
    std::string const why = refusal(conditions);
    EXPECT_EQ(why.rfind("--exchange direct: ", 0), 0u) << reason << ": " << why;
    EXPECT_NE(why.find(reason), std::string::npos) << why;
    EXPECT_NE(why.find("; use peer"), std::string::npos) << why;
    // Peer copies and staging have no wait on the GPU: never refused.
    EXPECT_EQ(multigpu::choose_exchange(ExchangeMode::peer, conditions), ExchangeMode::peer) << reason;
    EXPECT_EQ(multigpu::choose_exchange(ExchangeMode::staged, conditions), ExchangeMode::staged) << reason;
  }
  c = two_gpus();
  c.launch_blocking = true;
  EXPECT_EQ(refusal(c),
            "--exchange direct: CUDA_LAUNCH_BLOCKING=1 makes each launch wait for the GPU, so a GPU waiting for a "
            "peer's drift would never see it; use peer");
}

TEST(ExchangeChoice, HazardsApplyOnlyWhereAGpuWaitsOnTheGpuForAnother) {
  ExchangeConditions c = two_gpus();
  c.debug_sync = true;
  c.one_host_thread = false;  // each device's thread waits only for its own launches
  EXPECT_EQ(multigpu::choose_exchange(ExchangeMode::automatic, c), ExchangeMode::direct);
  EXPECT_EQ(multigpu::choose_exchange(ExchangeMode::direct, c), ExchangeMode::direct);
  for (bool distinct : {false, true}) {
    c = two_gpus();
    c.launch_blocking = c.debug_sync = c.mps = true;
    c.distinct_gpus = distinct;  // engines sharing one GPU are ordered by events
    c.devices = distinct ? 1 : 2;  // and one device exchanges nothing
    EXPECT_EQ(multigpu::direct_exchange_hazard(c), "");
    EXPECT_EQ(multigpu::choose_exchange(ExchangeMode::direct, c), ExchangeMode::direct);
  }
  c = two_gpus();
  c.local_ranks = 2, c.host_gpus = 2;  // a GPU each
  EXPECT_EQ(multigpu::direct_exchange_hazard(c), "");
  c.all_pairs_peer = false;
  EXPECT_NE(refusal(c).find("peer access"), std::string::npos) << refusal(c);
}

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (had_)
      setenv(name_, old_.c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

TEST(ExchangeChoice, TheProcessConditionsComeFromTheEnvironment) {
  {
    ScopedEnv blocking("CUDA_LAUNCH_BLOCKING", "1"), pipe("CUDA_MPS_PIPE_DIRECTORY", "/var/run/mps");
    auto const c = multigpu::process_exchange_conditions();
    EXPECT_TRUE(c.launch_blocking);
    EXPECT_TRUE(c.mps);
  }
  ScopedEnv blocking("CUDA_LAUNCH_BLOCKING", "0"), pipe("CUDA_MPS_PIPE_DIRECTORY", nullptr);
  auto const c = multigpu::process_exchange_conditions();
  EXPECT_FALSE(c.launch_blocking);
  if (!std::filesystem::exists("/tmp/nvidia-mps")) {
    EXPECT_FALSE(c.mps);
  }
}

// The watchdog, on devices that are functions: a device that never finishes is named after the
// bound, its waits are given up first, and one that finishes in time is waited for.
constexpr double kTestMargin = 0.2;  // seconds: the wait below is given up after about this

TEST(Watchdog, NamesTheDeviceThatHasNotFinishedAfterTheBoundAndGivesUpFirst) {
  multigpu::Watchdog w(kTestMargin);
  w.set_step_estimate(0.001);
  w.enqueued(41, 2);
  bool gave_up = false;
  auto const start = std::chrono::steady_clock::now();
  try {
    w.wait(
        3, [&](std::size_t d) { return d != 1 || gave_up; }, [](std::size_t d) { return "host device " + std::to_string(d); },
        [&] { gave_up = true; });
    FAIL() << "a device that never finished was waited for";
  } catch (const RuntimeFailure& e) {
    std::string const what = e.what();
    EXPECT_EQ(what.rfind("host device 1 has not finished steps 41-42 after ", 0), 0u) << what;
    EXPECT_EQ(what.find("host device 0"), std::string::npos) << what;
    EXPECT_NE(what.find("0.2 s as configured"), std::string::npos) << what;
  }
  double const waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(gave_up);
  EXPECT_GE(waited, kTestMargin);
  EXPECT_LT(waited, kTestMargin + 2.0);  // measured 0.20 s

  // A device that finishes within the bound is waited for, and its steps become a sample.
  multigpu::Watchdog patient(kTestMargin);
  patient.enqueued(1, 1);
  auto const until = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
  patient.wait(
      1, [&](std::size_t) { return std::chrono::steady_clock::now() > until; }, [](std::size_t) { return ""; },
      [] { ADD_FAILURE() << "gave up a device that finished in time"; });
  EXPECT_FALSE(patient.pending());
  EXPECT_GE(patient.median_step_seconds(), 0.05);
}

TEST(Watchdog, DefaultMarginIsAMinuteOrAHundredMedianSteps) {
  ScopedEnv unset("NBODY_WATCHDOG_SECONDS", nullptr);
  multigpu::Watchdog w(multigpu::watchdog_seconds(0.0));
  w.set_step_estimate(0.001);
  EXPECT_DOUBLE_EQ(w.margin_seconds(), 60.0);
  w.set_step_estimate(2.0);
  EXPECT_DOUBLE_EQ(w.margin_seconds(), 200.0);
  w.enqueued(1, 10);  // ten steps at 2 s are due after 20 s, and overdue 200 s later
  auto const due = std::chrono::duration<double>(w.deadline() - std::chrono::steady_clock::now()).count();
  EXPECT_GT(due, 219.0);
  EXPECT_LT(due, 221.0);
  EXPECT_FALSE(w.overdue());
}

TEST(Watchdog, TheMarginIsConfigurableAndABadOneIsRefusedByName) {
  {
    ScopedEnv set("NBODY_WATCHDOG_SECONDS", "2.5");
    EXPECT_DOUBLE_EQ(multigpu::watchdog_seconds(0.0), 2.5);
    EXPECT_DOUBLE_EQ(multigpu::watchdog_seconds(7.0), 7.0);  // the configuration's own value comes first
  }
  // Past 1e9 s (31 years) no bound, and a deadline that far overflows the clock's time points.
  for (const char* bad : {"abc", "0", "-1", "5s", "inf", "nan", "1e30"}) {
    ScopedEnv set("NBODY_WATCHDOG_SECONDS", bad);
    try {
      (void)multigpu::watchdog_seconds(0.0);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()), std::string("NBODY_WATCHDOG_SECONDS=") + bad + ": must be a number of seconds above "
                                        "0 and at most 1e9 (how long a wait for the devices may outlast its steps)");
    }
    multigpu::SimulationConfig c;
    c.backend = sim::Backend::cpu;
    EXPECT_THROW(multigpu::Simulation(test::scenario("plummer", 10),
                                      sim::make_step_program({sim::Integrator::leapfrog, 0.01, 1.0}), c),
                 InputError)
        << bad;
  }
}

}  // namespace
}  // namespace nbody
