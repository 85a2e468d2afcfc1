// driver/run.cpp - the run loop and its outputs.
#include "driver/run.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <new>

#include "core/atomic_file.h"
#include "core/bounds.h"
#include "core/clock.h"
#include "core/console.h"
#include "core/errors.h"
#include "core/interrupt.h"
#include "core/output_path.h"
#include "core/ranks.h"
#include "driver/checkpoints.h"
#include "driver/diagnostics_series.h"
#include "sim/io/checkpoint.h"
#include "sim/physics/diagnostics.h"
#include "sim/physics/hermite_step.h"
#include "sim/physics/scenarios.h"

namespace nbody::driver {
namespace {

// "another run's state, at step 40: plummer (seed 7), 256 bodies, where this run is ...", where the checkpoint `held`
// is not of this run's source (another scenario, seed, file of bodies) or body count; else "".
std::string another_runs_state(const sim::CheckpointHeader& held, const Setup& setup, std::uint64_t bodies) {
  auto const whose = [](const std::string& scenario, std::uint64_t seed, std::uint64_t count) {
    // A scenario's seed; a file's bodies (file:PATH) and a front end's own have none
    bool const seeded = from_name<sim::Scenario>(scenario).has_value();
    return (seeded ? scenario + " (seed " + std::to_string(seed) + ")" : scenario) + ", " + std::to_string(count) +
           " bodies";
  };
  // The same file of bodies named another way ("ic.bin", "./ic.bin", its full path) is the same source.
  auto const same_source = [](const std::string& a, const std::string& b) {
    if (a == b) return true;
    if (a.rfind("file:", 0) != 0 || b.rfind("file:", 0) != 0) return false;
    std::error_code e1, e2;
    auto const ca = std::filesystem::weakly_canonical(a.substr(5), e1);
    auto const cb = std::filesystem::weakly_canonical(b.substr(5), e2);
    return !e1 && !e2 && ca == cb;
  };
  if (same_source(held.run.scenario, setup.scenario) && held.run.seed == setup.seed && held.bodies == bodies) return {};
  return "another run's state, at step " + std::to_string(held.run.step) + ": " +
         whose(held.run.scenario, held.run.seed, held.bodies) + ", where this run is " +
         whose(setup.scenario, setup.seed, bodies);
}

// A sample of the diagnostics series, begun at its step (Simulation::begin_sample) and ended and
// measured on the host once the next steps are enqueued, while the devices run them.
struct PendingSample {
  bool taken = false;
  std::uint64_t step = 0;
  double time = 0.0, wall = 0.0;
  sim::BodySet state;  // reused from sample to sample
};

// A run whose energy moved by more than this fraction of its own start's did not resolve its closest orbits: what
// it computed is not the physics it was asked for. Said at the end, with what to change; for hermite4 also at the first
// sample of a diagnostics series that shows it, so that a long run need not be waited out to learn it (its error
// grows and stays; a symplectic integrator's rises at a close passage and recovers, and only its end is judged).
// Measured from this
// run's start, not a checkpoint's step 0: the advice is about this run's settings, and an earlier run's loss (another
// step, another softening, euler-damped's removal by design) is not this run's. Not judged: a run of no steps and
// euler-damped. Where the total energy is small beside the kinetic and potential energies it sums (below
// kEnergyCancelled of K + |W|: a parabolic encounter, a system barely bound or unbound), an error relative to it
// measures little: the change is judged against kEnergyCancelled of K + |W| instead, the same bound at the edge. (A
// virialised bound system has |E| = (K + |W|) / 3, so its bound is 3.3e-3 of K + |W|; at the edge it is 1e-3.)
constexpr double kEnergyWarning = 1e-2;
constexpr double kEnergyCancelled = 0.1;

// The energy's change from `start` to `now` where it passes the bound, as "the energy changed by ... (more than
// ...): " and what to change; "" where it does not. `baseline`: the run's start energy, where it began before
// `start` (a restart's checkpoint records it): a chain of restarts is weighed whole, not each piece on its own.
// (whole_run_baseline gives it: not for a restart that changed a setting, the advice taken, judged on its own.)
std::string energy_warning(const Setup& setup, const sim::Diagnostics& start, const sim::Diagnostics& now,
                           std::optional<double> baseline) {
  auto const& p = setup.run.physics;
  if (p.integrator == sim::Integrator::euler_damped) return {};
  double const e0 = baseline ? *baseline : start.total();
  // Weighed in the centre-of-mass frame, as the energy error is: a system's bulk motion hides no error.
  double const scale = start.internal_kinetic + std::abs(start.potential);
  bool const cancelled = std::abs(e0 - now.bulk_kinetic()) < kEnergyCancelled * scale;
  double const change = cancelled ? std::abs(now.total() - e0) / scale : sim::relative_energy_error(now, e0);
  double const bound = cancelled ? kEnergyWarning * kEnergyCancelled : kEnergyWarning;
  if (!(change > bound)) return {};
  char measured[200];
  if (cancelled)
    std::snprintf(measured, sizeof measured,
                  "the energy changed by %.3g of its start's kinetic plus potential energy about the centre of mass "
                  "(more than %g; their sum, %.3g, is small beside them)",
                  change, bound, e0 - now.bulk_kinetic());
  else
    std::snprintf(measured, sizeof measured, "the energy changed by %.3g of its %s (more than %g)", change,
                  baseline && *baseline != start.total() ? "run's start, before its restarts" : "start", bound);
  char text[600];
  double const softening = setup.config.softening;
  auto const& names = setup.run.names;  // "--eta" on the command line, "eta" in Python
  std::string const eta = names.name("--eta"), dt = names.name("--dt"), soft = names.name("--softening");
  if (p.integrator == sim::Integrator::hermite4 && softening > 0)
    std::snprintf(text, sizeof text,
                  "%s: the block steps did not resolve the closest encounters; give a smaller %s (this run: %g) "
                  "or a larger %s (this run: %g)",
                  measured, eta.c_str(), p.hermite.eta, soft.c_str(), softening);
  else if (p.integrator == sim::Integrator::hermite4)
    std::snprintf(text, sizeof text,
                  "%s: the block steps did not resolve the closest encounters; give a smaller %s (this run: %g) "
                  "or a softening (this run: none, with no regularisation)",
                  measured, eta.c_str(), p.hermite.eta);
  else {
    // A dt typed with a unit is named as typed, with the number it is in the run's units.
    char step[96];
    auto const typed = names.typed.find("--dt");
    if (typed != names.typed.end())
      std::snprintf(step, sizeof step, "%s, %g in its units", typed->second.c_str(), setup.program.dt);
    else if (setup.units.physical())  // (a restart's, from its file: the user gave it in a unit most likely)
      std::snprintf(step, sizeof step, "%g, %s", setup.program.dt, setup.units.physical(setup.program.dt).c_str());
    else
      std::snprintf(step, sizeof step, "%g", setup.program.dt);
    std::snprintf(text, sizeof text,
                  "%s: the steps did not resolve the closest orbits; give a smaller %s (this run: %s) or a larger "
                  "%s (this run: %g)",
                  measured, dt.c_str(), step, soft.c_str(), softening);
  }
  return text;
}

std::optional<double> whole_run_baseline(const Setup& setup, const RunResult& result) {
  return setup.course_changed ? std::nullopt : result.initial_energy;
}

std::string energy_warning(const Setup& setup, const RunResult& result) {
  if (!result.start || !result.end || result.steps == 0) return {};
  return energy_warning(setup, *result.start, *result.end, whole_run_baseline(setup, result));
}

// Gives the series its name; a series that cannot be published keeps its rows in the partial file.
void close_series(std::unique_ptr<DiagnosticsSeries>& series, RunResult& result, RunObserver& observer, bool ended,
                  const SettingNames& names) {
  if (!series) return;
  try {
    series->close(ended);
    if (!series->partial_lost().empty()) observer.warning(series->partial_lost());
    if (!series->not_synced().empty()) observer.warning(series->not_synced());
    if (!series->kept_past_end().empty())
      observer.notice(names.with_text("--diagnostics", series->path()) + ": the " + series->kept_past_end() +
                      " stay after its own, rows of its course that a restart from a later checkpoint goes on from");
  } catch (const SeriesKept& e) {  // a stopped run's rows beside a finished series: not written under its name
    result.outputs_not_written.push_back({names.name("--diagnostics"), series->path(), e.what()});
  } catch (const std::runtime_error& e) {
    result.diagnostics_failure = e.what();
    result.diagnostics_rows_in = series->rows_in();
    observer.warning(e.what());
  }
  series.reset();
}

}  // namespace

double reach_of(double t) { return t - 4.0 * (std::nextafter(t, INFINITY) - t); }

std::uint64_t steps_to_time(const multigpu::RunClock& c, double dt, double t_end, const NamedSetting& t_end_name,
                            const std::string& steps_of) {
  auto text = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return std::string(buf);
  };
  std::string const named = t_end_name.with(text(t_end));
  if (!std::isfinite(t_end)) throw InputError(named + ": must be a finite time");
  double const reach = reach_of(t_end);
  if (c.time(dt) >= reach) return 0;
  double const estimate = std::ceil((t_end - c.time(dt)) / dt);
  if (!(estimate <= double(kMaxSteps)))
    throw InputError(named + ": more than " + text(double(kMaxSteps)) + " " +
                     (steps_of.empty() ? "steps of dt " + text(dt) : steps_of) + " away (the run is at time " +
                     text(c.time(dt)) + ")");
  auto time_after = [&](std::uint64_t k) {
    return multigpu::RunClock(c.step + k, c.start_time, c.dt_since_step, c.dt_since_time).time(dt);
  };
  auto k = std::uint64_t(std::max(0.0, estimate));
  while (time_after(k) < reach) ++k;
  while (k > 1 && time_after(k - 1) >= reach) --k;
  return k;
}

std::uint64_t steps_for_time(const multigpu::RunClock& c, const sim::StepProgram& program, double t_end,
                             const NamedSetting& t_end_name, const SettingNames& names) {
  // The checks, for every integrator (hermite4's program.dt is its longest step), naming dt as typed.
  char dt[32];
  std::snprintf(dt, sizeof dt, "%g", program.dt);
  std::string const typed = names.setting(program.hermite ? "--dt-max" : "--dt").typed;
  std::string const steps_of =
      (program.hermite ? "block steps of at most " : "steps of dt ") + (typed.empty() ? std::string(dt) : typed);
  std::uint64_t const steps = steps_to_time(c, program.dt, t_end, t_end_name, steps_of);
  if (!program.hermite) return steps;
  return kMaxSteps - std::min(c.step, kMaxSteps);  // the block time is the simulation's: it stops there
}

std::uint64_t steps_for_time_limit(multigpu::Simulation& sim, double t_end, const NamedSetting& t_end_name,
                                   const SettingNames& names, bool finish) {
  std::uint64_t const steps = steps_for_time(sim.clock(), sim.program(), t_end, t_end_name, names);
  if (!sim.block_steps()) return steps;
  if (sim.time() >= t_end) return 0;
  sim.set_time_limit(t_end, finish);
  return steps;
}

std::size_t bytes_named_after(const std::string& option, bool periodic_checkpoints) {
  if (option == "--diagnostics") return partial_path("").size();
  if (option == "--checkpoint" && periodic_checkpoints) return series_path("c", 0).size() - 1;  // "_00000000"
  return 0;
}

std::string t_end_notice(multigpu::Simulation& sim, double t_end, const NamedSetting& t_end_name,
                         const sim::Units& units) {
  if (!sim.block_steps() || !(sim.time() < t_end)) return {};
  sim::hermite::HermiteState const state = hermite_state_of(sim);
  double const block = state.block_time();
  auto const predicted = std::count_if(state.time.begin(), state.time.end(), [&](double t) { return t < block; });
  std::string text = t_end_name.with(units.time_text(t_end)) + " is not a block time: the run ended at " +
                     units.time_text(sim.time()) + ", the last block time before it, ";
  if (predicted == 0) return text + "every body at it";
  text += "with " + std::to_string(predicted) + " of " + std::to_string(sim.bodies()) +
          " bodies predicted to it (to third order: the state read there is less accurate than at their own steps); "
          "a " + t_end_name.name + " that is ";
  if (state.epoch != 0.0) text += "the start time " + units.time_text(state.epoch) + " plus ";
  return text + "a multiple of " + units.time_text(sim::hermite::pow2_at_most(sim.program().hermite->dt_max)) +
         " (the longest step) ends with every body at it";
}

std::string sample_dt_notice(const multigpu::Simulation& sim, double dt, const NamedSetting& dt_name,
                             const std::string& what, const sim::Units& units) {
  if (!sim.block_steps() || !(dt > 0)) return {};
  double const top = sim::hermite::pow2_at_most(sim.program().hermite->dt_max);
  double const epoch = sim.block_epoch();
  if (std::fmod(dt, top) == 0.0 && std::fmod(epoch, top) == 0.0) return {};
  std::string const tail =
      ": each " + what + " is at the first block time at or past its multiple, most bodies predicted to it";
  std::string const longest = units.time_text(top);
  if (std::fmod(epoch, top) != 0.0)
    return dt_name.with(units.time_text(dt)) + tail + " (every body is at the start time " + units.time_text(epoch) +
           " plus a multiple of the longest step " + longest + ", which no multiple of a time is in general)";
  return dt_name.with(units.time_text(dt)) + ": not a multiple of the longest step " + longest + tail +
         " (a multiple of " + longest + " has every body at it)";
}

std::string already_at_notice(double now, double t_end, const NamedSetting& t_end_name, const sim::Units& units) {
  return t_end_name.with(units.time_text(t_end)) + ": the run is already at time " + units.time_text(now);
}

