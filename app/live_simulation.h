// app/live_simulation.h - the viewer's simulation: it advances on a thread of its own while the
// render loop draws the latest completed frame at the display's rate, so a step of seconds never
// blocks a key, a drag or the HUD. Its start-up (the bodies made, the first forces, the initial
// energy) runs on that thread too, so the first frame shows at once; a recording's too, in lockstep
// with its frames (start_recording). Changes from the HUD (scenario, N, dt, softening, damping,
// precision, threading, device count) are applied between two steps; a change that cannot be made
// (bad input) becomes a message and the run carries on as it was. A new run (scenario, N) or the end
// of the viewer abandons a CPU step (or the bodies' generation) in progress between two bodies; the
// torn state is never shown or saved.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "core/ranks.h"
#include "core/real4.h"
#include "core/slice.h"
#include "driver/config.h"
#include "driver/setup.h"
#include "multigpu/simulation.h"
#include "render/cuda_gl_interop.h"

namespace nbody::app {

// A count with thousands separators: "1,000,000".
std::string count_text(std::size_t n);

// What the viewer asks for; applied by the simulation between two steps.
struct Change {
  enum class Kind {
    reset,     // build `run` afresh: scenario, N, physics, devices
    settings,  // the current state, with `run`'s physics and devices (dt, softening, threading...)
    save,      // a checkpoint of the current state to `path`
  };
  Kind kind = Kind::settings;
  driver::RunConfig run;
  std::string path;
  std::uint64_t number = 0;  // given by request(): 1, 2, 3... in the order asked
};

// What the HUD shows of the simulation, as of the latest frame.
struct LiveStats {
  std::size_t bodies = 0;
  std::uint64_t step = 0;              // steps since the run began (hermite4: block steps)
  bool block_steps = false;            // hermite4: time is the block time, a step a block step
  double time = 0;
  double step_ms = 0;                  // wall time per step, recent mean (0: no step timed yet)
  // Every step timed since the simulation was made (its start, a reset, a change of settings): how many, and their
  // wall time in all, for the mean of them that the viewer's summary gives.
  std::uint64_t timed_steps = 0;
  double timed_ms = 0;
  double steps_per_s = 0;
  double interactions_per_s = 0;
  std::optional<double> energy_error;  // sim::relative_energy_error, measured on a cadence
  std::optional<double> initial_energy;  // its baseline: the run's start's, or where the softening last changed
  double energy_time = 0;              // the simulation time it was measured at
  std::optional<double> energy_due;    // hermite4: the time the frames go to (every body at one time), measured there
  // Measured with the energy: 2K/|W| and the radii holding 10, 50 and 90% of the mass.
  std::optional<double> virial_ratio;
  std::array<double, 3> lagrangian_radii{0, 0, 0};
  bool paused = false;
  std::string description;             // backend, devices, kernel, precision, threading
  std::string source;                  // where the bodies came from
  driver::RunConfig run;               // the settings running now
  double dt = 0, softening = 0;
  std::size_t devices = 1;
  std::vector<Slice> slices;
  std::uint64_t generation = 0;        // a new simulation (new N, layout, scenario) changes it; 0: none yet
  // The generation goes on with the run before it (a change of settings): the same bodies and clock, its energy
  // error from the same baseline (unless the softening changed), its colours on the same speed range.
  bool continued = false;
  std::uint64_t refused = 0;           // changes that could not be made, so far
  // The number of the latest change dealt with (made, refused, or superseded by a later one): with a
  // new generation, the change that made it, or a later one.
  std::uint64_t changes_done = 0;
  std::string starting;                // while a simulation is being built: what it is doing, else ""
  bool energy_tracked = false;         // the energy is measured (where quick enough: quick_energy)
  sim::Backend backend = sim::Backend::cpu;
};

class LiveSimulation {
 public:
  // `frames_device`: capture frames in the memory of that GPU (for CUDA-GL interop) rather than
  // on the host; only for an fp32 CUDA run. `track_energy`: measure the energy where it is quick
  // enough (quick_energy). Nothing is built here: the first update() (on the thread, after start())
  // makes the bodies from `run`, or takes `setup`'s, and builds the simulation.
  LiveSimulation(driver::RunConfig run, std::optional<int> frames_device, bool track_energy);
  LiveSimulation(driver::Setup setup, driver::RunConfig run, std::optional<int> frames_device, bool track_energy);
  ~LiveSimulation();  // stops the thread, abandoning a CPU step or start-up in progress
  // The energy is an O(N^2) pass: tracked where it keeps a cadence (CUDA up to 2^20 bodies, the CPU
  // up to 65,536).
  static bool quick_energy(const driver::Setup& setup);
  LiveSimulation(const LiveSimulation&) = delete;
  LiveSimulation& operator=(const LiveSimulation&) = delete;

