// app/live_simulation.cpp - the viewer's simulation thread.
#include "app/live_simulation.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <limits>
#include <sstream>
#include <utility>

#include "app/run_config_json.h"
#include "core/bounds.h"
#include "core/clock.h"
#include "core/errors.h"
#include "core/interrupt.h"
#include "driver/checkpoints.h"
#include "driver/steering.h"
#include "render/camera.h"
#include "sim/physics/diagnostics.h"
#include "sim/physics/hermite_step.h"

namespace nbody::app {
namespace {

// How often a paused viewer on rank 0 tells the other ranks it is still there: far inside the
// bound on their wait (NBODY_RANK_TIMEOUT, 900 s by default; tests set a few seconds).
constexpr double kKeepAliveSeconds = 1.0;

// A batch of steps goes to the devices in runs of about this long (from the recent step time), with
// a look between runs for a quit or a new run: on a GPU, whose steps are queued, the wait is then
// at most a run (one step, where a step takes longer); on the CPU a step gives up between bodies.
constexpr double kRunSeconds = 1.0 / 60.0;
// hermite4 running live: a frame's block steps take about this long (the span's end comes over several frames).
constexpr double kFrameSeconds = 1.0 / 30.0;

std::string number_text(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

}  // namespace

std::string count_text(std::size_t n) {
  std::string digits = std::to_string(n), text;
  for (std::size_t k = 0; k < digits.size(); ++k) {
    if (k > 0 && (digits.size() - k) % 3 == 0) text += ',';
    text += digits[k];
  }
  return text;
}

// "1 body", "16,384 bodies".
std::string bodies_text(std::size_t n) { return count_text(n) + (n == 1 ? " body" : " bodies"); }

LiveSimulation::LiveSimulation(driver::RunConfig run, std::optional<int> frames_device, bool track_energy)
    : ranks_(world()),
      leads_(ranks_.rank() == 0),
      run_(std::move(run)),
      // Every rank's bodies in one frame: a host copy gathered from the ranks.
      frames_device_(ranks_.size() > 1 ? std::nullopt : frames_device),
      track_energy_(track_energy),
      origin_(Clock::now()) {}

LiveSimulation::LiveSimulation(driver::Setup setup, driver::RunConfig run, std::optional<int> frames_device,
                               bool track_energy)
    : LiveSimulation(std::move(run), frames_device, track_energy) {
  start_setup_ = std::move(setup);
}

bool LiveSimulation::quick_energy(const driver::Setup& setup) {
  return setup.config.backend == sim::Backend::cuda ? setup.bodies.size() <= (1u << 20) : setup.bodies.size() <= 65536;
}

LiveSimulation::~LiveSimulation() {
  {
    std::lock_guard<std::mutex> lock(control_mutex_);
    stop_ = true;
    cancel_ = true;  // a CPU step or start-up in progress is abandoned: nothing will show it
  }
  control_changed_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (leads_ && ranks_.size() > 1) {
    Plan stop;
    stop.stop = true;
    try {
      send(stop);
    } catch (...) {  // a destructor does not throw; the followers then end with the job
    }
  }
}

void LiveSimulation::send(const Plan& plan) {
  if (ranks_.size() == 1) return;
  nlohmann::json j = {{"steps", plan.steps},
                      {"energy", plan.energy},
                      {"stop", plan.stop},
                      {"start", plan.start},
                      {"levels", plan.levels},
                      {"spans", plan.spans},
                      {"budget", plan.budget},
                      {"changes", nlohmann::json::array()}};
  for (auto const& c : plan.changes)
    j["changes"].push_back({{"kind", int(c.kind)}, {"path", c.path}, {"run", to_json(c.run)}, {"number", c.number}});
  (void)ranks_.all_gather(j.dump());
}

LiveSimulation::Plan LiveSimulation::receive() {
  std::string const text = ranks_.all_gather(std::string())[0];  // rank 0's plan
  auto const j = nlohmann::json::parse(text);
  Plan plan;
  plan.steps = j.at("steps").get<std::uint64_t>();
  plan.energy = j.at("energy").get<bool>();
  plan.stop = j.at("stop").get<bool>();
  plan.start = j.at("start").get<bool>();
  plan.levels = j.at("levels").get<bool>();
  plan.spans = j.at("spans").get<std::uint64_t>();
  plan.budget = j.at("budget").get<std::uint64_t>();
  for (auto const& c : j.at("changes"))
    plan.changes.push_back({Change::Kind(c.at("kind").get<int>()), run_config_from_json(c.at("run")),
                            c.at("path").get<std::string>(), c.at("number").get<std::uint64_t>()});
  return plan;
}

int LiveSimulation::follow() {
  for (;;) {
    Plan const plan = receive();
    if (plan.stop) break;
    execute(plan);
    take_messages();  // rank 0 reports and offers files
    take_files();
    check_started();  // every rank's start-up fails alike (agree()): each ends with it
  }
  return interrupt_signal() ? interrupted_exit_code(interrupt_signal()) : 0;
}

void LiveSimulation::check_started() const {
  std::lock_guard<std::mutex> lock(control_mutex_);
  if (start_failure_) std::rethrow_exception(start_failure_);
}

void LiveSimulation::start() {
  threaded_ = true;
  thread_ = std::thread([this] { run_thread(); });
}

void LiveSimulation::start_recording() {
  thread_ = std::thread([this] { run_recording_thread(); });
}

void LiveSimulation::advance() {
  {
    std::lock_guard<std::mutex> lock(control_mutex_);
    ++advances_asked_;
  }
  control_changed_.notify_all();
}

bool LiveSimulation::wait_advanced(double seconds) {
  std::unique_lock<std::mutex> lock(control_mutex_);
  bool const done = advanced_.wait_for(lock, std::chrono::duration<double>(seconds),
                                       [&] { return advances_done_ >= advances_asked_; });
  if (done && advance_failure_) std::rethrow_exception(std::exchange(advance_failure_, nullptr));
  return done;
}

void LiveSimulation::run_recording_thread() {
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(control_mutex_);
      // Idle until the next frame is asked for: looks again every 100 ms for the end (stop_).
      while (!stop_ && advances_done_ >= advances_asked_) control_changed_.wait_for(lock, std::chrono::milliseconds(100));
      if (stop_) return;
    }
    std::exception_ptr failure;
    try {
      update();  // threaded_ stays false: the start-up and the first batch make one frame, as before
    } catch (const Interrupted&) {
      // The caller sees the signal itself and ends the recording.
    } catch (const sim::StepCancelled&) {
      // Abandoned for the end: nothing more is asked for.
    } catch (...) {
      failure = std::current_exception();  // the caller's, as if update() had run there
    }
    {
      std::lock_guard<std::mutex> lock(control_mutex_);
      ++advances_done_;
      advance_failure_ = failure;
    }
    advanced_.notify_all();
  }
}

