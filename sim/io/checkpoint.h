// sim/io/checkpoint.h - checkpoints and snapshots: the exact state of a run and every setting needed
// to continue it bit for bit (checkpoints), or the bodies alone for analysis (snapshots), in HDF5
// laid out as SWIFT writes its snapshots, so that h5py, yt and pynbody read them as they are, with
// the run's units, time and particle families.
//
// Layout (one file; HDF5's 1.8 file format, whose metadata carries checksums), format 2:
//   /Header attributes   Code "SWIFT" (yt picks its reader by this name, and only that reader
//                        takes a file's own units; /Code/Code names nbody), Dimension 3,
//                        NumPart_ThisFile, NumPart_Total, NumPart_Total_HighWord (6 counts: gas,
//                        dark matter, -, -, stars, -), MassTable (zeros), Time, Redshift 0,
//                        Scale-factor 1, BoxSize (3 x side), Shift (3 x side / 2),
//                        NumFilesPerSnapshot 1, Omega0 / OmegaLambda 0, HubbleParam 1, Flag_* 0,
//                        Flag_DoublePrecision, NbodyFormat 2, NbodyFile "checkpoint" or "snapshot",
//                        Step, MassUnit and LengthUnit (as given; empty in N-body units), Softening;
//                        checkpoints also: StartTime, DtSinceStep, DtSinceTime, Precision,
//                        Integrator, Dt, Damping, Scenario, Seed, InitialEnergy (when
//                        known), EndTime or EndStep (where the run was going, when known),
//                        DiagnosticsEvery or DiagnosticsDt, CheckpointEvery or CheckpointDt, SnapshotEvery
//                        or SnapshotDt (how often it wrote its diagnostics rows, periodic checkpoints and
//                        snapshots, where it wrote them or continued a run that did), DiagnosticsDigest
//                        (the diagnostics rows before Step, where the run wrote that series: RunRecord), Checksum;
//                        snapshots and checkpoints: Course (the run's course: RunRecord::course)
//   /Units, /InternalCodeUnits   SWIFT's "Unit length in cgs (U_L)", "Unit mass in cgs (U_M)",
//                        "Unit time in cgs (U_t)" = sqrt(U_L^3 / (G U_M)), "Unit current in cgs
//                        (U_I)" and "Unit temperature in cgs (U_T)" (1); all 1 in N-body units
//   /Policy, /Cosmology, /Parameters, /HydroScheme, /SubgridScheme, /Code   what SWIFT's readers
//                        look for: not cosmological, not periodic
//   /PartType0 (gas), /PartType1 (dark matter), /PartType4 (stars), those with bodies:
//     Coordinates (n x 3)  the position plus Shift, so that every body lies inside [0, BoxSize)
//     Velocities (n x 3), Masses (n)
//     ParticleIDs (n, uint64)   the body's index in the run: a restart puts every body back
//     CoordinateRoundoff (n x 3, checkpoints)   what rounding took from position + Shift:
//                        position = (Coordinates - Shift) + CoordinateRoundoff, exactly, in the
//                        run's precision (Sterbenz's lemma: |position| < Shift)
//     SmoothingLengths (n, gas only)   the softening: yt requires one of gas
//   Each dataset carries SWIFT's "U_L exponent", "U_M exponent", "U_t exponent" ... attributes
//   (pynbody's units; all 0 in N-body units, so that it leaves the values dimensionless).
//   Checkpoints hold values in the run's precision, snapshots in float32 or float64 as asked.
// Time is DtSinceTime + (Step - DtSinceStep) x Dt, computed the same way by the run and the restart:
// Dt has applied since step DtSinceStep (0, and DtSinceTime = StartTime, unless a restart changed it).
//
// Checksum (uint64) is FNV-1a (64-bit) over, in this order and little-endian: the format 2, N, Step,
// DtSinceStep, Seed (uint64); StartTime, DtSinceTime, Dt, Softening, Damping (float64); one byte 1
// and InitialEnergy (float64), or one byte 0; Precision, Integrator, Scenario, MassUnit and
// LengthUnit, each followed by a zero byte; U_L, U_M, U_t and the shift (float64); hermite4's part (below);
// where the file has one, the byte 'T' and EndTime (float64) or the byte 'S' and EndStep (uint64); where the file
// has one, the byte 'K' and DiagnosticsEvery (uint64) or the byte 'D' and DiagnosticsDt (float64); then, each pair
// present or absent on its own, the byte 'P' and CheckpointEvery (uint64) or the byte 'p' and CheckpointDt (float64),
// and the byte 'N' and SnapshotEvery (uint64) or the byte 'n' and SnapshotDt (float64); where the file has one, the
// byte 'G' and DiagnosticsDigest followed by a zero byte; where the file has one, the byte 'R' and Course followed by
// a zero byte; then for each
// particle group present, in the order PartType0, 1, 4: its count (uint64), and its datasets whole,
// row by row, ParticleIDs as uint64, then Coordinates, CoordinateRoundoff, Velocities and Masses as
// float64. A file without it (written by hand) is read unverified; one whose checksum disagrees is
// refused.
//
// hermite4 (format 2): Header/HermiteEta, HermiteEtaStart, HermiteDtMax (bounded like --eta, --eta-start,
// --dt-max), and a group /Hermite (attribute Epoch: the time at block time 0; attribute Finish, int32 1, only on a
// finish's state: every body brought to the epoch by a last step of its own, keeping the step the criterion gave
// it, so that the steps at block time 0 are not start steps) with float64 datasets over every body in index order:
// Positions, Velocities (n x 3, at each body's own time), Accelerations, Jerks (n x 3), Times, Steps (n, block
// times: Times a multiple of Steps, Steps powers of two). The checksum then goes on, after LengthUnit's, U_L, U_M,
// U_t and the shift, with "hermite4" and a zero byte and the three settings (float64), and after the particle
// groups with one byte 1, Epoch, one byte 1 more where Finish is, and the six datasets whole (float64).
//
// Format 1 (nbody before format 2; still read): every body in /PartType1 with a BodyType dataset
// (uint8: 0 gas, 1 dark matter, 2 star), coordinates centred on the origin, Header/Code "nbody
// 0.1.0", no units; its checksum is the one above without the format, the units, the shift, the
// counts and CoordinateRoundoff, and with BodyType (uint8) after ParticleIDs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/precision.h"
#include "core/setting_names.h"
#include "sim/io/units.h"
#include "sim/physics/body_set.h"
#include "sim/physics/hermite.h"

