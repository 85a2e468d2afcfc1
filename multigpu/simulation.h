// multigpu/simulation.h - one simulation over one or more devices: what the app drives.
#pragma once

#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/ranks.h"
#include "core/setting_names.h"
#include "multigpu/exchange.h"
#include "multigpu/hermite_blocks.h"
#include "multigpu/scheduler.h"
#include "multigpu/step_graph.h"
#include "multigpu/watchdog.h"
#include "sim/engines/engine.h"
#include "sim/physics/body_set.h"
#include "sim/physics/diagnostics.h"
#include "sim/physics/integrator.h"

namespace nbody::multigpu {

// How steps reach the GPUs: launched one by one on streams, or captured as a CUDA graph of a block
// of steps (kGraphSteps) once and replayed (one launch per block; GPU backend, one host thread).
enum class Launch { stream, graph };
inline constexpr std::array<EnumName<Launch>, 2> kLaunchNames{{{Launch::stream, "stream"}, {Launch::graph, "graph"}}};
constexpr const auto& enum_names(Launch) { return kLaunchNames; }
// Steps per graph: a multiple of 2, so a block makes an even number of publications and leaves
// every buffer where it found it (the graph replays from the same buffers).
inline constexpr std::uint64_t kGraphSteps = 16;

struct SimulationConfig {
  sim::Backend backend = sim::Backend::cpu;
  // Given to every engine as it is (cpu_threads: the threads in all, which the simulation shares
  // among its engines).
  sim::EngineSettings engine;
  double softening = 0.01;          // Plummer softening length
  std::vector<int> devices{0};      // CUDA ordinals; for the CPU backend only the count matters
  std::vector<double> weights;      // relative slice sizes per device; empty: equal
  Threading threading = Threading::single;
  Launch launch = Launch::stream;
  ExchangeMode exchange = ExchangeMode::automatic;
  // How long a wait for the devices may outlast the steps it waits for, in seconds, before the
  // run ends naming the device that has not finished (multigpu/watchdog.h); 0:
  // NBODY_WATCHDOG_SECONDS, else max(60 s, 100 x the median step time).
  double watchdog_seconds = 0.0;
  // Given to every engine (sim::EngineConfig::cancel): raised, a CPU step or upload in progress
  // gives up and throws sim::StepCancelled; the simulation can then only be destroyed. hermite4's
  // start pass (on any backend) gives up between its chunks the same way. Null: never.
  // Only for a simulation on one rank (the others could not know where it stopped).
  const std::atomic<bool>* cancel = nullptr;
  // The processes the simulation spans; null: world() (core/ranks.h). Each rank gives its own
  // `devices`; `weights` then has one entry per device of every rank, in rank order.
  const Ranks* ranks = nullptr;
  // How a refused setting is named (the front end's spelling), here and in the engines.
  SettingNames names;
};

// A simulation's clock: the steps done since the run began, the time at step 0, and the step from
// which the current dt applies with the time then. time() is dt_since_time + (step - dt_since_step)
// x dt, so a run continued from a checkpoint (or rebuilt on another layout) keeps the same times,
// bit for bit, as one that never stopped, and one continued with another dt goes on from the time
// it had reached.
struct RunClock {
  std::uint64_t step = 0;
  double start_time = 0.0;
  std::uint64_t dt_since_step = 0;
  double dt_since_time = 0.0;

  RunClock() = default;
  // Step `step` of a run that began at `start_time` with the dt it still has.
  RunClock(std::uint64_t step_, double start_time_) : step(step_), start_time(start_time_), dt_since_time(start_time_) {}
  RunClock(std::uint64_t step_, double start_time_, std::uint64_t dt_since_step_, double dt_since_time_)
      : step(step_), start_time(start_time_), dt_since_step(dt_since_step_), dt_since_time(dt_since_time_) {}