void LiveSimulation::frame_shown() {
  if (frame_pending_.exchange(false)) control_changed_.notify_all();
}

void LiveSimulation::set_paused(bool paused) {
  paused_ = paused;
  control_changed_.notify_all();
}

void LiveSimulation::step(std::uint64_t steps) {
  steps_asked_ += steps;
  control_changed_.notify_all();
}

void LiveSimulation::set_steps_per_update(int steps) {
  steps_per_update_ = int(std::clamp<long long>(steps, 1, kMaxStepsPerFrame));
}

std::uint64_t LiveSimulation::request(Change change) {
  std::uint64_t number = 0;
  {
    std::lock_guard<std::mutex> lock(control_mutex_);
    change.number = number = ++requests_;
    // A new run makes the step or the start-up in progress worthless: abandoned (CPU), it ends within
    // a millisecond or so instead of the minutes a step of 300,000 bodies takes.
    if (change.kind == Change::Kind::reset) cancel_ = true;
    changes_.push_back(std::move(change));
  }
  control_changed_.notify_all();
  return number;
}

std::vector<std::string> LiveSimulation::take_messages() {
  std::lock_guard<std::mutex> lock(control_mutex_);
  std::vector<std::string> m;
  m.swap(messages_);
  return m;
}

std::vector<std::string> LiveSimulation::take_files() {
  std::lock_guard<std::mutex> lock(control_mutex_);
  std::vector<std::string> f;
  f.swap(files_);
  return f;
}