void refuse_t_end_before_start(double start, double t_end, const NamedSetting& t_end_name, const std::string& source,
                               const sim::Units& units) {
  double const reach = start - 4.0 * (std::nextafter(start, INFINITY) - start);
  if (t_end < reach)
    throw InputError(t_end_name.with(units.time_text(t_end)) + ": before the time " + units.time_text(start) + " that " + source +
                     " starts the run at, and a run goes forward; give a later time");
}

ContinuedEnd continued_end(const Setup& setup) {
  ContinuedEnd c;
  std::string const& path = setup.run.initial.checkpoint;
  SettingNames const& names = setup.run.names;
  std::string const other = " (" + names.name("--steps") + " or " + names.name("--t-end") + " sets another end)";
  bool const blocks = setup.program.hermite.has_value();
  auto counted = [&](std::uint64_t k) {
    return std::to_string(k) + (blocks ? " block step" : " step") + (k == 1 ? "" : "s");
  };
  double const now = setup.clock.time(setup.program.dt);
  RunEnd const& file = setup.file_end;
  if (file.time) {
    // (hermite4 too: a state at the last block time before its end, one that is no block time, goes on to the finish
    // there, every body brought to it, as the run that wrote it would have.)
    bool const going = now < (blocks ? *file.time : reach_of(*file.time));  // fixed steps: to rounding
    if (going) {
      c.t_end = file.time;
      c.notice = path + "'s run was going to time " + setup.units.time_text(*file.time) + ": this run goes on to it" + other;
    } else {
      c.steps = 0;
      c.notice = path + "'s run reached its end, time " + setup.units.time_text(*file.time) +
                 (now == *file.time ? "" : " (it is at time " + setup.units.time_text(now) + ")") + ": no steps" + other;
    }
  } else if (file.step && file.in_block_steps != blocks) {
    // Block steps and fixed steps count otherwise: the front end's default, said.
    c.notice = path + "'s run was going to " + (file.in_block_steps ? "block step " : "step ") +
               std::to_string(*file.step) + ", which " + setup.program.integrator + " does not count in " +
               (blocks ? "block steps" : "steps of dt") + ": it is not taken up";
  } else if (file.step) {
    c.steps = *file.step > setup.clock.step ? *file.step - setup.clock.step : 0;
    if (*c.steps > 0)
      c.notice = path + "'s run was going to " + (blocks ? "block step " : "step ") + std::to_string(*file.step) +
                 ": this run makes the " + counted(*c.steps) + " left" + other;
    else
      c.notice = path + "'s run reached its end, " + (blocks ? "block step " : "step ") +
                 std::to_string(*file.step) + ": no steps" + other;
  } else if (!path.empty()) {
    // Python's checkpoint() records none (a script's runs name their own), nor did an older nbody.
    c.notice =
        path + " records no end of the run it continues (Python's checkpoint() writes none, nor did an older nbody)";
  }
  return c;
}

namespace {

// The checkpoint `path` would be the series file for `step` of ("out/c_00000010.h5", step 10: "out/c.h5"), or nothing.
std::optional<std::string> series_base(const std::string& path, std::uint64_t step) {
  char digits[32];
  std::snprintf(digits, sizeof digits, "_%08llu", static_cast<unsigned long long>(step));
  std::size_t const at = path.rfind(digits);
  if (at == std::string::npos) return std::nullopt;
  std::string const base = path.substr(0, at) + path.substr(at + std::char_traits<char>::length(digits));
  if (base.empty() || series_path(base, step) != path) return std::nullopt;
  return base;
}

// Where `path` holds an nbody snapshot a reader of the folder takes for a state of its own, what it is ("step 50, time
// 0.5, named as a series' file of that step"; "..., of another run": other bodies), else "". Read on rank 0 alone.
std::string snapshot_there(const std::string& path, const Setup& setup, std::size_t bodies, const SettingNames& names) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec) || !sim::is_nbody_snapshot(path)) return {};
  try {
    sim::Snapshot const there = sim::read_snapshot(path, names, false);
    bool const source = std::filesystem::equivalent(path, setup.source, ec);
    bool const series_file = series_base(path, there.step).has_value();
    if (series_file || there.count != bodies)
      return "step " + std::to_string(there.step) + ", time " + setup.units.time_text(there.time) +
             (source ? ", the file this run loaded" : "") +
             (series_file ? ", named as a series' file of that step" : ", of another run");
  } catch (const std::runtime_error&) {  // unreadable: replaced as any output
  }
  return {};
}

}  // namespace

void refuse_series_checkpoint(const std::string& path, const std::string& given, const Setup& setup,
                              multigpu::Simulation& sim, const SettingNames& names) {
  std::string refused;
  std::error_code ec;
  if (sim.ranks().rank() == 0 && std::filesystem::is_regular_file(path, ec)) {
    try {
      sim::CheckpointHeader const header = sim::read_checkpoint_header(path, names);
      std::uint64_t const held = header.run.step;
      if (auto const base = series_base(path, held);
          base && held != sim.steps_done() && another_runs_state(header, setup, sim.bodies()).empty())
        refused = given + ": " + path + " is the checkpoint of step " + std::to_string(held) +
                  " of a series (as its name says), which this would replace with step " +
                  std::to_string(sim.steps_done()) + "'s state, step " + std::to_string(held) +
                  "'s own lost; name the series' own checkpoint (" + *base + ") or another file";
    } catch (const std::runtime_error&) {  // no checkpoint: replaced_state_warning says what it is
    }
  }
  if (sim.ranks().size() > 1) refused = sim.ranks().all_gather(refused).front();
  if (!refused.empty()) throw InputError(refused);
}

std::string replaced_state_warning(const std::string& path, const std::string& given, bool checkpoint,
                                   const Setup& setup, multigpu::Simulation& sim, const SettingNames& names) {
  std::string said;
  std::error_code ec;
  if (sim.ranks().rank() == 0 && std::filesystem::is_regular_file(path, ec) &&
      !std::filesystem::equivalent(path, setup.source, ec)) {
    std::string const replaced = ": name another file to keep it";
    try {
      sim::CheckpointHeader const held = sim::read_checkpoint_header(path, names);
      std::string const other = another_runs_state(held, setup, sim.bodies());
      if (!checkpoint)
        said = given + " replaces a checkpoint (step " + std::to_string(held.run.step) + ") with a snapshot, which " +
               names.name("--load") + " reads and " + names.name("--restart") + " does not" + replaced;
      else if (!other.empty())
        said = given + " replaces " + other + replaced;
    } catch (const std::runtime_error&) {  // no checkpoint: a snapshot, or another file (replaced as any output)
      if (std::string const snapshot = snapshot_there(path, setup, sim.bodies(), names); !snapshot.empty())
        said = given + " replaces a snapshot (" + snapshot + ")" + (checkpoint ? " with a checkpoint" : "") + replaced;
    }
  }
  if (sim.ranks().size() > 1) said = sim.ranks().all_gather(said).front();
  return said;
}

namespace {

// A restart's series, as take_up_cadences and recorded_cadences see them.
struct OutputSeries {
  const char* noun;           // "diagnostics rows", "periodic checkpoints": what comes at each cadence
  const char* left_out;       // what a run that writes none says it misses ("" for none said)
  const char* option;         // the output's option ("--diagnostics")
  const char* every_option;   // its cadences' options
  const char* dt_option;
  std::uint64_t default_every;  // with no cadence named (0: none between the start and the end)
  bool written;
  bool named;  // its cadence named by the front end (0 included)
  std::uint64_t* every;
  double* dt;
  Cadence OutputCadences::*member;
};

std::vector<OutputSeries> output_series(RunOutputs& o) {
  return {{"diagnostics rows", "this run's will be missing from the series",
           "--diagnostics", "--diagnostics-every", "--diagnostics-dt", kDefaultDiagnosticsEvery, !o.diagnostics.empty(),
           o.diagnostics_every > 0 || o.diagnostics_dt > 0, &o.diagnostics_every, &o.diagnostics_dt,
           &OutputCadences::diagnostics},
          {"periodic checkpoints", "", "--checkpoint", "--checkpoint-every", "--checkpoint-dt", 0, !o.checkpoint.empty(),
           o.checkpoint_cadence_named || o.checkpoint_every > 0 || o.checkpoint_dt > 0, &o.checkpoint_every,
           &o.checkpoint_dt, &OutputCadences::checkpoints},
          {"snapshots", "this run's will be missing from the series",
           "--snapshots", "--snapshot-every", "--snapshot-dt", 0, o.snapshots.enabled(),
           o.snapshot_cadence_named || o.snapshots.every > 0 || o.snapshots.dt > 0, &o.snapshots.every,
           &o.snapshots.dt, &OutputCadences::snapshots}};
}

// The cadences a run's checkpoints record: each series' own (a series by steps with none named: its default), or,
// for one it writes none of, the cadence of the run it continues where that counts steps alike.
OutputCadences recorded_cadences(const Setup& setup, bool blocks, std::uint64_t now, const RunOutputs& outputs) {
  RunOutputs o = outputs;
  OutputCadences const& before = setup.continued_cadences;
  bool const continues = before.any() && now == before.at_step;
  OutputCadences r;
  r.in_block_steps = blocks;
  for (auto const& s : output_series(o)) {
    Cadence const was = before.*s.member;
    if (s.written)
      r.*s.member = *s.dt > 0 ? Cadence{0, *s.dt} : Cadence{*s.every ? *s.every : s.default_every, 0.0};
    else if (continues && (was.dt > 0 || before.in_block_steps == blocks))
      r.*s.member = was;
  }
  return r;
}

}  // namespace

void take_up_cadences(const Setup& setup, bool blocks, std::uint64_t now, std::uint64_t steps, RunOutputs& o) {
  if (!o.snapshot_precision_named) o.snapshots.precision = blocks ? Precision::fp64 : Precision::fp32;
  std::string const& from = setup.run.initial.checkpoint;  // the checkpoint continued
  SettingNames const& n = o.names;
  // A series the run goes on with keeps the precision of its files so far (a restart of an fp64 series would otherwise
  // write the rest in its default, replacing an earlier start's fp64 files from the restart's step on with fp32 ones);
  // one named otherwise is said. The precision is the latest file's of this run's course up to its step (either HDF5
  // ending), passing over files it cannot read and another run's, which it replaces.
  if (o.snapshots.enabled() && (now > 0 || o.from_checkpoint)) {
    std::vector<std::pair<std::uint64_t, std::string>> files;  // (step, path), the latest first
    for (std::string const& base : {o.snapshots.base, snapshot_base_with_other_ending(o.snapshots.base)}) {
      SnapshotSeries series = o.snapshots;
      series.base = base;
      for (std::uint64_t step : series_steps_within([&](std::uint64_t k) { return series.path(k); }, 0, now))
        files.emplace_back(step, series.path(step));
    }
    std::sort(files.begin(), files.end(), [](auto const& a, auto const& b) { return a.first > b.first; });
    constexpr std::size_t kMostRead = 16;  // headers only; a series of another run's files is not searched through
    for (std::size_t k = 0; k < std::min(files.size(), kMostRead); ++k) {
      std::optional<sim::Snapshot> held;
      try {
        held = sim::read_snapshot(files[k].second, n, false);
      } catch (const std::runtime_error&) {  // not a snapshot nbody reads: check_run_outputs says what of it
        continue;
      }
      if (o.course.empty() || held->course != o.course) continue;
      if (held->precision != o.snapshots.precision) {
        std::string const file = files[k].second + ", the series' file at step " + std::to_string(files[k].first) +
                                 ", is " + name_of(held->precision);
        if (o.snapshot_precision_named) {
          o.said.push_back(file + "; this run's snapshots are " + name_of(o.snapshots.precision) + " (" +
                           n.name("--snapshot-precision") + ")");
        } else {
          o.snapshots.precision = held->precision;
          o.said.push_back(file + ": so are this run's snapshots (" + n.name("--snapshot-precision") +
                           " sets another)");
        }
      }
      break;
    }
  }
  // A cadence by time shorter than any step the run takes writes at every step: a mistyped exponent (1e-30 for 1e-3)
  // would fill a disk with a file a step. Said, with the step it is below.
  for (auto const& s : output_series(o)) {
    if (!s.written || !s.named || !(*s.dt > 0) || steps == 0) continue;
    double const shortest = setup.program.hermite ? setup.program.hermite->dt_min : setup.program.dt;
    if (*s.dt >= shortest) continue;
    SettingNames const& typed = setup.run.names;  // with the texts given (a time with its unit)
    o.said.push_back(typed.with(s.dt_option, setup.units.time_text(*s.dt)) + " is shorter than " +
                     (setup.program.hermite ? "the shortest step hermite4 takes (" + setup.units.time_text(shortest) +
                                                  "): " + s.noun + " at every block step"
                                            : "the time step (" + typed.with("--dt", setup.units.time_text(shortest)) +
                                                  "): " + s.noun + " at every step"));
  }
  if (!o.state_stays && !from.empty() && now == setup.clock.step && steps > 0 && o.checkpoint.empty() &&
      o.save.empty())
    o.said.push_back("this run continues " + from + " but writes no state of its own (no " + n.name("--checkpoint") +
                     " or " + n.name("--save") + "): a restart after it starts from " + from + " again");
  OutputCadences const& before = setup.continued_cadences;
  if (!before.any() || now != before.at_step) return;
  auto const counted = [](std::uint64_t k, bool in_blocks) {
    return k == 1 ? std::string(in_blocks ? "block step" : "step")
                  : std::to_string(k) + (in_blocks ? " block steps" : " steps");
  };
  for (auto const& s : output_series(o)) {
    Cadence const was = before.*s.member;
    if (!was.named()) continue;
    // (A series its run left out has the cadence of the run before that: "are", not "were written".)
    // (A time in physical units is said in one too, as it was most likely given: "25kyr": Units::time_text.)
    std::string const cadence = was.dt > 0 ? "at every multiple of time " + setup.units.time_text(was.dt)
                                           : "every " + counted(was.every, before.in_block_steps);
    if (!s.written) {
      if (steps > 0 && *s.left_out)
        o.said.push_back(before.source + "'s " + s.noun + " are " + cadence + "; this run writes none, so " +
                         s.left_out + " (" + n.name(s.option) + " continues them)");
      continue;
    }
    if (s.named) continue;  // the run's own
    std::string const other = " (" + n.name(s.every_option) + " or " + n.name(s.dt_option) + " sets another)";
    if (was.dt > 0 || before.in_block_steps == blocks) {
      if (was.dt > 0)
        *s.dt = was.dt;
      else
        *s.every = was.every;
      if (s.member == &OutputCadences::checkpoints) o.checkpoint_cadence_from = before.source;
      // (The default itself goes without saying; so does any cadence where the run makes no step, a job script's
      // resubmission of a run that has ended.)
      if (steps > 0 && (was.dt > 0 || was.every != s.default_every))
        o.said.push_back(before.source + "'s " + s.noun + " are " + cadence + ": so are this run's" + other);
    } else if (steps > 0) {
      o.said.push_back(before.source + "'s " + s.noun + " are " + cadence + ", which " + setup.program.integrator +
                       " does not count in: not taken up" + other);
    }
  }
}