namespace nbody::sim {

// What a checkpoint keeps of the run besides the bodies.
struct RunRecord {
  std::uint64_t step = 0;        // steps done since the run began
  double start_time = 0.0;       // simulation time at step 0
  std::uint64_t dt_since_step = 0;  // the step from which `dt` applies (a restart may change dt)
  double dt_since_time = 0.0;    // the time at that step
  Precision precision = Precision::fp32;
  std::string integrator;        // the integrator's name (sim::Integrator)
  double dt = 0.0;
  double softening = 0.0;
  double damping = 1.0;          // euler-damped's factor per step
  std::string scenario;          // the initial conditions: a scenario's name, or "file:" and a path
  std::uint64_t seed = 0;
  std::optional<double> initial_energy;  // E at step 0, the baseline of the energy error
  Units units;                   // what the files say one unit of mass and length is (format 1: N-body)
  // hermite4's settings (Header/HermiteEta, HermiteEtaStart, HermiteDtMax); none for other integrators. For a
  // hermite4 run Dt is dt_max and DtSinceStep = Step, DtSinceTime = the time reached (block times do not come
  // from a count of steps).
  std::optional<hermite::HermiteParams> hermite;
  // Where the run that wrote the file was going (Header/EndTime or EndStep; neither in an older nbody's file): the
  // time it was asked to reach, or else the step (block step for hermite4) it would have ended at. A restart that
  // names no end of its own goes on to it.
  std::optional<double> end_time;
  std::optional<std::uint64_t> end_step;
  // How often that run wrote its series (Header/DiagnosticsEvery or DiagnosticsDt, CheckpointEvery or CheckpointDt,
  // SnapshotEvery or SnapshotDt; a run that wrote none of a series passes on the cadence of the run it continued;
  // none in an older nbody's file or sim.checkpoint()'s): a restart that writes the series and names no cadence for
  // it takes it up.
  std::optional<std::uint64_t> diagnostics_every, checkpoint_every, snapshot_every;
  std::optional<double> diagnostics_dt, checkpoint_dt, snapshot_dt;
  // The rows of that run's diagnostics series before this step, as a digest (Header/DiagnosticsDigest,
  // "csv:ROWS:HASH:NAME" or "jsonl:...": driver::DiagnosticsSeries::digest_before): a restart that continues the series
  // of that name keeps its rows only where they give the same. Empty: none (a run that wrote no series, an older
  // nbody's file).
  std::string diagnostics_digest = {};
  // The course of the run this state is on (Header/Course, 16 hexadecimal digits; a snapshot's too): the same for
  // every state of one course, from its start or the step where a setting of it was changed (driver/course.h), so
  // that a run can tell its own files in a series from those of another course of the run. Empty: an older nbody's
  // file, which records none.
  std::string course = {};
  // A snapshot of the state a stopped run reached where no checkpoint held it (Header/Stopped): off its series'
  // cadence, and superseded once a later start of the same course passes its step.
  bool stopped = false;