void LiveSimulation::message(const std::string& text) {
  std::lock_guard<std::mutex> lock(control_mutex_);
  messages_.push_back(text);
}

void LiveSimulation::notice(const std::string& text) {
  if (notices_said_.insert(text).second) message(text);
}

LiveStats LiveSimulation::stats() const {
  std::lock_guard<std::mutex> lock(frame_mutex_);
  LiveStats s = stats_;
  s.paused = paused_;
  return s;
}

std::optional<Vec3d> LiveSimulation::centre() const {
  std::lock_guard<std::mutex> lock(frame_mutex_);
  return centre_;
}

sim::BodySet LiveSimulation::state() {
  // One lock for the host copy and the device download: both of one generation, one size.
  std::lock_guard<std::mutex> lock(frame_mutex_);
  sim::BodySet b = host_frames_[front_];
  if (!device_frames_) return b;
  // Positions and velocities from the front device frame, types and masses from the host copy.
  std::vector<float> p(4 * b.size()), v(4 * b.size());
  device_frames_->download(p.data(), v.data());
  for (std::size_t i = 0; i < b.size(); ++i) {
    b.pos_mass[i] = {p[4 * i], p[4 * i + 1], p[4 * i + 2], p[4 * i + 3]};
    b.velocity[i] = {v[4 * i], v[4 * i + 1], v[4 * i + 2]};
  }
  return b;
}

void LiveSimulation::run_thread() {
  while (!stop_) {
    {
      std::unique_lock<std::mutex> lock(control_mutex_);
      control_changed_.wait_for(lock, std::chrono::milliseconds(100), [&] {
        return stop_ || !changes_.empty() || steps_asked_ > 0 || (!paused_ && !frame_pending_) || !sim_;
      });
      if (start_failure_) {  // nothing to run: the viewer ends with the failure (check_started)
        control_changed_.wait_for(lock, std::chrono::milliseconds(100), [&] { return bool(stop_); });
        continue;
      }
    }
    if (stop_) break;
    try {
      update();
    } catch (const Interrupted&) {
      return;  // Ctrl-C during an energy pass: the render loop sees the signal and closes the viewer
    }
  }
}

void LiveSimulation::update() {
  Plan plan;
  {
    std::lock_guard<std::mutex> lock(control_mutex_);
    if (start_failure_) return;
    plan.changes.assign(std::make_move_iterator(changes_.begin()), std::make_move_iterator(changes_.end()));
    changes_.clear();
    cancel_ = bool(stop_);  // from here on only a newer request (or the end) abandons the work
  }
  // No simulation yet (or the last start was superseded by a reset that failed): start. On the
  // thread that start-up is a plan of its own, so that its frame is shown before the first steps.
  plan.start = !sim_;
  plan.levels = want_levels_;  // rank 0's viewer colours by level: every rank downloads them with the frame
  // Steps asked for (n, the Step button) are made even while paused, at most a frame's worth at a time.
  std::uint64_t const asked = steps_asked_.exchange(0);
  std::uint64_t const once = std::min<std::uint64_t>(asked, kMaxStepsPerFrame);
  if (asked > once) steps_asked_ += asked - once;
  bool const waits = (paused_ && !once) || (threaded_ && (frame_pending_ || plan.start) && !once);  // paused, or the last frame unseen
  if (!waits) plan.steps = once ? once : std::uint64_t(steps_per_update_.load());
  if (!waits && !once) {  // running: for hermite4 (execute decides; this plan may make the simulation) spans
    plan.spans = plan.steps;
    double const ms = stats().step_ms;  // a block step's, the last frames'
    plan.budget = !threaded_ ? std::numeric_limits<std::uint64_t>::max() / 2
                  : ms > 0   ? std::max<std::uint64_t>(1, std::uint64_t(1e3 * kFrameSeconds / ms))
                             : 1;
  }
  // Energy: measured when the last pass is a small share of the time since (a tenth at most); the first of a
  // simulation at once (hermite4: at the first span's end, the time the HUD names for it).
  bool measured = false;
  {
    std::lock_guard<std::mutex> lock(frame_mutex_);
    measured = stats_.energy_error.has_value();
  }
  plan.energy = tracking_ && e0_ && plan.steps > 0 &&
                (!measured || seconds_since(origin_) - last_energy_wall_ > std::max(1.0, 10.0 * energy_seconds_));
  // The other ranks wait for each plan in a collective call, which gives up after NBODY_RANK_TIMEOUT
  // (mpi/mpi_ranks.cpp): a paused viewer still sends an empty plan now and then.
  bool const keep_alive = ranks_.size() > 1 && seconds_since(origin_) - last_plan_wall_ > kKeepAliveSeconds;
  if (!plan.start && plan.changes.empty() && plan.steps == 0 && !keep_alive && !levels_missing(plan)) return;
  last_plan_wall_ = seconds_since(origin_);
  send(plan);
  execute(plan);
}

