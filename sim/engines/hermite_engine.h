// sim/engines/hermite_engine.h - one device's share of a Hermite block-step simulation: the interface the CPU
// (hermite_cpu.cpp) and CUDA (hermite_cuda.cu) engines implement.
//
// Hermite divides the j-bodies among devices, not the i-bodies: an engine holds x, v, a, jerk, t_i, dt_i and m
// of its own slice only (a whole number of canonical groups, see docs/architecture.md), predicts them, computes
// the partial force, jerk and potential of the whole active block against them (one partial per group), and
// corrects the active bodies it owns once the partials of every device are added in group order. It knows
// nothing of other devices: multigpu/hermite_blocks.cpp moves the active bodies and the partials.
//
// One block step on several devices (the multi-device protocol; each call on the thread that drives the
// engine, see bind_thread):
//   t = min over devices of own_next_time()
//   predict(t); n_d = pack_active(t, false)              each device: its own active bodies, index order
//   set_active(all devices' packed bodies, in device order = index order)
//   partial_forces()                                     each device: [own group][active body], on the device
//   totals[k] = sum over all groups g, in order, from zero, of partial[g][k]   (hermite::add_partial):
//     prefix = add_own_groups(prefix) on each device with groups, in device order (null on the first)
//   correct(totals of the own active bodies, t)
// The start (a state with no Hermite history) is the same with every body active (pack_active(t, true)) and
// initialise() in place of correct(). A potential pass (diagnostics) is the same too, with every body active
// and the partials' phi summed, and neither correct() nor initialise(): it changes nothing.
//
// A single device (its slice is every body) may instead run advance_blocks(): whole block steps with no host
// round trip a block does not need, bit for bit what the protocol gives.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/slice.h"
#include "sim/engines/engine.h"
#include "sim/physics/body_set.h"
#include "sim/physics/hermite.h"
#include "sim/physics/hermite_step.h"

namespace nbody::sim {

struct HermiteEngineConfig {
  std::size_t bodies = 0;  // N, all bodies
  // The own j-bodies, which this engine also integrates: begin and end on group boundaries
  // (kernels::segment_layout(bodies).length; the end may be N). May be empty.
  Slice slice;
  double softening = 0.01;  // Plummer softening length; 0 allowed (no regularisation)
  EngineSettings engine;    // precision: fp64, or fp32 pair arithmetic on fp64 differences; cpu_threads: this engine's
  int device = 0;           // CUDA ordinal (GPU engines)
  // The longest a host wait for this engine's device may last before the engine gives its work up (GPU engines;
  // tests and tools). 0: the engine's own rule from N. NBODY_WATCHDOG_SECONDS, when set, replaces either.
  double wait_seconds = 0.0;
  hermite::HermiteParams params;
  SettingNames names;  // how a refused setting is named (the front end's spelling)
};

class HermiteEngine {
 public:
  virtual ~HermiteEngine() = default;
  HermiteEngine() = default;
  HermiteEngine(const HermiteEngine&) = delete;
  HermiteEngine& operator=(const HermiteEngine&) = delete;

  // Called once on the host thread that will drive this engine (a worker binds its device here).
  virtual void bind_thread() = 0;

  // Loads the own slice of `bodies` (all N) and of `state` (all N, started: every body has its time, step,
  // acceleration and jerk). The counters start again from zero. `state.epoch` is not used: times are block times.
  virtual void upload(const BodySet& bodies, const hermite::HermiteState& state) = 0;
  // Loads the own slice's positions, masses and velocities of a state with no Hermite history: the
  // simulation then runs the start pass (see above) and initialise(). Counters start again from zero.
  virtual void upload_unstarted(const BodySet& bodies) = 0;
  // Writes the own slice's x, v (at each body's own time t_i, not predicted) into `bodies` and its Hermite
  // state into `state` (both sized N already; synchronises).
  virtual void download(BodySet& bodies, hermite::HermiteState& state) = 0;
  // Writes the own slice's positions and velocities as the last predict() left them (synchronises).
  virtual void download_predicted(BodySet& bodies) = 0;