  double time(double dt) const { return dt_since_time + double(step - dt_since_step) * dt; }
  // The same clock from now on with a time step other than `old_dt`.
  RunClock with_new_dt(double old_dt) const { return {step, start_time, step, time(old_dt)}; }
};

// With several ranks, every rank constructs the simulation with the same bodies and program and
// its own devices; the partition spans every device of every rank, in rank order. Then every call
// that returns data (state, diagnostics, accelerations, step_times_ms) is collective: each rank
// makes it, in the same order, and each gets the whole answer. advance() is not collective in its
// count of calls, only in the steps: every rank must advance the same number of steps in all.
class Simulation {
 public:
  // Starts at step 0 at the time of `initial`.
  Simulation(const sim::BodySet& initial, const sim::StepProgram& program, const SimulationConfig& config);
  // Continues a run whose clock is `clock` (a restart, or the same run on another layout). hermite4
  // (program.hermite): `hermite` is the per-body state to continue (null or not started: every body starts as
  // at t = 0, at the time of `initial`), and clock.step counts block steps.
  Simulation(const sim::BodySet& initial, const sim::StepProgram& program, const SimulationConfig& config,
             RunClock clock, const sim::hermite::HermiteState* hermite = nullptr);
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  // Enqueues `steps` steps. GPU work may still be running when this returns. After a failure here
  // or in synchronize()/idle() the devices may be part-way through a step: the simulation refuses
  // to step again (RuntimeFailure naming the first failure) rather than hang or compute from a
  // torn state.
  void advance(std::uint64_t steps);
  // Waits for every device. A failure on any of them surfaces here even while another waits on
  // the GPU for it: that wait is given up (Exchange::abort). The wait is bounded (multigpu/
  // watchdog.h): past its bound it gives up the waits on the GPUs and throws RuntimeFailure naming
  // each device that has not finished; a device that does not finish even then is abandoned (as on
  // an interrupt), and the simulation can only be destroyed. Every call below that synchronises
  // waits here first.
  void synchronize();
  // Waits like synchronize(), polling, and throws Interrupted (core/interrupt.h) as soon as a
  // signal arrives: the work still queued on GPUs is then abandoned (sim::SliceEngine::abandon), so
  // the simulation can only be destroyed, quickly, on the way to the process's exit. With several
  // ranks it is collective (see stop_if_interrupted) and looks for a signal once the wait is over.
  void wait_interruptibly();
  // True when every device has finished the work enqueued so far (never waits). Asks every
  // device, so a failure anywhere is thrown, and so is the watchdog's, once the steps are overdue.
  bool idle();
  // If a signal arrived (core/interrupt.h): gives up the work still queued on the devices and throws
  // Interrupted. The simulation can then only be destroyed, quickly, on the way to the exit. With
  // several ranks it is collective: every rank calls it at the same point, and a signal on any rank
  // stops all of them there (Interrupted::every_rank), so that the job ends whole, not by an abort.
  void stop_if_interrupted();

  // The current state (synchronises): positions, velocities, types and time.
  sim::BodySet state();
  // The same into `into`, reusing its storage when it already holds this many bodies (a viewer
  // capturing frame after frame allocates nothing).
  void state(sim::BodySet& into);
  // Energies (potential by the backend's O(N^2) kernel), momentum, angular momentum, centre of mass,
  // virial ratio, Lagrangian radii; synchronises. sim::measure(state, sample(state)), in one call.
  sim::Diagnostics diagnostics(bool agree_on_signal = false);
  // The same, the state taken into `into` (its storage reused: a run's end measured in its last sample's copy holds
  // no other copy of the state).
  sim::Diagnostics diagnostics(bool agree_on_signal, sim::BodySet& into);
  // What diagnostics() needs from the devices, and no more, in two halves: begin_sample() takes the
  // current state and has the devices compute the potential energy where the bodies live (a GPU
  // enqueues the pass and the copies, and goes on); end_sample() waits for those alone, writes the
  // state into `into` (its storage reused) and returns the potential energy. A diagnostics series
  // begins a sample at its step, enqueues the next steps, ends the sample and measures it on the host
  // (sim::measure) while the devices run them. Both are collective. Between them, calls that
  // synchronise may come; a second begin_sample() replaces the first. A signal during the pass throws
  // Interrupted in a process alone as soon as the CPU's pass sees it. With several ranks and
  // `agree_on_signal`, each rank stops its pass at a signal of its own, the ranks agree on a signal once
  // every one is past the pass, and every rank throws Interrupted (`every_rank`), wherever it came, so
  // that a run stops and saves as a whole; without it (a front end that stops by its own plan, as the
  // viewer's followers do) no rank stops in the pass.
  void begin_sample(bool agree_on_signal = false);
  double end_sample(sim::BodySet& into);
  // Accelerations of all bodies from the current positions, in fp64 (synchronises).
  std::vector<Vec3d> accelerations();