  // From now on the simulation advances on its own thread (the interactive viewer): a batch of
  // steps_per_update steps, then it waits until the frame it captured has been shown (frame_shown)
  // before the next batch, so a fast simulation moves at steps per frame and a slow one, whose
  // batch outlasts a frame, never waits.
  void start();
  // The render loop took the latest frame: the thread may go on.
  void frame_shown();
  // Recording (--offscreen, --screenshot, --video...): the simulation on its own thread too, start-up
  // included, but in lockstep: one update() for each advance(), nothing between. So every frame of a
  // recording is exactly one batch of steps after the last (the first: the start-up and one batch),
  // as update() on the caller's thread would make it, while the caller stays free to see its window
  // and the signals during a start-up or a step of minutes.
  void start_recording();
  // Asks the recording thread for the next update: the changes requested so far, then one batch.
  void advance();
  // True once the update asked for last is done (at once if none is waiting); false when `seconds`
  // passed first. Rethrows what that update threw, but for an interrupt (the caller sees the
  // signal) and work abandoned for a newer request or the end.
  bool wait_advanced(double seconds);
  // Or, without a thread: applies the changes asked for and advances one batch of steps on the
  // caller's thread, then captures the frame.
  void update();

  // In a run of several MPI ranks rank 0 leads: each update() sends the other ranks its plan (the
  // changes, the steps, whether to measure the energy), and they, in follow(), carry out the same
  // plans until rank 0's simulation ends. Frames then come by host copy, gathered from every rank.
  // Returns the follower's exit code.
  int follow();

  void set_paused(bool paused);
  bool paused() const { return paused_; }
  void step(std::uint64_t steps);  // makes `steps` more steps, paused or not (a frame's worth at a time)
  void set_steps_per_update(int steps);  // clamped to 1..kMaxStepsPerFrame (core/bounds.h)
  // Queues a change and returns its number (LiveStats::changes_done). A reset abandons the CPU
  // step (or the start-up) in progress: its result would be thrown away.
  std::uint64_t request(Change change);
  // Rethrows what made the start-up fail (bad input, a file that cannot be read), once it has:
  // there is no simulation to go on with.
  void check_started() const;
  void want_centre(bool on) { want_centre_ = on; }
  // hermite4: keep each body's time-step level with every frame (for colour by level: a download of
  // the per-body state each frame, so only while asked). Under MPI the download is collective: rank 0's
  // plan says whether its frames want them (Plan::levels), and every rank makes it with that frame.
  void want_levels(bool on) { want_levels_ = on; }

  // Notices and errors since the last call, for the HUD and the log.
  std::vector<std::string> take_messages();
  // The files written since the last call at the user's request (a key's checkpoint), whole and in place.
  std::vector<std::string> take_files();

  LiveStats stats() const;
  // A number that grows with every captured frame.
  std::uint64_t frame_number() const { return frame_number_; }
  // The latest frame as one consistent whole: f(generation, host frame, device frames or null, levels:
  // hermite4's per-body time-step levels, sim::hermite::step_level, while want_levels(); else empty). The
  // host frame holds positions, velocities and types; with device frames only its types and masses
  // are current (the rest is the generation's start), and the device frames hold positions and
  // velocities. A frame of a newer generation than the caller knows may have sizes it has not
  // allocated for.
  template <class F>
  void with_frame(F&& f) const {
    std::lock_guard<std::mutex> lock(frame_mutex_);
    f(stats_.generation, host_frames_[front_], static_cast<const render::DeviceFrames*>(device_frames_.get()),
      static_cast<const std::vector<std::uint8_t>&>(level_frames_[front_]));
  }
  // The bodies' centre (median position), kept while want_centre(true).
  std::optional<Vec3d> centre() const;
  // A host copy of the current state (downloads a GPU run's; for fitting the camera).
  sim::BodySet state();

 private:
  // One update's work, decided by rank 0 and carried out alike by every rank.
  struct Plan {
    std::vector<Change> changes;
    std::uint64_t steps = 0;  // 0: none (paused, or the last frame not yet shown)
    bool energy = false;      // measure the energy after the steps
    bool stop = false;        // the viewer closed: followers return
    bool start = false;       // build the first simulation (before the changes)
    bool levels = false;      // the frames it captures carry hermite4's step levels (a collective download)
    // hermite4 running (not n's block steps): the frame's spans of the longest step, and the block steps it may make
    // on the way to their end (about a frame's worth live; all of it for a recording, whose frames are span ends).
    std::uint64_t spans = 0, budget = 0;
  };
  void run_thread();
  void run_recording_thread();
  // For the bodies' generation: the flag that abandons it, alone (the other ranks could not know).
  const std::atomic<bool>* generation_cancel() const { return ranks_.size() == 1 ? &cancel_ : nullptr; }
  void execute(const Plan& plan);
  void advance_spans(const Plan& plan);  // hermite4 running: towards the end of plan.spans spans, plan.budget steps
  // Up to `most` steps in runs of about kRunSeconds, until one makes no step or `reached()` after it; a newer plan
  // stops them between runs (alone: with several ranks every rank makes the same steps). The steps made.
  std::uint64_t steps_in_runs(std::uint64_t most, const std::function<bool()>& reached);
  void send(const Plan& plan);  // rank 0 to the others, when there are others
  Plan receive();
  void apply(const Change& change);
  void start_up();
  void restore();                    // a torn simulation rebuilt from the last frame
  bool superseded() const;           // a newer reset, or the end, is waiting: leave the work
  bool levels_missing(const Plan& plan) const;  // the plan wants levels the last frame was captured without
  void set_starting(const std::string& what);
  // `hermite`: hermite4's per-body state that `bodies` continue (the setup's, where they are its bodies), or null.
  // `continued`: the same run goes on (a change of settings, a torn state restored), not a new one.
  void rebuild(const sim::BodySet& bodies, const driver::Setup& setup, multigpu::RunClock clock,
               const driver::RunConfig& run, const sim::hermite::HermiteState* hermite, bool continued);
  void capture(double step_ms, std::uint64_t steps, bool energy);
  void message(const std::string& text);
  // A notice of a simulation's setup (no CUDA device, a default taken): a message the first time only, for a reset
  // that makes the same setup again says the same again (simulation thread).
  void notice(const std::string& text);

