// tests/test_hermite_gpu.cpp - the CUDA Hermite engine (label gpu; skipped where no CUDA device is visible): its
// forces and jerks against a direct fp64 loop, and the bits it keeps across launch shapes, active-block sizes,
// slices of one GPU and graph or stream launches.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "gpu/check.h"
#include "gpu/devices.h"
#include "multigpu/simulation.h"
#include "sim/engines/hermite_cuda.h"
#include "sim/engines/hermite_engine.h"
#include "sim/kernels/segments.h"
#include "sim/physics/diagnostics.h"
#include "sim/physics/hermite.h"
#include "sim/physics/integrator.h"
#include "test_support.h"

namespace nbody {
namespace {

using sim::hermite::ActiveBody;
using sim::hermite::ForceJerk;

bool have_gpu() { return !gpu::devices().empty(); }
#define REQUIRE_GPU() \
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device visible"

sim::HermiteEngineConfig config_for(std::size_t n, Precision p, double softening, Slice slice = {0, 0}) {
  sim::HermiteEngineConfig c;
  c.bodies = n;
  c.slice = slice.count ? slice : Slice{0, n};
  c.softening = softening;
  c.engine.precision = p;
  c.device = 0;
  return c;
}

std::unique_ptr<sim::CudaHermiteEngine> cuda_engine(const sim::HermiteEngineConfig& c) {
  auto e = sim::make_hermite_engine(sim::Backend::cuda, c);
  auto* cuda = dynamic_cast<sim::CudaHermiteEngine*>(e.get());
  if (!cuda) throw std::logic_error("make_hermite_engine(cuda) made no CudaHermiteEngine");
  e.release();
  return std::unique_ptr<sim::CudaHermiteEngine>(cuda);
}

ActiveBody active_of(const sim::BodySet& b, std::size_t i) {
  auto const& p = b.pos_mass[i];
  auto const& v = b.velocity[i];
  return {p.x, p.y, p.z, p.w, v.x, v.y, v.z, i};
}

// The direct fp64 loop: force, jerk and potential of body i from every other body, with the one pair function.
ForceJerk direct(const sim::BodySet& b, std::size_t i, double eps2) {
  ForceJerk f{};
  auto const& pi = b.pos_mass[i];
  auto const& vi = b.velocity[i];
  for (std::size_t j = 0; j < b.size(); ++j) {
    auto const& pj = b.pos_mass[j];
    auto const& vj = b.velocity[j];
    sim::hermite::add_terms(f, sim::hermite::pair_force_jerk<double>(pj.x - pi.x, pj.y - pi.y, pj.z - pi.z,
                                                                     vj.x - vi.x, vj.y - vi.y, vj.z - vi.z, pj.w,
                                                                     eps2, j == i ? 1.0 : 0.0));
  }
  return f;
}

// Every device's partials for `list` added in group order, from zero (device order is group order).
std::vector<ForceJerk> totals(const std::vector<sim::HermiteEngine*>& engines, const std::vector<ActiveBody>& list) {
  for (auto* e : engines) {
    e->set_active(list.data(), list.size());
    e->partial_forces();
  }
  std::vector<ForceJerk> t(list.size(), ForceJerk{});
  for (auto* e : engines) {
    const ForceJerk* p = e->partials();
    for (std::size_t g = 0; g < e->own_groups(); ++g)
      for (std::size_t k = 0; k < list.size(); ++k) sim::hermite::add_partial(t[k], p[g * list.size() + k]);
  }
  return t;
}

// The bodies of `b` (not predicted: the engines' j arrays hold the uploaded state until the first predict).
std::vector<ForceJerk> forces_of(sim::HermiteEngine& e, const sim::BodySet& b, const std::vector<std::size_t>& active) {
  std::vector<ActiveBody> list;
  for (std::size_t i : active) list.push_back(active_of(b, i));
  return totals({&e}, list);
}

std::vector<std::size_t> random_block(std::size_t n, std::size_t count, std::uint64_t seed) {
  std::vector<std::size_t> all(n);
  for (std::size_t i = 0; i < n; ++i) all[i] = i;
  std::mt19937_64 rng(seed);
  std::shuffle(all.begin(), all.end(), rng);
  all.resize(std::min(count, n));
  std::sort(all.begin(), all.end());
  return all;
}

struct Errors {
  double acceleration = 0, jerk = 0, potential = 0;
};
// Relative L2 errors of acceleration, jerk and potential over the block.
Errors errors(const std::vector<ForceJerk>& got, const std::vector<ForceJerk>& ref) {
  double ea = 0, ra = 0, ej = 0, rj = 0, ep = 0, rp = 0;
  for (std::size_t k = 0; k < got.size(); ++k) {
    auto sq = [](double x, double y, double z) { return x * x + y * y + z * z; };
    ea += sq(got[k].ax - ref[k].ax, got[k].ay - ref[k].ay, got[k].az - ref[k].az);
    ra += sq(ref[k].ax, ref[k].ay, ref[k].az);
    ej += sq(got[k].jx - ref[k].jx, got[k].jy - ref[k].jy, got[k].jz - ref[k].jz);
    rj += sq(ref[k].jx, ref[k].jy, ref[k].jz);
    ep += (got[k].phi - ref[k].phi) * (got[k].phi - ref[k].phi);
    rp += ref[k].phi * ref[k].phi;
  }
  auto rel = [](double e, double r) { return r > 0 ? std::sqrt(e / r) : std::sqrt(e); };  // one body: absolute
  return {rel(ea, ra), rel(ej, rj), rel(ep, rp)};
}

::testing::AssertionResult same_bits(const std::vector<ForceJerk>& a, const std::vector<ForceJerk>& b) {
  if (a.size() != b.size()) return ::testing::AssertionFailure() << "sizes " << a.size() << " and " << b.size();
  for (std::size_t k = 0; k < a.size(); ++k) {
    if (std::memcmp(&a[k], &b[k], 7 * sizeof(double)) != 0)
      return ::testing::AssertionFailure() << "entry " << k << " differs: ax " << a[k].ax << " vs " << b[k].ax
                                           << ", jx " << a[k].jx << " vs " << b[k].jx;
  }
  return ::testing::AssertionSuccess();
}

// Bounds of the relative L2 error against the direct fp64 loop. fp64: the pair's formula with fused accumulation
// and fp64 sums in another order, r^-1 from the hardware estimate with a second-order correction (sim/kernels/
// hermite_pair.cuh). fp32: pair arithmetic in fp32 on double-single differences (within about one fp32 ulp of the fp64
// difference), rsqrtf; the jerk, a difference of two terms of one size, loses more. The CPU engine's same arithmetic
// (correctly rounded 1/sqrt) measured, worst over these cases: fp64 4.7e-15 (a, jerk, phi), fp32 6.5e-8 (a),
// 3.9e-7 (jerk), 4.8e-8 (phi). The GPU's values are printed and recorded (RecordProperty) by each case.
constexpr double kFp64ForceBound = 1e-13;
constexpr double kFp32AccelerationBound = 1e-6;
constexpr double kFp32JerkBound = 4e-6;

struct ForceCase {
  Precision precision;
  std::size_t n, active;
  double softening;
};

class HermiteGpuForces : public ::testing::TestWithParam<ForceCase> {};

TEST_P(HermiteGpuForces, MatchTheDirectFp64Loop) {
  REQUIRE_GPU();
  auto const& c = GetParam();
  sim::BodySet const b = test::scenario("plummer", c.n);
  auto e = cuda_engine(config_for(c.n, c.precision, c.softening));
  e->upload_unstarted(b);
  auto const block = random_block(c.n, c.active, 7 + c.active);
  auto const got = forces_of(*e, b, block);
  std::vector<ForceJerk> ref;
  for (std::size_t i : block) ref.push_back(direct(b, i, c.softening * c.softening));
  Errors const err = errors(got, ref);
  bool const fp64 = c.precision == Precision::fp64;
  EXPECT_LT(err.acceleration, fp64 ? kFp64ForceBound : kFp32AccelerationBound);
  EXPECT_LT(err.jerk, fp64 ? kFp64ForceBound : kFp32JerkBound);
  EXPECT_LT(err.potential, fp64 ? kFp64ForceBound : kFp32AccelerationBound);
  if (c.n > 1 && c.active > 1) {
    EXPECT_GT(err.acceleration + err.jerk, 0.0) << "bit-identical to the direct loop: suspicious";
  }
  for (auto [name, value] : {std::pair{"acceleration_l2", err.acceleration}, std::pair{"jerk_l2", err.jerk},
                             std::pair{"potential_l2", err.potential}}) {
    char measured[32];
    std::snprintf(measured, sizeof measured, "%.3e", value);
    RecordProperty(name, measured);
  }
  std::printf("hermite %s N=%zu active=%zu softening=%g: relative L2 a %.3e, jerk %.3e, phi %.3e\n",
              name_of(c.precision).c_str(), c.n, block.size(), c.softening, err.acceleration, err.jerk, err.potential);
}

std::vector<ForceCase> force_cases() {
  std::vector<ForceCase> v;
  for (auto p : {Precision::fp64, Precision::fp32})
    for (ForceCase c : {ForceCase{p, 1, 1, 0.01}, ForceCase{p, 7, 3, 0.0}, ForceCase{p, 1000, 16, 0.01},
                        ForceCase{p, 3000, 64, 1e-4}, ForceCase{p, 3000, 3000, 0.0}, ForceCase{p, 20000, 300, 0.01},
                        ForceCase{p, 8192, 8192, 0.01}})
      v.push_back(c);
  return v;
}

INSTANTIATE_TEST_SUITE_P(Blocks, HermiteGpuForces, ::testing::ValuesIn(force_cases()), [](auto const& param_info) {
  auto const& c = param_info.param;
  return name_of(c.precision) + "_N" + std::to_string(c.n) + "_active" + std::to_string(c.active) +
         (c.softening == 0 ? "_eps0" : "");
});

// The same bodies' sums, bit for bit, whatever the block they are part of and whatever grid the force kernel runs
// on (1 block, 7, as many as stay resident, far more): at N = 20,000 (groups of 8 spans) blocks of 1, 2, 5, 16 and
// 50 bodies (the second of its items of 32 holding 18) are cut per span on the resident grid and per group on 1
// block, every body per group (sim/kernels/hermite.cuh). Per span, a block of fewer than 32 bodies sums its runs a
// power of two lanes a run: 1, 2, 8 and 16 lanes here, so 120, 112, 64 and 0 of a block's 128 threads sit out.
TEST(HermiteGpu, SumsDoNotDependOnTheBlockOrTheLaunchShape) {
  REQUIRE_GPU();
  for (auto p : {Precision::fp64, Precision::fp32}) {
    for (std::size_t n : {1000u, 20000u}) {
      sim::BodySet const b = test::scenario("plummer", n);
      auto e = cuda_engine(config_for(n, p, 0.01));
      e->upload_unstarted(b);
      std::vector<std::size_t> all(n);
      for (std::size_t i = 0; i < n; ++i) all[i] = i;
      auto const every = forces_of(*e, b, all);
      for (std::size_t size : {1u, 2u, 5u, 16u, 50u}) {
        e->set_force_grid(0);
        auto const small = random_block(n, size, 3);
        auto const base = forces_of(*e, b, small);
        std::string const what = std::to_string(size) + " bodies, " + name_of(p) + " N=" + std::to_string(n);
        std::vector<ForceJerk> picked;
        for (std::size_t i : small) picked.push_back(every[i]);
        EXPECT_TRUE(same_bits(base, picked)) << what << " against every body";
        for (int grid : {1, 7, 0, 100000}) {
          e->set_force_grid(grid);
          EXPECT_TRUE(same_bits(base, forces_of(*e, b, small))) << what << ", grid " << grid;
          std::vector<ForceJerk> again;
          auto const whole = forces_of(*e, b, all);
          for (std::size_t i : small) again.push_back(whole[i]);
          EXPECT_TRUE(same_bits(base, again)) << "every body, grid " << grid << ", " << what;
        }
      }
    }
  }
}

// ---- block steps: the protocol over engines, and advance_blocks ----

// One block step at a time through the multi-device protocol over `engines` (slices in index order), as the host
// drives it: each engine's packed list gathered in device order, the totals in group order, each engine's own run.
struct Protocol {
  const std::vector<sim::HermiteEngine*>& engines;
  std::vector<ActiveBody> list;