// hermite4 running: a frame's steps are spans of its longest step (dt max's power of two), to the next multiple of it
// from the epoch and on. There every body is at one time, so the frames at span ends show the bodies together, each
// the same simulation time after the one before, however short the block steps between (from dt max down to the
// floor, as encounters need). A live frame makes at most `budget` block steps towards that end (about kFrameSeconds),
// so that a long span shows its progress (the bodies predicted to the block time) and the user's changes, a pause
// and a checkpoint are taken between frames as with other integrators; a recording's frame makes the whole span. The
// end is the same on every rank (the block time and the settings decide it), and so are the block steps: the time
// limit stops them, and rank 0's budget bounds them.
void LiveSimulation::advance_spans(const Plan& plan) {
  double const top = sim::hermite::pow2_at_most(sim_->program().hermite->dt_max);
  // A new end where the last is reached, or where the frame's spans changed (a span end of the old count, far off,
  // would hold back the frames' ends and the energy): from here, for every rank alike (the plan carries the count).
  // Not before a longer step a lower dt max left (Simulation::long_steps_end) ends: every body is at the end then.
  if (!span_end_ || sim_->block_time() >= *span_end_ || plan.spans != span_spans_) {
    span_end_ = std::max((std::floor(sim_->block_time() / top) + double(plan.spans)) * top, sim_->long_steps_end());
    span_spans_ = plan.spans;
    std::lock_guard<std::mutex> lock(frame_mutex_);
    stats_.energy_due = sim_->block_epoch() + *span_end_;
  }
  struct Limit {  // the simulation's own time limit (none, in a viewer) back however this ends
    multigpu::Simulation& sim;
    double time = sim.time_limit();
    bool finishes = sim.time_limit_finishes();
    ~Limit() { sim.set_time_limit(time, finishes); }
  } const limit{*sim_};
  sim_->set_time_limit(sim_->block_epoch() + *span_end_, false);
  auto const t0 = Clock::now();
  double const end = *span_end_;
  std::uint64_t const done = steps_in_runs(plan.budget, [&] { return sim_->block_time() >= end; });
  bool const there = sim_->block_time() >= end;
  // The energy on its cadence, measured where every body is at one time: at a span's end (else the next frame's).
  if (done > 0) capture(1e3 * seconds_since(t0) / double(done), done, plan.energy && there);
}

std::uint64_t LiveSimulation::steps_in_runs(std::uint64_t most, const std::function<bool()>& reached) {
  std::uint64_t done = 0;
  while (done < most && (done == 0 || !superseded())) {
    double const ms = stats().step_ms;
    std::uint64_t const run = std::min<std::uint64_t>(
        most - done, ms > 0 ? std::max<std::uint64_t>(1, std::uint64_t(1e3 * kRunSeconds / ms)) : 1);
    std::uint64_t const before = sim_->steps_done();
    sim_->advance(run);
    sim_->synchronize();
    std::uint64_t const made = sim_->steps_done() - before;
    done += made;
    if (made == 0 || reached()) break;
  }
  return done;
}

