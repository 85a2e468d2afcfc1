// driver/benchmark.cpp - measurement and the threading comparison.
#include "driver/benchmark.h"

#include <algorithm>

#include "core/clock.h"
#include "core/enum_names.h"
#include "core/ranks.h"
#include "driver/setup.h"

namespace nbody::driver {
namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  std::size_t const m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

}  // namespace

namespace {

// Enqueues `n` steps in chunks, checking for a signal between them. CPU steps run inside advance(),
// so they go one at a time. GPU steps are only enqueued, but a full launch queue (about a thousand
// launches, some hundred steps) makes the host wait inside a launch until a kernel finishes; so
// chunks hold at most about 50 ms of steps, by `step_seconds` (0: unknown, one step a chunk).
void enqueue(multigpu::Simulation& sim, std::uint64_t n, double step_seconds) {
  bool const on_host = sim.config().backend == sim::Backend::cpu;
  std::uint64_t per_chunk =
      on_host || step_seconds <= 0 ? 1 : std::clamp<std::uint64_t>(std::uint64_t(0.05 / step_seconds), 1, 256);
  // With graphs, whole blocks: a chunk that is not one would run its last steps one by one.
  if (sim.config().launch == multigpu::Launch::graph && per_chunk >= multigpu::kGraphSteps)
    per_chunk -= per_chunk % multigpu::kGraphSteps;
  for (std::uint64_t done = 0; done < n;) {
    sim.stop_if_interrupted();
    std::uint64_t const chunk = std::min(per_chunk, n - done);
    sim.advance(chunk);
    done += chunk;
  }
}

}  // namespace

void advance_interruptibly(multigpu::Simulation& sim, std::uint64_t steps) {
  enqueue(sim, steps, 0.0);
  sim.wait_interruptibly();
}

std::vector<double> slowest_device_steps(const std::vector<std::vector<double>>& per_device, std::size_t steps) {
  std::vector<double> finished(steps, 0.0);  // when the last device had finished step k
  for (auto const& t : per_device) {
    double clock = 0.0;
    for (std::size_t k = 0; k < steps; ++k) {
      if (k < t.size()) clock += t[k];
      finished[k] = std::max(finished[k], clock);
    }
  }
  std::vector<double> step(steps, 0.0);
  for (std::size_t k = 0; k < steps; ++k) step[k] = finished[k] - (k ? finished[k - 1] : 0.0);
  return step;
}

Measurement measure(multigpu::Simulation& sim, std::uint64_t warmup, std::uint64_t steps) {
  steps = std::max<std::uint64_t>(steps, 1);
  auto const w0 = Clock::now();
  std::uint64_t warmed = 0;  // warm-up steps run so far
  if (sim.config().launch == multigpu::Launch::graph) {
    // Both graphs (one per starting buffer parity) are captured before the timing starts.
    advance_interruptibly(sim, multigpu::kGraphSteps);
    advance_interruptibly(sim, 1);
    advance_interruptibly(sim, multigpu::kGraphSteps);
    warmed = 2 * multigpu::kGraphSteps + 1;
  }
  if (warmup > warmed) {
    advance_interruptibly(sim, warmup - warmed);
    warmed = warmup;
  }
  double const warmup_step_seconds = warmed ? seconds_since(w0) / double(warmed) : 0.0;
  sim.start_timing(steps);
  auto const t0 = Clock::now();
  enqueue(sim, steps, warmup_step_seconds);
  double const enqueue_seconds = seconds_since(t0);
  sim.wait_interruptibly();
  double const wall = seconds_since(t0);
  auto const per_device = sim.step_times_ms();
  Measurement m;
  std::vector<double> step_ms = slowest_device_steps(per_device, steps);
  for (auto const& t : per_device) m.device_median_ms.push_back(median(t));
  m.median_ms = median(step_ms);
  m.min_ms = *std::min_element(step_ms.begin(), step_ms.end());
  m.max_ms = *std::max_element(step_ms.begin(), step_ms.end());
  m.wall_mean_ms = 1e3 * wall / double(steps);
  m.enqueue_ms_per_step = 1e3 * enqueue_seconds / double(steps);
  double const n = double(sim.bodies());
  double const force_evaluations = double(sim.program().drifts());  // per step: 3 for yoshida4
  m.interactions_per_s = force_evaluations * n * n / (m.median_ms * 1e-3);
  m.gflops = 20.0 * m.interactions_per_s * 1e-9;
  return m;
}

