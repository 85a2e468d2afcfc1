// multigpu/hermite_blocks.h - Hermite block steps over every device of every rank: what multigpu::Simulation
// runs when its program is hermite4 (one step = one block step).
//
// The j-bodies are divided among the devices in whole groups of the canonical order (docs/architecture.md);
// each block step moves the active bodies to every device, in index order, through host memory, and the sums of
// the groups' partials from device to device in group order (each device adds its own groups where they are):
// by peer copies inside a process of CUDA engines (add_own_groups_on_device), through host memory otherwise, and
// Ranks::all_gather_in_place between ranks: O(active) bytes a device and block. Several CUDA devices of one process
// driven by one thread run block steps on the devices instead (HermiteEngine::advance_together: every device keeps
// every body's state, and only the group partials cross), and a single device of a single rank
// HermiteEngine::advance_blocks. Every layout, threading model and rank count gives the same bits.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/ranks.h"
#include "core/slice.h"
#include "multigpu/scheduler.h"
#include "sim/engines/hermite_engine.h"
#include "sim/physics/body_set.h"
#include "sim/physics/hermite.h"

namespace nbody::multigpu {

// The slices of a Hermite run: `devices` slices of whole groups of kernels::segment_layout(n) (weighted as
// make_partition weighs bodies; with more devices than groups some slices are empty).
std::vector<Slice> hermite_partition(std::size_t n, std::size_t devices, const std::vector<double>& weights);

// The host memory one rank's block steps take at their most, for the memory check before they are made: n bodies,
// `devices` of this rank's among `all_devices` of every rank's (slices weighted by `weights` where they are
// every device's). Its engines' (on the CPU, all of theirs; of a GPU engine, its pinned lists and staging, each
// counted with the largest slice), the block steps' active list and totals, and a finish's copies of the state.
std::size_t hermite_host_bytes(sim::Backend backend, const sim::EngineSettings& engine, std::size_t n,
                               std::size_t devices, std::size_t all_devices, const std::vector<double>& weights);

struct HermiteBlocksSetup {
  sim::Backend backend = sim::Backend::cpu;
  sim::EngineSettings engine;  // cpu_threads: this rank's in all (shared among its workers)
  double softening = 0.0;
  sim::hermite::HermiteParams params;
  std::vector<int> devices;            // this rank's (CUDA ordinals; for the CPU only the count matters)
  Threading threading = Threading::single;
  std::vector<Slice> all_slices;       // every device of every rank, in rank order (hermite_partition)
  std::vector<std::size_t> rank_devices;  // devices of each rank
  const Ranks* ranks = nullptr;
  // Raised by a front end that no longer wants the work in progress (the viewer closed, or a new run asked for):
  // the start's pass gives up between its chunks and throws sim::StepCancelled, as the fixed steps' engines give up
  // their start (multigpu::SimulationConfig::cancel). Null: never; always null for a rank of several.
  const std::atomic<bool>* cancel = nullptr;
  SettingNames names;  // how a refused setting is named (the front end's spelling)
  // Makes each device's engine; empty: sim::make_hermite_engine(backend, config). (Tests wrap engines in one that
  // stalls or gives up.)
  std::function<std::unique_ptr<sim::HermiteEngine>(const sim::HermiteEngineConfig&)> make_engine;
};

class HermiteBlocks {
 public:
  // Starts from `initial` (positions and velocities at its time, the epoch) with `state` when it holds a started
  // Hermite state (continued bit for bit), else initialised as at t = 0 (a force pass and the start steps).
  // Collective.
  HermiteBlocks(const sim::BodySet& initial, const sim::hermite::HermiteState& state, const HermiteBlocksSetup& setup);
  // Lets go of the engines (let_go_of_engines), then frees them.
  ~HermiteBlocks();
  HermiteBlocks(const HermiteBlocks&) = delete;
  HermiteBlocks& operator=(const HermiteBlocks&) = delete;

