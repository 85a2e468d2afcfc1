// driver/benchmark.cpp - measurement and the threading comparison.
#include "driver/benchmark.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "core/bounds.h"
#include "core/clock.h"
#include "core/errors.h"
#include "core/fnv1a.h"
#include "core/enum_names.h"
#include "core/interrupt.h"
#include "core/ranks.h"
#include "driver/run.h"
#include "driver/setup.h"
#include "sim/engines/engine.h"

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

// The force evaluations made between two counts, by the level of the step that ended, up to the highest level any
// ended at.
std::vector<std::uint64_t> level_histogram(const sim::hermite::HermiteCounters& before,
                                           const sim::hermite::HermiteCounters& after) {
  int top = 0;
  for (int k = 0; k < sim::hermite::kLevels; ++k)
    if (after.levels[k] != before.levels[k]) top = k + 1;
  std::vector<std::uint64_t> levels;
  for (int k = 0; k < top; ++k) levels.push_back(after.levels[k] - before.levels[k]);
  return levels;
}

// Enqueues `n` steps in chunks, checking for a signal between them. CPU steps run inside advance(),
// so one process takes them one at a time. GPU steps are only enqueued, but a full launch queue (about
// a thousand launches, some hundred steps) makes the host wait inside a launch until a kernel finishes;
// so chunks hold at most about 50 ms of steps, by `step_seconds` (0: unknown, one step a chunk). Several
// ranks agree on a signal in a collective call, so theirs are chunks of 50 ms on the CPU too, of one
// size on every rank (the largest).
void enqueue(multigpu::Simulation& sim, std::uint64_t n, double step_seconds) {
  bool const several = sim.ranks().size() > 1;
  bool const one_at_a_time = sim.config().backend == sim::Backend::cpu && !several;
  std::uint64_t per_chunk = one_at_a_time || step_seconds <= 0
                                ? 1
                                : std::clamp<std::uint64_t>(std::uint64_t(0.05 / step_seconds), 1, 256);
  // With graphs, whole blocks: a chunk that is not one would run its last steps one by one.
  if (sim.config().launch == multigpu::Launch::graph && per_chunk >= multigpu::kGraphSteps)
    per_chunk -= per_chunk % multigpu::kGraphSteps;
  if (several) per_chunk = std::uint64_t(sim.ranks().max(int(per_chunk)));
  for (std::uint64_t done = 0; done < n;) {
    sim.stop_if_interrupted();
    std::uint64_t const chunk = std::min(per_chunk, n - done);
    sim.advance(chunk);
    done += chunk;
  }
}

// hermite4: `blocks` block steps (fewer where a time limit stops them) in chunks of about 50 ms, by the time
// the last chunk took (the first: `first_chunk` block steps, or by `block_seconds` when known), with a look for
// a signal between chunks. A chunk's block steps follow each other with no wait but what each block step needs
// (one GPU: HermiteEngine::advance_blocks runs them all on the device). Returns the block steps done.
std::uint64_t advance_blocks(multigpu::Simulation& sim, std::uint64_t blocks, double block_seconds,
                             std::uint64_t first_chunk = 1) {
  constexpr double kChunkSeconds = 0.05;
  // Block steps differ in cost by up to N times (a block of one body, every body at the longest step's
  // times): a rate from a few block steps can be far too fast, so the first chunk holds at most
  // kFirstChunk and each later one at most twice the one before (a first chunk of 1,000,000 block steps
  // once ran 5 s past a Ctrl-C).
  constexpr std::uint64_t kFirstChunk = 64;
  std::uint64_t chunk = block_seconds > 0
                            ? std::clamp<std::uint64_t>(std::uint64_t(kChunkSeconds / block_seconds), 1, kFirstChunk)
                            : std::max<std::uint64_t>(first_chunk, 1);
  std::uint64_t done = 0;
  while (done < blocks) {
    sim.stop_if_interrupted();
    // Several ranks: chunks of one size everywhere (the largest), so that all look for a signal between the same
    // block steps.
    if (sim.ranks().size() > 1) chunk = std::uint64_t(sim.ranks().max(int(chunk)));
    std::uint64_t const n = std::min(chunk, blocks - done);
    std::uint64_t const at = sim.steps_done();
    auto const c0 = Clock::now();
    sim.advance(n);
    double const seconds = seconds_since(c0);
    done += sim.steps_done() - at;
    if (sim.stopped_at_time_limit()) break;
    // The next chunk: about kChunkSeconds at this chunk's rate, at most twice this one.
    double const wanted = seconds > 0 ? double(n) * kChunkSeconds / seconds : 2.0 * double(n);
    chunk = std::clamp<std::uint64_t>(std::uint64_t(wanted), 1, std::min<std::uint64_t>(2 * n, 1u << 20));
  }
  return done;
}


