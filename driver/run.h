// driver/run.h - a run from its setup to its outputs, the same from every front end (the command
// line, Python, a server): the steps in chunks that stay responsive to a signal, the series due at
// their steps (checkpoints, diagnostics), the last sound state kept against a failure, and the
// final checkpoint and tipsy file. The front end says how it reports (RunObserver) and reads the
// outcome (RunResult); nothing here prints.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "driver/checkpoints.h"
#include "driver/setup.h"
#include "multigpu/simulation.h"
#include "sim/io/tipsy.h"
#include "sim/physics/diagnostics.h"

namespace nbody::driver {

// What a run writes; "" for a file not wanted.
// A job ended by rank 0 from a bounded wait for the other ranks (RunOutputs::on_giving_up).
struct GaveUp {
  std::string why;                         // the wait given up, in one line
  std::optional<std::uint64_t> saved_step;  // the last state kept, saved to the run's checkpoint at this step
  std::string save_failure;                // else why not
  // The last state kept (saved or not): its step and time; none where none was kept.
  std::optional<std::uint64_t> kept_step;
  double kept_time = 0.0;
};

struct RunOutputs {
  std::string checkpoint;              // the final (or interrupted) state, HDF5
  std::uint64_t checkpoint_every = 0;  // also one every K steps, named by driver::series_path; 0: none
  // Or one at every multiple of this simulation time (0: none), at the first step or block time at or past each, as
  // diagnostics_dt samples; each holds every body's own state, so a restart from it is exact at any block time.
  double checkpoint_dt = 0.0;
  // The final state: an HDF5 snapshot in fp64 where the name ends in .h5 or .hdf5 (saves_hdf5_snapshot), else tipsy
  // in save_format.
  std::string save;
  sim::TipsyFormat save_format = sim::TipsyFormat::standard;
  std::string diagnostics;             // diagnostics over time: .csv or .jsonl (driver/diagnostics_series.h)
  std::uint64_t diagnostics_every = 0;  // a sample every K steps, and at the start and the end; 0: the default
  // Instead, a sample at every multiple of this simulation time (0: by steps), at the first step or block time at
  // or past each (within a few units in the last place of the multiple; one sample a step), every body at it where
  // the multiple is a block time of every body (sample_dt_notice).
  double diagnostics_dt = 0.0;
  SnapshotSeries snapshots;            // HDF5 snapshots for analysis: the start, every K steps or dt, the end
  // The time the run was asked to reach (a front end's --t-end), recorded in its checkpoints; none: a run by steps,
  // whose checkpoints record the step it ends at.
  std::optional<double> end_time;
  // The start's and the end's diagnostics in the result (an O(N^2) pass each); without them and
  // without a series, the run only steps and writes.
  bool summary = true;
  // The front end keeps the state after the run (Python's script holds it): a run from a checkpoint that writes no
  // state of its own is not said to lose it.
  bool state_stays = false;
  // The run starts from a checkpoint (a restart, of a step-0 checkpoint too, a branch of it included): files of its
  // series past its step of its own course (driver/course.h) are an earlier start's, killed, and are written over,
  // where those of another course are refused (check_run_outputs). A run from step 0 that is not is a new run, refused
  // among files of its series past step 0 unless all are of its own course (the same command, started before).
  bool from_checkpoint = false;
  // The course of the run's states (Setup::course): files of its series past its step that record another are
  // refused (check_run_outputs), where ones of its own are written over.
  std::string course;
  // The units the run's files state (Setup::units): a snapshot series whose files before its step state others is
  // refused (check_run_outputs), as one series in two units.
  sim::Units units;
  SettingNames names;  // how a refused output is named (the front end's spelling)
  // The front end named the periodic checkpoints' or the snapshots' cadence, 0 included (none between the start and
  // the end): take_up_cadences takes up only cadences not named.
  bool checkpoint_cadence_named = false, snapshot_cadence_named = false;
  // The front end named the snapshots' precision: else take_up_cadences chooses it (fp64 for block steps).
  bool snapshot_precision_named = false;
  // Where take_up_cadences took the periodic checkpoints' cadence from ("a.h5", "the run before"), for messages that
  // name it; empty where the front end named it.
  std::string checkpoint_cadence_from;
  // Notices about the outputs (take_up_cadences'), said by driver::run once its outputs are made: a refused output
  // is then the run's one line.
  std::vector<std::string> said;
  // With several ranks, rank 0 ending the job from a bounded wait (a rank stopped or hangs: core/ranks.h LastWords),
  // once the last state kept is saved or could not be: the front end's report of it (--json). Called at most once, on
  // the thread that gave up, while the run is stopped where it waited; no call of Ranks.
  std::function<void(const GaveUp&)> on_giving_up;
};

// A run from a state whose run wrote series (a checkpoint's record, a script's run before: Setup::continued_cadences)
// takes up the cadence of each series it writes but names no cadence for (its diagnostics rows, periodic checkpoints,
// snapshots), so that a job script's restart line need not repeat them and each series goes on as in a run that
// never stopped. Into `o.said`: each cadence taken up but the default (100 rows' steps), one not taken up (steps of
// another count: block steps against steps of dt), a series this run leaves out while it steps, and a restart that
// writes no state of its own (unless o.state_stays). `block_steps`, `now`: the simulation's; `steps`: the run's.
// Front ends call it before check_run_outputs, so that the series' names are checked at the cadence taken up. It also
// gives the snapshots their precision where the front end named none: that of the series' latest file of this run's
// course up to `now`, where the run goes on with a series (a restart, a script's next run), else fp32, or fp64 for
// block steps (hermite4's collisional runs, whose close pairs fp32 coordinates around the box's centre cannot hold
// apart). A precision named against the series' is said.
void take_up_cadences(const Setup& setup, bool block_steps, std::uint64_t now, std::uint64_t steps, RunOutputs& o);

// A final output that could not be written.
struct OutputNotWritten {
  std::string output;  // as the front end names it: "--checkpoint" on the command line, "checkpoint" for a keyword
  std::string path;
  std::string error;   // why, in one line
};

// How a front end follows a run. Every call comes from the thread that called run(); with several
// ranks, on every rank (a front end reports on rank 0).
class RunObserver {
 public:
  virtual ~RunObserver() = default;
  // The start's diagnostics (none when a signal interrupted them) and the energy baseline.
  virtual void started(const std::optional<sim::Diagnostics>& /*start*/, std::optional<double> /*e0*/) {}
  // After each chunk of steps: the steps done of `total` (for block steps to a time, a bound: the time reached
  // says how far the run is), and the simulation's time.
  virtual void progress(std::uint64_t /*done*/, std::uint64_t /*total*/, double /*time*/) {}
  virtual void note(const std::string& /*text*/) {}     // a file of a series written
  // What the run did with an output that the user may not expect (an earlier series continued or replaced).
  virtual void notice(const std::string& /*text*/) {}
  // An output's path holds what this run replaces whole when it ends and is not this run's to replace lightly:
  // another run's checkpoint, an earlier series (RunResult's checkpoint_replaced, diagnostics_replaced). A notice by
  // default; the command line gives it as a warning, even when quiet.
  virtual void replaces(const std::string& text) { notice(text); }
  // An output lost, or an unresolved run; it goes on. The text is the warning itself, without a "warning: " (the
  // command line prints one; Python gives it as a RuntimeWarning).
  virtual void warning(const std::string& /*text*/) {}
  // A final output (checkpoint, save) that could not be written, once the run's other outputs are. By default a
  // warning: "--checkpoint not written: c.h5: cannot write checkpoint: ..." ("checkpoint not written: ..." in Python).
  virtual void output_not_written(const OutputNotWritten& lost) { warning(lost.output + " not written: " + lost.error); }
  // The outputs, as (option, path), a process ending now would leave unwritten.
  virtual void unwritten(const std::vector<std::pair<std::string, std::string>>& /*outputs*/) {}
  // Steps between calls of visit(): the run stops after every so many of its steps (counted from
  // its first) and asks whether to go on; 0: never.
  virtual std::uint64_t visit_every() const { return 0; }
  // True stops the run there (its outputs are written as at the end). The simulation may be read.
  virtual bool visit(multigpu::Simulation& /*simulation*/) { return false; }
  // Whether the visit that stopped the run failed (a script's callback that raised) rather than chose to stop it: the
  // run then did not reach an end of its own, and keeps outputs that reach further (as a signal's stop does).
  virtual bool visit_failed() const { return false; }
  // The lock of the run's --checkpoint, given once the run holds it and null again before it lets go (null throughout
  // where it writes none; core/atomic_file.h): a visit may write that checkpoint as the run does, inside a
  // CheckpointWrite for it (Python's checkpoint()).
  virtual void checkpoint_locked(const WriterLock* /*lock*/) {}
  // The same for the run's --save: a visit may write it as the run will at its end (a script's latest state kept in
  // one file while it runs).
  virtual void save_locked(const WriterLock* /*lock*/) {}
};

struct RunResult {
  std::uint64_t steps = 0;     // steps this run made
  double wall_seconds = 0.0;   // of the steps, outputs of the series included
  int stopped_by = 0;          // the signal that interrupted the run, or 0
  bool stopped_by_visit = false;  // RunObserver::visit asked to stop
  std::optional<sim::Diagnostics> start, end;  // none when a signal interrupted their O(N^2) pass
  std::optional<double> initial_energy;       // the baseline of the relative energy error
  // Why the energy at the end says the run did not resolve its orbits, with what to change; "" where it does not
  // (or was not measured). Also given to RunObserver::warning. A run that fails before its end keeps the warning its
  // samples gave on the way, if any.
  std::string energy_warning;
  std::vector<std::string> checkpoints_not_written;  // of the series, each with a warning
  std::uint64_t checkpoints_written = 0;
  std::vector<std::string> snapshots_not_written;  // each with a warning
  std::uint64_t snapshots_written = 0;
  // The final checkpoint or tipsy file that could not be written (each told to RunObserver::output_not_written); the
  // others were written.
  std::vector<OutputNotWritten> outputs_not_written;
  std::uint64_t diagnostics_samples = 0;  // the rows written to the series (without one: the samples measured)
  // The cadences of its series, as its checkpoints record them (a series it wrote none of: the one it continued);
  // a front end that runs again from its end sets them as the next run's Setup::continued_cadences.
  OutputCadences cadences;
  std::string diagnostics_failure;  // why the series stopped early, or could not take its name
  std::string diagnostics_rows_in;  // then, the file this run's rows are in (the partial file), or "" for none
  // Where the run replaces an earlier series at its diagnostics path whole (another run's, or this run's from before
  // its start energy was measured anew): the notice that says so, also given to RunObserver::replaces; else "".
  std::string diagnostics_replaced;
  // Where the checkpoint path holds another run's checkpoint (another scenario, seed or body count), which this run
  // replaces: the notice that says so, also given to RunObserver::replaces; else "".
  std::string checkpoint_replaced;
  // A failure that ended the run (a stalled device, a state no longer finite), with the last sound
  // state saved to outputs.checkpoint at `saved_step`; the front end reports it and exits 1.
  std::optional<std::string> failure;
  std::optional<std::uint64_t> saved_step;
  bool saved_at_failure = false;  // the state saved is the failure's own (StoppedWhole), not the last one kept
  std::string save_failure;  // why that state could not be saved either
  // Which state saved_step names, for reports: "where the run stopped" or "the last state checked"; "" if none.
  const char* saved_state() const {
    return !saved_step ? "" : saved_at_failure ? "where the run stopped" : "the last state checked";
  }
};

// Where a time `t` counts as reached: four units in its last place before it. A time of k steps of dt rounds (30 x 0.03
// is 0.8999999999999999, 3 x 0.1 is 0.30000000000000004): the step that reaches t to rounding reaches it, not the one
// after (an end a whole dt late, a sample one step late).
double reach_of(double t);

// Steps from `clock` until the time reaches `t_end` (reach_of; 0 if it has): the clock's own arithmetic
// (multigpu::RunClock::time), so a run of that many steps stops at the first step whose time is at or
// past t_end to rounding, never one later. InputError naming t_end as `t_end_name` words it (SettingNames::setting: "--t-end 5",
// "t_end=5", "t_end='10Myr'" as typed) for a time that is not finite or is more than kMaxSteps steps of `dt` away
// (`steps_of` names them in that message, with dt: "steps of dt 0.01", "block steps of at most dt_max='1kyr'").
std::uint64_t steps_to_time(const multigpu::RunClock& clock, double dt, double t_end,
                            const NamedSetting& t_end_name = {"--t-end"}, const std::string& steps_of = "");

// The steps a run to the time `t_end` gives run(), for every integrator, as every front end asks for it
// (`nbody --run --t-end`, Python's run(t_end=...)). Fixed steps: steps_to_time(). Block steps (hermite4)
// have no length known in advance: the count is the most a run may take from `clock`, and the simulation
// itself stops at t_end (steps_for_time_limit below sets its limit). Same errors as steps_to_time(), which name dt (or
// hermite4's dt_max) as `names` does: as typed, where it was given in a unit.
std::uint64_t steps_for_time(const multigpu::RunClock& clock, const sim::StepProgram& program, double t_end,
                             const NamedSetting& t_end_name = {"--t-end"}, const SettingNames& names = {});
// steps_for_time() for this simulation from where it is now, and, for block steps, its time limit set to
// t_end with the finish there (every body brought to t_end: Simulation::set_time_limit; without `finish`, the run
// ends at the last block time at or before t_end); run() clears it when it returns, so a later run by steps is not
// stopped by it.
std::uint64_t steps_for_time_limit(multigpu::Simulation& sim, double t_end, const NamedSetting& t_end_name = {"--t-end"},
                                   const SettingNames& names = {}, bool finish = true);

// hermite4, after a run to the time `t_end`: where it ended when that is before t_end (the last block time at or
// before it, where the finish at t_end could not be made: HermiteBlocks::finish_at), and how many bodies the end
// state shows predicted to it; "" where it ended at t_end, and for the other integrators. `t_end_name` names t_end as
// the front end does; times are said in `units` too (Units::time_text). Collective.
// The bytes the files an output makes after its own name add to it: a diagnostics series' ".partial" (8), a periodic
// checkpoint series' step ("_00000010": 9); 0 for the others. Its name must leave room for them (check_output_path's
// `longer`), so that one refusal says how much shorter the name must be.
std::size_t bytes_named_after(const std::string& option, bool periodic_checkpoints);

std::string t_end_notice(multigpu::Simulation& sim, double t_end, const NamedSetting& t_end_name = {"--t-end"},
                         const sim::Units& units = {});
// A run to the time `t_end` that is already at or past it, at time `now`: "--t-end 0.25: the run is already at time
// 0.3" ("t_end=0.25: ..." for Python), both times in the shortest form that reads back exactly, and in physical
// `units` too: "... already at time 4.2419345357841385 (2 Myr)".
std::string already_at_notice(double now, double t_end, const NamedSetting& t_end_name = {"--t-end"},
                              const sim::Units& units = {});
// A new run starts at its initial state's time `start` and goes forward: throws InputError where `t_end` is before it
// (within four units in the last place: a time converted from a unit may round just below), naming `source`, what
// starts the run at that time ("run.h5", "the simulation"). A restart already past its end is no mistake: its caller
// does not ask.
void refuse_t_end_before_start(double start, double t_end, const NamedSetting& t_end_name, const std::string& source,
                               const sim::Units& units = {});

// hermite4, outputs by time (diagnostics, snapshots): `what`s at block times past the multiples of `dt`, most bodies
// predicted to them, where the multiples are not block times of every body (dt, or the time hermite4 started at, not
// a multiple of dt_max's power of two); "" where they are, and for fixed steps. `dt_name` as the front end names it
// (SettingNames::setting("--diagnostics-dt"), "--snapshot-dt"); times in `units` too, as a cadence a restart takes
// from its file is a number in the run's units that the user gave as "0.5Myr".
std::string sample_dt_notice(const multigpu::Simulation& sim, double dt, const NamedSetting& dt_name,
                             const std::string& what = "sample", const sim::Units& units = {});

// A restart that names no end of its own (neither steps nor a time to reach) goes on to the end of the run its
// checkpoint continues (Setup::file_end): the time to run to, or the steps left, with a notice saying so
// ("run.h5's run was going to time 10: this run goes on to it (--steps or --t-end sets another end)"); where that
// run reached its end, no steps (steps 0), with a notice, so that a job resubmitted until done stops. Nothing for
// another start or a file that records no end: the front end's default applies.
struct ContinuedEnd {
  std::optional<double> t_end;
  std::optional<std::uint64_t> steps;
  std::string notice;
};
ContinuedEnd continued_end(const Setup& setup);

// Refuses (InputError), before any work, outputs of a run from `first` to `last` steps that could not
// be written: each checkpoint and snapshot of the series (its name, and that it is no other output's
// file, the front end's `others` (option, path) included), the diagnostics series. The final
// outputs' own paths are the front end's to check with its others. `names`: how the messages name the outputs.
// Returns notices for the front end to say: a new run's series files of its own course, an earlier start's, that it
// writes again.
std::vector<std::string> check_run_outputs(const RunOutputs& outputs, std::uint64_t first, std::uint64_t last,
                       const std::vector<std::pair<std::string, std::string>>& others = {},
                       const SettingNames& names = {});

// A notice where a run's checkpoint or snapshot series may pass step 99,999,999 (`last`: the step it ends at, or
// kMaxSteps and past for none known), whose files' names then no longer sort in step order; "" otherwise.
std::string series_names_notice(const RunOutputs& outputs, std::uint64_t last);

// What a state written to PATH now (a checkpoint where `checkpoint`, else an HDF5 snapshot) would replace that its
// readers would miss, as a warning naming the write as `given` ("Simulation.save('s_00000010.h5')"): a checkpoint under
// a snapshot (the state a restart goes on from), another run's checkpoint (another scenario, seed or body count), a
// snapshot named as a series' file of its step or one of another run; else "" (nor for the file the simulation was
// made from: written in place on purpose). A run's --checkpoint and --save say theirs at its start (run); a front
// end's write of the moment asks this first, so that a warning made an error (Python's filters) writes nothing.
// Rank 0 reads the file; every rank returns its answer.
std::string replaced_state_warning(const std::string& path, const std::string& given, bool checkpoint,
                                   const Setup& setup, multigpu::Simulation& simulation, const SettingNames& names);

// A checkpoint of the simulation's state now written at PATH where PATH holds the checkpoint of another step named as
// a series' file of that step ("c_00000010.h5" holding step 10): step 10's state, a point a branch or restart starts
// from, would be gone, and its name would say step 10 of another step's state. Throws InputError naming the write as
// `given`, as a run's --checkpoint is refused at its start; the file the simulation was made from included. Another
// run's checkpoint there is replaced_state_warning's to say. Rank 0 reads the file; every rank throws alike.
void refuse_series_checkpoint(const std::string& path, const std::string& given, const Setup& setup,
                              multigpu::Simulation& simulation, const SettingNames& names);

// Runs `steps` steps of `simulation` (built from `setup`) and writes `outputs`. A signal (core/
// interrupt.h) ends the steps early and the outputs are still written (stopped_by says so; the end's
// diagnostics are then skipped). A final output that cannot be written costs only itself
// (outputs_not_written). Throws for what ends a run without its final outputs: bad input, and a
// failure with nothing sound to save.
RunResult run(const Setup& setup, multigpu::Simulation& simulation, const RunOutputs& outputs, std::uint64_t steps,
              RunObserver& observer);
// The same, filling `result` as the run goes: where it throws, `result` still holds what the run wrote until then
// (the files of its series, the samples), for the front end to report with the failure.
void run(const Setup& setup, multigpu::Simulation& simulation, const RunOutputs& outputs, std::uint64_t steps,
         RunObserver& observer, RunResult& result);

}  // namespace nbody::driver
