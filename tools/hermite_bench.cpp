// tools/hermite_bench.cpp - times the CUDA Hermite engine on one GPU: a block step with every body active, block
// steps of a small active block, and the time to solution of a Plummer sphere. Developer tool:
//   hermite_bench all N fp64|fp32                        every body active: interactions/s, flop/s at 60 a pair
//   hermite_bench block N ACTIVE fp64|fp32 [DEVICES]     blocks of ACTIVE bodies: microseconds a block step; on
//                                                        DEVICES engines (advance_together) where given
//   hermite_bench sizes N T_END fp64|fp32                the block sizes of the run to solution (softening 1e-4,
//                                                        eta 0.02): block steps and time by size, powers of two
//   hermite_bench solution N T_END SOFTENING ETA fp64|fp32 [SECONDS]  start, then block steps to T_END
//   hermite_bench together N T_END DEVICES fp64|fp32     the same (softening 1e-4, eta 0.02) on DEVICES engines of
//                                                        equal slices, engine d on GPU d mod the GPUs, block steps on
//                                                        the devices (advance_together), as graphs and on streams
// Each prints one line a measurement (sizes: one a size class). Times are wall clock around calls that synchronise
// at their end.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/fnv1a.h"
#include "gpu/devices.h"
#include "sim/engines/hermite_cuda.h"
#include "sim/engines/hermite_engine.h"
#include "sim/physics/hermite.h"
#include "sim/kernels/segments.h"
#include "sim/physics/scenarios.h"

using namespace nbody;
using namespace nbody::sim;
using hermite::ActiveBody;
using hermite::ForceJerk;

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

Precision precision_of(const std::string& s) {
  if (s == "fp64") return Precision::fp64;
  if (s == "fp32") return Precision::fp32;
  throw std::invalid_argument("precision '" + s + "': fp64 or fp32");
}

BodySet plummer(std::size_t n) {
  ScenarioParams p;
  p.scenario = Scenario::plummer;
  p.bodies = n;
  p.seed = 42;
  return make_scenario(p);
}

std::unique_ptr<HermiteEngine> engine(std::size_t n, Precision precision, double softening, double eta,
                                      double dt_max = 1.0 / 16) {
  HermiteEngineConfig c;
  c.bodies = n;
  c.slice = {0, n};
  c.softening = softening;
  c.engine.precision = precision;
  c.params.eta = eta;
  c.params.dt_max = dt_max;
  return make_hermite_engine(Backend::cuda, c);
}

// The start through the protocol on the one engine: every body active, forces, the start steps.
void start(HermiteEngine& e, const BodySet& b) {
  e.upload_unstarted(b);
  std::size_t const n = e.pack_active(0.0, true);
  std::vector<ActiveBody> list(e.own_active_data(), e.own_active_data() + n);
  e.set_active(list.data(), n);
  e.partial_forces();
  const ForceJerk* p = e.partials();
  std::vector<ForceJerk> totals(n, ForceJerk{});
  for (std::size_t g = 0; g < e.own_groups(); ++g)
    for (std::size_t k = 0; k < n; ++k) hermite::add_partial(totals[k], p[g * n + k]);
  e.initialise(totals.data(), n, 0.0);
}