  // The simulation time at `step`.
  double time() const { return dt_since_time + double(step - dt_since_step) * dt; }

  bool same_hermite(const RunRecord& o) const {
    return hermite.has_value() == o.hermite.has_value() &&
           (!hermite || hermite::same_step_settings(*hermite, *o.hermite));
  }
  bool operator==(const RunRecord& o) const {
    return step == o.step && start_time == o.start_time && dt_since_step == o.dt_since_step &&
           dt_since_time == o.dt_since_time && precision == o.precision && integrator == o.integrator && dt == o.dt &&
           softening == o.softening && damping == o.damping && scenario == o.scenario && seed == o.seed &&
           initial_energy == o.initial_energy && units == o.units && same_hermite(o) && end_time == o.end_time &&
           end_step == o.end_step && diagnostics_every == o.diagnostics_every && diagnostics_dt == o.diagnostics_dt &&
           checkpoint_every == o.checkpoint_every && checkpoint_dt == o.checkpoint_dt &&
           snapshot_every == o.snapshot_every && snapshot_dt == o.snapshot_dt &&
           diagnostics_digest == o.diagnostics_digest && course == o.course;
  }
  bool operator!=(const RunRecord& o) const { return !(*this == o); }
};

struct Checkpoint {
  BodySet bodies;  // bodies.time = dt_since_time + (step - dt_since_step) x dt
  RunRecord run;
  // A hermite4 run's per-body state (/Hermite), positions and velocities at each body's own time included;
  // not started() when the file has none.
  hermite::HermiteState hermite;
  bool verified = false;  // the file had a checksum, and it matched
  int format = 2;         // 1: written by an nbody before particle families and units
};

// What a checkpoint's header says, read and checked without reading the bodies: enough to decide
// whether the bodies fit in memory before they are read.
struct CheckpointHeader {
  RunRecord run;
  std::uint64_t bodies = 0;
};

// True when this nbody was built with HDF5 (checkpoints need it).
bool checkpoints_built();

// Writes the checkpoint whole or not at all (core/atomic_file.h): every HDF5 call is checked (the
// close too), and the file is read back and its checksum compared before it is renamed into place,
// so that a disk that filled up, a short write or an I/O error never leaves a corrupt file under
// PATH. Positions, velocities and masses go out in `run.precision`: in fp32 they are the engine's
// floats, exactly.
// `hermite` (a hermite4 run's, its positions and velocities filled): written to /Hermite, in fp64 whatever the
// run's precision, so that the run continues bit for bit; `bodies` are then its synchronised state (every body
// predicted to the time reached). A hermite4 record without it restarts every body as at t = 0.
void write_checkpoint(const std::string& path, const BodySet& bodies, const RunRecord& run,
                      const hermite::HermiteState* hermite = nullptr);

// Writes a snapshot for analysis whole or not at all: the bodies in their particle groups, the
// time, step, integrator and units of `run` (its other settings are not written), values in `precision`.
// `time_steps` (hermite4's, one a body in index order): each family's TimeStep, as GADGET names it.
void write_snapshot(const std::string& path, const BodySet& bodies, const RunRecord& run, Precision precision,
                    const std::vector<double>* time_steps = nullptr);

// The largest rounding of a coordinate in a snapshot of `bodies` in `precision`: coordinates are stored shifted into
// a box that holds every body, so each is rounded by up to half a unit in the last place of the power of two at or
// above the box's side: 2^-25 (fp32) or 2^-54 (fp64) of it, near the centre too. 0 for no bodies.
double snapshot_coordinate_rounding(const BodySet& bodies, Precision precision);

// Reads and checks a checkpoint's header. Throws InputError naming the file and the problem: not a
// regular file, not HDF5, not an nbody checkpoint (a missing group, dataset or attribute), a link to
// another file, external or virtual storage, counts that disagree, a setting out of the command
// line's bounds (core/bounds.h: Step, Dt, Softening for the precision, Damping, Seed). `names`: how its advice
// names the entry points that write and continue a checkpoint (the command line's, or Python's).
CheckpointHeader read_checkpoint_header(const std::string& path, const SettingNames& names = {});

// Reads a checkpoint: the header's checks, then the bodies (in chunks; an interrupt stops the read
// with Interrupted): shapes, particle IDs 0..N-1 once each, masses, positions and velocities as every reader of
// bodies checks them (core/bounds.h: body_value_problem, naming the body and the field; the bound on magnitudes
// where the file has no checksum: one whose checksum holds is a run's own state, continued as written), the checksum.
Checkpoint read_checkpoint(const std::string& path, const SettingNames& names = {});

// An nbody HDF5 snapshot (--snapshots) as the bodies of a new run (--load, Simulation.load), as a tipsy file is:
// positions (to the shift's rounding), velocities, masses and families in the snapshot's precision, and its time;
// its softening and units, for the run to take up. It holds no other run settings (a checkpoint does).
struct Snapshot {
  BodySet bodies;            // bodies.time: the snapshot's; empty where read_snapshot was asked for the header only
  std::uint64_t count = 0;   // the bodies its header declares
  std::uint64_t step = 0;    // the step of its run it was taken at
  double time = 0.0;         // the simulation time it was taken at (bodies.time too, where the bodies were read)
  double softening = 0.0;    // 0: hermite4's none
  Units units;
  Precision precision = Precision::fp32;  // of its values
  std::string course;        // RunRecord::course of the run that wrote it; "" where it records none
  bool stopped = false;      // RunRecord::stopped: a stopped run's state, off the series' cadence
};

// Whether PATH is an nbody snapshot: an HDF5 file whose Header/NbodyFile is "snapshot". False for anything else
// (a checkpoint, a tipsy file, a file that cannot be read), which the readers then refuse in their own words.
bool is_nbody_snapshot(const std::string& path);

// Whether PATH is an nbody checkpoint of format 2: an HDF5 file whose Header/NbodyFile is "checkpoint".
bool is_nbody_checkpoint(const std::string& path);

// Reads an nbody snapshot: its header's checks (counts, time, step, softening, units, shift), then, with `bodies`,
// the bodies as read_checkpoint checks them (in chunks; an interrupt stops the read with Interrupted). Throws
// InputError naming the file and what is wrong with it.
Snapshot read_snapshot(const std::string& path, const SettingNames& names = {}, bool bodies = true);

// Initial conditions from another program in the GADGET/SWIFT HDF5 layout (MUSIC, GADGET-4, SWIFT, pynbody, a
// script with h5py): /Header with NumPart_Total (and MassTable, Time where given), /PartType0..5 with Coordinates,
// Velocities and Masses (or the type's MassTable entry). PartType0 is read as gas, 4 as stars, the others as dark
// matter. The units are SWIFT's /Units group or GADGET-4's /Parameters (UnitLength_in_cm, UnitMass_in_g,
// UnitVelocity_in_cm_per_s), the velocities and time converted to the G = 1 units of that mass and length; a file
// that states none is in N-body units. Refused (InputError naming the file and the field): a snapshot split over
// several files, a cosmological one (Redshift > 0: comoving coordinates), counts, shapes or values that do not hold.
struct ForeignSnapshot {
  BodySet bodies;           // bodies.time: the file's Time in the run's units; empty where only the header was asked for
  std::uint64_t count = 0;  // the bodies its header declares
  Units units;              // N-body units where the file states none
  bool units_stated = false;
  std::string layout;       // what was read, for the run's report: "PartType1 (100), PartType4 (20); units from /Units"
  // With the bodies: the first body whose ParticleIDs is not its place in the file's order (0, 1, ... across the
  // types), as nbody numbers them, and its ID; none where every ID is (or the file has none).
  struct Renumbered {
    std::uint64_t body, id;
  };
  std::optional<Renumbered> renumbered;
  // A cosmology the header names where the file does not say whether its run was comoving ("Omega0 = 0.3,
  // OmegaLambda = 0.7, HubbleParam = 0.7"; GADGET-2 and -3 write no flag), or "" where it names none or says.
  std::string cosmology;
  // What its particle groups hold that nbody does not keep ("PartType0/InternalEnergy"), by name; with the bodies.
  std::vector<std::string> dropped;
};

// Whether PATH is an HDF5 file in the GADGET/SWIFT layout that nbody did not write: a /Header group with
// NumPart_Total and no Header/NbodyFile.
bool is_foreign_snapshot(const std::string& path);

// Reads one (see ForeignSnapshot); with `bodies`, the bodies as read_snapshot checks them.
ForeignSnapshot read_foreign_snapshot(const std::string& path, const SettingNames& names = {}, bool bodies = true);

// The course (RunRecord::course) an nbody snapshot or checkpoint at PATH records; "" where it records none, or is no
// such file, or cannot be read (its reader says what is wrong where the file is read).
std::string recorded_course(const std::string& path);

}  // namespace nbody::sim
