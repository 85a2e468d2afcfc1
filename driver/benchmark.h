// driver/benchmark.h - timing a simulation: warm-up, timed steps, medians and interactions/s (hermite4:
// block steps by the wall clock and the work its counters say was done), and its report as JSON; and the
// comparison of the two threading models over device counts and sizes.
#pragma once

#include <nlohmann/json.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "driver/config.h"
#include "multigpu/simulation.h"

namespace nbody::driver {

// hermite4's figures. A block step has no fixed work (a few active bodies or all N) and its stages run on the host
// and the devices in turn, so there is no per-step device time to take a median of: `steps` block steps after
// the warm-up are timed by the wall clock as one run, from an idle simulation to the end of the last block step
// (chunks of about 50 ms, for a look at signals, and no wait between the block steps of a chunk beyond what the
// block step itself needs), and the work is what the Hermite counters say those block steps did.
struct BlockMeasurement {
  std::uint64_t warmup_steps = 0;       // untimed before them: --warmup (on a GPU at least 16, its graph captured)
  std::uint64_t block_steps = 0;        // timed: `steps`, or those up to t_end
  std::optional<double> t_end;          // the time the timed run went to, when measure() was given one
  double wall_seconds = 0;              // over the timed block steps
  double start_time = 0, end_time = 0;  // simulation time when the timing began and ended
  std::uint64_t force_evaluations = 0;  // active bodies corrected, summed over the timed block steps
  std::uint64_t interactions = 0;       // force+jerk pairs they computed: active bodies x N, summed
  std::vector<std::uint64_t> step_level_histogram;  // their force evaluations by the level of the step that ended
  double block_steps_per_second = 0;
  double mean_active = 0;               // force evaluations / block steps: bodies in a block, on average
  double interactions_per_second = 0;   // interactions / wall_seconds
  double time_per_second = 0;           // (end_time - start_time) / wall_seconds
  // FNV-1a of every body's own-time state after the timed run (positions, velocities, accelerations, jerks,
  // times, steps): the same bits on every layout, threading model and rank count, so runs compare by it.
  std::uint64_t state_hash = 0;
};

struct Measurement {
  double median_ms = 0, min_ms = 0, max_ms = 0;  // per step: CUDA events (GPU) or clocks (CPU); hermite4: 0
  double wall_mean_ms = 0;                        // host wall clock over the timed steps, per step
  double enqueue_ms_per_step = 0;                 // host time to enqueue a step (GPU: the host's share)
  std::vector<double> device_median_ms;           // per device: shows imbalance
  std::vector<double> step_ms;                    // each timed step (the last device to end it): the spread
  double interactions_per_s = 0;                  // force evaluations x N^2 / median step time
  double gflops = 0;                              // at 20 flops per interaction (the CUDA samples' count)
  // hermite4: its figures. Then wall_mean_ms is the wall clock per block step, interactions_per_s the force+jerk
  // pairs a second and gflops counts 60 flops a pair; the per-step device fields stay 0.
  std::optional<BlockMeasurement> blocks;
  // Fixed steps: the end state's hash (positions, masses and velocities, FNV-1a of their bytes) and the steps made to
  // it (warm-up, a graph's capture and the timed ones), so that two layouts' reports show whether they computed the
  // same bits (where the steps made are the same).
  std::uint64_t state_hash = 0, steps_made = 0;
};

// What a by-steps measurement's own figures say of how far to trust them, for the benchmark's notices: fewer than 3
// timed steps give no median to trust; steps whose slowest took more than 1.5 times the fastest
// were disturbed (another load on the machine, clocks ramping) or too short for the clock, and the median, though
// robust, may not be the machine's. Empty where neither holds.
std::vector<std::string> timing_notices(const Measurement& m, std::uint64_t timed_steps);

// hermite4's flops per force+jerk pair (tools/hermite_bench.cpp counts the same).
inline constexpr int kHermiteFlopsPerInteraction = 60;

// Advances `steps` steps and waits for them, stopping with Interrupted within about a step of a
// signal: CPU steps one at a time with a check between, GPU steps enqueued at once and waited for
// by polling.
void advance_interruptibly(multigpu::Simulation& simulation, std::uint64_t steps);

// Step k of several devices, from their own step times (each device's counted from the start of
// the timing, when all were idle): from the moment the last device finished step k - 1 to the
// moment the last finished step k. Not the longest of the devices' step k: where the devices take
// turns waiting for each other (as launch-bound steps on several GPUs do), every step would be
// some device's long one, and the median would be far above the wall clock's mean.
std::vector<double> slowest_device_steps(const std::vector<std::vector<double>>& per_device, std::size_t steps);

// Runs `warmup` untimed steps, then `steps` timed ones (at least 1). A step lasts until the slowest
// device has finished it (slowest_device_steps). hermite4 (simulation.block_steps()): block steps, timed
// as BlockMeasurement says, in `blocks`; with `t_end`, the timed block steps are every one up to that time
// instead of `steps` (InputError for other integrators, and where the warm-up already reached it). Throws
// Interrupted (core/interrupt.h) within about a step (hermite4: about 50 ms of block steps) of a signal.
// With several ranks every rank calls it (it is collective). More than kMaxTimedSteps fixed steps, each timed, are
// refused (InputError naming `steps` as `names` spells it) before any step.
Measurement measure(multigpu::Simulation& simulation, std::uint64_t warmup, std::uint64_t steps,
                    std::optional<double> t_end = std::nullopt, const SettingNames& names = {});

// A benchmark's report, as `nbody --benchmark --json` writes it and Python's Simulation.benchmark
// returns it: one function, so both give the same keys. `source` names where the bodies came from
// (driver::Setup::source); `warmup` and `steps` are the counts measure() was given. hermite4 (m.blocks): the
// same keys but the per-step ones (force_evaluations_per_step, median/min/max_step_ms, device_median_step_ms),
// warmup_steps the block steps warmed up (BlockMeasurement::warmup_steps), wall_mean_step_ms and interactions_per_second by the block steps' wall clock, gflops at 60 flops a pair, and
// a "hermite4" object: block_steps, wall_seconds, block_steps_per_second, microseconds_per_block_step,
// mean_active_bodies, force_evaluations, interactions, interactions_per_second, simulation_time_start,
// simulation_time_end, simulation_time_per_second, t_end (null without one), step_level_histogram,
// longest_step, eta, eta_start, dt_max and state_hash (16 hex digits); timed_steps is the block steps timed.
// Both kinds also have "notices": timing_notices (none for hermite4), where a front end adds its own before them.
// `units`: the run's (units_json), what its dt, softening and times are in.
nlohmann::json benchmark_json(const Measurement& m, const multigpu::Simulation& simulation, const std::string& source,
                              const sim::Units& units, std::uint64_t warmup, std::uint64_t steps);

// A measured time or rate as a report gives it, to 12 significant digits: more than any clock here resolves, fewer
// than the arithmetic's last bits, so a step of 78,682 ns reads 0.078682 ms, not 0.07868199999999997.
double measured(double value);
std::vector<double> measured(std::vector<double> values);

// Fields every report has beside dt and softening, for a script to compare runs by. The physical scale: null in
// N-body units, else the mass and length units as given and in cgs, and the time and velocity units they make.
nlohmann::json units_json(const sim::Units& units);
// euler-damped's velocity factor a step; null for every other integrator (which damp nothing).
nlohmann::json damping_json(const sim::StepProgram& program);

// FNV-1a of every body's own-time Hermite state (positions, velocities, accelerations, jerks, times and steps): the
// same bits on every layout, threading model and rank count, so equal hashes mean equal states. Collective. As the
// JSON reports it: 16 hex digits.
std::uint64_t hermite_state_hash(multigpu::Simulation& simulation);
std::string state_hash_text(std::uint64_t hash);

// The "hermite4" object of a run's report (the command line's --run --json, Python's last_run): the counts of
// `simulation` since `since` (its counts when the run began; zero for a simulation made for the run, whose start's
// N x N force pass then counts among the interactions): block_steps, force_evaluations (the bodies corrected) and
// force_evaluations_per_body, step_level_histogram (the force evaluations by the level of the step that ended: level
// k a step of longest_step x 2^-k), longest_step (dt_max's power of two), interactions (force+jerk pairs computed)
// and interactions_per_second: those since `timed_since` (the counts when `wall_seconds` began: a start's force pass,
// made before, is not timed) over `wall_seconds` (0 without block steps), eta, eta_start, dt_max and state_hash.
// Collective (the hash).
nlohmann::json hermite_run_json(multigpu::Simulation& simulation, const sim::hermite::HermiteCounters& since,
                                const sim::hermite::HermiteCounters& timed_since, double wall_seconds);

// hermite4's figures of one timed run of block steps (wall_mean_ms: its time a block step), as the keys both
// the benchmark's "hermite4" object and a threading comparison's rows carry: block_steps, wall_seconds,
// block_steps_per_second, microseconds_per_block_step, mean_active_bodies, force_evaluations, interactions,
// interactions_per_second, simulation_time_per_second and state_hash.
nlohmann::json block_steps_json(const BlockMeasurement& b, double wall_mean_ms);

struct ComparisonRow {
  multigpu::Threading model;
  multigpu::Launch launch;
  int devices;
  std::size_t bodies;
  Measurement measurement;
  double speedup;     // one device's median step over this row's (hermite4: its wall clock per block step)
  double efficiency;  // speedup / devices
  // hermite4: whether the state after the row's block steps is bit for bit the first row of its size's
  // (every row starts from the same bodies and runs the same block steps).
  bool agrees = true;
  // Whether the row had an earlier row of its size to agree with (fixed steps: of as many steps; its size's first row,
  // or a GPU's first graph row, whose capture makes more steps, had none: `agrees` then says nothing).
  bool compared = false;
  std::size_t rows_of_size = 0;  // the rows its size has once measured whole (a comparison cut short has fewer)
};

// Sets row.agrees and row.compared against rows[first_row..], its size's rows measured before it: hermite4's against
// the first; fixed steps' against the first that made as many steps.
void compare_with_earlier(const std::vector<ComparisonRow>& rows, std::size_t first_row, ComparisonRow& row);

// For each size and each way of driving the devices (interruptible like measure()): the two
// threading models launching on streams, and on GPUs in one process CUDA graphs (single thread),
// measures 1, 2, ... up to the devices `base` resolves to (its --gpus and --weights prefixes for
// fewer devices). `on_row` sees each row as it is measured. hermite4: block steps (measure()), no graph
// rows (its one-GPU engine captures its own), and each row's end state compared (ComparisonRow::agrees).
// `cancel`: the simulations' cancel flag (SimulationConfig::cancel), which a front end raises on a signal so that a
// start's first forces or a CPU step of a large N end at once (sim::StepCancelled) rather than at the step's end.
std::vector<ComparisonRow> compare_threading(const RunConfig& base, const std::vector<std::size_t>& sizes,
                                             std::uint64_t warmup, std::uint64_t steps,
                                             const std::function<void(const ComparisonRow&)>& on_row = {},
                                             const std::atomic<bool>* cancel = nullptr);

}  // namespace nbody::driver