struct Started {
  BodySet bodies;
  hermite::HermiteState state;
};
Started started(HermiteEngine& e, std::size_t n) {
  Started s;
  s.bodies = plummer(n);
  start(e, s.bodies);
  s.state.resize(n);
  e.download(s.bodies, s.state);
  return s;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void every_body_active(std::size_t n, Precision p) {
  auto e = engine(n, p, 0.01, 0.02);
  Started s = started(*e, n);
  // Every body at block time 0 with the largest step: the next block holds them all.
  std::fill(s.state.time.begin(), s.state.time.end(), 0.0);
  std::fill(s.state.step.begin(), s.state.step.end(), 1.0 / 16);
  std::vector<double> times;
  for (int rep = 0; rep < 4; ++rep) {
    e->upload(s.bodies, s.state);
    auto const t0 = Clock::now();
    if (e->advance_blocks(1, INFINITY) != 1) throw std::runtime_error("no block step done");
    if (rep > 0) times.push_back(seconds_since(t0));  // the first: warm-up (the graph is captured there)
  }
  double const t = median(times), rate = double(n) * double(n) / t;
  std::printf("hermite %s every body active N=%zu: %.3f ms a block step, %.3e interactions/s, %.1f Tflop/s (60 a pair)  [%s]\n",
              name_of(p).c_str(), n, 1e3 * t, rate, 60 * rate * 1e-12, e->kernel_name().c_str());
}

// `devices` engines of equal slices (whole groups), engine d on GPU d mod the GPUs.
std::vector<std::unique_ptr<HermiteEngine>> engines_on_devices(std::size_t n, std::size_t devices, Precision p,
                                                               double softening, double eta, double dt_max = 1.0 / 16) {
  std::size_t const gpus = gpu::devices().size();
  if (gpus == 0 || devices < 2) throw std::runtime_error("several engines: needs a GPU and 2 or more engines");
  std::size_t const length = kernels::segment_layout(n).length, groups = kernels::segment_layout(n).count;
  std::vector<std::unique_ptr<HermiteEngine>> owned;
  for (std::size_t d = 0; d < devices; ++d) {
    std::size_t const begin = std::min(n, groups * d / devices * length);
    std::size_t const end = std::min(n, groups * (d + 1) / devices * length);
    HermiteEngineConfig c;
    c.bodies = n;
    c.slice = {begin, end - begin};
    c.softening = softening;
    c.engine.precision = p;
    c.device = int(d % gpus);
    c.params.eta = eta;
    c.params.dt_max = dt_max;
    owned.push_back(make_hermite_engine(Backend::cuda, c));
  }
  return owned;
}

std::vector<HermiteEngine*> pointers(const std::vector<std::unique_ptr<HermiteEngine>>& owned) {
  std::vector<HermiteEngine*> out;
  for (auto const& e : owned) out.push_back(e.get());
  if (out.size() > 1 && !out.front()->can_advance_together(out))
    throw std::runtime_error("several engines: no peer access");
  return out;
}

// The run to solution's block sizes, block step by block step (each call waits for its one block step, so the times
// include a host round trip each): for each power-of-two class of sizes, the block steps, their mean size, the
// interactions and the time, each also as a share of the run's.
void block_sizes(std::size_t n, double t_end, Precision p) {
  auto e = engine(n, p, 1e-4, 0.02);
  start(*e, plummer(n));
  struct Class {
    double blocks = 0, bodies = 0, seconds = 0;
  };
  std::vector<Class> classes(64);
  for (;;) {
    auto const before = e->counters();
    auto const t0 = Clock::now();
    if (e->advance_blocks(1, t_end) == 0) break;
    double const t = seconds_since(t0);
    std::uint64_t const size = e->counters().force_evaluations - before.force_evaluations;
    Class& c = classes[std::size_t(std::ilogb(double(std::max<std::uint64_t>(size, 1))))];
    c.blocks += 1;
    c.bodies += double(size);
    c.seconds += t;
  }
  double blocks = 0, bodies = 0, seconds = 0;
  for (auto const& c : classes) blocks += c.blocks, bodies += c.bodies, seconds += c.seconds;
  std::printf("hermite %s Plummer N=%zu softening 1e-4 eta 0.02 to t=%g: %.0f block steps, %.1f bodies a block, "
              "%.3f s one block step a call%s\n", name_of(p).c_str(), n, t_end, blocks,
              blocks > 0 ? bodies / blocks : 0.0, seconds,
              e->floor_violation() >= 0 ? " (stopped: step below the floor)" : "");
  for (std::size_t k = 0; k < classes.size(); ++k) {
    Class const& c = classes[k];
    if (c.blocks == 0) continue;
    std::printf("  sizes %8.0f to %8.0f: %6.0f block steps (%5.1f%%), mean %9.1f bodies, %5.1f%% of the "
                "interactions, %.3f s (%5.1f%%), %.2f us a block step\n", std::ldexp(1.0, int(k)),
                std::ldexp(1.0, int(k) + 1) - 1, c.blocks, 100 * c.blocks / blocks, c.bodies / c.blocks,
                100 * c.bodies / bodies, c.seconds, 100 * c.seconds / seconds, 1e6 * c.seconds / c.blocks);
  }
}

// The start on several engines, as multigpu::HermiteBlocks does it in one process: every body active, the list read
// from every engine, the running sums device to device.
void start_together(const std::vector<HermiteEngine*>& engines, const BodySet& b) {
  std::vector<std::size_t> counts;
  for (HermiteEngine* e : engines) e->upload_unstarted(b);
  for (HermiteEngine* e : engines) counts.push_back(e->pack_active(0.0, true));
  for (HermiteEngine* e : engines) {
    e->set_active_from(engines, counts);
    e->partial_forces();
  }
  HermiteEngine* last = nullptr;
  for (HermiteEngine* e : engines) {
    e->add_own_groups_on_device(last);
    last = e;
  }
  for (HermiteEngine* e : engines) e->initialise_from(*last, 0.0);
}

void small_blocks(std::size_t n, std::size_t active, Precision p, std::size_t devices) {
  // Blocks of exactly `active` bodies, block after block: those bodies at block time 0 with steps of 2^-10, the
  // largest step the engine allows (dt_max), and an eta so large that none wants a smaller one; every other body
  // waits with a step of 1/16. The physics is not a simulation's, the work of each block step is: the same kernels
  // over the same N with `active` bodies active.
  constexpr double kStep = 0x1p-10;
  // One engine (advance_blocks), or several (advance_together) started as multigpu::HermiteBlocks starts them.
  std::vector<std::unique_ptr<HermiteEngine>> owned;
  Started s;
  if (devices <= 1) {
    owned.push_back(engine(n, p, 0.01, 1e4, kStep));
    s = started(*owned.front(), n);
  } else {
    owned = engines_on_devices(n, devices, p, 0.01, 1e4, kStep);
    s.bodies = plummer(n);
    start_together(pointers(owned), s.bodies);
    s.state.resize(n);
    for (auto const& e : owned) e->download(s.bodies, s.state);
  }
  std::vector<HermiteEngine*> const engines = pointers(owned);
  HermiteEngine* const e = engines.front();
  std::vector<std::size_t> pick(n);
  for (std::size_t i = 0; i < n; ++i) pick[i] = i;
  std::mt19937_64 rng(5);
  std::shuffle(pick.begin(), pick.end(), rng);
  std::fill(s.state.time.begin(), s.state.time.end(), 0.0);
  std::fill(s.state.step.begin(), s.state.step.end(), 1.0 / 16);
  for (std::size_t k = 0; k < std::min(active, n); ++k) s.state.step[pick[k]] = kStep;
  double const stop = 1.0 / 16 - kStep / 2;  // before the block of every body
  double const common = kStep;
  auto counters = [&] {
    hermite::HermiteCounters c;
    for (HermiteEngine* x : engines) c += x->counters();
    return c;
  };
  for (bool graphs : {true, false}) {
    for (HermiteEngine* x : engines) dynamic_cast<CudaHermiteEngine&>(*x).set_graph_launch(graphs);
    std::vector<double> per_block;
    double evaluations = 0, blocks = 0;
    for (int rep = 0; rep < 4; ++rep) {
      for (HermiteEngine* x : engines) x->upload(s.bodies, s.state);
      for (HermiteEngine* x : engines) x->synchronize();
      auto const before = counters();
      auto const t0 = Clock::now();
      std::uint64_t const done =
          devices <= 1 ? e->advance_blocks(48, stop) : e->advance_together(engines, 48, 0.0, stop);
      double const t = seconds_since(t0);
      auto const after = counters();
      if (done == 0) throw std::runtime_error("no block step done");
      if (rep > 0) {
        per_block.push_back(t / double(done));
        evaluations += double(after.force_evaluations - before.force_evaluations);
        blocks += double(done);
      }
    }
    std::printf("hermite %s blocks of %.1f active bodies (asked %zu, steps %g), N=%zu, %s%s: %.2f us a block step "
                "(all stages)\n", name_of(p).c_str(), evaluations / blocks, active, common, n,
                graphs ? "graphs" : "stream", devices > 1 ? (", " + std::to_string(devices) + " engines").c_str() : "",
                1e6 * median(per_block));
  }
}

void to_solution(std::size_t n, double t_end, double softening, double eta, Precision p, double budget) {
  auto e = engine(n, p, softening, eta);
  BodySet const b = plummer(n);
  e->synchronize();
  auto const t0 = Clock::now();
  start(*e, b);
  std::uint64_t blocks = 0;
  while (seconds_since(t0) < budget) {
    std::uint64_t const done = e->advance_blocks(4096, t_end);
    blocks += done;
    if (done < 4096 || e->floor_violation() >= 0) break;
  }
  double const wall = seconds_since(t0);
  auto const c = e->counters();
  bool const reached = e->own_next_time() > t_end;
  std::printf("hermite %s Plummer N=%zu softening %g eta %g to t=%g: %s in %.2f s (block time %.5f), %llu block "
              "steps, %.1f bodies a block, %.3e interactions, %.3e interactions/s%s\n",
              name_of(p).c_str(), n, softening, eta, t_end, reached ? "reached" : "NOT reached", wall,
              e->block_time(), static_cast<unsigned long long>(blocks),
              double(c.force_evaluations) / double(std::max<std::uint64_t>(blocks, 1)), double(c.interactions),
              double(c.interactions) / wall, e->floor_violation() >= 0 ? " (stopped: step below the floor)" : "");
}

void together(std::size_t n, double t_end, std::size_t devices, Precision p) {
  std::size_t const gpus = gpu::devices().size();
  BodySet const b = plummer(n);
  std::vector<std::uint64_t> hashes;
  for (bool graphs : {true, false}) {
    auto const owned = engines_on_devices(n, devices, p, 1e-4, 0.02);
    for (auto const& e : owned) dynamic_cast<CudaHermiteEngine&>(*e).set_graph_launch(graphs);
    std::vector<HermiteEngine*> const engines = pointers(owned);
    start_together(engines, b);
    for (HermiteEngine* e : engines) e->synchronize();
    auto const t0 = Clock::now();
    std::uint64_t blocks = 0;
    double t = 0.0;
    for (;;) {
      std::uint64_t const done = engines.front()->advance_together(engines, 4096, t, t_end);
      blocks += done;
      t = engines.front()->block_time();
      if (done < 4096) break;
    }
    double const wall = seconds_since(t0);
    hermite::HermiteCounters c;
    BodySet out;
    out.resize(n);
    hermite::HermiteState state;
    state.resize(n);
    for (HermiteEngine* e : engines) {
      c += e->counters();
      e->download(out, state);
    }
    Fnv1a positions(kStateHashBasis);  // the positions' bytes
    positions.bytes(out.pos_mass.data(), out.pos_mass.size() * sizeof(out.pos_mass[0]));
    std::uint64_t const hash = positions.get();
    hashes.push_back(hash);
    std::printf("hermite %s together on %zu engines (GPUs 0..%zu), Plummer N=%zu to t=%g, %s: %.3f s, %llu block "
                "steps, %.2f us a block step, %.1f bodies a block, %.3e interactions/s, state %016llx  [%s]\n",
                name_of(p).c_str(), devices, std::min(devices, gpus) - 1, n, t_end, graphs ? "graphs" : "stream", wall,
                static_cast<unsigned long long>(blocks), 1e6 * wall / double(std::max<std::uint64_t>(blocks, 1)),
                double(c.force_evaluations) / double(std::max<std::uint64_t>(blocks, 1)), double(c.interactions) / wall,
                static_cast<unsigned long long>(hash), engines.front()->kernel_name().c_str());
  }
  if (hashes[0] != hashes[1]) throw std::runtime_error("together: graphs and streams ended in different states");
}

}  // namespace