bool LiveSimulation::levels_missing(const Plan& plan) const {
  return plan.levels && sim_ && !torn_ && sim_->block_steps() && !levels_captured_;
}

bool LiveSimulation::superseded() const { return ranks_.size() == 1 && cancel_.load(); }

void LiveSimulation::set_starting(const std::string& what) {
  std::lock_guard<std::mutex> lock(frame_mutex_);
  stats_.starting = what;
}

void LiveSimulation::execute(const Plan& plan) {
  plan_levels_ = plan.levels;  // every frame this plan captures, a new simulation's first included
  // The last reset of the plan makes the next simulation: a start-up, resets and settings before it
  // would be thrown away at once (fifteen quick scenario switches build one simulation, the last).
  std::size_t last_reset = plan.changes.size();
  for (std::size_t k = 0; k < plan.changes.size(); ++k)
    if (plan.changes[k].kind == Change::Kind::reset) last_reset = k;
  bool const resets = last_reset < plan.changes.size();
  try {
    if (plan.start && !resets) start_up();
    for (std::size_t k = 0; k < plan.changes.size(); ++k) {
      Change const& change = plan.changes[k];
      bool const save = change.kind == Change::Kind::save;
      bool const skip = resets && k < last_reset && !save;
      if (!skip && (save || !superseded())) {
        applying_ = change.number;
        try {
          apply(change);
        } catch (const Interrupted&) {
          throw;
        } catch (const sim::StepCancelled&) {
          // A newer request came while this one was being made: it is dropped, the newer one follows.
        } catch (const std::exception& e) {
          // The run carries on as it was: a change that cannot be made is only a message. With several
          // ranks every rank refuses it alike (agree()).
          message(std::string(save ? "checkpoint not saved: " : "could not apply the change: ") + e.what());
          std::lock_guard<std::mutex> lock(frame_mutex_);
          ++stats_.refused;
        }
        applying_ = 0;
      }
      std::lock_guard<std::mutex> lock(frame_mutex_);
      stats_.changes_done = std::max(stats_.changes_done, change.number);
    }
    if (torn_ && !superseded() && !stop_) restore();  // a reset that failed: the run goes on from its last frame
    // Colour by level asked for while the frame has no levels (paused, or its plan came before the ask): the frame
    // is captured again, with them, without a step.
    if (plan.steps == 0 && levels_missing(plan)) capture(0.0, 0, false);
    if (plan.steps == 0 || !sim_ || torn_ || superseded()) return;
  } catch (const sim::StepCancelled&) {
    return;  // the start-up or the restore was abandoned for a newer request: the next update makes it
  }
  try {
    if (plan.spans && sim_->block_steps()) return advance_spans(plan);
    auto const t0 = Clock::now();
    std::uint64_t const done = steps_in_runs(plan.steps, [] { return false; });
    if (done == 0) return;
    capture(1e3 * seconds_since(t0) / double(done), done, plan.energy && done == plan.steps);
  } catch (const Interrupted&) {
    throw;
  } catch (const sim::StepCancelled&) {
    // The step was abandoned part-way: the simulation is torn. The newer request replaces it, or,
    // failing that, restore() rebuilds it from the last frame; nothing shows or saves it meanwhile.
    torn_ = true;
  } catch (const std::exception& e) {
    // Alone, the viewer pauses and says why. The other ranks of a run cannot learn of it in time
    // (they wait in the exchange): the run ends.
    if (ranks_.size() > 1) {
      std::fprintf(stderr, "error: rank %d of %d: %s\n", ranks_.rank(), ranks_.size(), e.what());
      ranks_.abort(1);
    }
    paused_ = true;
    message(std::string("paused: ") + e.what());
  }
}