// One GPU's engine captures its graph of block steps in its first call of 8 or more (sim/engines/
// hermite_cuda.cu): on a GPU the warm-up begins with a call of this many, whatever --warmup says.
constexpr std::uint64_t kGpuWarmupBlocks = 16;

Measurement measure_blocks(multigpu::Simulation& sim, std::uint64_t warmup, std::uint64_t steps,
                           std::optional<double> t_end) {
  auto const w0 = Clock::now();
  bool const gpu = sim.config().backend == sim::Backend::cuda;
  if (gpu) warmup = std::max(warmup, kGpuWarmupBlocks);
  std::uint64_t const warmed = advance_blocks(sim, warmup, 0.0, gpu ? kGpuWarmupBlocks : 1);
  double const block_seconds = warmed ? seconds_since(w0) / double(warmed) : 0.0;
  BlockMeasurement b;
  b.warmup_steps = warmed;
  b.t_end = t_end;
  // To a time: every block step up to it (the simulation's time limit, cleared after the timing).
  struct ClearTimeLimit {
    multigpu::Simulation& sim;
    ~ClearTimeLimit() { sim.set_time_limit(INFINITY); }
  } const clear_time_limit{sim};
  if (t_end) {
    steps = steps_for_time_limit(sim, *t_end);
    if (steps == 0) {
      char text[160];
      std::snprintf(text, sizeof text, "--t-end %g: the run is at time %g after its %llu warm-up block steps", *t_end,
                    sim.time(), static_cast<unsigned long long>(warmed));
      throw InputError(std::string(text) + (warmed ? "; give a later time or fewer --warmup steps" : "; give a later time"));
    }
  }
  sim::hermite::HermiteCounters const before = sim.hermite_counters();
  b.start_time = sim.time();
  auto const t0 = Clock::now();
  b.block_steps = advance_blocks(sim, steps, block_seconds);
  sim.synchronize();
  b.wall_seconds = seconds_since(t0);
  b.end_time = sim.time();
  sim::hermite::HermiteCounters const after = sim.hermite_counters();
  b.force_evaluations = after.force_evaluations - before.force_evaluations;
  b.interactions = after.interactions - before.interactions;
  b.step_level_histogram = level_histogram(before, after);
  double const wall = b.wall_seconds > 0 ? b.wall_seconds : 1e-9;  // a clock too coarse for an empty run
  b.block_steps_per_second = double(b.block_steps) / wall;
  b.mean_active = b.block_steps ? double(b.force_evaluations) / double(b.block_steps) : 0.0;
  b.interactions_per_second = double(b.interactions) / wall;
  b.time_per_second = (b.end_time - b.start_time) / wall;
  b.state_hash = hermite_state_hash(sim);
  Measurement m;
  m.wall_mean_ms = b.block_steps ? 1e3 * b.wall_seconds / double(b.block_steps) : 0.0;
  m.interactions_per_s = b.interactions_per_second;
  m.gflops = kHermiteFlopsPerInteraction * m.interactions_per_s * 1e-9;
  m.blocks = std::move(b);
  return m;
}

// What the threading comparison compares: the median step (hermite4: the wall clock per block step).
double step_figure_ms(const Measurement& m) { return m.blocks ? m.wall_mean_ms : m.median_ms; }