int main(int argc, char** argv) {
  try {
    std::vector<std::string> a(argv + 1, argv + argc);
    auto size = [&](std::size_t k) { return std::size_t(std::stoull(a.at(k))); };
    if (a.size() == 3 && a[0] == "all") {
      every_body_active(size(1), precision_of(a[2]));
    } else if ((a.size() == 4 || a.size() == 5) && a[0] == "block") {
      small_blocks(size(1), size(2), precision_of(a[3]), a.size() == 5 ? size(4) : 1);
    } else if (a.size() == 4 && a[0] == "sizes") {
      block_sizes(size(1), std::stod(a[2]), precision_of(a[3]));
    } else if ((a.size() == 6 || a.size() == 7) && a[0] == "solution") {
      to_solution(size(1), std::stod(a[2]), std::stod(a[3]), std::stod(a[4]), precision_of(a[5]),
                  a.size() == 7 ? std::stod(a[6]) : 300.0);
    } else if (a.size() == 5 && a[0] == "together") {
      together(size(1), std::stod(a[2]), size(3), precision_of(a[4]));
    } else {
      std::fprintf(stderr,
                   "usage: hermite_bench all N fp64|fp32 | block N ACTIVE fp64|fp32 [DEVICES] | "
                   "sizes N T_END fp64|fp32 | "
                   "solution N T_END SOFTENING ETA fp64|fp32 [SECONDS] | together N T_END DEVICES fp64|fp32\n");
      return 2;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