  const Ranks& ranks_;
  bool leads_ = true;            // rank 0 (or the only rank): takes the user's changes, plans
  driver::Setup setup_;          // the settings and origin of the current simulation
  driver::RunConfig run_;
  std::optional<int> frames_device_;
  bool track_energy_;
  // Raised by request(reset) and the destructor, lowered when update() takes the changes: the CPU
  // engines then abandon their work (sim::EngineConfig::cancel). Before sim_, which reads it.
  std::atomic<bool> cancel_{false};
  std::optional<driver::Setup> start_setup_;  // the first simulation's setup, when given
  std::exception_ptr start_failure_;          // what made the start-up fail (under control_mutex_)
  std::unique_ptr<multigpu::Simulation> sim_;
  // hermite4 running: the block time (from the epoch) its frames go to, a multiple of the longest step, where every
  // body is at one time; kept across frames until reached (the same on every rank), none after a rebuild.
  std::optional<double> span_end_;
  std::uint64_t span_spans_ = 0;  // the frames' spans that span_end_ was set for
  bool torn_ = false;             // sim_ abandoned a step part-way: rebuilt from the last frame before use
  multigpu::RunClock frame_clock_;  // the clock of the front host frame
  std::uint64_t applying_ = 0;    // the number of the change being applied (0: none)

  mutable std::mutex control_mutex_;
  std::condition_variable control_changed_;
  std::deque<Change> changes_;
  std::uint64_t requests_ = 0;  // changes asked for so far (numbers them)
  std::vector<std::string> messages_;
  std::set<std::string> notices_said_;  // notice(): said already (simulation thread only)
  std::vector<std::string> files_;
  std::atomic<bool> paused_{false}, stop_{false}, want_centre_{false}, want_levels_{false};
  bool levels_captured_ = false;  // the simulation thread's last frame holds hermite4's levels
  std::atomic<std::uint64_t> steps_asked_{0};  // n and the Step button: steps to make, paused or not
  std::atomic<bool> threaded_{false}, frame_pending_{false};  // pacing: see start()
  std::atomic<int> steps_per_update_{1};
  // Recording: updates asked for (advance) and done, and what the last one threw (control_mutex_).
  std::uint64_t advances_asked_ = 0, advances_done_ = 0;
  std::exception_ptr advance_failure_;
  std::condition_variable advanced_;

  mutable std::mutex frame_mutex_;
  sim::BodySet host_frames_[2];
  std::vector<std::uint8_t> level_frames_[2];  // beside host_frames_ (hermite4, while the plan asks: plan_levels_)
  bool plan_levels_ = false;                   // the plan being carried out wants levels (every rank alike)
  sim::BodySet level_bodies_;                  // what hermite_state() fills besides the state (kept for its storage)
  sim::hermite::HermiteState level_state_;
  std::uint64_t interactions_done_ = 0;        // hermite4: force+jerk pairs at the last frame, for the rate
  int front_ = 0;
  std::unique_ptr<render::DeviceFrames> device_frames_;
  std::vector<render::DeviceVelocities> velocities_;  // capture's scratch (simulation thread)
  sim::BodySet centre_state_;                         // the same, for the follow centre of a GPU run
  LiveStats stats_;
  std::optional<Vec3d> centre_;
  std::atomic<std::uint64_t> frame_number_{0};
  std::uint64_t generation_ = 0;

  // Energy on a cadence that never takes more than about a tenth of the simulation's time.
  std::optional<double> e0_;
  bool tracking_ = false;      // the energy of the current simulation is measured (quick_energy)
  double energy_seconds_ = 0;  // how long the last energy pass took
  double last_energy_wall_ = -1e9;
  double last_plan_wall_ = 0;  // when the last plan went to the other ranks
  Clock::time_point origin_;  // the cadences count wall time from here
  double last_centre_wall_ = -1e9;  // the follow camera's centre: a few times a second at most

  std::thread thread_;  // last: stops before the rest goes
};

}  // namespace nbody::app