  // ---- the multi-device protocol (see the top of this file) ----
  // min over the own bodies of t_i + dt_i, +inf for an empty slice (synchronises).
  virtual double own_next_time() = 0;
  // Start the work of own_next_time() and of pack_active(t, all) without waiting for it; the call itself then
  // waits. The protocol starts every device's before it waits for any, so one thread's waits overlap. (Engines
  // that compute on the calling thread do nothing here.)
  virtual void start_next_time() {}
  virtual void start_pack(double /*t*/, bool /*all*/) {}
  // Predicts every own body to block time t (t_i <= t); the bodies' own state is not changed.
  virtual void predict(double t) = 0;
  // Packs the own bodies with t_i + dt_i == t (every own body with `all`), predicted, in index order, into
  // own_active_data(); returns their count (synchronises).
  virtual std::size_t pack_active(double t, bool all) = 0;
  virtual const hermite::ActiveBody* own_active_data() const = 0;  // host memory, valid until the next pack
  // The whole active block, every device's packed bodies in device order (host memory, `count` bodies; the
  // engine copies what it needs before returning).
  virtual void set_active(const hermite::ActiveBody* bodies, std::size_t count) = 0;
  // Starts the partial force, jerk and potential of every active body against each own group.
  virtual void partial_forces() = 0;
  // The same in fp64 pair arithmetic whatever the engine's precision: the potential of the diagnostics. With fp32
  // pairs each of a body's N terms is rounded to fp32: the total is off by about 1e-8 of it for a few bodies (1e-10
  // at 1,024), which would hide the integration's own energy error.
  virtual void partial_forces_fp64() = 0;
  // Groups in the own slice: partials() has own_groups() x count entries, [group][active body] (synchronises;
  // host memory, valid until the next partial_forces() or partial_forces_fp64(); for tests and tools, the protocol
  // uses add_own_groups).
  virtual std::size_t own_groups() const = 0;
  virtual const hermite::ForceJerk* partials() = 0;
  // The canonical order's last stage for the own groups: `prefix` (the active bodies' sums of every group before
  // the own ones, `count` entries in host memory; null: from zero) plus each own group's partial in group order,
  // added where the partials are. Returns the result (host memory, valid until the next call; synchronises): the
  // totals where this slice holds the last groups, else the next device's prefix. O(active) bytes cross to the
  // host where the partials were O(groups x active) (16 MB a block step of 16,384 bodies).
  virtual const hermite::ForceJerk* add_own_groups(const hermite::ForceJerk* prefix) = 0;
  // The same with the running sums kept on the devices, for engines of one process that can copy to each other's
  // memory (sums_on_device(): the CUDA engine; peer copies, no host round trip and no wait):
  // add_own_groups_on_device(previous) reads the result of `previous` (the engine before in group order, whose
  // add_own_groups_on_device was called last; null: from zero) where it is, ordered after it; correct_from(last, t)
  // and initialise_from(last, t) are correct() and initialise() with the own active bodies' totals read from the
  // result of `last`, the last engine in group order. Every engine of the chain must be of one kind and precision.
  virtual bool sums_on_device() const { return false; }
  // set_active with the list read by each device straight from every engine's own_active_data() (`engines` in
  // device order, `counts` the bodies each packed; this engine among them): the list takes no copy in host memory.
  virtual void set_active_from(const std::vector<HermiteEngine*>& engines, const std::vector<std::size_t>& counts);
  virtual void add_own_groups_on_device(HermiteEngine* previous);
  virtual void correct_from(HermiteEngine& last, double t);
  virtual void initialise_from(HermiteEngine& last, double t);
  // Corrects the own active bodies (those set_active() listed in this slice, in their order) with their totals,
  // at block time t: new x, v, a, jerk, t_i = t, dt_i from the criterion (hermite::next_step). A step below
  // the floor is kept at that value and remembered (floor_violation).
  virtual void correct(const hermite::ForceJerk* own_totals, std::size_t count, double t) = 0;
  // The start: every own body (the set_active() of every body) gets a and jerk from its total, t_i = t and
  // the start step (hermite::start_step). Below the floor: remembered, as for correct().
  virtual void initialise(const hermite::ForceJerk* own_totals, std::size_t count, double t) = 0;
  // The first own body (global index) whose step fell below the floor since the upload, or -1 (synchronises,
  // unless own_next_time() has read it since the last correct() or initialise()).
  virtual std::int64_t floor_violation() = 0;

