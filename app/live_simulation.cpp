// app/live_simulation.cpp - the viewer's simulation thread.
#include "app/live_simulation.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <sstream>

#include "app/run_config_json.h"
#include "core/clock.h"
#include "core/errors.h"
#include "core/interrupt.h"
#include "driver/checkpoints.h"
#include "driver/steering.h"
#include "render/camera.h"
#include "sim/physics/diagnostics.h"

namespace nbody::app {
namespace {

// How often a paused viewer on rank 0 tells the other ranks it is still there: far inside the
// bound on their wait (NBODY_RANK_TIMEOUT, 900 s by default; tests set a few seconds).
constexpr double kKeepAliveSeconds = 1.0;

}  // namespace

LiveSimulation::LiveSimulation(driver::Setup setup, driver::RunConfig run, std::optional<int> frames_device,
                               bool track_energy)
    : ranks_(world()),
      leads_(ranks_.rank() == 0),
      // Every rank's bodies in one frame: a host copy gathered from the ranks.
      frames_device_(ranks_.size() > 1 ? std::nullopt : frames_device),
      track_energy_(track_energy),
      origin_(Clock::now()) {
  sim::BodySet const bodies = setup.bodies;
  multigpu::RunClock const clock = setup.clock;
  rebuild(bodies, setup, clock, run);
}

LiveSimulation::~LiveSimulation() {
  stop_ = true;
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
  nlohmann::json j = {{"steps", plan.steps}, {"energy", plan.energy}, {"stop", plan.stop}, {"changes", nlohmann::json::array()}};
  for (auto const& c : plan.changes)
    j["changes"].push_back({{"kind", int(c.kind)}, {"path", c.path}, {"run", to_json(c.run)}});
  (void)ranks_.all_gather(j.dump());
}

LiveSimulation::Plan LiveSimulation::receive() {
  std::string const text = ranks_.all_gather(std::string())[0];  // rank 0's plan
  auto const j = nlohmann::json::parse(text);
  Plan plan;
  plan.steps = j.at("steps").get<std::uint64_t>();
  plan.energy = j.at("energy").get<bool>();
  plan.stop = j.at("stop").get<bool>();
  for (auto const& c : j.at("changes"))
    plan.changes.push_back({Change::Kind(c.at("kind").get<int>()), run_config_from_json(c.at("run")), c.at("path").get<std::string>()});
  return plan;
}

int LiveSimulation::follow() {
  for (;;) {
    Plan const plan = receive();
    if (plan.stop) break;
    execute(plan);
    take_messages();  // rank 0 reports
  }
  return interrupt_signal() ? interrupted_exit_code(interrupt_signal()) : 0;
}

void LiveSimulation::start() {
  threaded_ = true;
  thread_ = std::thread([this] { run_thread(); });
}

void LiveSimulation::frame_shown() {
  if (frame_pending_.exchange(false)) control_changed_.notify_all();
}

void LiveSimulation::set_paused(bool paused) {
  paused_ = paused;
  control_changed_.notify_all();
}

void LiveSimulation::step_once() {
  step_once_ = true;
  control_changed_.notify_all();
}

void LiveSimulation::set_steps_per_update(int steps) { steps_per_update_ = std::max(1, steps); }

void LiveSimulation::request(Change change) {
  {
    std::lock_guard<std::mutex> lock(control_mutex_);
    changes_.push_back(std::move(change));
  }
  control_changed_.notify_all();
}

std::vector<std::string> LiveSimulation::take_messages() {
  std::lock_guard<std::mutex> lock(control_mutex_);
  std::vector<std::string> m;
  m.swap(messages_);
  return m;
}

void LiveSimulation::message(const std::string& text) {
  std::lock_guard<std::mutex> lock(control_mutex_);
  messages_.push_back(text);
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
        return stop_ || !changes_.empty() || step_once_ || (!paused_ && !frame_pending_);
      });
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
    plan.changes.assign(std::make_move_iterator(changes_.begin()), std::make_move_iterator(changes_.end()));
    changes_.clear();
  }
  bool const once = step_once_.exchange(false);
  bool const waits = (paused_ && !once) || (threaded_ && frame_pending_ && !once);  // paused, or the last frame unseen
  if (!waits) plan.steps = once ? 1 : std::uint64_t(steps_per_update_.load());
  // Energy: measured when the last pass is a small share of the time since (a tenth at most).
  plan.energy = track_energy_ && e0_ && plan.steps > 0 &&
                seconds_since(origin_) - last_energy_wall_ > std::max(1.0, 10.0 * energy_seconds_);
  // The other ranks wait for each plan in a collective call, which gives up after NBODY_RANK_TIMEOUT
  // (mpi/mpi_ranks.cpp): a paused viewer still sends an empty plan now and then.
  bool const keep_alive = ranks_.size() > 1 && seconds_since(origin_) - last_plan_wall_ > kKeepAliveSeconds;
  if (plan.changes.empty() && plan.steps == 0 && !keep_alive) return;
  last_plan_wall_ = seconds_since(origin_);
  send(plan);
  execute(plan);
}