  // Up to `blocks` block steps, none past block time `t_stop` (+inf: no limit); returns those done. A step below
  // the floor ends in RuntimeFailure naming the pair, after the block step that gave it, which is whole (its bodies
  // corrected, the time at its block) and counted in blocks_done(). A continued state that holds a step below the
  // floor (that of a run that stopped there) is built, read and saved as any other, but takes no block step: refused
  // here. Collective.
  std::uint64_t advance(std::uint64_t blocks, double t_stop);
  // Brings every body behind block time `t` (t_i < t: where advance(.., t) stopped, t no block time of theirs) to
  // `t` by one last step of its own, t - t_i: the predictor, a force pass of those bodies in the canonical order
  // and the corrector, as a block step with those steps. So a run to a time that is no block time ends with every
  // body corrected at it, as at a multiple of the longest step. The epoch then moves to `time` (t's simulation
  // time, as asked) and every body's block time to 0, each with the step the criterion gives at the end of its last
  // step from the power-of-two step it held (at most the longest step: one a lower dt max left longer is cut to it;
  // one below the floor is refused at the next block step; where t - t_i is below a quarter of the step held, whose
  // derivatives over it measure rounding, at most half the step held): the steps are commensurate with the new epoch, and
  // block steps go on from it. Counted as a block step. Returns false, and
  // changes nothing, where no body is behind t, or where t - t_i cannot be represented so that t_i + (t - t_i) is
  // t exactly for some body (possible only for a dt_max above 2^11 with times far below it). Collective.
  bool finish_at(double t, double time);
  // Block steps done since the start (or the continued state), however advance() ended.
  std::uint64_t blocks_done() const { return blocks_done_; }
  double block_time() const { return block_time_; }
  double epoch() const { return epoch_; }
  double time() const { return epoch_ + block_time_; }

  // Every body predicted to the block time (the synchronised state diagnostics and outputs show). Collective.
  void state(sim::BodySet& into);
  // The same and the potential energy 1/2 sum_i m_i phi_i of those positions (a force pass with every body
  // active, chunked, in the canonical order). Collective.
  double state_and_potential(sim::BodySet& into);
  // Each body at its own time t_i, and its Hermite state: what a checkpoint stores to continue. Collective.
  void own_time_state(sim::BodySet& bodies, sim::hermite::HermiteState& state);
  // Every body's acceleration at the block time, of the synchronised state (state()'s positions), by a force pass
  // of every body as the potential's, which changes no body. (The Hermite state's are each of its body's own time
  // and predicted position there.) Collective.
  std::vector<Vec3d> accelerations();
  // Counts since the start, summed over every device of every rank. Collective.
  sim::hermite::HermiteCounters counters();

  const std::vector<Slice>& slices() const { return slices_; }
  std::string kernel_name() const;
  // How the devices' block steps meet, for reports: "devices (block steps)" where every value stays on the devices
  // (HermiteEngine::advance_together), "host (block steps)" where it passes through the host or the ranks.
  std::string describe_exchange() const { return together_ ? "devices (block steps)" : "host (block steps)"; }