std::string series_names_notice(const RunOutputs& o, std::uint64_t last) {
  constexpr std::uint64_t kEightDigits = 99999999;  // series_path's and the snapshots' names: "_%08llu"
  bool const series = o.snapshots.enabled() || (!o.checkpoint.empty() && (o.checkpoint_every || o.checkpoint_dt > 0));
  if (!series || last <= kEightDigits || last >= kMaxSteps) return {};  // kMaxSteps: no end known in steps
  return "this run's series may pass step 99999999, where its files' names (a step in 8 digits) get longer: ordered "
         "by name, those come before the earlier ones; a tool that takes a series in the order of its names (yt's "
         "DatasetSeries) should be given it in the order of Header/Step";
}

std::vector<std::string> check_run_outputs(const RunOutputs& o, std::uint64_t first, std::uint64_t last,
                                           const std::vector<std::pair<std::string, std::string>>& others,
                                           const SettingNames& names) {
  std::vector<std::string> notices;
  auto all = others;
  all.insert(all.end(), {{names.name("--checkpoint"), o.checkpoint},
                         {names.name("--save"), o.save},
                         {names.name("--diagnostics"), o.diagnostics}});
  // The periodic checkpoints' cadence as the messages name it: with where it was taken up from, where it was.
  auto checkpoint_cadence = [&] {
    std::string const text = o.checkpoint_every ? names.with("--checkpoint-every", std::to_string(o.checkpoint_every))
                                                : names.with("--checkpoint-dt", o.units.time_text(o.checkpoint_dt));
    return o.checkpoint_cadence_from.empty() ? text : text + " (taken up from " + o.checkpoint_cadence_from + ")";
  };
  if (o.checkpoint_every && !o.checkpoint.empty())
    check_step_series([&](std::uint64_t step) { return series_path(o.checkpoint, step); }, o.checkpoint_every, first,
                      last, {}, checkpoint_cadence() + " writes", all);
  if (o.checkpoint_dt > 0 && !o.checkpoint.empty())  // by time: at any step
    check_step_series([&](std::uint64_t step) { return series_path(o.checkpoint, step); }, 1, first, last, {},
                      checkpoint_cadence() + " writes", all);
  // Two series of one name would write each other's files (a snapshot over the periodic checkpoint of its step), and
  // two whose names differ only in the ending (out/c_*.h5 beside out/c_*.hdf5) are one series to a tool reading
  // out/c_*, as a new run refuses to mix them below: their names are made alike at every step, so one step tells.
  if ((o.checkpoint_every || o.checkpoint_dt > 0) && !o.checkpoint.empty() && o.snapshots.enabled()) {
    std::string const checkpoint = series_path(o.checkpoint, first + 1), snapshot = o.snapshots.path(first + 1);
    SnapshotSeries other = o.snapshots;
    other.base = snapshot_base_with_other_ending(o.snapshots.base);
    std::string const both = names.with_text("--snapshots", o.snapshots.base) + " and " + checkpoint_cadence() +
                             " with " + names.with_text("--checkpoint", o.checkpoint);
    if (checkpoint == snapshot)
      throw InputError(both + " both write " + snapshot + " and the like; give the series different names");
    if (checkpoint == other.path(first + 1))
      throw InputError(both + " write " + snapshot + " beside " + checkpoint + " and the like, one series to a tool "
                       "that reads the folder by a pattern; give the series different names");
  }
  std::error_code folder_error;
  if (o.snapshots.enabled() &&
      (o.snapshots.base.back() == '/' || std::filesystem::is_directory(o.snapshots.base, folder_error))) {
    SnapshotSeries example = o.snapshots;
    bool const slash = example.base.back() == '/';
    example.base += slash ? "snap" : "/snap";
    throw InputError(names.with_text("--snapshots", o.snapshots.base) + (slash ? ": ends in '/'" : ": is a folder") +
                     ": name the series' files, e.g. " + names.with_text("--snapshots", example.base) + " (" +
                     example.path(0) + ", ...)");
  }
  if (!o.diagnostics.empty()) {
    // First: a folder is named as one, not as a format; and the name leaves room for its .partial.
    check_output_path(o.diagnostics, "--diagnostics", names, bytes_named_after("--diagnostics", false));
    series_format(o.diagnostics, names);
    check_output_path(partial_path(o.diagnostics), "--diagnostics", names);
  }
  // A run from step 0 is a new run: files of its series past step 0 are another run's, among which its own would
  // sit, one series of two runs to whoever reads the folder (unless every one is of its own course: below). Refused,
  // nothing removed, every such series named. (A
  // run past step 0, or a restart of a step-0 checkpoint, a branch of it too, goes on: the files past its step of its
  // own course are an earlier start's, which died after its last checkpoint and which the restart writes again bit for
  // bit; those of another course are refused below.)
  std::string mixed;
  // Its end: a step where one is known (by steps, or fixed steps to a time: the first step at or past it, which the
  // run itself reaches), else (block steps to a time, with no count known) the time.
  bool const by_step = last < kMaxSteps;
  auto past_end = [&](std::uint64_t step, double time) {
    if (by_step) return step > last;
    return o.end_time && time > *o.end_time + 1e-12 * std::abs(*o.end_time);
  };
  std::string const end_text = by_step || !o.end_time ? "step " + std::to_string(last) : "time " + o.units.time_text(*o.end_time);
  // The steps past the run's first at which each series writes a file: a snapshot at its end, on its cadence (any
  // step, by time); a periodic checkpoint on its cadence (any step, by time). (At the first step, a start snapshot, as
  // driver::run decides: not where the file there is of this run's course, which the run goes on from.)
  auto snapshot_written = [&](std::uint64_t step) {
    return step > first && step <= last && (step == last || o.snapshots.dt > 0 || o.snapshots.due(step));
  };
  auto checkpoint_written = [&](std::uint64_t step) {
    return step > first && step <= last && (o.checkpoint_dt > 0 || (o.checkpoint_every && step % o.checkpoint_every == 0));
  };
  // An earlier start of this very command, killed before it ended (a job script's fresh command, resubmitted), left
  // files that the run writes again to the bit as it passes them: it says so, and goes on. A file is taken for one
  // only where it is of this run's course (driver/course.h: the same bodies and settings, so the same trajectory),
  // at a step this run writes it at (`written`: at or before its end, on its cadence), in the same units (and, for a
  // snapshot, the same precision); and only where the run's --checkpoint, if of its course, holds no step past its
  // end (its end, which an earlier start killed before it did not write). Else, or for a file that records no course,
  // the files are another run's. `written` null: no file is (the series of the same name with the other ending).
  bool checkpoint_past_end = false;
  if (!o.checkpoint.empty() && !o.course.empty() && std::filesystem::is_regular_file(o.checkpoint, folder_error))
    try {
      sim::CheckpointHeader const held = sim::read_checkpoint_header(o.checkpoint, names);
      checkpoint_past_end = held.run.course == o.course && held.run.step > first &&
                            past_end(held.run.step, held.run.time());
    } catch (const std::runtime_error&) {  // not a checkpoint: the run says what it does with it
    }
  std::size_t stopped_found = 0;  // of them, stopped starts' states off the cadence (removed once passed)
  auto earlier_start = [&](std::uint64_t step, const std::string& path, bool checkpoint,
                           const std::function<bool(std::uint64_t)>& written) {
    if (!written || o.course.empty() || checkpoint_past_end || step > last) return false;
    try {
      if (checkpoint) {
        if (!written(step)) return false;
        sim::CheckpointHeader const held = sim::read_checkpoint_header(path, names);
        return held.run.course == o.course && held.run.units.same_scale(o.units);
      }
      // (Off the cadence too where it is the state a stopped start reached with no checkpoint of it: this run passes
      // its step and removes it, as the series of a run never stopped has none there.)
      sim::Snapshot const held = sim::read_snapshot(path, names, false);
      bool const own = (written(step) || held.stopped) && held.course == o.course && held.units.same_scale(o.units) &&
                       held.precision == o.snapshots.precision;
      if (own && held.stopped) ++stopped_found;
      return own;
    } catch (const std::runtime_error&) {  // unreadable: no earlier start's
      return false;
    }
  };
  // `checkpoints`: the files are checkpoints, the last of which a restart goes on from (an earlier start of this very
  // command, killed, left them; removing them would lose that).
  auto refuse_mixing = [&](const std::function<std::string(std::uint64_t)>& path_of, const std::string& what,
                           bool checkpoints, const std::function<bool(std::uint64_t)>& written) {
    std::vector<std::uint64_t> const steps = series_steps_within(path_of, 1, ~std::uint64_t(0));
    if (steps.empty()) return;
    stopped_found = 0;
    std::vector<std::string> after;
    bool own = true;
    for (std::uint64_t step : steps) {
      after.push_back(path_of(step));
      own = own && earlier_start(step, after.back(), checkpoints, written);
    }
    std::string const count = after.size() == 1 ? "a file" : std::to_string(after.size()) + " files";
    if (own) {
      // (Those off the cadence, a stopped start's state where no checkpoint held it, are removed instead.)
      bool const all_stopped = stopped_found == after.size();
      std::string const stopped = stopped_found == 0 || all_stopped
                                      ? ""
                                      : " (and removes the " + std::to_string(stopped_found) +
                                            " off the cadence, a stopped start's state)";
      notices.push_back(what + ": the folder holds " + count + " of that series past step 0 (" + after.front() +
                        (after.size() > 1 ? ", ..." : "") + ") of this run's course, an earlier start of it, which " +
                        "this run " + (all_stopped ? "removes (a stopped start's state, off the cadence)" : "writes again") +
                        " as it passes " + (after.size() == 1 ? "it" : "them") + stopped +
                        (checkpoints ? " (" + names.with_text("--restart", after.back()) +
                                           " would go on from its last instead)"
                                     : ""));
      return;
    }
    mixed += (mixed.empty() ? "" : "; ") + what + ": the folder holds " + count + " of that series past step 0 (" +
             after.front() + (after.size() > 1 ? ", ..." : "") + "), another run's, which this new run's would mix " +
             "with" + (checkpoints ? " (" + names.with_text("--restart", after.back()) + " would go on from its last)"
                                   : "") +
             "; remove " + (after.size() == 1 ? "it" : "them") + " or name another series";
  };
  // A run that goes on (a restart, a script's next run) writes over the files of its series past its step where they
  // are of its own course (driver/course.h: an earlier start of it, killed, whose files it writes again to the bit).
  // Those of another course, the one a restart that changes a setting branches from say, would be mixed with its
  // own: refused as for a new run, nothing removed. A file that records no course (an older nbody's) is taken as its
  // own, as before courses were recorded.
  auto refuse_other_course = [&](const std::function<std::string(std::uint64_t)>& path_of, const std::string& what) {
    std::vector<std::string> foreign;
    for (std::string const& path : series_files_after(path_of, first)) {
      std::string const course = sim::recorded_course(path);
      if (!course.empty() && course != o.course) foreign.push_back(path);
    }
    if (foreign.empty()) return;
    std::string const count = foreign.size() == 1 ? "a file" : std::to_string(foreign.size()) + " files";
    mixed += (mixed.empty() ? "" : "; ") + what + ": the folder holds " + count + " of that series past step " +
             std::to_string(first) + " of another course (" + foreign.front() + (foreign.size() > 1 ? ", ..." : "") +
             "): the run this one branches from at step " + std::to_string(first) + " with other settings, or " +
             "another run, which this run's would mix with; remove " + (foreign.size() == 1 ? "it" : "them") +
             " or name another series";
  };
  // A series written over files of the other kind (a restart's --snapshots run.h5 among the periodic checkpoints of
  // --checkpoint run.h5, which are run_00000004.h5 and the like too): a checkpoint a restart goes on from replaced by
  // a snapshot, which no restart reads, or a snapshot by a checkpoint. Refused, whatever the course; each series
  // looks only at the files of the steps it writes (`due`).
  auto refuse_other_kind = [&](const std::function<std::string(std::uint64_t)>& path_of, const std::string& what,
                               bool writes_checkpoints, const std::function<bool(std::uint64_t)>& due) {
    for (std::uint64_t step : series_steps_within(path_of, first, last)) {
      if (!due(step)) continue;
      std::string const path = path_of(step);
      bool const other = writes_checkpoints ? sim::is_nbody_snapshot(path) : sim::is_nbody_checkpoint(path);
      if (!other) continue;
      mixed += (mixed.empty() ? "" : "; ") + what + " would write " + path + " over " +
               (writes_checkpoints ? "a snapshot (of a " + names.name("--snapshots") + " series of that name)"
                                   : "a checkpoint (a periodic one of that name), which a restart goes on from") +
               "; give the series another name";
      return;
    }
  };
  // Nor beside files of the other kind under the name with the other ending (run_*.hdf5 snapshots beside run_*.h5
  // periodic checkpoints), which a tool reading run_* takes for one series, as a new run with both refuses above.
  // (The folder's first and last such file tell: a series is of one kind.)
  auto refuse_beside_other_kind = [&](const std::function<std::string(std::uint64_t)>& twin_of,
                                      const std::string& what, bool writes_checkpoints) {
    std::vector<std::uint64_t> const steps = series_steps_within(twin_of, 0, ~std::uint64_t(0));
    if (steps.empty()) return;
    for (std::uint64_t step : {steps.front(), steps.back()}) {
      std::string const path = twin_of(step);
      if (!(writes_checkpoints ? sim::is_nbody_snapshot(path) : sim::is_nbody_checkpoint(path))) continue;
      mixed += (mixed.empty() ? "" : "; ") + what + " would write its files beside " + path + " and the like, " +
               (writes_checkpoints ? "snapshots" : "periodic checkpoints") + " of the name with the other ending, " +
               "one series to a tool that reads the folder by a pattern; give the series another name";
      return;
    }
  };
  // The periodic checkpoints' name with the other HDF5 ending (c.hdf5 for c.h5), where it has one of the two.
  auto hdf5_named = [](const std::string& path) {
    auto ends = [&](const std::string& e) {
      return path.size() > e.size() && path.compare(path.size() - e.size(), e.size(), e) == 0;
    };
    return ends(".h5") || ends(".hdf5");
  };
  bool const periodic = (o.checkpoint_every || o.checkpoint_dt > 0) && !o.checkpoint.empty();
  std::string const checkpoint_twin =
      periodic && hdf5_named(o.checkpoint) ? snapshot_base_with_other_ending(o.checkpoint) : std::string();
  SnapshotSeries snapshot_twin = o.snapshots;  // the same name with the other ending
  if (o.snapshots.enabled()) snapshot_twin.base = snapshot_base_with_other_ending(o.snapshots.base);
  if (o.snapshots.enabled())
    refuse_beside_other_kind([&](std::uint64_t step) { return snapshot_twin.path(step); },
                             names.with_text("--snapshots", o.snapshots.base), false);
  if (!checkpoint_twin.empty())
    refuse_beside_other_kind([&](std::uint64_t step) { return series_path(checkpoint_twin, step); },
                             checkpoint_cadence(), true);
  if (o.snapshots.enabled())
    refuse_other_kind([&](std::uint64_t step) { return o.snapshots.path(step); },
                      names.with_text("--snapshots", o.snapshots.base), false, [&](std::uint64_t step) {
                        if (step != first) return snapshot_written(step);
                        std::string const course = sim::recorded_course(o.snapshots.path(step));
                        return course.empty() || course != o.course;
                      });
  if (periodic)
    refuse_other_kind([&](std::uint64_t step) { return series_path(o.checkpoint, step); }, checkpoint_cadence(), true,
                      checkpoint_written);
  bool const new_run = first == 0 && !o.from_checkpoint;
  auto check_series = [&](const std::function<std::string(std::uint64_t)>& path_of, const std::string& what,
                          bool checkpoints, const std::function<bool(std::uint64_t)>& written) {
    if (new_run) refuse_mixing(path_of, what, checkpoints, written);
    else if (!o.course.empty()) refuse_other_course(path_of, what);
  };
  if (o.snapshots.enabled()) {
    check_series([&](std::uint64_t step) { return o.snapshots.path(step); },
                 names.with_text("--snapshots", o.snapshots.base), false, snapshot_written);
    // The same name with the other ending (out/snap_*.h5 beside out/snap_*.hdf5), which one pattern reads with it: the
    // run writes none of its files again.
    check_series([&](std::uint64_t step) { return snapshot_twin.path(step); },
                 names.with_text("--snapshots", o.snapshots.base), false, nullptr);
  }
  if (periodic) {
    check_series([&](std::uint64_t step) { return series_path(o.checkpoint, step); }, checkpoint_cadence(), true,
                 checkpoint_written);
    // The same name with the other ending (c_*.hdf5 beside c_*.h5), as for the snapshots.
    if (!checkpoint_twin.empty())
      check_series([&](std::uint64_t step) { return series_path(checkpoint_twin, step); }, checkpoint_cadence(), true,
                   nullptr);
  }
  // The checkpoint itself, alike: one past the run's step of another course (the run a branch leaves, which a job
  // script's restart line names for both) would be replaced when the run ends, and kept where it is stopped, where a
  // resubmitted --restart of it goes on with that course, not this one. (A new run's is said as it starts: driver::run.)
  // A run that goes on from a step before the end of what its own course already wrote (a restart of an earlier
  // checkpoint) and ends before it would put its earlier state in place of that: the checkpoint's later state, the
  // diagnostics rows past its end. Refused, nothing changed: the run is asked to reach them, or to write elsewhere.
  if (!new_run && !o.checkpoint.empty()) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(o.checkpoint, ec)) {
      std::optional<sim::CheckpointHeader> held;
      try {
        held = sim::read_checkpoint_header(o.checkpoint, names);
      } catch (const std::runtime_error&) {  // not a checkpoint, or unreadable: driver::run says what it does with it
      }
      bool const other_course = held && !held->run.course.empty() && held->run.course != o.course;
      if (held && held->run.step > first && other_course && !o.course.empty())
        mixed += (mixed.empty() ? "" : "; ") + names.with_text("--checkpoint", o.checkpoint) + " holds step " +
                 std::to_string(held->run.step) + " of another course: the run this one branches from at step " +
                 std::to_string(first) + " with other settings, or another run, which this run would replace at its " +
                 "end and keep if stopped, where " + names.with_text("--restart", o.checkpoint) +
                 " would go on with that course; remove it or name another checkpoint";
      else if (held && held->run.step > first && past_end(held->run.step, held->run.time()))
        mixed += (mixed.empty() ? "" : "; ") + names.with_text("--checkpoint", o.checkpoint) + " holds step " +
                 std::to_string(held->run.step) + " of this run, time " + o.units.time_text(held->run.time()) +
                 ", past this run's end at " + end_text + ", which would replace it with an earlier state; name another " +
                 "checkpoint, or run at least as far";
      // A file named as a series' file of the step it holds (a periodic checkpoint: the one the run goes on from, or
      // another of its series): the end would put another step's state under a name that says this one, and this
      // step's state, a point a branch or a later restart may start from, would be gone. (The one the run goes on
      // from, ended where it began, stays as it is.)
      else if (auto const base = held ? series_base(o.checkpoint, held->run.step) : std::nullopt;
               base && !(held->run.step == first &&
                         !(by_step ? last > first : o.end_time && *o.end_time > held->run.time())))
        mixed += (mixed.empty() ? "" : "; ") + names.with_text("--checkpoint", o.checkpoint) + " is the checkpoint " +
                 "of step " + std::to_string(held->run.step) + " of a series (as its name says), which this run " +
                 "would replace with its end and keep if stopped: another step's state under step " +
                 std::to_string(held->run.step) + "'s name, and step " + std::to_string(held->run.step) + "'s own " +
                 "lost; name the series' own checkpoint (" + *base + ") or another file";
    }
  }
  // The final HDF5 save alike (a snapshot records its step, time and course; a tipsy file none of them).
  if (!new_run && saves_hdf5_snapshot(o.save) && sim::is_nbody_snapshot(o.save)) {
    std::optional<sim::Snapshot> held;
    try {
      held = sim::read_snapshot(o.save, names, false);
    } catch (const std::runtime_error&) {  // unreadable: the save replaces it, as any output
    }
    if (held && (held->course.empty() || held->course == o.course) && held->step > first &&
        past_end(held->step, held->time))
      mixed += (mixed.empty() ? "" : "; ") + names.with_text("--save", o.save) + " holds step " +
               std::to_string(held->step) + " of this run, time " + o.units.time_text(held->time) +
               ", past this run's end at " + end_text + ", which would replace it with an earlier state; name another file, or run at least as far";
  }
  // (A partial file's rows, a run's that died, are the restart's to compute again or replace: DiagnosticsSeries.)
  if (o.from_checkpoint && !o.diagnostics.empty())
    if (auto const reaches = series_reaches(o.diagnostics);
        reaches && reaches->first > first && past_end(reaches->first, reaches->second))
      mixed += (mixed.empty() ? "" : "; ") + names.with_text("--diagnostics", o.diagnostics) + " holds rows to step " +
               std::to_string(reaches->first) + ", time " + o.units.time_text(reaches->second) +
               ", past this run's end at " + end_text + ", which would cut them off; name another file, or run at least as far";
  // A series the run goes on with, its files before its step in other units (a restart that relabels the run, a
  // script's configure): one series in two units, its times and masses jumping at the step. Refused.
  if (!new_run && o.snapshots.enabled())
    for (std::string const& base : {o.snapshots.base, snapshot_base_with_other_ending(o.snapshots.base)}) {
      SnapshotSeries series = o.snapshots;
      series.base = base;
      auto const before = series_latest_through([&](std::uint64_t step) { return series.path(step); }, first);
      if (!before) continue;
      std::optional<sim::Units> stated;
      try {
        stated = sim::read_snapshot(series.path(*before), names, false).units;
      } catch (const std::runtime_error&) {  // not a snapshot nbody reads: the series' other checks say so
      }
      if (stated && !stated->same_scale(o.units))
        mixed += (mixed.empty() ? "" : "; ") + names.with_text("--snapshots", o.snapshots.base) + ": " +
                 series.path(*before) + ", its file at step " + std::to_string(*before) + ", states " +
                 stated->describe() + ", and this run's are " + o.units.describe() + ": one series in two units; " +
                 "name another series, or keep the units";
    }
  if (!mixed.empty()) throw InputError(mixed);
  // The snapshots' folder is made if it is missing, as --frames-dir's is: a series of files is given a folder of its
  // own (here, after the other checks, so that a run refused for them makes none; before the check of its files'
  // names, which needs it). A file alone (--checkpoint, --save, --diagnostics) must go to a folder that exists: a typo
  // in its name is refused, not made.
  if (o.snapshots.enabled()) {
    std::filesystem::path const folder = std::filesystem::path(o.snapshots.path(first)).parent_path();
    std::error_code ec;
    if (!folder.empty() && !std::filesystem::exists(folder, ec)) {
      std::filesystem::create_directories(folder, ec);
      if (ec)
        throw InputError(names.with_text("--snapshots", o.snapshots.base) + ": cannot create the folder " +
                         folder.string() + " (" + ec.message() + ")");
    }
  }
  // A file of the series is refused as "--snapshots DIR/s_00000010.hdf5: ..." on the command line; a keyword names
  // the value as given, then the file ("snapshots='DIR/s' writes DIR/s_00000010.hdf5: ...").
  if (o.snapshots.enabled())
    check_step_series([&](std::uint64_t step) { return o.snapshots.path(step); },
                      o.snapshots.dt > 0 ? 1 : o.snapshots.every, first, last,  // by time: at any step
                      {first, last},
                      names.keywords ? names.with_text("--snapshots", o.snapshots.base) + " writes" : "--snapshots",
                      all);
  return notices;
}