nlohmann::json benchmark_json(const Measurement& m, const multigpu::Simulation& sim, const std::string& source,
                              std::uint64_t warmup, std::uint64_t steps) {
  multigpu::SimulationConfig const& c = sim.config();
  return {{"mode", "benchmark"},
          {"bodies", sim.bodies()},
          {"source", source},
          {"backend", name_of(c.backend)},
          {"description", sim.describe()},
          {"kernel", sim.kernel_name()},
          {"precision", name_of(c.engine.precision)},
          {"devices", sim.all_slices().size()},
          {"threading", name_of(c.threading)},
          {"launch", name_of(c.launch)},
          {"hardware", hardware_description(c)},
          {"integrator", sim.program().integrator},
          {"force_evaluations_per_step", sim.program().drifts()},
          {"warmup_steps", warmup},
          {"timed_steps", steps},
          {"median_step_ms", m.median_ms},
          {"min_step_ms", m.min_ms},
          {"max_step_ms", m.max_ms},
          {"wall_mean_step_ms", m.wall_mean_ms},
          {"device_median_step_ms", m.device_median_ms},
          {"interactions_per_second", m.interactions_per_s},
          {"gflops", m.gflops},
          {"flops_per_interaction", 20}};
}

std::vector<ComparisonRow> compare_threading(const RunConfig& base, const std::vector<std::size_t>& sizes,
                                             std::uint64_t warmup, std::uint64_t steps,
                                             const std::function<void(const ComparisonRow&)>& on_row) {
  Ranks const& ranks = world();
  std::vector<ComparisonRow> rows;
  for (std::size_t n : sizes) {
    RunConfig sized = base;
    sized.initial.bodies = n;
    Setup setup;
    agree(ranks, [&] { setup = make_setup(sized); });
    int const max_devices = int(setup.config.devices.size());
    std::vector<std::pair<multigpu::Threading, multigpu::Launch>> ways{
        {multigpu::Threading::single, multigpu::Launch::stream}, {multigpu::Threading::workers, multigpu::Launch::stream}};
    if (setup.config.backend == sim::Backend::cuda && ranks.size() == 1)
      ways.push_back({multigpu::Threading::single, multigpu::Launch::graph});
    for (auto [model, launch] : ways) {
      double one_device_ms = 0;
      if (ranks.size() > 1) {
        // The one-device figure: rank 0's first device alone while the other ranks wait.
        Measurement m;
        agree(ranks, [&] {
          if (ranks.rank() != 0) return;
          multigpu::SimulationConfig c = setup.config;
          c.ranks = &solo_ranks();
          c.threading = model;
          c.launch = launch;
          c.devices.resize(1);
          c.weights.clear();
          multigpu::Simulation sim(setup.bodies, setup.program, c);
          m = measure(sim, warmup, steps);
        });
        double median = m.median_ms;  // rank 0's, to every rank
        std::vector<std::size_t> counts(std::size_t(ranks.size()), 0), offsets(counts.size(), 0);
        counts[0] = 1;
        ranks.all_gather_in_place(&median, sizeof median, counts, offsets);
        m.median_ms = one_device_ms = median;
        rows.push_back({model, launch, 1, n, m, 1.0, 1.0});
        if (on_row) on_row(rows.back());
      }
      for (int g = 1; g <= max_devices; ++g) {
        multigpu::SimulationConfig c = setup.config;
        c.threading = model;
        c.launch = launch;
        c.devices.resize(std::size_t(g));  // the first g devices (and weights) of the resolved list
        if (!c.weights.empty()) {
          // One rank: a prefix of the weights. Several: they span every rank's devices, so fewer
          // devices per rank go without them.
          if (ranks.size() == 1) c.weights.resize(std::size_t(g));
          else if (g < max_devices) c.weights.clear();
        }
        multigpu::Simulation sim(setup.bodies, setup.program, c);
        Measurement const m = measure(sim, warmup, steps);
        int const devices = int(sim.all_slices().size());
        if (devices == 1) one_device_ms = m.median_ms;
        double const speedup = one_device_ms / m.median_ms;
        rows.push_back({model, launch, devices, n, m, speedup, speedup / devices});
        if (on_row) on_row(rows.back());
      }
    }
  }
  return rows;
}

}  // namespace nbody::driver
