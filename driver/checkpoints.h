// driver/checkpoints.h - checkpoints and snapshots of a running simulation: what they record, the
// names of a series, and the check that a state is still worth keeping.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/atomic_file.h"
#include "core/precision.h"
#include "core/ranks.h"
#include "driver/setup.h"
#include "multigpu/simulation.h"
#include "sim/io/checkpoint.h"
#include "sim/io/tipsy.h"

namespace nbody::driver {

// What a checkpoint of `simulation` records: its clock and settings, the setup's origin, the run's end and its
// series' cadences.
sim::RunRecord run_record(const Setup& setup, const multigpu::Simulation& simulation,
                          std::optional<double> initial_energy, const RunEnd& end = {},
                          const OutputCadences& cadences = {});

// The file of a series at `step`: "out/run.h5" -> "out/run_00000100.h5" (at least 8 digits).
std::string series_path(const std::string& path, std::uint64_t step);

// Throws RuntimeFailure when a position or velocity of `state` is not finite: the run has blown up
// (a time step too long or a softening too small for the system), and writing it would only
// replace good files with one nbody refuses to load.
void check_finite(const sim::BodySet& state, std::uint64_t step, const SettingNames& names);

// hermite4's per-body state of `simulation` (each body at its own time, with its acceleration, jerk, time and step):
// what a checkpoint stores and a setup continues (continue_hermite); empty unless it runs block steps. Collective.
sim::hermite::HermiteState hermite_state_of(multigpu::Simulation& simulation);

// Downloads the state, checks it, and writes the checkpoint whole or not at all. With several ranks
// every rank takes part (the state is gathered) and rank 0 writes. `state`: the state simulation.state() gives now,
// where the caller holds it already (a run's end), or null to download it.
void write_checkpoint(const std::string& path, const Setup& setup, multigpu::Simulation& simulation,
                      std::optional<double> initial_energy, const RunEnd& end = {},
                      const OutputCadences& cadences = {}, const sim::BodySet* state = nullptr);

// The lock of the one writer of a checkpoint path (core/atomic_file.h's WriterLock: a run holds it while it runs),
// taken by rank 0 and agreed on: where another writer holds it, every rank throws the refusal, which names `given`
// (the path as the front end named it). Null on the other ranks.
std::unique_ptr<WriterLock> lock_checkpoint(const Ranks& ranks, const std::string& path, const std::string& given);

// write_checkpoint for a state saved once, outside a run (the viewer's save, Python's checkpoint()): refused, with
// nothing written, while a run writes checkpoints to `path`.
void write_checkpoint_once(const std::string& path, const std::string& given, const Setup& setup,
                           multigpu::Simulation& simulation, std::optional<double> initial_energy);

// Downloads the state and writes a snapshot for analysis (sim/io/checkpoint.h: the bodies in their
// particle groups, the time, step and units) whole or not at all, its values in `precision`. With
// several ranks every rank takes part and rank 0 writes. `state`: the state already downloaded (every rank's, as
// simulation.state() gives it), or null to download it. Returns the largest rounding of a coordinate in the file
// (sim::snapshot_coordinate_rounding; on every rank). `stopped`: the state a stopped run reached where no checkpoint
// holds it (sim::RunRecord::stopped). `start_problem_of`, where given: why the file starts no nbody run (start_problem
// of the values as the file holds them), or "".
double write_snapshot(const std::string& path, const Setup& setup, multigpu::Simulation& simulation,
                      Precision precision, const sim::BodySet* state = nullptr, bool stopped = false,
                      std::string* start_problem_of = nullptr);

// Why nbody would not take `state` as bodies to start from (core/bounds.h's rule, which a run itself may pass: a body
// carried beyond 1e15), naming the first such body and value; "" where it would. `float32`: the values as a tipsy
// file holds them, rounded to float. A save says it in a warning: the file is whole and other programs read it, but it
// starts no nbody run.
std::string start_problem(const sim::BodySet& state, bool float32 = false);

// Whether the final state saved to `path` (`--save`, Python's save) is an HDF5 snapshot (a name ending in .h5 or
// .hdf5, in any case: write_snapshot in fp64, with the units and families) rather than a tipsy file (any other).
bool saves_hdf5_snapshot(const std::string& path);
// What a tipsy save has to tell (save_tipsy): notices, and warnings of what its readers will take wrongly.
struct TipsySaved {
  std::vector<std::string> notices, warnings;
};
// Writes `state` to the tipsy file `path` (rank 0 writes; every rank learns how it went) with the parameter file beside
// it that states the units to tipsy's readers (sim::tipsy_param_path): written before it in a run of physical units,
// and, where nbody wrote one there for the file replaced, removed before it in N-body units; put back as it was where
// the tipsy file then cannot be written, so that the two always agree. A file of that name that is not nbody's is
// kept, with a warning. Also warned of: another parameter file in the folder, which the readers may take instead.
// `save_given`: the save as the front end names it ("--save run.bin"). Throws as write_file_atomically does, naming
// the file that was not written (the old pair then stays as it was).
TipsySaved save_tipsy(const std::string& path, const std::string& save_given, const sim::BodySet& state,
                      double softening, sim::TipsyFormat format, const sim::Units& units, const Ranks& ranks);
// Refuses (InputError), before a run, a tipsy save whose units cannot be stated beside it (its parameter file cannot
// be written: read-only, a folder, a link) in a run of `units`; nothing for an HDF5 name.
void check_tipsy_save(const std::string& path, const std::string& save_given, const sim::Units& units);
// Refuses (InputError) an output of `outputs` ((name as the front end says it, path)) that is the file beside the
// tipsy file `save` that states its units to pynbody and yt (sim::tipsy_param_path): written, or nbody's own removed,
// with it, so that another output there would lose the units. Nothing for an HDF5 --save or none.
void check_outputs_spare_tipsy_units(const std::string& save,
                                     const std::vector<std::pair<std::string, std::string>>& outputs,
                                     const SettingNames& names);
// Refuses (InputError) a save that cannot be made as named: an HDF5 name in a build without HDF5, a tipsy byte
// order given (`format_given`, as the front end spells it, "--save-format little-endian"; "" where none was) for
// an HDF5 name, or a name whose ending names another format (.hdf, .csv, ...: it would be a tipsy file). `save_given`: the save as the front end spells it ("--save run.h5", "save='run.h5'").
void check_save(const std::string& path, const std::string& save_given, const std::string& format_given);

// Refuses (InputError) a checkpoint named .param, as check_save refuses a tipsy file of that name (pynbody and yt take
// every *.param of a folder for a parameter file), or named as a format it is not (.bin, .tipsy, .csv, ...). `given`: the checkpoint as the front end spells it ("--checkpoint
// run.param", "checkpoint='run.param'", "Simulation.checkpoint('run.param')").
void check_checkpoint_name(const std::string& path, const std::string& given);
// Refuses (InputError) a snapshot series' BASE whose ending names another format (.bin, .csv, .hdf, ...): its files
// would be BASE_00000100.hdf5, HDF5 under a name that says otherwise. `given`: as the front end spells it
// ("--snapshots run.bin", "snapshots='run.bin'").
void check_snapshots_name(const std::string& base, const std::string& given);
// Refuses (InputError) an output named .param, `given` as the front end spells it: `what` it is ("a JSON report"),
// and a name to give instead ("run.json"). pynbody and yt take every *.param of a folder for a parameter file, and
// read its tipsy files by it; nbody's own FILE.param (the units beside a tipsy file) is the one written so.
void refuse_param_name(const std::string& path, const std::string& given, const char* what, const char* instead);
// Refuses (InputError) a report (--json's JSON document, --csv's table) named as a format it is not: --json run.csv
// (meant for --csv) would leave JSON where a spreadsheet looks for a table, --csv run.h5 a table where h5py looks for
// HDF5. `json`: the JSON report (.json, .txt, or no known ending); else the table (.csv, .txt, or none).
void check_report_name(const std::string& path, const std::string& given, bool json);

// A series of snapshots (--snapshots BASE, --snapshot-every K): the state at the start of a run, at
// its end, and every K steps between, each named after its step ("out/snap" ->
// "out/snap_00000100.hdf5"; a BASE ending in .hdf5 or .h5 keeps that ending). A run that goes on from where another
// stopped writes the series of one run (driver::run): no start off the cadence, and no end where a stop's state is
// its checkpoint's.
struct SnapshotSeries {
  std::string base;                      // empty: no snapshots
  std::uint64_t every = 0;               // 0: the start and the end only
  // Instead, one at every multiple of this simulation time (0: none), at the first step or block time at or past
  // each, as RunOutputs::diagnostics_dt samples.
  double dt = 0.0;
  Precision precision = Precision::fp32;  // of the values written