void LiveSimulation::start_up() {
  try {
    driver::Setup setup;
    if (start_setup_) {
      setup = *start_setup_;
    } else {
      set_starting("starting: making the bodies");
      agree(ranks_, [&] { setup = driver::make_setup(run_, generation_cancel()); });
    }
    for (auto const& n : setup.notices) notice(n);
    for (auto const& w : setup.warnings) notice(w);
    rebuild(setup.bodies, setup, setup.clock, setup.run, &setup.hermite, false);  // a checkpoint's settings included
    start_setup_.reset();
    message("started " + setup.source + ", " + bodies_text(sim_->bodies()) + ", softening " +
            number_text(sim_->config().softening));
  } catch (const Interrupted&) {
    throw;
  } catch (const sim::StepCancelled&) {
    throw;
  } catch (const std::exception&) {
    set_starting("");
    std::lock_guard<std::mutex> lock(control_mutex_);
    start_failure_ = std::current_exception();
  }
}

void LiveSimulation::restore() {
  // The state of the front frame, on the settings and the clock it was captured with; the energy's
  // reference stays. (CPU runs only tear, and their frames are on the host.)
  sim::BodySet const bodies = host_frames_[front_];
  driver::Setup setup = setup_;
  setup.initial_energy = e0_;
  rebuild(bodies, setup, frame_clock_, run_, nullptr, true);  // a frame's state: hermite4 starts again from it
  message("the run goes on from step " + std::to_string(frame_clock_.step));
}

void LiveSimulation::apply(const Change& change) {
  bool const needs_state = change.kind != Change::Kind::reset;
  if (needs_state && !sim_) throw RuntimeFailure("no simulation yet");
  if (needs_state && torn_) restore();  // a settings change or a save reads the state: whole, from the last frame
  switch (change.kind) {
    case Change::Kind::reset: {
      driver::Setup setup;
      set_starting("starting: making the bodies");
      try {
        agree(ranks_, [&] { setup = driver::make_setup(change.run, generation_cancel()); });
      } catch (...) {
        set_starting("");
        throw;
      }
      for (auto const& n : setup.notices) notice(n);
      for (auto const& w : setup.warnings) notice(w);
      sim::BodySet const bodies = setup.bodies;
      rebuild(bodies, setup, setup.clock, setup.run, &setup.hermite, false);
      message("started " + setup.source + ", " + bodies_text(bodies.size()) + ", softening " +
              number_text(sim_->config().softening));
      break;
    }
    case Change::Kind::settings: {
      // Nothing to change (an edit given up, a value set to what it was): nothing is rebuilt, so the
      // energy's reference and the step timing stay.
      driver::RunConfig same = change.run;
      same.initial = run_.initial;
      same.given = run_.given;
      same.units = run_.units;
      if (to_json(same) == to_json(run_)) break;
      // The same state and clock on the new settings; a new dt goes on from the time reached.
      // The energy error goes on from the run's baseline (with_settings measures it anew where the softening, and so
      // the potential, changed), as a script's change of settings keeps it.
      std::vector<std::string> notices;
      driver::Setup current = setup_;
      current.initial_energy = e0_;
      driver::Setup const setup = driver::with_settings(current, *sim_, change.run, &notices);
      for (auto const& n : notices) message(n);
      rebuild(setup.bodies, setup, setup.clock, change.run, &setup.hermite, true);
      message("now " + sim_->describe() + (setup.program.hermite ? ", dt max " : ", dt ") +
              std::to_string(setup.program.dt));
      break;
    }
    case Change::Kind::save:
      driver::write_checkpoint_once(change.path, change.path, setup_, *sim_, e0_);
      message("saved " + change.path);
      {
        std::lock_guard<std::mutex> lock(control_mutex_);
        files_.push_back(change.path);
      }
      break;
  }
}