  // ---- several devices of one process: whole block steps on the devices ----
  // Whether `engines` (in device order, this one first; every slice of the system, each with groups) can run
  // advance_together: engines of one kind and precision that can read each other's memory (CUDA engines on one GPU,
  // or on GPUs with peer access to each other), whose slices follow each other from body 0 to N, on devices with
  // room for advance_together's buffers (the force partials of two block steps by body index). Enables that access
  // and makes those buffers.
  virtual bool can_advance_together(const std::vector<HermiteEngine*>& /*engines*/) { return false; }
  // advance_blocks for the devices of `engines` together, from block time `t` (where the protocol left them): the
  // protocol's block steps with every value found on the devices, so the host only queues work and waits once a batch;
  // bit for bit the protocol's result. Every device keeps its own copy of every body's state for it (made when the
  // call begins after an upload or the protocol changed an own state), finds the next time, the active list and the
  // floor there, and corrects every active body itself; only the group partials are read across devices, one
  // meeting a block step. Each engine's counters count its own slice's bodies. Called on the first engine, from one
  // thread; returns the block steps done (synchronises at the end).
  virtual std::uint64_t advance_together(const std::vector<HermiteEngine*>& engines, std::uint64_t blocks, double t,
                                         double t_stop);

  // ---- a single device (slice = every body) ----
  // Up to `blocks` block steps, stopping before a block whose time would pass `t_stop` (block time), or at a
  // floor violation; returns the block steps done (synchronises at the end, and only there where it can).
  virtual std::uint64_t advance_blocks(std::uint64_t blocks, double t_stop) = 0;
  // The block time the engine has reached: the time of its last block step (or of the upload).
  virtual double block_time() const = 0;

  // Counts since the upload, over the own bodies (block_steps: those advance_blocks() did). Synchronises.
  virtual hermite::HermiteCounters counters() = 0;

  virtual void synchronize() = 0;
  virtual bool idle() = 0;    // never waits
  virtual void abandon() noexcept = 0;  // see SliceEngine::abandon
  // Whether the engine gave up its queued work (abandon(): by itself when a bounded wait expired). Never waits.
  virtual bool abandoned() const noexcept { return false; }
  virtual int device() const = 0;  // CUDA ordinal, or -1 for host memory
  virtual const HermiteEngineConfig& config() const = 0;
  virtual std::string kernel_name() const = 0;  // for reports
};

// The host memory an engine of `backend` for `config` takes at its most (a block of every body), for the memory
// check before one is made; a CUDA engine checks its device's memory itself. 0 for a backend this build lacks.
std::size_t hermite_engine_host_bytes(Backend backend, const HermiteEngineConfig& config);
std::size_t hermite_cpu_engine_host_bytes(const HermiteEngineConfig& config);
std::size_t hermite_cuda_engine_host_bytes(const HermiteEngineConfig& config);

// Creates the Hermite engine of `backend` (allocates). InputError for what the user can change (a build
// without CUDA, too little memory).
std::unique_ptr<HermiteEngine> make_hermite_engine(Backend backend, const HermiteEngineConfig& config);
std::unique_ptr<HermiteEngine> make_hermite_cpu_engine(const HermiteEngineConfig& config);
// Defined by sim/engines/hermite_cuda.cu; the factory calls it where the build defines NBODY_HAVE_HERMITE_CUDA.
std::unique_ptr<HermiteEngine> make_hermite_cuda_engine(const HermiteEngineConfig& config);

}  // namespace nbody::sim