  bool enabled() const { return !base.empty(); }
  std::string path(std::uint64_t step) const;
  // Whether a periodic snapshot falls due at `step`.
  bool due(std::uint64_t step) const { return enabled() && every != 0 && step % every == 0; }
  // Steps from `step` to the next periodic snapshot (the count itself when none falls due).
  std::uint64_t steps_to_next(std::uint64_t step, std::uint64_t count) const {
    return due_any() ? std::min(count, every - step % every) : count;
  }
  bool due_any() const { return enabled() && every != 0; }
};

// Refuses (InputError) an output, given as (option, path) in the front end's spelling, that would replace the file
// the run starts from (`run.initial`'s checkpoint, tipsy file or nbody snapshot, however spelt), but for the state
// continued in place: the output named `checkpoint_option` over the checkpoint, the one named `save_option` over a
// file of the kind it writes (saves_hdf5_snapshot: a tipsy file over a tipsy file, an HDF5 snapshot over a
// snapshot). With `snapshots` (`option` as the
// front end names it), also a snapshot series one of whose files would be the snapshot the run starts from. Empty
// paths are skipped.
void check_outputs_spare_inputs(const RunConfig& run, const std::vector<std::pair<std::string, std::string>>& outputs,
                                const std::string& checkpoint_option, const std::string& save_option,
                                const SnapshotSeries* snapshots = nullptr, const std::string& option = "");

// The snapshot series' BASE with the other of the two endings (out/snap or out/snap.hdf5: out/snap.h5; out/snap.h5:
// out/snap.hdf5): another series, whose files one pattern (out/snap_*) reads with this one's.
std::string snapshot_base_with_other_ending(const std::string& base);

// The files of a series named after their steps by `path_of` (series_path for checkpoints,
// SnapshotSeries::path): those at the multiples of `every` in (first, last] (none when 0) and at the
// steps `also`, checked before the run like the other outputs (core/output_path.h), `what` naming the
// option in a message; none may be a file of `others` (option, path). A name that does not exist yet
// can only fail through its folder, which all names share, or through its length: past 10,000 names
// the first and the last (longest) are checked, and of the others those the folder already holds, so
// what is said holds for every name.
void check_step_series(const std::function<std::string(std::uint64_t)>& path_of, std::uint64_t every,
                       std::uint64_t first, std::uint64_t last, const std::vector<std::uint64_t>& also,
                       const std::string& what, const std::vector<std::pair<std::string, std::string>>& others);

// The files (regular files) of a series named by `path_of` that its folder holds at steps past `first`, in step order: a run that
// begins at `first` would leave its own files among them (check_run_outputs refuses it).
std::vector<std::string> series_files_after(const std::function<std::string(std::uint64_t)>& path_of,
                                            std::uint64_t first);
// The steps from `first` to `last` (both included) at which the folder of a series named by `path_of` holds a file
// of it (a regular file), in step order.
std::vector<std::uint64_t> series_steps_within(const std::function<std::string(std::uint64_t)>& path_of,
                                               std::uint64_t first, std::uint64_t last);
// The latest step up to `last` at which the folder of a series named by `path_of` holds a file of it (a regular
// file), or none: a run that begins at `last` goes on with the series, where that file is of its course.
std::optional<std::uint64_t> series_latest_through(const std::function<std::string(std::uint64_t)>& path_of,
                                                   std::uint64_t last);
// The name a series' one writer locks (WriterLock: ".NAME.lock" beside it): core/atomic_file.h series_lock_name_of of
// its files, "out/c_########.h5" (the step's digits as '#', .h5 for both HDF5 endings).
std::string series_lock_name(const std::function<std::string(std::uint64_t)>& path_of);

// A series of files a run writes, and how messages name it ("--snapshots out/s", "--checkpoint c.h5's periodic
// checkpoints"): what its lock (series_lock_name) and the checks of its files take.
struct WrittenSeries {
  std::function<std::string(std::uint64_t)> path_of;
  std::string given;
};
// The series of `snapshots` and of periodic checkpoints of `checkpoint` (where `every` or `dt` asks for them).
std::vector<WrittenSeries> written_series(const SnapshotSeries& snapshots, const std::string& checkpoint,
                                          std::uint64_t every, double dt, const SettingNames& names);
// The temporary files (core/atomic_file.h) of the series' files that their folder holds: writers killed before they
// finished left them.
std::vector<std::string> series_temporary_files(const std::function<std::string(std::uint64_t)>& path_of);

}  // namespace nbody::driver