void LiveSimulation::rebuild(const sim::BodySet& bodies, const driver::Setup& setup, multigpu::RunClock clock,
                             const driver::RunConfig& run, const sim::hermite::HermiteState* hermite, bool continued) {
  // Everything of the new simulation first (while the old one still exists: both are in memory for
  // a moment); nothing of the old is touched until all of it succeeded. Its forces and energy (O(N^2))
  // give up when a newer request comes (sim::StepCancelled), and the new one is discarded.
  struct Starting {
    LiveSimulation& live;
    ~Starting() { live.set_starting(""); }
  } const starting{*this};
  set_starting("starting: forces of " + count_text(bodies.size()) + " bodies");
  multigpu::SimulationConfig config = setup.config;
  config.cancel = &cancel_;
  auto next = std::make_unique<multigpu::Simulation>(bodies, setup.program, config, clock, hermite);
  // Device frames for an fp32 CUDA run of fixed steps; hermite4 has no device array of fp32 positions to copy (its
  // frames come to the host, and the viewer uploads them).
  bool const on_device = frames_device_ && setup.config.backend == sim::Backend::cuda &&
                         setup.config.engine.precision == Precision::fp32 && !setup.program.hermite;
  std::unique_ptr<render::DeviceFrames> frames;
  if (on_device) frames = std::make_unique<render::DeviceFrames>(*frames_device_, bodies.size());
  bool const tracked = track_energy_ && quick_energy(setup);
  std::optional<double> e0 = setup.initial_energy;
  double energy_seconds = energy_seconds_, last_energy_wall = last_energy_wall_;
  if (tracked && !e0) {
    set_starting("starting: energy of " + count_text(bodies.size()) + " bodies");
    auto const t0 = Clock::now();
    e0 = next->diagnostics().total();
    energy_seconds = seconds_since(t0);
    last_energy_wall = seconds_since(origin_);
  }
  LiveStats const before = stats();
  std::optional<double> const before_e0 = e0_;
  sim_ = std::move(next);
  span_end_.reset();
  torn_ = false;
  run_ = run;
  setup_ = setup;
  setup_.bodies = sim::BodySet{};  // the simulation holds the state now
  e0_ = e0;
  tracking_ = tracked;
  energy_seconds_ = energy_seconds;
  last_energy_wall_ = last_energy_wall;
  {
    std::lock_guard<std::mutex> lock(frame_mutex_);
    device_frames_ = std::move(frames);
    host_frames_[0] = host_frames_[1] = bodies;
    level_frames_[0].clear();
    level_frames_[1].clear();
    interactions_done_ = 0;  // the new simulation's counters start at 0
    stats_ = LiveStats{};
    stats_.generation = ++generation_;
    stats_.refused = before.refused;
    stats_.changes_done = std::max(before.changes_done, applying_);
    stats_.energy_tracked = tracked;
    stats_.initial_energy = tracked ? e0 : std::nullopt;
    stats_.continued = continued;
    // The same run from the same baseline: what was measured of it last stands till the next measure.
    if (continued && tracked && before.energy_tracked && e0 && before_e0 == e0 &&
        before.energy_time <= sim_->time()) {  // (not of a time a restored run has yet to reach again)
      stats_.energy_error = before.energy_error;
      stats_.energy_time = before.energy_time;
      stats_.virial_ratio = before.virial_ratio;
      stats_.lagrangian_radii = before.lagrangian_radii;
    }
    stats_.backend = sim_->config().backend;
    stats_.bodies = bodies.size();
    stats_.description = sim_->describe();
    stats_.source = setup.source;
    stats_.run = run_;
    stats_.dt = sim_->program().dt;
    stats_.softening = sim_->config().softening;
    stats_.devices = sim_->config().devices.size();
    stats_.slices = sim_->all_slices();  // every rank's: colour by device shows the ranks' slices
    stats_.time = sim_->time();
    stats_.step = sim_->steps_done();
  }
  capture(0.0, 0, false);
}