RunResult run(const Setup& setup, multigpu::Simulation& sim, const RunOutputs& o, std::uint64_t steps,
              RunObserver& observer) {
  RunResult result;
  run(setup, sim, o, steps, observer, result);
  return result;
}

void run(const Setup& setup, multigpu::Simulation& sim, const RunOutputs& o, std::uint64_t steps,
         RunObserver& observer, RunResult& result) {
  Ranks const& ranks = sim.ranks();  // with several, each decision below is taken together
  bool const writer = ranks.rank() == 0;
  // A rank that stops or hangs before the run keeps its first state (in the start's checks and passes): the front end
  // still reports how the job ended, with no state kept; the words that save one take over below.
  LastWords const report_on_giving_up([&](const std::string& why) {
    if (ranks.size() == 1 || !writer || !o.on_giving_up) return;
    GaveUp gave_up;
    gave_up.why = why;
    gave_up.save_failure = o.checkpoint.empty() ? "no " + o.names.name("--checkpoint") + " was given"
                                                : "another rank stopped in the run's start, before the run kept a state";
    o.on_giving_up(gave_up);
  });
  result = RunResult{};
  // A time limit (steps_for_time_limit) is this run's: a later run by steps is not stopped by it.
  struct ClearTimeLimit {
    multigpu::Simulation& sim;
    ~ClearTimeLimit() { sim.set_time_limit(INFINITY); }
  } const clear_time_limit{sim};
  // One writer a checkpoint: a run started with this --checkpoint while this one runs is refused, rather than replace
  // this run's state at each of its writes (and this one its own).
  std::unique_ptr<WriterLock> const checkpoint_lock =
      o.checkpoint.empty() ? nullptr : lock_checkpoint(ranks, o.checkpoint, o.names.with_text("--checkpoint", o.checkpoint));
  // A visit may write the checkpoint as the run does, until the lock goes (this is undone first).
  observer.checkpoint_locked(checkpoint_lock.get());
  struct Unlocked {
    RunObserver& observer;
    ~Unlocked() { observer.checkpoint_locked(nullptr); }
  } const unlocked{observer};
  // One writer a series too (snapshots, periodic checkpoints): the check of the folder before the run sees the files
  // another run has written, not those it is about to write, so two runs started one after the other would each
  // replace the other's files as they went, both ending well. The lock is the series' (series_lock_name), whichever
  // output writes it: --snapshots c.h5 and --checkpoint c.h5's periodic checkpoints are one series c_*.h5.
  std::vector<std::pair<std::unique_ptr<WriterLock>, std::string>> series_locks;
  for (auto const& series : written_series(o.snapshots, o.checkpoint, o.checkpoint_every, o.checkpoint_dt, o.names))
    series_locks.emplace_back(lock_checkpoint(ranks, series_lock_name(series.path_of), series.given), series.given);
  // And one writer each file the run writes at its end (--save, the diagnostics series' name): the check of the path
  // before the run sees no file yet, so another run given that name (as its --save, --json, --checkpoint, of any
  // kind) would be written over by whichever ended last, both ending well.
  auto lock_end_output = [&](const char* option, const std::string& path) {
    return path.empty() ? nullptr : lock_checkpoint(ranks, path, o.names.with_text(option, path));
  };
  std::unique_ptr<WriterLock> const save_lock = lock_end_output("--save", o.save);
  std::unique_ptr<WriterLock> const diagnostics_lock = lock_end_output("--diagnostics", o.diagnostics);
  observer.save_locked(save_lock.get());  // a visit may write it too, until the lock goes (undone first)
  struct SaveUnlocked {
    RunObserver& observer;
    ~SaveUnlocked() { observer.save_locked(nullptr); }
  } const save_unlocked{observer};
  // Every lock of the run, once (rank 0 holds them), with the name the user gave and what it keeps from another run.
  struct RunLock {
    const WriterLock* lock;
    std::string given;
    const char* refused;  // what another run may not do while the lock is held
  };
  std::vector<RunLock> run_locks;
  if (checkpoint_lock)
    run_locks.push_back({checkpoint_lock.get(), o.names.with_text("--checkpoint", o.checkpoint),
                         "another run started with this checkpoint"});
  for (auto const& [lock, given] : series_locks)
    if (lock) run_locks.push_back({lock.get(), given, "another run started with this series"});
  if (save_lock) run_locks.push_back({save_lock.get(), o.names.with_text("--save", o.save), "another run given this name"});
  if (diagnostics_lock)
    run_locks.push_back({diagnostics_lock.get(), o.names.with_text("--diagnostics", o.diagnostics),
                         "another run given this name"});
  // This thread's writes are the run's (CheckpointWrite), as the holder of each of its locks: a file of the run may be
  // named under another of its locks too (a --checkpoint run_20261205.h5 beside --snapshots run is named as a file of
  // that series), and each is the run's to write.
  auto own_writes = [&] {
    std::vector<std::unique_ptr<CheckpointWrite>> own;
    for (auto const& run_lock : run_locks) own.push_back(std::make_unique<CheckpointWrite>(run_lock.lock));
    return own;
  };
  // Where none could be taken (a file system without locks), the run goes on unguarded, and says so.
  std::string unguarded;
  for (auto const& [lock, given, refused] : run_locks)
    if (!lock->held() && unguarded.empty())
      unguarded = given + ": no lock on " + lock->lock_path() + " (" + lock->why_not() + "): " + refused +
                  " now would not be refused";
  if (ranks.size() > 1) unguarded = ranks.all_gather(unguarded).front();
  if (!unguarded.empty()) observer.warning(unguarded);

  // The series file is opened before the first step: a name that cannot be written costs nothing.
  std::unique_ptr<DiagnosticsSeries> series;
  bool const sampled = !o.diagnostics.empty();  // a series, by steps or by time
  double const sample_dt = sampled ? o.diagnostics_dt : 0.0;
  std::uint64_t const sample_every = !sampled || sample_dt > 0 ? 0
                                     : o.diagnostics_every      ? o.diagnostics_every
                                                                : kDefaultDiagnosticsEvery;
  // What this run's checkpoints record: its series' cadences (take_up_cadences took up the ones it names none for).
  OutputCadences const recorded = recorded_cadences(setup, sim.block_steps(), sim.steps_done(), o);
  result.cadences = recorded;
  // A run that writes no series leaves the one it continued as it was: its checkpoints pass that run's digest on
  // (its first rows are still the ones it counts).
  std::string const carried_digest = o.diagnostics.empty() && setup.continued_cadences.at_step == sim.steps_done()
                                         ? setup.continued_cadences.diagnostics_digest
                                         : std::string();
  result.cadences.diagnostics_digest = carried_digest;
  // An O(N^2) pass (the start's and the end's energies, a sample's potential: seconds at large N on a
  // CPU) stops at a signal; the run then ends as at a signal between steps, its outputs written. With
  // several ranks the ranks agree on the signal (the pass throws on every rank at one point), and the run
  // ends the same way; an interrupt that one rank alone saw ends the job, as any interrupted collective
  // call does. False when the pass was interrupted; `pass_stopped_by` is then the signal that came.
  int pass_stopped_by = 0;
  constexpr bool kStopTogether = true;  // the passes below: the ranks agree on a signal at their end
  auto unless_interrupted = [&](const std::function<void()>& pass) {
    try {
      pass();
      return true;
    } catch (const Interrupted& e) {
      if (ranks.size() > 1 && !e.every_rank) throw;
      pass_stopped_by = e.signal;
      return false;
    }
  };
  // The step of a checkpoint at the --checkpoint path that is further on than this run starts (a finished job's, run
  // again from its start): replaced when the run ends, but not by a run stopped before (a signal, a failure).
  std::optional<std::uint64_t> checkpoint_ahead;
  bool ahead_of_this_course = false;  // and of this run's course: the trajectory a stop reaches, and further
  std::string checkpoint_others;  // "another run's state, at step 40: ...", where the checkpoint there is another's
  auto keeps_checkpoint = [&](std::uint64_t step) -> std::optional<std::string> {
    if (!checkpoint_others.empty()) return o.checkpoint + " is kept: it holds " + checkpoint_others;
    if (!checkpoint_ahead || *checkpoint_ahead <= step) return std::nullopt;
    if (*checkpoint_ahead == ~std::uint64_t(0))
      return o.checkpoint + " is kept: it could not be read to tell whether it goes further than this stopped run's "
                            "step " + std::to_string(step);
    return o.checkpoint + " is kept: it holds step " + std::to_string(*checkpoint_ahead) +
           ", past this stopped run's step " + std::to_string(step) + " (" +
           o.names.with_text("--restart", o.checkpoint) + " goes on from it)";
  };
  // A run that takes up another (a restart, a script's next run) continues that run's series at the path.
  std::optional<SeriesLineage> lineage;
  auto lineage_here = [&](std::optional<double> baseline) {  // this run's, from where it starts
    multigpu::RunClock const clock = sim.clock();
    SeriesLineage here{sim.steps_done(), sim.time(), baseline, clock.start_time,
                       sim.block_steps() ? 0.0 : sim.program().dt, clock.dt_since_step, clock.dt_since_time};
    here.every = sample_every;
    here.every_dt = sample_dt;
    // The rows before this step as its checkpoint (or the script's run before) records them.
    if (setup.continued_cadences.at_step == here.step && here.step > 0) {
      here.digest = setup.continued_cadences.diagnostics_digest;
      here.written_every = setup.continued_cadences.diagnostics.every;
      here.written_dt = setup.continued_cadences.diagnostics.dt;
      here.written_in_block_steps = setup.continued_cadences.in_block_steps;
      here.same_course = !setup.course_changed;
    }
    return here;
  };
  bool start_measured = false;  // the start's pass was made (or interrupted) already
  if (sim.steps_done() > 0) {
    // Past step 0 without a baseline (a checkpoint continued with another softening, or saved without one), a run
    // with a series measures its start now, before the series is made: the baseline is new at this step, as where a
    // front end measured it anew (Setup::baseline_step). A series from before then begins again, and one this very
    // start began (a run that died, run again) goes on.
    std::optional<double> baseline = setup.initial_energy;
    bool new_baseline = setup.baseline_step > 0 && setup.baseline_step == sim.steps_done();
    if (!baseline && sampled) {
      start_measured = true;
      if (unless_interrupted([&] { result.start = sim.diagnostics(kStopTogether); })) {
        baseline = result.start->total();
        new_baseline = true;
      }
    }
    lineage = lineage_here(baseline);
    lineage->new_baseline = new_baseline;
    lineage->same_course = lineage->same_course && !new_baseline;
  } else if (sampled) {
    // A run from step 0 where a run that died left its series unfinished: the start is measured first, so that the
    // series can tell that run's rows (the same command run again after a job was killed before it could restart:
    // the same start, to the bit) from another run's, which it refuses. Rank 0 looks; every rank measures.
    std::string unfinished = writer && holds_unfinished_rows(o.diagnostics) ? "1" : "0";
    if (ranks.size() > 1) unfinished = ranks.all_gather(unfinished).front();
    if (unfinished == "1") {
      start_measured = true;
      if (unless_interrupted([&] { result.start = sim.diagnostics(kStopTogether); }))
        lineage = lineage_here(setup.initial_energy.value_or(result.start->total()));
    }
  }
  // A multiple counts as reached within four units in its last place (reach_of): k x dt rounds (3 x 0.1 is
  // 0.30000000000000004, past the time 0.3 of step 30 of dt 0.01), and a sample one step late reads as a fault.
  // The first multiple of dt not yet reached at time t (INFINITY for dt 0: no grid).
  auto next_multiple = [&](double dt, double t) {
    if (!(dt > 0)) return double(INFINITY);
    double k = std::floor(t / dt) + 1.0;
    for (int i = 0; i < 3 && !(reach_of(k * dt) > t); ++i) k += 1.0;  // the quotient's rounding, the reach
    double const next = k * dt;
    return reach_of(next) > t ? next : std::nextafter(t, INFINITY);  // past 2^53 multiples: the next time there is
  };
  // That pass interrupted: the run ends at once, and begins no series (an earlier one at the path stays as it is).
  bool const start_interrupted = start_measured && !result.start;
  agree(ranks, [&] {
    auto const own = own_writes();  // its checks of the name: this run's to write
    if (writer && sampled && !start_interrupted)
      series = std::make_unique<DiagnosticsSeries>(o.diagnostics, o.names, lineage);
  });
  // The start is a row of the series where a run that never stopped samples too: always in a series of its own. After
  // an earlier series' rows (a restart, a script's next run), where its step is one of the series' steps, or where it
  // is the first step (or block time) at or past a multiple of the series' time step not reached by the last row
  // kept: the earlier run went through every step before this one, so a multiple reached before it has its row among
  // those kept. (The earlier run's end, or where it stopped, is no row of such a series.)
  auto start_is_a_row = [&] {
    if (!series || !series->last_kept_time()) return true;
    if (sample_every) return sim.steps_done() % sample_every == 0;
    return reach_of(next_multiple(sample_dt, *series->last_kept_time())) <= sim.time();
  };
  // What became of an earlier series at the path, decided where rank 0 made the series, heard on every rank: a front
  // end that warns of it (Python) then does so on every rank alike.
  // Rank 0's words follow three marks: whether the earlier series is replaced whole, whether the start is a row, and
  // whether the earlier series has a row at the start (its run's end) that this one replaces.
  std::string continuation =
      series ? std::string(series->replaces() ? "r" : "-") + (start_is_a_row() ? "-" : "s") +
                   (series->replaces_a_row_at_its_start() ? "e" : "-") + (series->unverified() ? "w" : "-") +
                   series->continuation()
             : "----";
  if (ranks.size() > 1) continuation = ranks.all_gather(continuation).front();
  bool const replaces = continuation[0] == 'r';
  bool const start_left_out = continuation[1] == 's';
  bool const replaces_end_row = continuation[2] == 'e';
  bool const unverified = continuation[3] == 'w';
  continuation.erase(0, 4);
  if (replaces) result.diagnostics_replaced = continuation;
  for (auto const& text : o.said) observer.notice(text);
  // Temporary files of this run's outputs that a writer killed before it finished left (SIGKILL, the out-of-memory
  // killer): said, as they may be as large as the outputs, not removed, as another process may be writing them now.
  auto say_left = [&](const char* option, const std::string& path, const std::string& left, const std::string& of) {
    std::error_code ec;
    auto const bytes = std::filesystem::file_size(left, ec);
    observer.notice(o.names.with_text(option, path) + ": its folder holds " + left +
                    (ec ? std::string() : " (" + std::to_string(bytes) + " bytes)") +
                    ", the temporary file of a writer killed before it finished; remove it unless another process "
                    "writes " + of + " now");
  };
  for (auto const& [option, path] : {std::pair<const char*, const std::string*>{"--checkpoint", &o.checkpoint},
                                     {"--save", &o.save}}) {
    if (path->empty()) continue;
    for (std::string const& left : temporary_files_of(*path)) say_left(option, *path, left, *path);
  }
  // And of the files of its series (periodic checkpoints, snapshots), which die as often.
  if (!o.checkpoint.empty() && (o.checkpoint_every > 0 || o.checkpoint_dt > 0))
    for (std::string const& left : series_temporary_files([&](std::uint64_t k) { return series_path(o.checkpoint, k); }))
      say_left("--checkpoint", o.checkpoint, left, "its periodic checkpoints");
  if (o.snapshots.enabled())
    for (std::string const& left : series_temporary_files([&](std::uint64_t k) { return o.snapshots.path(k); }))
      say_left("--snapshots", o.snapshots.base, left, "its snapshots");
  if (unverified)
    observer.warning(continuation);
  else if (replaces)
    observer.replaces(continuation);
  else if (!continuation.empty())
    observer.notice(continuation);
  // A checkpoint at the path that is further on than this run starts (a finished job's, run again from its start): a
  // --restart of it would go on from there; this run replaces it when it ends. Rank 0 reads it; every rank says it.
  if (!o.checkpoint.empty()) {
    std::string ahead;
    std::error_code ec;
    std::string unreadable;  // why a checkpoint there cannot be read (a read error: it may hold any step)
    std::string other;       // whose run the checkpoint there is, where it is another's (its scenario, seed, bodies)
    std::string ahead_course;  // the course of the state it holds ahead of this run's
    if (writer && std::filesystem::is_regular_file(o.checkpoint, ec) &&
        !std::filesystem::equivalent(o.checkpoint, setup.source, ec)) {
      try {
        sim::CheckpointHeader const held = sim::read_checkpoint_header(o.checkpoint, o.names);
        if (held.run.step > sim.steps_done()) ahead = std::to_string(held.run.step), ahead_course = held.run.course;
        other = another_runs_state(held, setup, sim.bodies());
      } catch (const InputError&) {  // not a checkpoint nbody reads: a snapshot a reader takes for a state, or any file
        if (std::string const snapshot = snapshot_there(o.checkpoint, setup, sim.bodies(), o.names); !snapshot.empty())
          other = "a snapshot (" + snapshot + ")";
      } catch (const std::runtime_error& e) {
        unreadable = e.what();
      }
    }
    if (ranks.size() > 1) {
      ahead = ranks.all_gather(ahead).front();
      ahead_course = ranks.all_gather(ahead_course).front();
      unreadable = ranks.all_gather(unreadable).front();
      other = ranks.all_gather(other).front();
    }
    std::string const stopped = ": this run replaces it when it ends (one stopped before, by a signal or a failure, "
                                "keeps it)";
    if (!other.empty()) {
      checkpoint_others = other;  // kept by a stop, whatever its step
      result.checkpoint_replaced = o.names.with_text("--checkpoint", o.checkpoint) + " holds " + other + stopped +
                                   ": name another file to keep it";
      observer.replaces(result.checkpoint_replaced);
    } else if (!ahead.empty()) {
      checkpoint_ahead = std::stoull(ahead);
      ahead_of_this_course = !o.course.empty() && ahead_course == o.course;
      observer.notice(o.names.with_text("--checkpoint", o.checkpoint) + " holds step " + ahead +
                      ", past this run's start at step " + std::to_string(sim.steps_done()) + stopped + "; " +
                      o.names.with_text("--restart", o.checkpoint) + " would go on from there instead");
    } else if (!unreadable.empty()) {
      checkpoint_ahead = ~std::uint64_t(0);  // any step: kept by a stop
      observer.warning(o.names.with_text("--checkpoint", o.checkpoint) + " cannot be read to tell how far it goes (" +
                       unreadable + ")" + stopped);
    }
  }
  // What a --save written by a run stopped before its end would replace and must not: the file the run started from
  // (--load F --save F: its start, which the same command run again needs), a checkpoint, a snapshot of a series or
  // of another run (below). Its end replaces it; a stop keeps it, and says why ("" for none). Heard from rank 0.
  std::string save_kept_by_stop;
  if (!o.save.empty()) {
    std::error_code ec;
    if (writer && std::filesystem::equivalent(o.save, setup.source, ec))
      save_kept_by_stop = "it is the file this run started from, and the run stopped before its end";
    if (ranks.size() > 1) save_kept_by_stop = ranks.all_gather(save_kept_by_stop).front();
  }
  // A checkpoint where --save writes a snapshot: the restartable state there goes, which is a warning (a snapshot is
  // read by --load, not by --restart), as --checkpoint's over another run's checkpoint is.
  if (!o.save.empty() && saves_hdf5_snapshot(o.save)) {
    std::string held;
    std::error_code ec;
    if (writer && std::filesystem::is_regular_file(o.save, ec)) {
      try {
        held = std::to_string(sim::read_checkpoint_header(o.save, o.names).run.step);
      } catch (const std::runtime_error&) {  // not a checkpoint (a snapshot, another file): replaced as any output
      }
    }
    // A snapshot named as a series' file of the step it holds (one of a --snapshots series, or the file the run
    // loaded), or one of another run (other bodies): the end would stand where a reader of the folder takes that
    // state. (A script's own earlier save, settings changed since, is its own.)
    std::string snapshot = held.empty() && writer ? snapshot_there(o.save, setup, sim.bodies(), o.names) : "";
    if (ranks.size() > 1) {
      held = ranks.all_gather(held).front();
      snapshot = ranks.all_gather(snapshot).front();
    }
    if (!held.empty())
      observer.warning(o.names.with_text("--save", o.save) + " holds a checkpoint (step " + held + "): this run " +
                       "replaces it with a snapshot when it ends (one stopped before, by a signal or a failure, keeps "
                       "it), which " + o.names.name("--load") + " reads and " + o.names.name("--restart") +
                       " does not; " + o.names.name("--checkpoint") + " writes a checkpoint");
    else if (!snapshot.empty())
      observer.warning(o.names.with_text("--save", o.save) + " holds a snapshot (" + snapshot + "): this run " +
                       "replaces it with its end when it ends (one stopped before, by a signal or a failure, keeps it); " +
                       "name another file to keep it");
    if (save_kept_by_stop.empty() && !held.empty()) save_kept_by_stop = "it holds a checkpoint (step " + held + ")";
    if (save_kept_by_stop.empty() && !snapshot.empty()) save_kept_by_stop = "it holds a snapshot (" + snapshot + ")";
  }

  if ((o.summary || sampled) && !start_measured) unless_interrupted([&] { result.start = sim.diagnostics(kStopTogether); });
  // A restart keeps the run's baseline; without one, the baseline is unknown until a restart measures it.
  result.initial_energy = result.start ? setup.initial_energy.value_or(result.start->total()) : setup.initial_energy;
  observer.started(result.start, result.initial_energy);
  auto const t0 = Clock::now();
  // The step of the last sample, and what it measured (every rank measures; rank 0 writes).
  std::uint64_t last_sample_step = ~std::uint64_t(0);
  sim::Diagnostics last_sample;
  // A row that cannot be written (the disk filled up) costs the rest of the series, not the run:
  // the rows so far stay in the partial file, and the run goes on to its other outputs.
  auto write_row = [&](std::uint64_t step, double time, double wall, const sim::Diagnostics& d) {
    last_sample_step = step;
    last_sample = d;
    if (!series) {
      if (result.diagnostics_failure.empty()) ++result.diagnostics_samples;  // measured, for a run with no file
      return;
    }
    try {
      series->write({step, time, wall, d, result.initial_energy.value_or(d.total())});
      ++result.diagnostics_samples;
    } catch (const std::runtime_error& e) {
      result.diagnostics_failure = e.what();
      result.diagnostics_rows_in = series->rows_in();
      observer.warning(std::string("diagnostics series stopped: ") + e.what() + "; the run goes on");
      series.reset();
    }
  };
  if (result.start && sampled && !start_left_out) write_row(sim.steps_done(), sim.time(), 0.0, *result.start);
  // A run that ends before a row of its own (stopped at once) after one that ended here (not stopped: its end is a
  // row) writes the start it left out after all: that end row is replaced when the series ends, and the state here
  // is what it measured. After a run stopped here, which wrote no row here, it writes none either: a run that never
  // stopped has no row at this step.
  std::uint64_t const start_step = sim.steps_done();
  double const start_time = sim.time();
  // `ended`: the run reached its end (or the end its front end chose), not stopped by a signal or a failure.
  auto end_series = [&](bool ended) {
    if (start_left_out && replaces_end_row && result.start && result.diagnostics_samples == 0)
      write_row(start_step, start_time, 0.0, *result.start);
    // The rows a next run from here keeps, as a front end that runs again passes them on: where the series has them
    // under its name.
    std::string const digest = series ? series->digest_before(sim.steps_done()) : carried_digest;
    std::size_t const unwritten = result.outputs_not_written.size();
    auto const own = own_writes();  // the series' name is this run's to publish
    close_series(series, result, observer, ended, o.names);
    if (result.diagnostics_failure.empty() && result.outputs_not_written.size() == unwritten)
      result.cadences.diagnostics_digest = digest;
  };
  // What a checkpoint at `step` records of the run's series: their cadences, and the diagnostics rows before it.
  auto recorded_at = [&](std::uint64_t step) {
    OutputCadences c = recorded;
    c.diagnostics_digest = series ? series->digest_before(step) : carried_digest;  // (none where a series failed)
    return c;
  };
  auto recorded_here = [&] { return recorded_at(sim.steps_done()); };

  // Steps go in chunks of about 0.2 s (progress and signals stay responsive, the GPU stays busy),
  // cut at the steps where a checkpoint, a sample or a visit falls due.
  std::uint64_t const every = o.checkpoint.empty() ? 0 : o.checkpoint_every;
  std::uint64_t const visit_every = observer.visit_every();
  std::uint64_t const first_step = sim.steps_done();  // visits count this run's steps
  // Where this run is going, for its checkpoints: a restart that names no end goes on to it.
  // (A step past the most a checkpoint holds, from a huge --steps meaning "until stopped", is recorded as that most.)
  // A run of no steps from a checkpoint, not asked for a time, takes nothing from the run it continues: it keeps that
  // run's end (a look at the energies does not change where the job is going).
  bool const keeps_file_end = steps == 0 && !o.end_time && setup.file_end.named() &&
                              first_step == setup.clock.step &&
                              (setup.file_end.time || setup.file_end.in_block_steps == sim.block_steps());
  RunEnd const end = keeps_file_end ? setup.file_end
                     : o.end_time   ? RunEnd{o.end_time, std::nullopt}
                                    : RunEnd{std::nullopt, std::min(kMaxSteps, first_step + std::min(steps, kMaxSteps))};
  auto last_check = t0;
  std::uint64_t done = 0, chunk = 1;
  PendingSample pending;
  // The last state checked sound, with its record: what is left to save when a device stalls (the
  // watchdog) or fails, or the run blows up, since the devices' state may then be torn. With several
  // ranks every rank keeps it (rank 0 writes it), for the failures that every rank knows of at one point
  // (JobFailure: a state no longer finite); a failure of one rank alone ends the job (core/ranks.h).
  struct Kept {
    sim::BodySet state;
    sim::RunRecord record;
  };
  std::optional<Kept> kept;
  std::mutex kept_mutex;  // keep() changes it; the last words (below) may read it from another thread
  // Copied in place (its buffers are reused), and only while the machine has room for it three times over: for it,
  // and for the two copies the run makes beside the start's and may not have made yet (a sample's, and the end's or an
  // output's), which the memory check before the run counted without it. A copy must never be what ends the run it is
  // kept for.
  // `step` and `time`: the state's own, where the clock has gone on past it (a sample measured while the next steps
  // run: the record is at the sample's step, not at the steps enqueued since).
  auto keep = [&](const sim::BodySet& state, std::uint64_t step, double time) {
    if (o.checkpoint.empty()) return;
    std::size_t const bytes = state.size() * (sizeof(Real4<double>) + sizeof(Vec3d) + 1);
    std::size_t const have = available_host_memory();
    // Every rank of this host keeps its own copy.
    bool const no_room = !kept && have > 0 && have / 3 / std::size_t(ranks.local_size()) < bytes;
    if (ranks.size() > 1 ? ranks.max(no_room ? 1 : 0) != 0 : no_room) return;  // every rank keeps one, or none
    bool have_copy = false;
    {
      std::lock_guard<std::mutex> const guard(kept_mutex);
      try {
        if (!kept) kept.emplace();
        kept->state = state;
        kept->record = run_record(setup, sim, result.initial_energy, end, recorded_at(step));
        // Fixed steps: the clock's dt applies from a step at or before this run's first, so the step gives the time;
        // block steps: the clock is the step and the time themselves.
        kept->record.step = step;
        if (sim.block_steps()) {
          kept->record.dt_since_step = step;
          kept->record.dt_since_time = time;
        }
      } catch (const std::bad_alloc&) {
        kept.reset();
      }
      have_copy = kept.has_value();
    }
    if (ranks.size() > 1 && ranks.max(have_copy ? 0 : 1) != 0) {  // one rank's copy failed: none keeps one
      std::lock_guard<std::mutex> const guard(kept_mutex);
      kept.reset();
    }
  };
  // With several ranks, one that stopped or hangs ends the job from another's bounded wait (core/ranks.h), where no
  // collective call can save anything: rank 0, where it is the one that gives up, saves the last state kept (a
  // periodic checkpoint's, or one at most about 10 s old) to --checkpoint on its own, as a failure's save does.
  // The front end then reports how the job ended (its --json), with where the state is.
  LastWords const save_on_giving_up([&](const std::string& why) {
    if (ranks.size() == 1 || !writer) return;
    GaveUp gave_up;
    gave_up.why = why;
    {
      std::lock_guard<std::mutex> const guard(kept_mutex);
      if (kept) {
        gave_up.kept_step = kept->record.step;
        gave_up.kept_time = kept->record.time();
      }
      std::string const name = o.names.name("--checkpoint");
      if (o.checkpoint.empty()) {
        gave_up.save_failure = "no " + name + " was given";
      } else if (!kept) {
        gave_up.save_failure = "no state was kept to save";
      } else if (auto const kept_file = keeps_checkpoint(kept->record.step)) {
        gave_up.save_failure = name + " not written: " + *kept_file;
        std::fprintf(stderr, "error: %s\n", one_line(gave_up.save_failure).c_str());
      } else {
        try {
          auto const own = own_writes();  // this thread's write is the run's
          sim::write_checkpoint(o.checkpoint, kept->state, kept->record);
          gave_up.saved_step = kept->record.step;
          std::fprintf(stderr,
                       "rank 0: the last state kept, at step %llu, saved to %s before the job ends (%s goes on from "
                       "it)\n",
                       static_cast<unsigned long long>(kept->record.step), o.checkpoint.c_str(),
                       o.names.with_text("--restart", o.checkpoint).c_str());
        } catch (const std::exception& e) {
          gave_up.save_failure = e.what();
          std::fprintf(stderr, "error: %s\n", one_line(e.what()).c_str());
        }
      }
    }
    if (o.on_giving_up) o.on_giving_up(gave_up);
  });
  if (setup.bodies.size() == sim.bodies())
    keep(setup.bodies, sim.steps_done(), sim.time());  // what the simulation was built from
  else if (!o.checkpoint.empty())
    keep(sim.state(), sim.steps_done(), sim.time());  // a front end that keeps no copy (Python)
  // hermite4: the first sample on the way that shows the run unresolved says so at once (the run goes on). Said once
  // the steps after it are known to have been made: a sample that turns out to be the end (block steps that reached
  // their time limit) is the end's to say.
  bool warned = false;
  std::optional<std::pair<std::uint64_t, std::string>> unsaid;  // the sample's step, and the warning
  auto measure_pending = [&](bool on_the_way) {
    if (!pending.taken) return;
    pending.taken = false;
    double const potential = sim.end_sample(pending.state);
    sim::Diagnostics const measured = sim::measure(pending.state, potential);
    agree(ranks, [&] { check_finite(pending.state, pending.step, o.names); });  // a blown-up run stops with a clear error
    keep(pending.state, pending.step, pending.time);
    write_row(pending.step, pending.time, pending.wall, measured);
    if (on_the_way && !warned && result.start && sim.block_steps()) {
      std::string const why = energy_warning(setup, *result.start, measured, whole_run_baseline(setup, result));
      if (!why.empty()) {
        warned = true;
        char at[80];
        std::snprintf(at, sizeof at, "at step %llu (time %.6g), ", (unsigned long long)pending.step,
                      pending.time);
        unsaid.emplace(pending.step, at + why + "; the run goes on");
      }
    }
  };
  // A file of a series that cannot be written (the disk filled up, the name became a directory) costs
  // only itself: a warning, and the run goes on to its final outputs.
  // Runs an output's `write`: why it failed, or nothing. A failure is the output's alone (InputError, RuntimeFailure;
  // JobFailure with several ranks), except with several ranks one that not every rank knows of (agree()): it has left
  // the ranks where their next collective calls would not meet, and ends the job.
  auto failure_of = [&](const std::function<void()>& write) -> std::optional<std::string> {
    try {
      write();
      return std::nullopt;
    } catch (const Interrupted&) {
      throw;
    } catch (const std::runtime_error& e) {
      if (ranks.size() > 1 && !dynamic_cast<const JobFailure*>(&e)) throw;
      return std::string(e.what());
    }
  };
  auto series_file = [&](const std::string& path, const char* what, std::uint64_t& written,
                         std::vector<std::string>& lost, const std::function<void()>& write) {
    auto const own = own_writes();
    if (auto const why = failure_of(write)) {
      lost.push_back(path);
      observer.warning(std::string(what) + " not written: " + *why + "; the run goes on");
      return;
    }
    ++written;
    observer.note(std::string(what) + " " + path);
  };
  // Snapshots for analysis: the start, every K steps, the end. A step's file is tried once: the end that falls on a
  // periodic one's step neither writes it again nor counts its failure twice. A chain of runs, each stopped (a
  // signal, a job's time limit) and restarted from its checkpoint, writes the series of one run never stopped: a
  // stop's state goes to its checkpoint, not the series, and a run that goes on from it writes its start only where
  // one falls due there.
  std::optional<std::uint64_t> snapshot_at;
  bool coarse_said = false;  // that fp32 coordinates cannot resolve the softening: once a run
  bool far_said = false;     // that a snapshot starts no nbody run (a body past 1e15): once a run
  // `state`: the state now, where the caller has it (checked finite); else downloaded here.
  auto snapshot = [&](const sim::BodySet* state = nullptr, bool stopped = false) {
    if (!o.snapshots.enabled() || snapshot_at == sim.steps_done()) return;
    std::string const path = o.snapshots.path(sim.steps_done());
    snapshot_at = sim.steps_done();
    double rounding = 0;
    std::string far;
    series_file(path, "snapshot", result.snapshots_written, result.snapshots_not_written,
                [&] { rounding = write_snapshot(path, setup, sim, o.snapshots.precision, state, stopped, &far); });
    if (!far_said && !far.empty()) {
      far_said = true;
      observer.warning(o.names.with_text("--snapshots", path) + ": " + far + " (said at this run's first)");
    }
    // A body far out (an escaper) widens the box, and fp32's rounding with it: a file whose close pairs cannot be
    // told apart within a tenth of the softening is said to be, with what keeps them. (No softening, hermite4's
    // alone: its snapshots are fp64 unless fp32 was asked for, knowing.)
    double const softening = sim.config().softening;
    if (!coarse_said && o.snapshots.precision == Precision::fp32 && softening > 0 && rounding > 0.1 * softening) {
      coarse_said = true;
      auto const number = [](double v) {
        char text[32];
        std::snprintf(text, sizeof text, "%.3g", v);
        return std::string(text);
      };
      observer.notice(o.names.with_text("--snapshots", path) + ": its fp32 coordinates are rounded by up to " +
                      number(rounding) + " (its box holds every body, so one far out widens it), more than a tenth " +
                      "of the softening (" + number(softening) + "); " +
                      o.names.with_text("--snapshot-precision", "fp64") + " keeps them (said at this run's first)");
    }
  };
  // The run cannot go on (a failure, a state no longer finite): the last sound state kept is saved where the final
  // one would have gone, and the result says so. (With none kept, the caller rethrows the failure as it came.)
  auto cannot_go_on = [&](const std::exception& e) {
    result.failure = e.what();
    result.steps = sim.steps_done() - first_step;  // a failure's chunk may have made some (hermite4's floor)
    result.wall_seconds = seconds_since(t0);
    // Rank 0 writes; every rank's result then says what it did ("" saved, else why not), as a script on any rank
    // reads it.
    std::string why_not;
    if (ranks.rank() == 0) {
      if (auto const why = keeps_checkpoint(kept->record.step)) {
        why_not = *why;
      } else {
        try {
          auto const own = own_writes();
          sim::write_checkpoint(o.checkpoint, kept->state, kept->record);
        } catch (const std::exception& w) {
          why_not = w.what();
          if (why_not.empty()) why_not = "the checkpoint could not be written";
        }
      }
    }
    if (ranks.size() > 1) why_not = ranks.all_gather(why_not)[0];
    if (why_not.empty())
      result.saved_step = kept->record.step;
    else
      result.save_failure = why_not;
  };
  // A failure that every rank of the run knows of, each at the same point: the run's outputs can still be written
  // together. One process's failures all are; with several ranks, those they agreed on (JobFailure) and a stop
  // between whole steps.
  auto known_everywhere = [&](const std::exception& e) {
    return ranks.size() == 1 || dynamic_cast<const JobFailure*>(&e) || dynamic_cast<const StoppedWhole*>(&e);
  };
  // The failures a run answers by saving what it kept: the engines' (RuntimeFailure) and, with several ranks, those
  // every rank knows of (JobFailure). Others (bad input, an interrupt) pass.
  auto run_failure = [](const std::runtime_error& e) {
    return dynamic_cast<const RuntimeFailure*>(&e) || dynamic_cast<const JobFailure*>(&e);
  };
  // A run that stopped between whole steps (StoppedWhole: every rank at the same step) saves where it stopped, with
  // each body's Hermite state, so that it can be looked at or continued (with a softening, say) from there; no copy
  // kept is needed. False where there is no --checkpoint or the write fails (the state kept is then the fallback).
  auto stopped_whole = [&](const std::exception& e) {
    if (!dynamic_cast<const StoppedWhole*>(&e) || o.checkpoint.empty() || keeps_checkpoint(sim.steps_done()))
      return false;
    try {
      auto const own = own_writes();
      write_checkpoint(o.checkpoint, setup, sim, result.initial_energy, end, recorded_here());  // every rank takes part
    } catch (const std::exception& w) {
      observer.warning(std::string("the state where the run stopped is not saved: ") + w.what());
      return false;
    }
    result.failure = e.what();
    result.steps = sim.steps_done() - first_step;  // the block steps before the one that gave the step
    result.wall_seconds = seconds_since(t0);
    result.saved_step = sim.steps_done();
    result.saved_at_failure = true;
    return true;
  };
  auto due = [](std::uint64_t k, std::uint64_t step) { return k && step % k == 0; };
  auto until_due = [](std::uint64_t k, std::uint64_t step) { return k ? k - step % k : ~std::uint64_t(0); };
  // Outputs by time (samples, snapshots): the next multiple of each one's dt after `t`, taken at the first step at
  // or past it. Fixed steps
  // reach it by the steps to it (steps_to_time: the clock's own arithmetic); block steps by the simulation's time
  // limit, lowered to it for the chunks before it (the run's own limit, a --t-end, is run_limit), which stops at the
  // last block time at or before it: there when it is the multiple (every body at it, where the multiple is one of
  // dt_max's power of two), else one block step more. Multiples between two block times share the later one.
  double const run_limit = sim.time_limit();
  bool const run_finishes = sim.time_limit_finishes();  // at run_limit exactly, every body brought to it
  double const snapshot_dt = o.snapshots.enabled() ? o.snapshots.dt : 0.0;
  double const checkpoint_dt = o.checkpoint.empty() ? 0.0 : o.checkpoint_dt;
  double sample_time = next_multiple(sample_dt, sim.time());
  double snapshot_time = next_multiple(snapshot_dt, sim.time());
  double checkpoint_time = next_multiple(checkpoint_dt, sim.time());
  auto next_time = [&] { return std::min({sample_time, snapshot_time, checkpoint_time}); };  // of an output by time
  bool const by_time = sample_dt > 0 || snapshot_dt > 0 || checkpoint_dt > 0;
  // Whether the run has reached `next`, an output's time on the grid of `dt`; if so, `next` moves to the grid's
  // next time past the run's.
  auto passed = [&](double dt, double& next) {
    if (!(dt > 0) || sim.time() < reach_of(next)) return false;
    next = next_multiple(dt, sim.time());
    return true;
  };
  std::uint64_t sampled_at = sim.steps_done();  // the step of the last sample begun (the start's)
  bool one_past = false;  // block steps: the next chunk is one block step past a sample's time
  auto until_sample_time = [&]() -> std::uint64_t {
    if (!by_time || sim.block_steps()) return ~std::uint64_t(0);
    try {
      // (steps_to_time counts the time reached as passed() does: reach_of.)
      return std::max<std::uint64_t>(1, steps_to_time(sim.clock(), sim.program().dt, next_time()));
    } catch (const InputError&) {  // more than kMaxSteps away: not in this run
      return ~std::uint64_t(0);
    }
  };
  // The start: where the course begins (step 0, a branch: Setup::course_from); else, where the folder holds no file
  // of the step yet, where a periodic one falls due or the series begins (no file of it at or before this step: a
  // run that names it anew). A run that goes on from where another stopped or ended writes none else: the state there
  // is that run's end, its checkpoint, or its periodic snapshot, written before its periodic checkpoint (below).
  // (The series' latest file at or before the step must be of this run's course: another run's files, all before
  // this step, make no series this run goes on with.)
  auto goes_on_without_start = [&] {
    auto const path_of = [&](std::uint64_t k) { return o.snapshots.path(k); };
    std::optional<std::uint64_t> const latest = series_latest_through(path_of, first_step);
    if (!latest) return false;
    std::string const course = sim::recorded_course(path_of(*latest));
    if (!course.empty() && !o.course.empty() && course != o.course) return false;
    if (*latest != first_step) return !o.snapshots.due(first_step);
    // The file at this step is the state it starts from only where it is a snapshot nbody reads (HDF5 refuses a file
    // cut short as it opens it; the header is read, not the bodies, which may be gigabytes): one damaged since, or
    // another program's, is written again, from the state the run starts with, and said. (A checkpoint there is not
    // the series': a periodic one of the name, which the output checks keep, or the very file the run goes on from.)
    std::string const path = path_of(first_step);
    if (sim::is_nbody_checkpoint(path)) return true;
    try {
      // A stopped start's state there, off its cadence, where this run's cadence makes the step due: its start is
      // written over it (and so stays as the series'; remove_passed removes only what this run did not write).
      return !(sim::read_snapshot(path, o.names, false).stopped && o.snapshots.due(first_step));
    } catch (const Interrupted&) {
      throw;
    } catch (const std::runtime_error&) {
      observer.notice(o.names.with_text("--snapshots", o.snapshots.base) + ": " + path + ", the series' file at " +
                      "this run's step, is no snapshot nbody reads (damaged, cut short, or another program's): " +
                      "written again, from the state this run starts at");
      return false;
    }
  };
  bool const starts_series = o.snapshots.enabled() && (first_step == setup.course_from ||
                                                       ranks.max(writer && !goes_on_without_start() ? 1 : 0));
  // The run made every step it was to make (its --steps, or its time reached), a signal during the last chunk or not.
  bool reached_end = false;
  // A stopped start's snapshots of this course past this step (its state where no checkpoint held it, off the
  // series' cadence): superseded once this run passes their step, and removed then, so that the series is the one a
  // run never stopped writes. (One at a step this run writes is written over.)
  std::vector<std::pair<std::uint64_t, std::string>> stopped_starts;
  // (At this step too, a script's next run from where its last stopped going on past it; and before it, where this run
  // goes on from a checkpoint of the course further on than the stop, whose trajectory passed it: not for hermite4,
  // whose finish at a --t-end is no setting of the course, so that the trajectory behind may be another's.)
  auto const stopped_start = [&](const std::string& path) {
    try {
      sim::Snapshot const held = sim::read_snapshot(path, o.names, false);
      return held.stopped && held.course == o.course;
    } catch (const std::runtime_error&) {  // not one nbody reads: another check says what of it
      return false;
    }
  };
  if (writer && o.snapshots.enabled() && !o.course.empty())
    for (std::uint64_t step :
         series_steps_within([&](std::uint64_t k) { return o.snapshots.path(k); },
                             sim.block_steps() ? first_step : 1, ~std::uint64_t(0)))
      if (std::string const path = o.snapshots.path(step); stopped_start(path)) stopped_starts.emplace_back(step, path);
  std::sort(stopped_starts.begin(), stopped_starts.end());
  // Passed: at a step the run has gone beyond (or reached, past its first). Looked at again just before it goes: only
  // a stopped start's file of this course is removed, whatever came there since.
  auto remove_passed = [&](std::uint64_t now) {
    while (!stopped_starts.empty() && stopped_starts.front().first <= now && now > first_step) {
      auto const [step, path] = stopped_starts.front();
      stopped_starts.erase(stopped_starts.begin());
      if (snapshot_at == step || !stopped_start(path)) continue;  // written over by this run, or no longer one
      std::error_code ec;
      if (std::filesystem::remove(path, ec))
        observer.notice(path + ", the state a stopped start of this run reached where no checkpoint held it, is " +
                        "removed: this run has passed step " + std::to_string(step) + " (off the series' cadence)");
    }
  };
  bool const in_pieces = sim.config().backend == sim::Backend::cpu && !sim.block_steps();
  try {
    if (starts_series) snapshot();
    while (done < steps && !agreed_interrupt(ranks)) {
      std::uint64_t const at = sim.steps_done();
      std::uint64_t n = o.snapshots.steps_to_next(
          at, std::min({chunk, steps - done, until_due(every, at), until_due(sample_every, at), until_sample_time(),
                        until_due(visit_every, at - first_step)}));
      // An output time the clock cannot resolve from here (dt below a few units in the last place of the time:
      // next_multiple's fallback) lowers no limit: the output is taken at every step instead (block steps: one a
      // chunk, as fixed steps' until_sample_time gives), and the run goes on.
      bool const unresolved = by_time && !(reach_of(next_time()) > sim.time());
      if (sim.block_steps() && unresolved) n = 1;
      double const limit = sim.block_steps() && by_time && !one_past && !unresolved ? std::min(run_limit, next_time())
                                                                                    : run_limit;
      bool const stepped_past = one_past;  // this chunk is that one block step
      if (one_past) n = 1;
      one_past = false;
      if (sim.block_steps()) sim.set_time_limit(limit, run_finishes && limit == run_limit);
      auto const c0 = Clock::now();
      if (in_pieces) {
        // The host's own steps: the chunk in pieces of about 10 ms, a signal looked at between them. A machine that
        // other work suddenly slows would make a chunk, sized from the steps before it, as many times longer (and
        // there is no device queue to keep busy): past mpirun's kill timeout, whose SIGKILL then ends ranks that have
        // not saved. Each piece is whole steps: a stop between two is a stop at a step, as at a chunk's end. Ranks
        // agree on a signal between pieces (one reduction; every step already gathers the positions), so that they
        // stop at one step; the chunk is agreed, and so is every piece.
        std::uint64_t const piece = std::max<std::uint64_t>(1, chunk / 20);
        for (std::uint64_t left = n; left > 0;) {
          std::uint64_t const k = std::min(left, piece);
          sim.advance(k);
          left -= k;
          if (left > 0 && agreed_interrupt(ranks)) break;  // (a process alone: its own signal)
        }
      } else {
        sim.advance(n);
      }
      measure_pending(true);  // on the host while the devices run the steps just enqueued
      sim.synchronize();
      // Kept through chunks that made no step (block steps short of a sample's time): said once the run has gone on.
      if (unsaid && sim.steps_done() != unsaid->first) {
        observer.warning(unsaid->second);
        result.energy_warning = unsaid->second;  // what a run that fails before its end reports
        unsaid.reset();
      }
      done += sim.steps_done() - at;  // fewer than n where block steps reached their time limit
      observer.progress(done, steps, sim.time());
      // The chunk that follows, from this one's rate; not from the one block step past a sample's time, which
      // would shrink the chunks after every sample.
      if (!stepped_past) {
        double const per_step = seconds_since(c0) / double(n);
        std::uint64_t mine = std::max<std::uint64_t>(1, std::uint64_t(0.2 / std::max(per_step, 1e-9)));
        // Block steps differ in cost by up to N times: the rate of a few cheap ones would make the next
        // chunk seconds long (past a Ctrl-C), so a chunk at most doubles.
        if (sim.block_steps()) mine = std::min(mine, 2 * n);
        chunk = std::uint64_t(-ranks.max(-int(std::min<std::uint64_t>(mine, std::uint64_t(1) << 30))));
      }
      std::uint64_t const now_step = sim.steps_done();
      // Block steps stopped by an output's time short of it: the next chunk is the one block step to the first block
      // time past it, with the run's own limit.
      bool const at_sample_limit = sim.block_steps() && sim.stopped_at_time_limit() && limit < run_limit;
      if (at_sample_limit && sim.time() < reach_of(limit)) one_past = true;
      // Block steps: the run's time limit came before another block step. The step reached was due (a sample, a
      // checkpoint) in the chunk that made it: nothing is due again.
      if (now_step == at) {
        if (one_past) continue;  // the block time before a sample's time, reached by the chunk before
        reached_end = limit == run_limit;
        break;
      }
      // By steps or by time (one or the other for each output); a sample once a step, and so a snapshot (snapshot()).
      bool const sample_now = passed(sample_dt, sample_time) ? now_step != sampled_at : due(sample_every, now_step);
      bool const checkpoint_now = passed(checkpoint_dt, checkpoint_time) || due(every, now_step);
      bool const snapshot_now = passed(snapshot_dt, snapshot_time) || o.snapshots.due(now_step);
      // The files due at this step first, then the sample, whose start a signal can stop: a run stopped there has
      // written them, as the run never stopped does (its restart writes neither again).
      // The state checked first (a blown-up run stops here with a clear error, writing nothing, rather than warn of
      // each snapshot it could not write and go on with a state of NaNs to its end), then the snapshot, then the
      // periodic checkpoint: a restart from that checkpoint (the run killed after it) finds the snapshot.
      std::optional<sim::BodySet> now;
      if (checkpoint_now || snapshot_now || ranks.max(seconds_since(last_check) > 10.0)) {
        now.emplace(sim.state());
        agree(ranks, [&] { check_finite(*now, now_step, o.names); });
        keep(*now, now_step, sim.time());
        last_check = Clock::now();
      }
      if (snapshot_now) snapshot(&*now);
      if (checkpoint_now) {
        std::string const path = series_path(o.checkpoint, now_step);
        series_file(path, "periodic checkpoint", result.checkpoints_written, result.checkpoints_not_written,
                    [&] { write_checkpoint(path, setup, sim, result.initial_energy, end, recorded_here(), &*now); });
      }
      remove_passed(now_step);
      if (sample_now) {
        sampled_at = now_step;
        if (!unless_interrupted([&] { sim.begin_sample(kStopTogether); })) break;
        pending.step = now_step;
        pending.time = sim.time();
        pending.wall = seconds_since(t0);
        pending.taken = true;  // ended, measured, checked and kept while the next steps run
      }
      if (due(visit_every, now_step - first_step) && ranks.max(observer.visit(sim) ? 1 : 0)) {
        result.stopped_by_visit = true;
        break;
      }
      if (sim.stopped_at_time_limit() && limit == run_limit) {  // block steps: the run's time reached
        reached_end = true;
        break;
      }
    }
    reached_end = reached_end || done >= steps;
    measure_pending(false);
  } catch (const std::runtime_error& e) {
    if (!run_failure(e)) throw;
    // The sample taken before the steps that failed is still the series' (the row nearest the failure), where it can
    // be read: always for one process (a device that gave up refuses at once); with several, where every rank
    // stopped at one point.
    if (pending.taken && known_everywhere(e)) {
      try {
        measure_pending(false);
      } catch (const std::exception&) {  // not readable, or not finite: the series ends at the row before
        pending.taken = false;
      }
    }
    end_series(false);
    if (stopped_whole(e)) return;
    if (!kept || !known_everywhere(e)) throw;
    cannot_go_on(e);
    return;
  }
  result.steps = done;
  result.wall_seconds = seconds_since(t0);
  result.stopped_by = agreed_interrupt(ranks);

  // A lock file removed during the run (a tidy-up of "stale" *.lock files) guarded nothing since: another run given the
  // name would not have been refused, and a file it wrote there is replaced below. Said, once the steps are done.
  std::string unlocked_since;
  for (auto const& [lock, given, refused] : run_locks)
    if (lock->held() && !lock->still_named() && unlocked_since.empty())
      unlocked_since = given + ": its lock " + lock->lock_path() + " was removed during the run: " + refused +
                       " since would not have been refused, and a file it wrote there is replaced now";
  if (ranks.size() > 1) unlocked_since = ranks.all_gather(unlocked_since).front();
  if (!unlocked_since.empty()) observer.warning(unlocked_since);
  // Save first: after an interrupt the state is what must not be lost. A state that is no longer
  // finite is refused before it can replace anything; the last one kept sound is saved instead.
  sim::BodySet const final_state = sim.state();
  try {
    agree(ranks, [&] { check_finite(final_state, sim.steps_done(), o.names); });
  } catch (const std::runtime_error& e) {
    if (!run_failure(e)) throw;
    end_series(false);
    if (!kept) throw;
    cannot_go_on(e);
    return;
  }
  std::vector<std::pair<std::string, std::string>> left{{"--checkpoint", o.checkpoint}, {"--save", o.save},
                                                        {"--diagnostics", o.diagnostics}};
  auto written = [&](const char* option) {
    left.erase(std::remove_if(left.begin(), left.end(), [&](auto const& p) { return p.first == option; }), left.end());
    observer.unwritten(left);
  };
  // Each final output on its own: one that cannot be written (a full disk, a folder gone) costs only itself; the
  // others, the series' end and the result are still written, and the result names what was lost (told to the
  // observer at the end).
  auto final_output = [&](const char* option, const std::string& path, const std::function<void()>& write) {
    if (path.empty()) return false;
    if (auto const why = failure_of(write)) {
      result.outputs_not_written.push_back({o.names.name(option), path, *why});
      return false;
    }
    written(option);
    return true;
  };
  // A run its front end chose to stop there (a script's callback) ended where it was meant to: its restart has no
  // further end to go on to. A signal or a failure leaves the end it was going to.
  RunEnd const final_end =
      result.stopped_by_visit && !observer.visit_failed() ? RunEnd{std::nullopt, sim.steps_done()} : end;
  // Stopped before its end (a signal, a script's callback that raised): a checkpoint further on is kept. (The same on
  // every rank: what it holds was heard from rank 0.)
  bool const ended = !result.stopped_by && !(result.stopped_by_visit && observer.visit_failed());
  bool saved_here = false;  // the checkpoint holds the state the run stopped at
  // Or one kept further on, of this course: the state the run stopped at is on its way, and a restart goes on from
  // it, with the series as written by then (a stop snapshot would sit there off its cadence, for good).
  bool kept_further = false;
  if (auto const kept_file = ended ? std::nullopt : keeps_checkpoint(sim.steps_done())) {
    result.outputs_not_written.push_back({o.names.name("--checkpoint"), o.checkpoint, *kept_file});
    // (Not for hermite4: a finish at a --t-end is no setting of the course, and changes the trajectory after it.)
    kept_further = checkpoint_others.empty() && ahead_of_this_course && !sim.block_steps();
  } else
    saved_here = final_output("--checkpoint", o.checkpoint, [&] {
      auto const own = own_writes();
      write_checkpoint(o.checkpoint, setup, sim, result.initial_energy, final_end, recorded_here(), &final_state);
    });
  // The series' end: where the run ended (or made its last step before a signal came), or where it stopped with no
  // checkpoint of the state (a restart from one goes on with the series as the run not stopped would have, its start
  // there not written either).
  if (ended || reached_end || (!saved_here && !kept_further)) snapshot(nullptr, !ended && !reached_end);
  remove_passed(sim.steps_done());
  if (!ended && !save_kept_by_stop.empty()) {
    result.outputs_not_written.push_back({o.names.name("--save"), o.save,
                                          o.save + " is kept: " + save_kept_by_stop +
                                              (o.checkpoint.empty() ? "; " + o.names.name("--checkpoint") +
                                                                          " keeps the state a stopped run reached"
                                                                    : "")});
  } else {
    final_output("--save", o.save, [&] {
      auto const own = own_writes();
      if (saves_hdf5_snapshot(o.save)) {
        write_snapshot(o.save, setup, sim, Precision::fp64, &final_state);
        if (std::string const why = start_problem(final_state); !why.empty())
          observer.warning(o.names.with_text("--save", o.save) + ": " + why);
        return;
      }
      TipsySaved const saved = save_tipsy(o.save, o.names.with_text("--save", o.save), final_state,
                                          sim.config().softening, o.save_format, setup.units, ranks);
      for (std::string const& text : saved.notices) observer.notice(text);
      for (std::string const& text : saved.warnings) observer.warning(text);
    });
  }
  // The end energy is an O(N^2) pass worth about ten steps: after an interrupt the user wants out,
  // and the saved state lets a restart measure it; a script's callback that raised stops the run as a signal does. The
  // series' last row is the end itself.
  if (ended && (o.summary || sampled)) {
    if (last_sample_step == sim.steps_done()) {
      result.end = last_sample;
    } else if (unless_interrupted([&] { result.end = sim.diagnostics(kStopTogether, pending.state); })) {
      if (sampled) write_row(sim.steps_done(), sim.time(), result.wall_seconds, *result.end);
    } else {
      result.stopped_by = pass_stopped_by;  // the signal the ranks agreed on, where it came to another rank
    }
  }
  // The end's warning, where it gives one; else the one the samples gave on the way stays (an interrupt that skipped
  // the end's pass, or an error back under the bound by the end): the report has the warning that was said.
  if (std::string const at_end = energy_warning(setup, result); !at_end.empty()) {
    result.energy_warning = at_end;
    observer.warning(at_end);
  }
  end_series(ended);
  written("--diagnostics");
  // A signal that came once the end's pass had looked for one last (or while the outputs after it were written): the
  // outputs are whole and the run reached its end, but the process was asked to stop, and says it stopped (its exit
  // status the signal's), as at any other moment; a job script that starts it again finds the run done. Every rank
  // comes here alike, and agrees on it.
  if (!result.stopped_by) result.stopped_by = agreed_interrupt(ranks);
  // Said once everything else is written: a front end that stops on a warning (Python's filter made it an error)
  // stops nothing that was still to come.
  for (auto const& lost : result.outputs_not_written) observer.output_not_written(lost);
}

}  // namespace nbody::driver
