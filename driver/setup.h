// driver/setup.h - from a RunConfig to what a Simulation needs: devices chosen (with the CPU
// fallback), memory checked, bodies made or read, the step program built. Checks come before the
// expensive work, so bad input fails fast.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "driver/config.h"
#include "multigpu/simulation.h"
#include "sim/io/units.h"
#include "sim/physics/body_set.h"
#include "sim/physics/hermite.h"
#include "sim/physics/integrator.h"

namespace nbody::driver {

// Where a run is going, as its checkpoints record it for a restart that names no end of its own: the time it was
// asked to reach, or else the step it ends at (a block step where the run is hermite4's); neither for a state written
// outside a run.
struct RunEnd {
  std::optional<double> time;
  std::optional<std::uint64_t> step;
  bool in_block_steps = false;  // `step` counts block steps (a checkpoint records this as its integrator)
  bool named() const { return time || step; }
};

// How often a series of outputs is written: every so many steps (block steps for hermite4), or at the multiples of a
// time; neither: none between the start and the end.
struct Cadence {
  std::uint64_t every = 0;
  double dt = 0.0;
  bool named() const { return every > 0 || dt > 0; }
};

// The cadences of a run's series (its diagnostics rows, periodic checkpoints and snapshots), as its checkpoints
// record them for a restart that names none of its own (driver::take_up_cadences); a series the run writes none of
// passes on the cadence of the run it continues.
struct OutputCadences {
  Cadence diagnostics, checkpoints, snapshots;
  bool in_block_steps = false;  // `every` counts block steps (a checkpoint records this as its integrator)
  // Where they are taken up: at the step of the state they belong to (a checkpoint's, or the end of a script's run
  // before), by a run whose notices name where they come from ("run.h5", "the run before").
  std::uint64_t at_step = 0;
  std::string source;
  // The diagnostics series' rows before at_step, as a digest (sim::RunRecord::diagnostics_digest): "" where the run
  // wrote no series.
  std::string diagnostics_digest = {};
  bool any() const { return diagnostics.named() || checkpoints.named() || snapshots.named(); }
};

struct Setup {
  sim::BodySet bodies;
  sim::StepProgram program;
  multigpu::SimulationConfig config;
  multigpu::RunClock clock;           // step 0 at the bodies' time, or where a checkpoint left off
  std::optional<double> initial_energy;  // a checkpoint's energy at step 0: the error's baseline
  // The step whose state initial_energy was measured at, where a front end measured it anew (a new softening is
  // another potential; new bodies; a checkpoint continued without its own); else 0. A series at the path whose rows
  // measure another energy is then this run's from before that step, and begins again there (SeriesLineage).
  std::uint64_t baseline_step = 0;
  // A restart whose settings of the run's course (driver/course.h's course_settings: integrator, dt, eta, eta_start
  // where bodies start again, the longest step's power of two, damping, softening, precision) differ from its
  // checkpoint's: its run branches at the checkpoint's step, where one that changes none goes on as the checkpoint's
  // run did, to the bit (SeriesLineage::same_course).
  bool course_changed = false;
  // The course the run's states are on (driver/course.h), recorded in its snapshots and checkpoints; "" for a setup
  // made without its bodies.
  std::string course;
  // Where the course branched from another (a restart or a change of settings): the course it left, at which step,
  // under which settings (course_settings), and whether that one was a branch of the checkpoint's run already. A
  // change made again at that step is measured from there, so that a setting changed and then changed back before a
  // step returns to the course it left.
  struct CourseBranch {
    std::string parent;
    std::uint64_t step = 0;
    std::string settings;
    bool parent_changed = false;
    std::uint64_t parent_from = 0;  // the course_from of the course it left
  };
  std::optional<CourseBranch> branched;
  // The step the course began at: where it branched (a restart or a change of settings, bodies set or edited), else 0
  // (a new run; a restart that goes on with its checkpoint's course, which began before). A run that starts there
  // writes its snapshot series' start; one that goes on from where another stopped writes it only where it falls
  // due, as a run never stopped does (driver::run).
  std::uint64_t course_from = 0;
  std::string source;                 // "plummer (seed 42)", the snapshot's path, or the checkpoint's
  std::string scenario;               // what checkpoints record as the initial conditions
  std::uint64_t seed = 0;
  double damping = 1.0;               // euler-damped's factor, for checkpoints
  // hermite4 continued from a checkpoint that holds its per-body state (started()); else empty: every body
  // starts as at t = 0 (a scenario, a tipsy file, a step-0 or another integrator's checkpoint).
  sim::hermite::HermiteState hermite;
  sim::Units units;                   // the files' units: the config's, or a checkpoint's unless named
  // Where the run a checkpoint continues was going (its EndTime or EndStep); none for other starts.
  // driver::continued_end reads it.
  RunEnd file_end;
  // The cadences of the series of the run this state continues (a checkpoint's record; a front end that runs again
  // sets its last run's): driver::take_up_cadences takes them up where a run from that state names none.
  OutputCadences continued_cadences;
  // The configuration as it resolved: a checkpoint's settings (integrator, softening, precision...) where the one
  // asked for named none. A front end that changes the run later starts from this, not from what it asked.
  RunConfig run;
  std::vector<std::string> notices;   // for the user: e.g. the fallback to the CPU and why
  std::vector<std::string> warnings;  // for the user, said even where notices are not: other units than the file's
};

// `s` continues hermite4 from `state` (each body at its own time: its position and velocity replace the body's, the
// mass stays), bit for bit; an empty state: every body starts as at t = 0. A step longer than `s.program`'s longest
// (dt max lowered) is cut to it, or to the shortest power of two above it that ends after the state's block time.
// Every front end's simulation is made with `&s.hermite`.
void continue_hermite(Setup& s, sim::hermite::HermiteState state);

// Whether hermite4's per-body state `state`, made with the softening `was` and the step settings `was_steps`, goes on
// under the softening `now` and the settings `now_steps`: each body's acceleration and jerk belong to their potential,
// and before the first block step its start steps to the start's settings. A state that holds a step below the floor
// (that of a run that stopped there) goes on only under the step settings it stopped with (where it stops again, and
// says so): under others its steps, which the run refused, would be kept, so every body starts again. Otherwise every
// body starts again from the synchronised state (the restart and the change of settings between steps decide alike).
bool hermite_state_goes_on(const sim::hermite::HermiteState& state, double was, double now,
                           const std::optional<sim::hermite::HermiteParams>& was_steps,
                           const sim::hermite::HermiteParams& now_steps);
// The notice of a state that stopped at the floor and starts again under other step settings (for a caller where
// hermite_state_goes_on is false and the softening the same), or "" for a state that holds no such step: "hermite4 starts every body again at time T: `source` holds the state of a run
// that stopped at the floor (body B's step S), which other settings do not keep".
std::string floor_restart_notice(const sim::hermite::HermiteState& state, double time, const std::string& source,
                                 const sim::hermite::HermiteParams& now_steps);

// Refuses (InputError naming `source`, the two bodies and their position) bodies that share a position where the
// softening is 0 (hermite4's alone): their force and potential are infinite, and the first step would make NaN of
// every body. O(N log N); nothing is checked with a softening.
void check_no_shared_positions(const sim::BodySet& bodies, double softening, const std::string& source,
                               const SettingNames& names);

// The notice for bodies that all have mass 0 (test particles alone, often a file's masses missed): no body attracts
// another, and each moves in a straight line; and for one body with mass among test particles, whose energy error
// stays 0 whatever their orbits do. "" where several bodies have mass, or there are none.
std::string massless_notice(const sim::BodySet& bodies, const std::string& source);

// Refuses (InputError naming `source` and its time) a start at a time so large that fp64 times cannot resolve the
// run's longest step there (dt, or hermite4's dt_max): below 2^-44 of the time (hermite4's relative step floor), the
// clock would not advance, or only in steps of its rounding, while the bodies move.
void check_time_resolution(double time, const sim::StepProgram& program, const std::string& source,
                           const SettingNames& names);

// hermite4 with a --dt-max given that is not a power of two: "--dt-max 0.1: the longest step is 0.0625, ..." (the
// front end's spelling, run.names), since steps are powers of two; "" otherwise.
std::string dt_max_notice(const RunConfig& run);

// hermite4 with an eta so small that the forces' rounding, not the orbits, sets the steps: the criterion's higher
// derivatives are differences of rounded forces over a step squared and cubed, and below about 1e-3 with fp32 pair
// arithmetic (1e-7 with fp64) that noise shortens the steps, which shrink towards the floor (measured: a Plummer
// sphere's block steps to t = 0.25 grow 200-fold from eta 1e-3 to 3e-4 in fp32). "--eta 0.0001: ..." (the front
// end's spelling); "" otherwise.
std::string eta_notice(const RunConfig& run);

// Refuses (InputError) the options `run.given` names that mean nothing to its integrator, with the reason: --dt,
// --damping or --kernel with hermite4, a softening of 0 or --eta, --eta-start, --dt-max with another. For a change
// of settings, give only the change's names (every front end's).
void check_integrator_options(const RunConfig& run);

// The units a run will have, before its setup: the ones named (run.given.units), else a checkpoint's or an nbody
// snapshot's (their headers read), else N-body units. For times a front end takes in physical units ("10Myr").
sim::Units units_of_start(const RunConfig& run);

// A time setting given as text with a physical unit ("1kyr"; sim::physical_time) in the run's units `units`, for every
// front end: InputError where it is no such text, where the run has no units, or where the value is outside the
// setting's range (core/bounds.h's time_range), naming the setting as typed and the value it became, in `names`'
// spelling: "--dt-max 1e-9yr (2.12097e-15 in the run's units, 1e3Msun, 1pc): must be a longest step in [1e-09,
// 1e+12]". `option` is the command line's name of a time setting ("--dt", "--t-end", "--diagnostics-dt", ...).
double typed_time(const std::string& option, const std::string& text, const sim::Units& units,
                  const SettingNames& names = {});

// Throws InputError for bad input (a kernel the backend lacks, a missing or corrupt file, more
// GPUs than visible, too little memory) and RuntimeFailure for failures of the machine. With a
// checkpoint (initial.checkpoint) the run continues where it stopped: bodies, clock, energy
// baseline, and every setting the config does not name (config.given) come from the file. A tipsy
// snapshot gives the bodies and its softening (unless one is named), with a notice that it holds
// no run settings and float32 values. A scenario's bodies are made in chunks that look for a
// signal (Interrupted) and for `cancel` (null: never), raised by a front end that no longer wants
// this setup (the viewer quits, or asks for another run): then sim::StepCancelled, and nothing is
// returned.
Setup make_setup(const RunConfig& config, const std::atomic<bool>* cancel = nullptr);

// make_setup's checks without its work (the bodies neither read nor made): the settings, a checkpoint's header, a
// tipsy file's header, a scenario's size and parameters, the devices and the memory (for a tipsy file, once its bodies
// are read). For a front end that shows something before its start-up (the viewer's window, --serve's address), so
// that bad input is refused first.
void check_setup(const RunConfig& config);

// The simulation configuration alone, for `bodies` bodies: backend and devices chosen, memory
// checked (the state, the host engines' buffers and `extra_bytes` more); a message about memory
// begins with `count_label` ("--bodies N" when empty, or "FILE holds N bodies"). Notices go to
// `notices` when given.
multigpu::SimulationConfig resolve_devices(const RunConfig& config, std::size_t bodies,
                                           std::vector<std::string>* notices = nullptr,
                                           const std::string& count_label = "", std::size_t extra_bytes = 0);

// The host memory one rank of this run takes at its most for `bodies` bodies, over `ranks` ranks of c.devices each:
// the copies of the state the run holds together, its engines' (on a GPU, their pinned buffers), and hermite4's
// block steps. resolve_devices checks it, times the ranks on this host.
std::size_t host_memory_need(const RunConfig& config, const multigpu::SimulationConfig& c, std::size_t bodies,
                             std::size_t ranks);

// Bytes of memory this process can still get: the least of the kernel's MemAvailable and what its
// memory cgroups (a container's limit) still allow; 0 if neither is known.
std::size_t available_host_memory();

// The OpenMP threads a CPU run of this configuration uses in all (its --threads, else as many as OpenMP gives this
// process; under worker threads, each host device's team together); 0 for a GPU run.
int cpu_threads(const multigpu::SimulationConfig& config);

// One line naming the hardware a configuration runs on: the GPUs' names, or the CPU model and
// OpenMP thread count.
std::string hardware_description(const multigpu::SimulationConfig& config);

}  // namespace nbody::driver