void LiveSimulation::capture(double step_ms, std::uint64_t steps, bool energy) {
  // The frame: on the GPU, a device-to-device copy; on the host, the state downloaded into the back
  // frame (only this thread writes it; readers see the front one, under the lock), in its storage.
  bool const on_device = device_frames_ != nullptr;  // never for hermite4 (rebuild)
  sim::BodySet& back = host_frames_[front_ ^ 1];
  if (on_device) {
    velocities_.clear();
    for (std::size_t d = 0; d < sim_->slices().size(); ++d)
      velocities_.push_back({sim_->current_velocities(int(d)), sim_->device_ordinal(int(d)), sim_->slices()[d]});
    device_frames_->capture(sim_->current_positions(0), sim_->device_ordinal(0), velocities_);
  } else {
    sim_->state(back);
  }
  // hermite4's time-step levels with the frame, while rank 0's viewer colours by them: the download is
  // collective, so the plan (the same on every rank) decides, and frames that need none make no call.
  std::vector<std::uint8_t>& levels = level_frames_[front_ ^ 1];
  levels.clear();
  levels_captured_ = sim_->block_steps() && plan_levels_ && !on_device;
  if (levels_captured_) {
    sim_->hermite_state(level_bodies_, level_state_);
    auto const& params = *sim_->program().hermite;
    levels.resize(level_state_.step.size());
    for (std::size_t i = 0; i < levels.size(); ++i)
      levels[i] = std::uint8_t(sim::hermite::step_level(level_state_.step[i], params));
  }
  // hermite4: the force+jerk pairs computed, for the rate (a block step's count varies with its block).
  std::uint64_t const interactions = sim_->block_steps() ? sim_->hermite_counters().interactions : 0;
  std::optional<Vec3d> centre;
  double const now = seconds_since(origin_);
  if (want_centre_ && (steps == 0 || now - last_centre_wall_ > 0.2)) {
    last_centre_wall_ = now;
    if (on_device) sim_->state(centre_state_);  // the follow camera's centre needs positions on the host
    centre = render::centre_of(on_device ? centre_state_.pos_mass : back.pos_mass);
  }
  {
    std::lock_guard<std::mutex> lock(frame_mutex_);
    if (on_device) {
      device_frames_->flip();
      level_frames_[front_].clear();
    } else {
      front_ ^= 1;
    }
    if (centre) centre_ = centre;
    stats_.step = sim_->steps_done();
    stats_.time = sim_->time();
    stats_.block_steps = sim_->block_steps();
    if (steps > 0) {
      stats_.step_ms = stats_.step_ms == 0 ? step_ms : 0.8 * stats_.step_ms + 0.2 * step_ms;
      stats_.steps_per_s = stats_.step_ms > 0 ? 1e3 / stats_.step_ms : 0;
      stats_.timed_steps += steps;
      stats_.timed_ms += step_ms * double(steps);
      double const n = double(sim_->bodies());
      if (sim_->block_steps()) {
        double const seconds = 1e-3 * step_ms * double(steps);
        double const rate = seconds > 0 && interactions >= interactions_done_
                                ? double(interactions - interactions_done_) / seconds : 0.0;
        stats_.interactions_per_s = stats_.interactions_per_s == 0 ? rate : 0.8 * stats_.interactions_per_s + 0.2 * rate;
      } else {
        stats_.interactions_per_s = double(sim_->program().drifts()) * n * n * stats_.steps_per_s;
      }
    }
    interactions_done_ = interactions;
    ++frame_number_;
    frame_pending_ = true;
  }
  frame_clock_ = sim_->clock();
  // Energy: on the cadence update() planned (every rank measures together), after the frame is out.
  // Abandoned for a newer request (sim::StepCancelled), it tears the simulation: the front frame,
  // just taken, is where restore() would go on from.
  if (energy) {
    auto const t0 = Clock::now();
    sim::Diagnostics const measured = sim_->diagnostics();
    double const e = measured.total();
    energy_seconds_ = seconds_since(t0);
    last_energy_wall_ = seconds_since(origin_);
    if (!std::isfinite(e)) {
      paused_ = true;
      message("paused: the state is no longer finite at step " + std::to_string(sim_->steps_done()) +
              "; the time step is too long or the softening too small (dt, softening)");
    }
    std::lock_guard<std::mutex> lock(frame_mutex_);
    stats_.energy_error = sim::relative_energy_error(measured, *e0_);
    stats_.energy_time = sim_->time();
    stats_.virial_ratio = measured.virial_ratio();
    stats_.lagrangian_radii = measured.lagrangian_radii;
  }
}

}  // namespace nbody::app