void LiveSimulation::execute(const Plan& plan) {
  for (auto const& change : plan.changes) {
    try {
      apply(change);
    } catch (const Interrupted&) {
      throw;
    } catch (const std::exception& e) {
      // The run carries on as it was: a change that cannot be made is only a message. With several
      // ranks every rank refuses it alike (agree()).
      message(std::string("could not apply the change: ") + e.what());
      std::lock_guard<std::mutex> lock(frame_mutex_);
      ++stats_.refused;
    }
  }
  if (plan.steps == 0) return;
  try {
    auto const t0 = Clock::now();
    sim_->advance(plan.steps);
    sim_->synchronize();
    double const seconds = seconds_since(t0);
    capture(1e3 * seconds / double(plan.steps), plan.steps, plan.energy);
  } catch (const Interrupted&) {
    throw;
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

void LiveSimulation::apply(const Change& change) {
  switch (change.kind) {
    case Change::Kind::reset: {
      driver::Setup setup;
      agree(ranks_, [&] { setup = driver::make_setup(change.run); });
      for (auto const& n : setup.notices) message(n);
      sim::BodySet const bodies = setup.bodies;
      rebuild(bodies, setup, setup.clock, change.run);
      message("started " + setup.source + ", " + std::to_string(bodies.size()) + " bodies");
      break;
    }
    case Change::Kind::settings: {
      // The same state and clock on the new settings; a new dt goes on from the time reached.
      std::vector<std::string> notices;
      driver::Setup const setup = driver::with_settings(setup_, *sim_, change.run, &notices);
      for (auto const& n : notices) message(n);
      rebuild(setup.bodies, setup, setup.clock, change.run);
      message("now " + sim_->describe() + ", dt " + std::to_string(setup.program.dt));
      break;
    }
    case Change::Kind::save:
      driver::write_checkpoint(change.path, setup_, *sim_, e0_);
      message("saved " + change.path);
      break;
  }
}

void LiveSimulation::rebuild(const sim::BodySet& bodies, const driver::Setup& setup, multigpu::RunClock clock,
                             const driver::RunConfig& run) {
  // Everything of the new simulation first (while the old one still exists: both are in memory for
  // a moment); nothing of the old is touched until all of it succeeded.
  auto next = std::make_unique<multigpu::Simulation>(bodies, setup.program, setup.config, clock);
  bool const on_device =
      frames_device_ && setup.config.backend == sim::Backend::cuda && setup.config.engine.precision == Precision::fp32;
  std::unique_ptr<render::DeviceFrames> frames;
  if (on_device) frames = std::make_unique<render::DeviceFrames>(*frames_device_, bodies.size());
  std::optional<double> e0 = setup.initial_energy;
  double energy_seconds = energy_seconds_, last_energy_wall = last_energy_wall_;
  if (track_energy_ && !e0) {
    auto const t0 = Clock::now();
    e0 = next->diagnostics().total();
    energy_seconds = seconds_since(t0);
    last_energy_wall = seconds_since(origin_);
  }
  std::uint64_t const refused = stats().refused;
  sim_ = std::move(next);
  run_ = run;
  setup_ = setup;
  setup_.bodies = sim::BodySet{};  // the simulation holds the state now
  e0_ = e0;
  energy_seconds_ = energy_seconds;
  last_energy_wall_ = last_energy_wall;
  {
    std::lock_guard<std::mutex> lock(frame_mutex_);
    device_frames_ = std::move(frames);
    host_frames_[0] = host_frames_[1] = bodies;
    stats_ = LiveStats{};
    stats_.generation = ++generation_;
    stats_.refused = refused;
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
  bool const on_device = device_frames_ != nullptr && !sim_->block_steps();  // hermite4: no device array
  sim::BodySet& back = host_frames_[front_ ^ 1];
  if (on_device) {
    velocities_.clear();
    for (std::size_t d = 0; d < sim_->slices().size(); ++d)
      velocities_.push_back({sim_->current_velocities(int(d)), sim_->device_ordinal(int(d)), sim_->slices()[d]});
    device_frames_->capture(sim_->current_positions(0), sim_->device_ordinal(0), velocities_);
  } else {
    sim_->state(back);
  }
  std::optional<Vec3d> centre;
  double const now = seconds_since(origin_);
  if (want_centre_ && (steps == 0 || now - last_centre_wall_ > 0.2)) {
    last_centre_wall_ = now;
    if (on_device) sim_->state(centre_state_);  // the follow camera's centre needs positions on the host
    centre = render::centre_of(on_device ? centre_state_.pos_mass : back.pos_mass);
  }
  // Energy: on the cadence update() planned (every rank measures together).
  std::optional<double> energy_error;
  sim::Diagnostics measured;
  if (energy) {
    auto const t0 = Clock::now();
    measured = sim_->diagnostics();
    double const e = measured.total();
    energy_seconds_ = seconds_since(t0);
    last_energy_wall_ = seconds_since(origin_);
    if (!std::isfinite(e)) {
      paused_ = true;
      message("paused: the state is no longer finite at step " + std::to_string(sim_->steps_done()) +
              "; the time step is too long or the softening too small (dt, softening)");
    }
    energy_error = sim::relative_energy_error(e, *e0_);
  }
  std::lock_guard<std::mutex> lock(frame_mutex_);
  if (on_device) {
    device_frames_->flip();
  } else {
    front_ ^= 1;
  }
  if (centre) centre_ = centre;
  stats_.step = sim_->steps_done();
  stats_.time = sim_->time();
  if (steps > 0) {
    stats_.step_ms = stats_.step_ms == 0 ? step_ms : 0.8 * stats_.step_ms + 0.2 * step_ms;
    stats_.steps_per_s = stats_.step_ms > 0 ? 1e3 / stats_.step_ms : 0;
    double const n = double(sim_->bodies());
    stats_.interactions_per_s = double(sim_->program().drifts()) * n * n * stats_.steps_per_s;
  }
  if (energy_error) {
    stats_.energy_error = energy_error;
    stats_.energy_time = sim_->time();
    stats_.virial_ratio = measured.virial_ratio();
    stats_.lagrangian_radii = measured.lagrangian_radii;
  }
  ++frame_number_;
  frame_pending_ = true;
}

}  // namespace nbody::app