  // Per-step timing of the next `steps` steps; step_times_ms()[d][k] is device d's step k.
  void start_timing(std::size_t steps);
  std::vector<std::vector<double>> step_times_ms();

  // Device (or host) memory of engine d's current positions, all N bodies as Real4 in the run's
  // precision; valid until the next advance. For the viewer's CUDA-GL interop.
  const void* current_positions(int d) const;
  std::size_t bytes_per_body() const;
  // Engine d's own slice of velocities (sim::SliceEngine::velocities_buffer), and its CUDA
  // ordinal (-1 for host memory). For the viewer's colour by speed on the GPU.
  const void* current_velocities(int d) const;
  int device_ordinal(int d) const;

  // Simulation time: the initial state's time plus steps x dt, never a running sum, so it does
  // not depend on how the steps were split into calls of advance(). hermite4: the block time (plus the
  // epoch), where state() predicts every body to.
  double time() const { return hermite_ ? hermite_->time() : clock_.time(program_.dt); }

  // ---- hermite4 (program().hermite): one step is one block step ----
  bool block_steps() const { return bool(hermite_); }
  // advance() does no block step past this simulation time (+inf: none). A run to a time sets it, advances
  // "forever" and stops when stopped_at_time_limit() says so. With `finish` (a run's end, not an output's time),
  // the stop brings every body that is behind t to t by a last step of its own (HermiteBlocks::finish_at, one block
  // step more), so that the run ends at t exactly, every body corrected there; without it (or where finish_at cannot)
  // it ends at the last block time at or before t, with the bodies behind it only predicted to it.
  void set_time_limit(double t, bool finish = false) {
    time_limit_ = t;
    finish_at_limit_ = finish;
  }
  double time_limit() const { return time_limit_; }
  bool time_limit_finishes() const { return finish_at_limit_; }
  // The time hermite4 started at (block times are it plus multiples of the steps); 0 for the other integrators.
  double block_epoch() const;
  // hermite4: the time since the epoch, a multiple of the shortest step (time() is the epoch plus it); else 0.
  double block_time() const;
  // hermite4: the block time from which every body's step is at most the longest step (dt max's power of two): a
  // state taken up under a lower dt max between the times every body shares keeps a body far into a longer step on
  // it until that step ends (driver::continue_hermite). Till then a multiple of the longest step is not a time every
  // body is at. 0 where no step is longer; a multiple of the longest step.
  double long_steps_end() const { return long_steps_end_; }
  bool stopped_at_time_limit() const { return at_time_limit_; }
  // Each body at its own time and its Hermite state (what a checkpoint stores). Collective.
  void hermite_state(sim::BodySet& bodies, sim::hermite::HermiteState& state);
  // Block steps, force evaluations, the step levels' histogram, interactions. Collective.
  sim::hermite::HermiteCounters hermite_counters();
  std::uint64_t steps_done() const { return clock_.step; }  // since the run began (a restart's included)
  // hermite4: the block steps done, and the time reached as the time from which "dt" (dt_max) applies.
  RunClock clock() const {
    return hermite_ ? RunClock{clock_.step, clock_.start_time, clock_.step, time()} : clock_;
  }
  std::size_t bodies() const { return bodies_; }
  const SimulationConfig& config() const { return config_; }
  const sim::StepProgram& program() const { return program_; }
  const std::vector<Slice>& slices() const { return slices_; }          // this rank's devices'
  const std::vector<Slice>& all_slices() const { return all_slices_; }  // every device of every rank
  const Ranks& ranks() const { return *ranks_; }
  std::string kernel_name() const;
  std::string describe() const;  // one line: backend, ranks, devices, kernel, precision, threading, exchange