std::string hex(std::uint64_t v) {
  char buf[20];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

std::uint64_t hermite_state_hash(multigpu::Simulation& sim) {
  sim::BodySet b;
  sim::hermite::HermiteState s;
  sim.hermite_state(b, s);
  Fnv1a h(sim::state_hash(b));  // the state's bytes, then each body's derivatives, time and step
  h.bytes(s.acceleration.data(), s.acceleration.size() * sizeof(Vec3d));
  h.bytes(s.jerk.data(), s.jerk.size() * sizeof(Vec3d));
  h.bytes(s.time.data(), s.time.size() * sizeof(double));
  h.bytes(s.step.data(), s.step.size() * sizeof(double));
  return h.get();
}
std::string state_hash_text(std::uint64_t hash) { return hex(hash); }

nlohmann::json hermite_run_json(multigpu::Simulation& simulation, const sim::hermite::HermiteCounters& since,
                                const sim::hermite::HermiteCounters& timed_since, double wall_seconds) {
  auto const now = simulation.hermite_counters();
  std::uint64_t const hash = hermite_state_hash(simulation);  // every rank takes part
  std::uint64_t const blocks = now.block_steps - since.block_steps, evaluations =
                                   now.force_evaluations - since.force_evaluations,
                      interactions = now.interactions - since.interactions;
  auto const& p = *simulation.program().hermite;
  return {{"block_steps", blocks},
          {"force_evaluations", evaluations},
          {"force_evaluations_per_body", double(evaluations) / double(simulation.bodies())},
          {"step_level_histogram", level_histogram(since, now)},
          {"longest_step", sim::hermite::pow2_at_most(p.dt_max)},
          {"interactions", interactions},
          {"interactions_per_second",
           blocks > 0 && wall_seconds > 0 ? double(now.interactions - timed_since.interactions) / wall_seconds : 0.0},
          {"eta", p.eta},
          {"eta_start", p.eta_start},
          {"dt_max", p.dt_max},
          {"state_hash", state_hash_text(hash)}};
}

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

Measurement measure(multigpu::Simulation& sim, std::uint64_t warmup, std::uint64_t steps,
                    std::optional<double> t_end, const SettingNames& names) {
  steps = std::max<std::uint64_t>(steps, 1);
  if (sim.block_steps()) return measure_blocks(sim, warmup, steps, t_end);
  if (t_end)
    throw InputError("--t-end: a benchmark runs to a time with --integrator hermite4 only (" +
                     sim.program().integrator + " times --steps steps)");
  if (steps > kMaxTimedSteps)
    throw InputError(names.with("--steps", std::to_string(steps)) + ": a benchmark times each of its steps, at most " +
                     std::to_string(kMaxTimedSteps) + " (a longer run: " + names.name("--run") + ")");
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
  m.step_ms = step_ms;
  m.median_ms = median(step_ms);
  m.min_ms = *std::min_element(step_ms.begin(), step_ms.end());
  m.max_ms = *std::max_element(step_ms.begin(), step_ms.end());
  m.wall_mean_ms = 1e3 * wall / double(steps);
  m.enqueue_ms_per_step = 1e3 * enqueue_seconds / double(steps);
  double const n = double(sim.bodies());
  double const force_evaluations = double(sim.program().drifts());  // per step: 3 for yoshida4
  m.interactions_per_s = force_evaluations * n * n / (m.median_ms * 1e-3);
  m.gflops = 20.0 * m.interactions_per_s * 1e-9;
  m.state_hash = sim::state_hash(sim.state());  // after the timing (every rank takes part)
  m.steps_made = sim.steps_done();
  return m;
}

nlohmann::json block_steps_json(const BlockMeasurement& b, double wall_mean_ms) {
  return {{"block_steps", b.block_steps},
          {"wall_seconds", measured(b.wall_seconds)},
          {"block_steps_per_second", measured(b.block_steps_per_second)},
          {"microseconds_per_block_step", measured(1e3 * wall_mean_ms)},
          {"mean_active_bodies", measured(b.mean_active)},
          {"force_evaluations", b.force_evaluations},
          {"interactions", b.interactions},
          {"interactions_per_second", measured(b.interactions_per_second)},
          {"simulation_time_per_second", measured(b.time_per_second)},
          {"state_hash", hex(b.state_hash)}};
}

std::vector<std::string> timing_notices(const Measurement& m, std::uint64_t timed_steps) {
  std::vector<std::string> said;
  if (timed_steps < 3)
    said.push_back(std::to_string(timed_steps) + " timed step" + (timed_steps == 1 ? "" : "s") +
                   ": no median to trust (the step times of a few steps vary); give --steps 3 or more (10 is the "
                   "default)");
  if (m.min_ms > 0 && m.max_ms > 1.5 * m.min_ms) {
    char text[256];
    std::snprintf(text, sizeof text,
                  "the timed steps took %.4g to %.4g ms, the slowest %.1f times the fastest: steps disturbed by other "
                  "work on the machine (or too short for the clock); the median resists a few, a busy machine's "
                  "is not an idle one's",
                  m.min_ms, m.max_ms, m.max_ms / m.min_ms);
    said.push_back(text);
  }
  return said;
}

double measured(double v) {
  if (!std::isfinite(v) || v == 0.0) return v;
  char text[32];
  std::snprintf(text, sizeof text, "%.12g", v);
  return std::strtod(text, nullptr);
}
std::vector<double> measured(std::vector<double> v) {
  for (double& x : v) x = measured(x);
  return v;
}

nlohmann::json units_json(const sim::Units& units) {
  if (!units.physical()) return nullptr;
  return {{"mass", units.mass},
          {"length", units.length},
          {"mass_g", units.mass_g},
          {"length_cm", units.length_cm},
          {"time_s", units.time_s()},
          {"velocity_km_s", units.velocity_cm_per_s() / 1e5}};
}

nlohmann::json damping_json(const sim::StepProgram& program) {
  for (sim::Stage const& s : program.stages)
    if (s.kind == sim::StageKind::damp) return s.value;
  return nullptr;
}

nlohmann::json benchmark_json(const Measurement& m, const multigpu::Simulation& sim, const std::string& source,
                              const sim::Units& units, std::uint64_t warmup, std::uint64_t steps) {
  multigpu::SimulationConfig const& c = sim.config();
  // What every benchmark says: the run, the machine, the rate; the settings as numbers too (the description and source
  // say them in words). hermite4 has no dt (each body its own), a GPU no thread count.
  nlohmann::json const null(nullptr);
  nlohmann::json j = {{"mode", "benchmark"},
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
                      {"dt", m.blocks ? null : nlohmann::json(sim.program().dt)},
                      {"damping", damping_json(sim.program())},
                      {"softening", c.softening},
                      {"units", units_json(units)},
                      {"cpu_threads", c.backend == sim::Backend::cpu ? nlohmann::json(cpu_threads(c)) : null},
                      {"wall_mean_step_ms", measured(m.wall_mean_ms)},
                      {"interactions_per_second", measured(m.interactions_per_s)},
                      {"gflops", measured(m.gflops)}};
  if (m.blocks) {
    // hermite4: block steps timed as one run, so no per-step spread; the block-step figures apart.
    BlockMeasurement const& b = *m.blocks;
    sim::hermite::HermiteParams const& h = *sim.program().hermite;
    j["warmup_steps"] = b.warmup_steps;
    j["timed_steps"] = b.block_steps;
    // As a fixed-step report's: the end state (with each body's derivatives, time and step) and the steps to it.
    j["steps_made"] = sim.steps_done();
    j["state_hash"] = hex(b.state_hash);
    j["flops_per_interaction"] = kHermiteFlopsPerInteraction;
    nlohmann::json hermite = block_steps_json(b, m.wall_mean_ms);
    hermite.update({{"simulation_time_start", b.start_time},
                    {"simulation_time_end", b.end_time},
                    {"t_end", b.t_end ? nlohmann::json(*b.t_end) : nlohmann::json(nullptr)},
                    {"step_level_histogram", b.step_level_histogram},
                    {"longest_step", sim::hermite::pow2_at_most(h.dt_max)},
                    {"eta", h.eta},
                    {"eta_start", h.eta_start},
                    {"dt_max", h.dt_max}});
    j["hermite4"] = hermite;
    j["notices"] = nlohmann::json::array();  // block steps are timed as one run: no spread to judge
    return j;
  }
  j["notices"] = timing_notices(m, steps);
  j["force_evaluations_per_step"] = sim.program().drifts();
  j["warmup_steps"] = warmup;
  j["timed_steps"] = steps;
  j["steps_made"] = m.steps_made;
  j["state_hash"] = hex(m.state_hash);
  j["median_step_ms"] = measured(m.median_ms);
  j["min_step_ms"] = measured(m.min_ms);
  j["max_step_ms"] = measured(m.max_ms);
  j["step_ms"] = measured(m.step_ms);
  j["device_median_step_ms"] = measured(m.device_median_ms);
  j["flops_per_interaction"] = 20;
  return j;
}

void compare_with_earlier(const std::vector<ComparisonRow>& rows, std::size_t first_row, ComparisonRow& row) {
  row.agrees = true;
  row.compared = false;
  if (row.measurement.blocks && rows.size() > first_row) {
    row.agrees = row.measurement.blocks->state_hash == rows[first_row].measurement.blocks->state_hash;
    row.compared = true;
  }
  // Fixed steps: against the size's first row that made as many steps (a graph's capture makes more).
  for (std::size_t k = first_row; !row.measurement.blocks && k < rows.size(); ++k)
    if (rows[k].measurement.steps_made == row.measurement.steps_made) {
      row.agrees = row.measurement.state_hash == rows[k].measurement.state_hash;
      row.compared = true;
      break;
    }
}

std::vector<ComparisonRow> compare_threading(const RunConfig& base, const std::vector<std::size_t>& sizes,
                                             std::uint64_t warmup, std::uint64_t steps,
                                             const std::function<void(const ComparisonRow&)>& on_row,
                                             const std::atomic<bool>* cancel) {
  Ranks const& ranks = world();
  std::vector<ComparisonRow> rows;
  for (std::size_t n : sizes) {
    RunConfig sized = base;
    sized.initial.bodies = n;
    Setup setup;
    agree(ranks, [&] { setup = make_setup(sized); });
    int const max_devices = int(setup.config.devices.size());
    bool const blocks = setup.program.hermite.has_value();
    std::size_t const first_row = rows.size();  // this size's first: what hermite4's rows must agree with
    std::vector<std::pair<multigpu::Threading, multigpu::Launch>> ways{
        {multigpu::Threading::single, multigpu::Launch::stream}, {multigpu::Threading::workers, multigpu::Launch::stream}};
    // hermite4 refuses --launch graph: its one-GPU engine captures graphs of its own.
    if (setup.config.backend == sim::Backend::cuda && ranks.size() == 1 && !blocks)
      ways.push_back({multigpu::Threading::single, multigpu::Launch::graph});
    // Every way on 1..max_devices devices; with several ranks, rank 0's one device alone first.
    std::size_t const rows_of_size = ways.size() * (std::size_t(max_devices) + (ranks.size() > 1 ? 1 : 0));
    auto add_row = [&](ComparisonRow row) {
      row.rows_of_size = rows_of_size;
      compare_with_earlier(rows, first_row, row);
      rows.push_back(std::move(row));
      if (on_row) on_row(rows.back());
    };
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
          c.cancel = cancel;
          try {
            multigpu::Simulation sim(setup.bodies, setup.program, c);
            m = measure(sim, warmup, steps);
          } catch (const sim::StepCancelled&) {  // a signal: every rank ends as interrupted, not as failed (agree)
            throw_if_interrupted();
            throw;
          }
        });
        // Rank 0's figure (and hermite4's end state), to every rank.
        struct {
          double figure;
          std::uint64_t hash, steps;
        } mine{step_figure_ms(m), m.blocks ? m.blocks->state_hash : m.state_hash, m.steps_made};
        std::vector<std::size_t> counts(std::size_t(ranks.size()), 0), offsets(counts.size(), 0);
        counts[0] = 1;
        ranks.all_gather_in_place(&mine, sizeof mine, counts, offsets);
        one_device_ms = mine.figure;
        if (blocks) {
          if (!m.blocks) m.blocks.emplace();
          m.blocks->state_hash = mine.hash;
          m.wall_mean_ms = mine.figure;
        } else {
          m.median_ms = mine.figure;
          m.state_hash = mine.hash;
          m.steps_made = mine.steps;
        }
        add_row({model, launch, 1, n, m, 1.0, 1.0});
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
        c.cancel = cancel;
        multigpu::Simulation sim(setup.bodies, setup.program, c);
        Measurement const m = measure(sim, warmup, steps);
        int const devices = int(sim.all_slices().size());
        if (devices == 1) one_device_ms = step_figure_ms(m);
        double const speedup = one_device_ms / step_figure_ms(m);
        add_row({model, launch, devices, n, m, speedup, speedup / devices});
      }
    }
  }
  return rows;
}

}  // namespace nbody::driver