 private:
  // potential: the diagnostics' sum m phi, in fp64 pair arithmetic whatever the precision (partial_forces_fp64);
  // accelerations: every body's, in the run's pair arithmetic. Neither changes the state.
  enum class Pass { correct, initialise, potential, accelerations };
  // The constructor's work once the slices are known: the engines, the threads, the upload and (with no Hermite
  // state) the start's force pass.
  void start_up(const sim::BodySet& initial, const sim::hermite::HermiteState& state, std::size_t devices);
  // One force pass at block time t over the active list (every device's packed bodies, gathered), `count`
  // bodies at a time; returns sum m phi over the list for Pass::potential. Pass::accelerations writes each body's
  // acceleration into `accelerations`, by its index. A signal stops a pass between its chunks, but a corrector's.
  double force_pass(double t, Pass pass, std::size_t chunk, std::vector<Vec3d>* accelerations = nullptr);
  // The active bodies a corrector's pass takes at a time: on the CPU as many as the start's chunks (each engine's
  // partials then take groups x chunk x 64 bytes, where a block of every body took groups x N x 64: 1 KiB a body);
  // on GPUs the whole block, whose sums stay on the devices (each sized for every body).
  std::size_t correct_chunk() const;
  // The active list: each device's packed bodies, in device order (ranks: gathered), into active_ unless
  // `host_list` is false (one process whose devices read each other's lists: set_active_from).
  void gather_active(double t, bool all, bool host_list = true);
  void check_floor();
  // The lowest body whose step fell below the floor on any device of any rank, or -1 (collective).
  std::int64_t floor_violation();
  // The lowest of every rank's `mine` (a body, or -1 for none), or -1 (collective).
  std::int64_t lowest_on_any_rank(std::int64_t mine) const;
  // After the start's force pass: a body whose start step fell below the floor because its forces cancel
  // (hermite::cancelled_start_criterion) starts with its strongest pull's criterion instead; any other body below the floor
  // stops the start (Floor::start). Collective; reads and loads the state only where a body fell below the floor.
  void check_start_floor();
  // The one-line failure for `body`'s step below the floor: one a block step gave, a start step, or one the
  // continued state held. Collective (it reads the state).
  enum class Floor { step, start, held };
  [[noreturn]] void floor_failure(std::size_t body, Floor why);
  // Before the engines are freed (at the end, or when the constructor throws): one device's queued work may wait
  // on another's events or read its memory, so an engine that gave up its work (a bounded wait that expired) has
  // every engine give up theirs; else every engine is polled for a few seconds at most (only after an error is
  // any work still queued: every call returns with its work done), and all are given up if any has not finished.
  // Given-up engines leak their memory rather than wait without bound.
  void let_go_of_engines() noexcept;
  // RuntimeFailure once an engine gave up its work: its device memory is no longer its own (every public call
  // that reaches the engines checks; state_and_potential and accelerations through state and own_time_state).
  void check_usable() const;
  std::size_t local_devices() const { return engines_.size(); }

  HermiteBlocksSetup setup_;
  const Ranks& ranks_;
  std::size_t bodies_ = 0;
  std::vector<sim::BodyType> types_;
  std::vector<Slice> slices_;                 // this rank's devices'
  std::vector<std::size_t> first_group_;      // global group index of each local device's first group
  std::vector<std::size_t> rank_counts_, rank_offsets_;        // bodies of each rank
  std::vector<std::size_t> rank_group_counts_, rank_group_offsets_;  // groups of each rank
  std::size_t groups_ = 0;
  double epoch_ = 0.0, block_time_ = 0.0;
  bool finished_ = false;  // the epoch is a finish's (sim::hermite::HermiteState::finished), until the next block step
  bool single_ = false;  // one device in all: advance_blocks
  std::vector<std::unique_ptr<sim::HermiteEngine>> engines_;
  std::unique_ptr<Scheduler> threads_;
  // Scratch kept between blocks (capacity for every body): no allocation per block once the largest was seen.
  std::vector<sim::hermite::ActiveBody> active_;
  std::vector<std::size_t> device_counts_, device_offsets_;  // this rank's devices' active bodies in active_
  std::vector<std::uint64_t> rank_active_;                   // active bodies of each rank
  std::vector<std::size_t> active_counts_, active_offsets_;  // the same as a gather takes them
  std::vector<std::size_t> rank_ones_, rank_index_;          // one unit per rank, at the rank's index
  std::vector<std::size_t> rank_from_, rank_zero_offsets_;   // one rank's piece only, at offset 0 (a broadcast)
  std::vector<sim::hermite::ForceJerk> totals_;
  bool sums_on_device_ = false;  // every engine keeps the running sums on its device (CUDA: peer copies)
  // Several devices of one process, one host thread, engines that read each other's memory: block steps on the
  // devices (HermiteEngine::advance_together), the protocol's bits with no host round trip a block.
  bool together_ = false;
  std::vector<sim::HermiteEngine*> engine_list_;  // engines_, in device order (set_active_from)
  std::size_t active_total_ = 0;                 // the last gather_active's bodies, every device of every rank
  std::uint64_t blocks_done_ = 0;
  std::int64_t held_below_floor_ = -1;  // the continued state's first body whose step is below the floor, or -1
  std::uint64_t potential_interactions_ = 0;  // of the potential passes, which counters() leaves out
  // This rank's engines' counts before finish_at's uploads, which start an engine's counts again.
  sim::hermite::HermiteCounters carried_;
};

}  // namespace nbody::multigpu