 private:
  void advance_unguarded(std::uint64_t steps);
  // The bounded wait for every device behind synchronize() and wait_interruptibly().
  void wait_for_devices(const std::function<void()>& poll);
  void watchdog_expired();          // idle() found the steps overdue: throws, unless all finished just now
  void watchdog_expired_give_up();  // lets go of the GPU-side waits; abandons devices that still do not finish
  std::string device_name(std::size_t d) const;  // "GPU 1" (CUDA ordinal) or "host device 1"
  void check_usable() const;  // RuntimeFailure once the devices were abandoned
  // Each rank's `per_device` values for each of its devices, gathered in device order.
  std::vector<double> gather_per_device(const std::vector<double>& mine, std::size_t per_device) const;

  SimulationConfig config_;
  sim::StepProgram program_;
  std::size_t bodies_ = 0;
  std::vector<sim::BodyType> types_;
  const Ranks* ranks_ = nullptr;
  std::vector<Slice> slices_, all_slices_;
  std::vector<Slice> rank_ranges_;           // bodies of each rank (its devices' slices together)
  std::vector<std::size_t> rank_counts_, rank_offsets_;  // the same, as a gather of bodies takes them
  std::vector<std::size_t> rank_devices_;    // devices of each rank
  std::vector<std::string> rank_devices_text_;  // "GPU 0 1" per rank, for describe()
  // Several ranks' engines' cancel flag: raised only by a signal during their first forces (SignalWatch), so it outlives
  // them.
  std::atomic<bool> first_forces_signalled_{false};
  std::vector<std::unique_ptr<sim::SliceEngine>> engines_;
  std::unique_ptr<Exchange> exchange_;
  std::unique_ptr<Scheduler> scheduler_;  // its threads stop before the rest goes
  std::unique_ptr<HermiteBlocks> hermite_;  // hermite4's block steps, in place of the engines above
  double long_steps_end_ = 0.0;  // long_steps_end()
  double time_limit_ = INFINITY;
  bool at_time_limit_ = false;
  bool finish_at_limit_ = false;
  double sample_potential_ = 0.0;  // hermite4: begin_sample()'s
  sim::BodySet sample_state_;
  // --launch graph: one graph per buffer parity it starts from (a run whose blocks are interleaved
  // with single steps may start a block from either), and the timing of what advance() launched.
  std::unique_ptr<StepGraph> graphs_[2];
  bool graph_captured_[2] = {false, false};
  bool graph_timing_ = false;
  std::vector<std::uint64_t> graph_interval_steps_;  // steps between consecutive timing marks
  RunClock clock_;
  std::uint64_t publications_ = 0;  // drifts since the upload: the exchange's and the buffers' clock
  std::string failure_;  // the first failure of a step, if any: no step runs after it
  Watchdog watchdog_;
  bool abandoned_ = false;  // the engines' queued work was given up: nothing but destruction is left
  double sample_time_ = 0.0;  // the time begin_sample() took the state at
  std::vector<double> sample_terms_;  // each body's share of twice the potential, for end_sample()

  // Runs `work`; a failure lets every device waiting for a peer go, and stops further steps.
  template <class F>
  auto guarded(F&& work) -> decltype(work());
};

// The host memory one rank's fixed-step simulation takes at its most, for the memory check before it is made: n
// bodies, `devices` of this rank's among `all_devices` of every rank's (slices weighted by `weights` where they are
// every device's). Its engines' (on the CPU, all of theirs; of a GPU engine, its pinned buffers), each counted with
// the largest slice; the simulation's own per body: types, a sample's potential terms and the measure's scratch; and
// the positions its exchanges stage through the host (with several ranks, or GPUs without peer access).
// The copies of the state a front end makes (the start's, a sample's, the end's) are the caller's to add.
std::size_t fixed_step_host_bytes(sim::Backend backend, const sim::EngineSettings& engine, std::size_t n,
                                  std::size_t devices, std::size_t all_devices, const std::vector<double>& weights);

}  // namespace nbody::multigpu