  void gather(double t, bool all) {
    list.clear();
    for (auto* e : engines) {
      std::size_t const n = e->pack_active(t, all);
      list.insert(list.end(), e->own_active_data(), e->own_active_data() + n);
    }
  }
  void finish(double t, bool start) {
    auto const tot = totals(engines, list);
    std::size_t k = 0;
    for (auto* e : engines) {
      Slice const s = e->config().slice;
      std::size_t own = 0;
      while (k + own < list.size() && list[k + own].index < s.end()) ++own;
      if (start)
        e->initialise(tot.data() + k, own, t);
      else
        e->correct(tot.data() + k, own, t);
      k += own;
    }
  }
  // The start from `b`: every body active, the start step.
  void start(const sim::BodySet& b) {
    for (auto* e : engines) e->upload_unstarted(b);
    gather(0.0, true);
    finish(0.0, true);
  }
  // `blocks` block steps; returns the last block's time.
  double blocks(std::size_t count) {
    double t = 0.0;
    for (std::size_t s = 0; s < count; ++s) {
      t = INFINITY;
      for (auto* e : engines) t = std::min(t, e->own_next_time());
      for (auto* e : engines) e->predict(t);
      gather(t, false);
      finish(t, false);
    }
    return t;
  }
};

// The start and `blocks` block steps through the multi-device protocol over `engines`.
void protocol_run(const std::vector<sim::HermiteEngine*>& engines, const sim::BodySet& b, std::size_t blocks) {
  Protocol p{engines, {}};
  p.start(b);
  p.blocks(blocks);
}

struct Downloaded {
  sim::BodySet bodies;
  sim::hermite::HermiteState state;
};
Downloaded download(const std::vector<sim::HermiteEngine*>& engines, std::size_t n) {
  Downloaded d;
  d.bodies.pos_mass.resize(n);
  d.bodies.velocity.resize(n);
  d.state.resize(n);
  for (auto* e : engines) e->download(d.bodies, d.state);
  return d;
}

::testing::AssertionResult same_state(const Downloaded& a, const Downloaded& b) {
  auto r = test::bitwise_equal(a.bodies, b.bodies);
  if (!r) return r;
  for (std::size_t i = 0; i < a.state.size(); ++i)
    if (std::memcmp(&a.state.acceleration[i], &b.state.acceleration[i], sizeof(Vec3d)) != 0 ||
        std::memcmp(&a.state.jerk[i], &b.state.jerk[i], sizeof(Vec3d)) != 0 || a.state.time[i] != b.state.time[i] ||
        a.state.step[i] != b.state.step[i])
      return ::testing::AssertionFailure() << "Hermite state of body " << i << " differs";
  return ::testing::AssertionSuccess();
}

// N = 5,000: 10 groups of 512 bodies, 2 spans each (so every way of cutting the force pass can occur); slices on
// group boundaries.
constexpr std::size_t kLayoutBodies = 5000;
constexpr std::size_t kLayoutBlocks = 60;

// One GPU cut into 2 and 3 engines gives the bits of one engine, through the same protocol.
TEST(HermiteGpu, SlicesOfOneGpuMatchOneEngineBitwise) {
  REQUIRE_GPU();
  std::size_t const n = kLayoutBodies, L = sim::kernels::segment_layout(n).length;
  sim::BodySet const b = test::scenario("plummer", n);
  for (auto p : {Precision::fp64, Precision::fp32}) {
    auto one = cuda_engine(config_for(n, p, 0.01));
    protocol_run({one.get()}, b, kLayoutBlocks);
    Downloaded const base = download({one.get()}, n);
    EXPECT_GT(*std::max_element(base.state.time.begin(), base.state.time.end()), 0.0) << "no block step done";
    for (std::vector<std::size_t> cuts : {std::vector<std::size_t>{5 * L}, std::vector<std::size_t>{3 * L, 7 * L}}) {
      std::vector<std::unique_ptr<sim::CudaHermiteEngine>> owned;
      std::vector<sim::HermiteEngine*> engines;
      std::size_t begin = 0;
      cuts.push_back(n);
      for (std::size_t end : cuts) {
        owned.push_back(cuda_engine(config_for(n, p, 0.01, Slice{begin, end - begin})));
        engines.push_back(owned.back().get());
        begin = end;
      }
      protocol_run(engines, b, kLayoutBlocks);
      EXPECT_TRUE(same_state(base, download(engines, n))) << cuts.size() << " slices of GPU 0, " << name_of(p);
      std::uint64_t evaluations = 0;
      for (auto* e : engines) evaluations += e->counters().force_evaluations;
      EXPECT_EQ(evaluations, one->counters().force_evaluations);
    }
  }
}

// The protocol's last stage on the devices: each slice's add_own_groups continues the sums of the slices before it
// (null on the first), and the last gives the host's sums of every slice's partials in group order, bit for bit.
TEST(HermiteGpu, AddOwnGroupsChainsTheGroupSumsAcrossSlices) {
  REQUIRE_GPU();
  std::size_t const n = kLayoutBodies, L = sim::kernels::segment_layout(n).length;
  sim::BodySet const b = test::scenario("plummer", n);
  for (auto p : {Precision::fp64, Precision::fp32}) {
    std::vector<std::unique_ptr<sim::CudaHermiteEngine>> owned;
    std::vector<sim::HermiteEngine*> engines;
    std::size_t begin = 0;
    for (std::size_t end : {3 * L, 7 * L, n}) {
      owned.push_back(cuda_engine(config_for(n, p, 0.01, Slice{begin, end - begin})));
      engines.push_back(owned.back().get());
      engines.back()->upload_unstarted(b);
      begin = end;
    }
    for (std::size_t count : {std::size_t(1), std::size_t(300), n}) {
      std::vector<ActiveBody> list;
      for (std::size_t i : random_block(n, count, 11 + count)) list.push_back(active_of(b, i));
      auto const host = totals(engines, list);  // set_active and partial_forces on every slice, then partials()
      std::vector<ForceJerk> chained(list.size());
      const ForceJerk* prefix = nullptr;
      for (auto* e : engines) {
        const ForceJerk* q = e->add_own_groups(prefix);
        std::copy_n(q, list.size(), chained.begin());
        prefix = chained.data();
      }
      EXPECT_TRUE(same_bits(host, chained)) << count << " active, " << name_of(p);
      // The same partials summed in the reverse group order differ: a wrong order would show. (fp64 only: fp32's
      // partials are sums of fp32 run sums, few enough bits that fp64 adds them exactly in any order.)
      if (count < 300 || p == Precision::fp32) continue;
      std::vector<ForceJerk> reversed(list.size(), ForceJerk{});
      for (auto it = engines.rbegin(); it != engines.rend(); ++it) {
        const ForceJerk* q = (*it)->partials();
        for (std::size_t g = (*it)->own_groups(); g-- > 0;)
          for (std::size_t k = 0; k < list.size(); ++k) sim::hermite::add_partial(reversed[k], q[g * list.size() + k]);
      }
      EXPECT_FALSE(same_bits(host, reversed)) << "the group order does not show in these bits, " << name_of(p);
    }
  }
}

// Two GPUs, one slice each (the protocol through the host): the bits of one engine.
TEST(HermiteGpu, TwoGpusMatchOneEngineBitwise) {
  REQUIRE_GPU();
  if (gpu::devices().size() < 2) GTEST_SKIP() << "needs 2 GPUs";
  std::size_t const n = kLayoutBodies, L = sim::kernels::segment_layout(n).length;
  sim::BodySet const b = test::scenario("plummer", n);
  for (auto p : {Precision::fp64, Precision::fp32}) {
    auto one = cuda_engine(config_for(n, p, 0.01));
    protocol_run({one.get()}, b, kLayoutBlocks);
    auto c0 = config_for(n, p, 0.01, Slice{0, 5 * L}), c1 = config_for(n, p, 0.01, Slice{5 * L, n - 5 * L});
    c1.device = 1;
    auto e0 = cuda_engine(c0), e1 = cuda_engine(c1);
    protocol_run({e0.get(), e1.get()}, b, kLayoutBlocks);
    EXPECT_TRUE(same_state(download({one.get()}, n), download({e0.get(), e1.get()}, n))) << name_of(p);
  }
}

// What describe() says of several CUDA engines of one process: one host thread runs the block steps of every slice
// on the devices (advance_together); workers, through the host.
const char* exchange_of(multigpu::Threading threading) {
  return threading == multigpu::Threading::single ? "exchange devices (block steps)" : "exchange host (block steps)";
}

// Two bodies on a head-on collision with no softening: the step falls below the floor, and the run stops naming the
// pair before another block step, on one GPU (advance_blocks) and on two engines on GPU 0, with either threading (one
// host thread: advance_together, the floor found on the devices; workers: the protocol, the floor read with the next
// times), a block step a call or many. Light bodies on wide orbits make four groups, so both engines hold some.
TEST(HermiteGpuSimulation, AStepBelowTheFloorStopsEveryLayoutAfterTheSameBlock) {
  REQUIRE_GPU();
  sim::BodySet const b = test::head_on_collision(197);
  ASSERT_EQ(sim::kernels::segment_layout(b.size()).count, 4u);
  sim::IntegratorParams ip;
  ip.integrator = sim::Integrator::hermite4;
  sim::StepProgram const program = sim::make_step_program(ip);
  std::uint64_t stopped_after = 0;
  double stopped_at = 0.0;
  for (std::vector<int> devices : {std::vector<int>{0}, std::vector<int>{0, 0}})
    for (auto threading : {multigpu::Threading::single, multigpu::Threading::workers})
      for (std::uint64_t chunk : {std::uint64_t(1), std::uint64_t(100000)}) {
        multigpu::SimulationConfig c;
        c.backend = sim::Backend::cuda;
        c.engine.precision = Precision::fp64;
        c.softening = 0.0;
        c.devices = devices;
        c.threading = threading;
        multigpu::Simulation s(b, program, c, multigpu::RunClock{0, b.time}, nullptr);
        std::string what;
        try {
          for (std::uint64_t k = 0; k < 100000; k += chunk) s.advance(chunk);  // the floor comes after 512
        } catch (const RuntimeFailure& e) {
          what = e.what();
        }
        std::string const where = std::to_string(devices.size()) + " engine(s), " + name_of(threading) + ", " +
                                  std::to_string(chunk) + " a call";
        EXPECT_NE(what.find("below the floor"), std::string::npos) << where << ": " << what;
        if (devices.size() == 2) {
          EXPECT_NE(s.describe().find(exchange_of(threading)), std::string::npos) << where << ": " << s.describe();
        }
        std::uint64_t const blocks = s.hermite_counters().block_steps;
        EXPECT_EQ(s.steps_done(), blocks) << where << ": the block step that gave the step is whole and counted";
        if (stopped_after == 0) stopped_after = blocks, stopped_at = s.time();
        EXPECT_EQ(blocks, stopped_after) << where;
        EXPECT_EQ(s.time(), stopped_at) << where;
      }
  EXPECT_GT(stopped_after, 0u);
}

// `blocks` block steps of `b` through multigpu::Simulation on CUDA `devices` (softening 0.01), and the state then.
Downloaded run_on(const sim::BodySet& b, const sim::StepProgram& program, std::vector<int> devices,
                  multigpu::Threading threading, Precision p, std::uint64_t blocks) {
  multigpu::SimulationConfig c;
  c.backend = sim::Backend::cuda;
  c.engine.precision = p;
  c.softening = 0.01;
  c.devices = std::move(devices);
  c.threading = threading;
  multigpu::Simulation s(b, program, c, multigpu::RunClock{0, b.time}, nullptr);
  s.advance(blocks);
  EXPECT_EQ(s.steps_done(), blocks);
  Downloaded d;
  s.hermite_state(d.bodies, d.state);
  return d;
}

// Through multigpu::Simulation (what the CLI runs): GPU 0 cut into 2 and 3 devices, with one host thread or a
// worker each, and two GPUs where there are, give the bits of one GPU (whose blocks run in advance_blocks). At 1,000
// bodies the start's force pass is one chunk, whose sums stay on the devices (initialise_from).
TEST(HermiteGpuSimulation, EveryLayoutOfTheGpusGivesTheBitsOfOne) {
  REQUIRE_GPU();
  for (std::size_t const n : {kLayoutBodies, std::size_t(1000)}) {
    SCOPED_TRACE("N = " + std::to_string(n));
    sim::BodySet const b = test::scenario("plummer", n);
    sim::IntegratorParams ip;
    ip.integrator = sim::Integrator::hermite4;
    sim::StepProgram const program = sim::make_step_program(ip);
    auto run = [&](std::vector<int> devices, multigpu::Threading threading, Precision p) {
      return run_on(b, program, std::move(devices), threading, p, kLayoutBlocks);
    };
    // One host thread runs the block steps of several slices on the devices; workers, through the host.
    {
      multigpu::SimulationConfig c;
      c.backend = sim::Backend::cuda;
      c.devices = {0, 0};
      for (auto threading : {multigpu::Threading::single, multigpu::Threading::workers}) {
        c.threading = threading;
        multigpu::Simulation s(b, program, c, multigpu::RunClock{0, b.time}, nullptr);
        EXPECT_NE(s.describe().find(exchange_of(threading)), std::string::npos) << s.describe();
      }
    }
    for (auto p : {Precision::fp64, Precision::fp32}) {
      Downloaded const one = run({0}, multigpu::Threading::single, p);
      std::vector<std::vector<int>> layouts{{0, 0}, {0, 0, 0}};
      if (gpu::devices().size() >= 2) layouts.push_back({0, 1});
      for (auto const& devices : layouts)
        for (auto threading : {multigpu::Threading::single, multigpu::Threading::workers})
          EXPECT_TRUE(same_state(one, run(devices, threading, p)))
              << devices.size() << " devices (" << (devices.back() == 1 ? "GPUs 0 and 1" : "slices of GPU 0") << "), "
              << name_of(threading) << ", " << name_of(p);
    }
  }
}

// The diagnostics' potential is summed in fp64 pairs in either precision, on one GPU and on slices of it: fp32's pairs
// would leave an error of about 1e-8 at a few bodies, over the integration's own energy error.
TEST(HermiteGpuSimulation, ThePotentialIsOfFp64PairsInEitherPrecision) {
  REQUIRE_GPU();
  sim::IntegratorParams ip;
  ip.integrator = sim::Integrator::hermite4;
  sim::StepProgram const program = sim::make_step_program(ip);
  for (std::size_t const n : {std::size_t(16), std::size_t(1000)})
    for (auto p : {Precision::fp64, Precision::fp32})
      for (std::vector<int> const& devices : {std::vector<int>{0}, std::vector<int>{0, 0}}) {
        sim::BodySet const b = test::scenario("plummer", n);
        multigpu::SimulationConfig c;
        c.backend = sim::Backend::cuda;
        c.engine.precision = p;
        c.softening = 0.01;
        c.devices = devices;
        multigpu::Simulation s(b, program, c, multigpu::RunClock{0, b.time}, nullptr);
        s.advance(kLayoutBlocks);
        sim::BodySet now;
        s.begin_sample();
        double const potential = s.end_sample(now);
        EXPECT_NEAR(potential / sim::reference_potential(now, 0.01), 1.0, 1e-13)
            << "N = " << n << ", " << name_of(p) << ", " << devices.size() << " slices of GPU 0";
      }
}

// A body whose forces cancel at the start (the centre of a point-symmetric cluster, moving) starts from its strongest
// pull's criterion, found on the host from the state the start pass left: the same step, and the same bits after the block
// steps, on one GPU (advance_blocks), slices of it with one thread (advance_together) or workers (the protocol).
TEST(HermiteGpuSimulation, ABodyWhoseForcesCancelStartsOnEveryLayoutOfTheGpus) {
  REQUIRE_GPU();
  sim::BodySet const b = test::symmetric_around_a_moving_centre(500);
  sim::IntegratorParams ip;
  ip.integrator = sim::Integrator::hermite4;
  sim::StepProgram const program = sim::make_step_program(ip);
  auto run = [&](std::vector<int> devices, multigpu::Threading threading, Precision p, std::uint64_t blocks) {
    return run_on(b, program, std::move(devices), threading, p, blocks);
  };
  Downloaded const start = run({0}, multigpu::Threading::single, Precision::fp64, 0);
  Vec3d const a = start.state.acceleration[0], j = start.state.jerk[0];
  sim::hermite::V3 const a3{a.x, a.y, a.z}, j3{j.x, j.y, j.z};
  EXPECT_TRUE(sim::hermite::below_floor(sim::hermite::start_step(a3, j3, /*phi, whose term sqrt(|phi|) / |a| is the longer*/ 1.0, 0.0, ip.hermite), 0.0, ip.hermite))
      << "|a| " << sim::hermite::norm3(a3) << ", |a1| " << sim::hermite::norm3(j3);
  double const wanted = sim::hermite::cancelled_start_criterion(b, 0, a, j, 0.01, ip.hermite.eta_start);
  EXPECT_EQ(start.state.step[0], sim::hermite::start_step(wanted, 0.0, ip.hermite));
  for (auto p : {Precision::fp64, Precision::fp32}) {
    Downloaded const one = run({0}, multigpu::Threading::single, p, kLayoutBlocks);
    EXPECT_GT(one.state.time[0], 0.0) << name_of(p) << ": the centre body took its steps";
    for (std::vector<int> const& devices : {std::vector<int>{0, 0}, std::vector<int>{0, 0, 0}})
      for (auto threading : {multigpu::Threading::single, multigpu::Threading::workers})
        EXPECT_TRUE(same_state(one, run(devices, threading, p, kLayoutBlocks)))
            << devices.size() << " slices of GPU 0, " << name_of(threading) << ", " << name_of(p);
  }
}

// A run to a time that is no block time (0.1; the longest step is 1/16) ends there on every layout with the bits of
// one GPU: the finish's step of each body to it runs the protocol's force pass on every layout (on one GPU too, where
// the block steps before it ran in advance_blocks), and the block steps after it (to 0.1 + 2/16, a block time of every
// body from the new epoch, and on to 0.27, another finish) go on from the state it loaded. Near the CPU engine's.
TEST(HermiteGpuSimulation, TheFinishAtATimeGivesTheBitsOfOneGpuOnEveryLayout) {
  REQUIRE_GPU();
  std::size_t const n = 1000;
  sim::BodySet const b = test::scenario("plummer", n);
  sim::IntegratorParams ip;
  ip.integrator = sim::Integrator::hermite4;
  sim::StepProgram const program = sim::make_step_program(ip);
  auto run = [&](sim::Backend backend, std::vector<int> devices, multigpu::Threading threading, Precision p) {
    multigpu::SimulationConfig c;
    c.backend = backend;
    c.engine.precision = p;
    c.softening = 0.01;
    c.devices = std::move(devices);
    c.threading = threading;
    multigpu::Simulation s(b, program, c, multigpu::RunClock{0, b.time}, nullptr);
    std::vector<Downloaded> ends;
    for (double t_end : {0.1, 0.1 + 2.0 / 16, 0.27}) {
      s.set_time_limit(t_end, true);
      s.advance(std::uint64_t(1) << 40);
      EXPECT_EQ(s.time(), t_end);
      Downloaded d;
      s.hermite_state(d.bodies, d.state);
      EXPECT_EQ(d.state.epoch, t_end == 0.27 ? 0.27 : 0.1);
      EXPECT_EQ(s.hermite_counters().block_steps, s.steps_done());
      ends.push_back(std::move(d));
    }
    return ends;
  };
  for (auto p : {Precision::fp64, Precision::fp32}) {
    std::vector<Downloaded> const one = run(sim::Backend::cuda, {0}, multigpu::Threading::single, p);
    std::vector<std::vector<int>> layouts{{0, 0}, {0, 0, 0}};
    if (gpu::devices().size() >= 2) layouts.push_back({0, 1});
    for (auto const& devices : layouts)
      for (auto threading : {multigpu::Threading::single, multigpu::Threading::workers}) {
        std::vector<Downloaded> const other = run(sim::Backend::cuda, devices, threading, p);
        for (std::size_t k = 0; k < one.size(); ++k)
          EXPECT_TRUE(same_state(one[k], other[k]))
              << "end " << k << ", " << devices.size() << " devices, " << name_of(threading) << ", " << name_of(p);
      }
    if (p == Precision::fp32) continue;
    std::vector<Downloaded> const cpu = run(sim::Backend::cpu, {0}, multigpu::Threading::single, p);
    double worst = 0;
    for (std::size_t i = 0; i < n; ++i) {
      auto const& g = one[0].bodies.pos_mass[i];
      auto const& c = cpu[0].bodies.pos_mass[i];
      worst = std::max(worst, std::hypot(g.x - c.x, g.y - c.y, g.z - c.z));
    }
    EXPECT_LT(worst, 1e-10) << "the GPU's finish at 0.1 against the CPU engine's";
  }
}

// advance_blocks on one engine, launched as graphs and kernel by kernel, with three force grids: the bits of the
// protocol, and the same counters. Small blocks are cut per span on the resident grid and on 100,000 blocks, and
// folded whole on 1 block (the single-device mode); larger ones per group.
TEST(HermiteGpu, AdvanceBlocksMatchesTheProtocolWithGraphsAndStreams) {
  REQUIRE_GPU();
  std::size_t const n = kLayoutBodies;
  sim::BodySet const b = test::scenario("plummer", n);
  for (auto p : {Precision::fp64, Precision::fp32}) {
    auto reference = cuda_engine(config_for(n, p, 0.01));
    protocol_run({reference.get()}, b, kLayoutBlocks);
    Downloaded const base = download({reference.get()}, n);
    for (bool graphs : {true, false}) {
      for (int grid : {0, 1, 100000}) {
        auto e = cuda_engine(config_for(n, p, 0.01));
        e->set_graph_launch(graphs);
        e->set_force_grid(grid);
        protocol_run({e.get()}, b, 0);  // the start through the protocol
        // In uneven pieces: each call stops after its count, and the next goes on from there.
        std::uint64_t done = 0;
        for (std::uint64_t piece : {1u, 7u, 40u, 12u}) done += e->advance_blocks(piece, INFINITY);
        ASSERT_EQ(done, kLayoutBlocks);
        EXPECT_TRUE(same_state(base, download({e.get()}, n)))
            << (graphs ? "graphs" : "stream") << ", grid " << grid << ", " << name_of(p);
        auto const c = e->counters();
        EXPECT_EQ(c.block_steps, kLayoutBlocks);
        EXPECT_EQ(c.force_evaluations, reference->counters().force_evaluations);
        EXPECT_EQ(e->block_time(), reference->block_time());
      }
    }
  }
}

// advance_blocks stops before a block past t_stop, and goes on from there when called again.
TEST(HermiteGpu, AdvanceBlocksStopsAtTheStopTime) {
  REQUIRE_GPU();
  std::size_t const n = 1000;
  sim::BodySet const b = test::scenario("plummer", n);
  auto e = cuda_engine(config_for(n, Precision::fp64, 0.01));
  protocol_run({e.get()}, b, 0);
  double const stop = 1.0 / 32;
  std::uint64_t const done = e->advance_blocks(1000000, stop);
  EXPECT_GT(done, 0u);
  EXPECT_LE(e->block_time(), stop);
  EXPECT_GT(e->own_next_time(), stop) << "stopped before a block it could have done";
  std::uint64_t const more = e->advance_blocks(5, INFINITY);
  EXPECT_EQ(more, 5u);
  EXPECT_GT(e->block_time(), stop);
}

// Engines of 2 and 3 slices of GPU 0 (and GPUs 0 and 1 where there are two) run block steps on the devices
// (advance_together), as graphs over every device and kernel by kernel: the bits and counters of one engine's
// protocol, also when the protocol's block steps come between and when a call's count is not a whole number of
// graphs, and a stop time as advance_blocks keeps it.
TEST(HermiteGpu, AdvanceTogetherGivesTheProtocolsBits) {
  REQUIRE_GPU();
  std::size_t const n = kLayoutBodies, L = sim::kernels::segment_layout(n).length;
  sim::BodySet const b = test::scenario("plummer", n);
  std::vector<std::vector<std::pair<Slice, int>>> layouts{
      {{Slice{0, 5 * L}, 0}, {Slice{5 * L, n - 5 * L}, 0}},
      {{Slice{0, 3 * L}, 0}, {Slice{3 * L, 4 * L}, 0}, {Slice{7 * L, n - 7 * L}, 0}}};
  if (gpu::devices().size() >= 2) {
    layouts.push_back({{Slice{0, 5 * L}, 0}, {Slice{5 * L, n - 5 * L}, 1}});
    // Two engines ordered by events on GPU 0 and one waiting for them by flags on GPU 1.
    layouts.push_back({{Slice{0, 3 * L}, 0}, {Slice{3 * L, 4 * L}, 0}, {Slice{7 * L, n - 7 * L}, 1}});
  }
  for (auto p : {Precision::fp64, Precision::fp32}) {
    auto one = cuda_engine(config_for(n, p, 0.01));
    protocol_run({one.get()}, b, kLayoutBlocks);
    Downloaded const base = download({one.get()}, n);
    sim::hermite::HermiteCounters const expected = one->counters();
    for (auto const& layout : layouts) {
      for (bool graphs : {true, false}) {
        std::vector<std::unique_ptr<sim::CudaHermiteEngine>> owned;
        std::vector<sim::HermiteEngine*> engines;
        for (auto const& [slice, device] : layout) {
          auto c = config_for(n, p, 0.01, slice);
          c.device = device;
          owned.push_back(cuda_engine(c));
          owned.back()->set_graph_launch(graphs);
          engines.push_back(owned.back().get());
        }
        std::string const where = std::to_string(layout.size()) + " engines" +
                                  (layout.back().second == 1 ? " on GPUs 0 and 1, " : " on GPU 0, ") + name_of(p) +
                                  (graphs ? ", graphs" : ", stream");
        if (!engines.front()->can_advance_together(engines)) {
          // Only GPUs without peer access to each other may refuse (they keep the protocol through the host).
          EXPECT_EQ(layout.back().second, 1) << where << ": slices of one GPU refused";
          std::printf("%s: no peer access between the GPUs, the protocol through the host runs there\n", where.c_str());
          continue;
        }
        protocol_run(engines, b, 0);  // the start
        // 25 block steps on the devices, 10 by the protocol, the rest on the devices again.
        std::uint64_t const first = engines.front()->advance_together(engines, 25, 0.0, INFINITY);
        EXPECT_EQ(first, 25u) << where;
        Protocol protocol{engines, {}};
        double const t = protocol.blocks(10);
        std::uint64_t const rest = engines.front()->advance_together(engines, kLayoutBlocks - 35, t, INFINITY);
        EXPECT_EQ(rest, kLayoutBlocks - 35) << where;
        EXPECT_TRUE(same_state(base, download(engines, n))) << where;
        EXPECT_EQ(owned.front()->kernel_name().find("no graph"), std::string::npos) << where << ": the graph was refused";
        sim::hermite::HermiteCounters sum;
        for (auto* e : engines) sum += e->counters();
        EXPECT_EQ(sum.force_evaluations, expected.force_evaluations) << where;
        EXPECT_EQ(sum.interactions, expected.interactions) << where;
        for (int l = 0; l < sim::hermite::kLevels; ++l) EXPECT_EQ(sum.levels[l], expected.levels[l]) << where << ", level " << l;
        for (auto* e : engines) EXPECT_EQ(e->block_time(), one->block_time()) << where;
      }
    }
  }
  // A stop time: the block steps advance_blocks does on one engine, and no more.
  auto one = cuda_engine(config_for(n, Precision::fp64, 0.01));
  protocol_run({one.get()}, b, 0);
  double const stop = 1.0 / 32;
  std::uint64_t const single = one->advance_blocks(1000000, stop);
  auto e0 = cuda_engine(config_for(n, Precision::fp64, 0.01, Slice{0, 5 * L}));
  auto e1 = cuda_engine(config_for(n, Precision::fp64, 0.01, Slice{5 * L, n - 5 * L}));
  std::vector<sim::HermiteEngine*> const two{e0.get(), e1.get()};
  protocol_run(two, b, 0);
  EXPECT_EQ(e0->advance_together(two, 1000000, 0.0, stop), single);
  EXPECT_EQ(e0->block_time(), one->block_time());
  EXPECT_GT(std::min(e0->own_next_time(), e1->own_next_time()), stop) << "stopped before a block it could have done";
  EXPECT_TRUE(same_state(download({one.get()}, n), download(two, n)));
  // A call whose first block is past the stop time halts there on every device: nothing done, nothing waited for.
  EXPECT_EQ(e0->advance_together(two, 1000000, e0->block_time(), stop), 0u);
  EXPECT_EQ(e0->block_time(), one->block_time());
  EXPECT_TRUE(same_state(download({one.get()}, n), download(two, n)));
}

// A driver that refuses the graph over the devices (set_refuse_capture_for_test: a call it refuses during the capture,
// after every block step of the graph was queued in it): the block steps go on the streams, in that call and the next,
// with the bits of the protocol. Where engines share a GPU, the streams then wait for announcement events that the
// refused capture recorded last, unless they were recorded again after it.
TEST(HermiteGpu, ARefusedGraphFallsBackToTheStreamsWithTheSameBits) {
  REQUIRE_GPU();
  std::size_t const n = kLayoutBodies, L = sim::kernels::segment_layout(n).length;
  sim::BodySet const b = test::scenario("plummer", n);
  std::vector<std::vector<std::pair<Slice, int>>> layouts{{{Slice{0, 5 * L}, 0}, {Slice{5 * L, n - 5 * L}, 0}}};
  if (gpu::devices().size() >= 2) {
    layouts.push_back({{Slice{0, 5 * L}, 0}, {Slice{5 * L, n - 5 * L}, 1}});
    layouts.push_back({{Slice{0, 3 * L}, 0}, {Slice{3 * L, 4 * L}, 0}, {Slice{7 * L, n - 7 * L}, 1}});
  }
  auto one = cuda_engine(config_for(n, Precision::fp32, 0.01));
  protocol_run({one.get()}, b, kLayoutBlocks);
  Downloaded const base = download({one.get()}, n);
  for (auto const& layout : layouts) {
    std::vector<std::unique_ptr<sim::CudaHermiteEngine>> owned;
    std::vector<sim::HermiteEngine*> engines;
    std::string where = std::to_string(layout.size()) + " engines on GPUs";
    for (auto const& [slice, device] : layout) {
      auto c = config_for(n, Precision::fp32, 0.01, slice);
      c.device = device;
      owned.push_back(cuda_engine(c));
      engines.push_back(owned.back().get());
      where += " " + std::to_string(device);
    }
    if (!engines.front()->can_advance_together(engines)) {
      EXPECT_EQ(layout.back().second, 1) << where << ": slices of one GPU refused";
      continue;
    }
    owned.front()->set_refuse_capture_for_test(true);
    protocol_run(engines, b, 0);  // the start
    std::uint64_t done = 0;
    try {
      done = engines.front()->advance_together(engines, 25, 0.0, INFINITY);
      done += engines.front()->advance_together(engines, kLayoutBlocks - 25, engines.front()->block_time(), INFINITY);
    } catch (const std::exception& x) {
      ADD_FAILURE() << where << ": " << x.what();
      continue;
    }
    EXPECT_EQ(done, kLayoutBlocks) << where;
    EXPECT_NE(owned.front()->kernel_name().find("no graph over several"), std::string::npos)
        << where << ": the capture was not refused (" << owned.front()->kernel_name() << ")";
    EXPECT_TRUE(same_state(base, download(engines, n))) << where;
    for (auto* e : engines) EXPECT_EQ(e->block_time(), one->block_time()) << where;
    EXPECT_EQ(cudaGetLastError(), cudaSuccess) << where;
  }
}

bool stream_idle_within(cudaStream_t stream, double seconds) {
  auto const start = std::chrono::steady_clock::now();
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < seconds) {
    if (cudaStreamQuery(stream) == cudaSuccess) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

// Two GPUs, and one of them never announces its block steps (set_isolated_for_test): it goes on alone, and the
// other waits for it on the GPU. The host's bound on the waiting GPU's batch expires, naming that GPU (each device's
// queue has a bound of its own: with only GPU 0's looked at, an isolated GPU 0 let the host queue GPU 1's block steps
// until its trap, ten minutes later). Giving up must end the wait on the GPU at once, not at the trap, and leave
// neither GPU with work queued past two batches.
TEST(HermiteGpu, AWaitGivenUpEndsTheWaitsOnEveryGpu) {
  if (gpu::devices().size() < 2) GTEST_SKIP() << "needs 2 GPUs, " << gpu::devices().size() << " visible";
  if (gpu::debug_sync()) GTEST_SKIP() << "NBODY_DEBUG_SYNC waits for the launch of the wait itself";
  std::size_t const n = kLayoutBodies, L = sim::kernels::segment_layout(n).length;
  sim::BodySet const b = test::scenario("plummer", n);
  for (bool graphs : {true, false}) {
    for (int isolated : {0, 1}) {
      int const waiting = 1 - isolated;
      std::string const where = "GPU " + std::to_string(isolated) + " isolated, " + (graphs ? "graphs" : "stream");
      auto c0 = config_for(n, Precision::fp32, 0.01, Slice{0, 5 * L}),
           c1 = config_for(n, Precision::fp32, 0.01, Slice{5 * L, n - 5 * L});
      c1.device = 1;
      c0.wait_seconds = c1.wait_seconds = 1.0;
      std::unique_ptr<sim::CudaHermiteEngine> e[2] = {cuda_engine(c0), cuda_engine(c1)};
      std::vector<sim::HermiteEngine*> const two{e[0].get(), e[1].get()};
      if (!e[0]->can_advance_together(two)) GTEST_SKIP() << "GPUs 0 and 1 have no peer access";
      for (auto& x : e) x->set_graph_launch(graphs);
      protocol_run(two, b, 0);
      e[isolated]->set_isolated_for_test(true);
      cudaStream_t const stream[2] = {e[0]->stream(), e[1]->stream()};  // an engine given up lets go of its own
      auto const start = std::chrono::steady_clock::now();
      std::string failure;
      try {
        e[0]->advance_together(two, 100000, 0.0, INFINITY);
      } catch (const RuntimeFailure& x) {
        failure = x.what();
      }
      double const took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      bool idle[2];
      for (int d : {0, 1}) idle[d] = stream_idle_within(stream[d], 10.0);
      std::string const named = "GPU " + std::to_string(waiting) + " (hermite4 block steps) has not finished after ";
      EXPECT_EQ(failure.rfind(named, 0), 0u)
          << where << ": " << (failure.empty() ? "block steps waiting for a GPU that never announces them ended" : failure);
      EXPECT_LT(took, 10.0) << where << ": the bound is 1 s";
      EXPECT_TRUE(e[waiting]->abandoned()) << where;
      EXPECT_FALSE(e[isolated]->abandoned()) << where;
      EXPECT_TRUE(idle[waiting]) << where << ": GPU " << waiting << " still waits after the host gave up on it";
      EXPECT_TRUE(idle[isolated]) << where << ": GPU " << isolated << " still runs block steps queued for it";
      EXPECT_EQ(cudaGetLastError(), cudaSuccess) << where;
      if (graphs) {
        EXPECT_EQ(e[0]->kernel_name().find("no graph"), std::string::npos) << where << ": the graphs were refused";
      }
      // As HermiteBlocks does once an engine gave up: none frees what the other's work may still read.
      for (auto& x : e) x->abandon();
    }
  }
}

// The GPU engine against the CPU engine, both fp64, after the start and a few block steps: not the same bits (the
// pair arithmetic differs in the last place), the same trajectory to near rounding.
TEST(HermiteGpu, FollowsTheCpuEngine) {
  REQUIRE_GPU();
  std::size_t const n = kLayoutBodies;
  sim::BodySet const b = test::scenario("plummer", n);
  auto gpu = cuda_engine(config_for(n, Precision::fp64, 0.01));
  auto cpu = sim::make_hermite_engine(sim::Backend::cpu, config_for(n, Precision::fp64, 0.01));
  protocol_run({gpu.get()}, b, 20);
  protocol_run({cpu.get()}, b, 20);
  Downloaded const g = download({gpu.get()}, n), c = download({cpu.get()}, n);
  double worst = 0;
  std::size_t steps_differ = 0;
  for (std::size_t i = 0; i < n; ++i) {
    Vec3d const d{g.bodies.pos_mass[i].x - c.bodies.pos_mass[i].x, g.bodies.pos_mass[i].y - c.bodies.pos_mass[i].y,
                  g.bodies.pos_mass[i].z - c.bodies.pos_mass[i].z};
    worst = std::max(worst, norm(d));
    steps_differ += g.state.step[i] != c.state.step[i];
  }
  // Positions of order 1 after a few hundredths of a time unit: differences of rounding, 1e-15 to 1e-13.
  EXPECT_LT(worst, 1e-10);
  EXPECT_LE(steps_differ, n / 100) << "steps chosen differently for many bodies";
  std::printf("GPU against CPU engine, fp64, N=%zu, 20 block steps: largest position difference %.3e, %zu steps differ\n",
              n, worst, steps_differ);
}

}  // namespace
}  // namespace nbody
