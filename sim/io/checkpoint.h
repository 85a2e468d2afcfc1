// sim/io/checkpoint.h - checkpoints: the exact state of a run and every setting needed to continue it
// bit for bit, in HDF5, laid out like GADGET and SWIFT snapshots so that h5py, yt and pynbody read
// them as they are.
//
// Layout (one file, one particle type; HDF5's 1.8 file format, whose metadata carries checksums):
//   /Header attributes   GADGET: NumPart_ThisFile, NumPart_Total, NumPart_Total_HighWord,
//                        MassTable (zeros: masses are per particle), Time, Redshift (0), BoxSize,
//                        NumFilesPerSnapshot (1), Omega0 / OmegaLambda (0: not cosmological),
//                        HubbleParam (1), Flag_* (0), Flag_DoublePrecision;
//                        the run: Step, StartTime, DtSinceStep, DtSinceTime, Precision, Integrator,
//                        Dt, Softening, Damping, Scenario, Seed, InitialEnergy (when known), Code,
//                        Checksum
//   /PartType1/Coordinates (N x 3), Velocities (N x 3), Masses (N)   in the run's precision
//   /PartType1/ParticleIDs (N, uint64)   the body's index: restart puts every body back in place
//   /PartType1/BodyType    (N, uint8)    0 gas, 1 dark matter, 2 star (tipsy's families)
// Time is DtSinceTime + (Step - DtSinceStep) x Dt, computed the same way by the run and the restart:
// Dt has applied since step DtSinceStep (0, and DtSinceTime = StartTime, unless a restart changed it).
//
// Checksum (uint64) is FNV-1a (64-bit) over, in this order and little-endian: N, Step, DtSinceStep,
// Seed (uint64); StartTime, DtSinceTime, Dt, Softening, Damping (float64); one byte 1 and
// InitialEnergy (float64), or one byte 0; Precision, Integrator and Scenario, each followed by a zero
// byte; then, each dataset whole before the next and row by row, ParticleIDs as uint64, BodyType as
// uint8, and Coordinates, Velocities and Masses as float64. A file without it (written by hand, or by an
// nbody before it) is read unverified; one whose checksum disagrees is refused.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/precision.h"
#include "sim/physics/body_set.h"

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

  bool operator==(const RunRecord& o) const {
    return step == o.step && start_time == o.start_time && dt_since_step == o.dt_since_step &&
           dt_since_time == o.dt_since_time && precision == o.precision && integrator == o.integrator && dt == o.dt &&
           softening == o.softening && damping == o.damping && scenario == o.scenario && seed == o.seed &&
           initial_energy == o.initial_energy;
  }
  bool operator!=(const RunRecord& o) const { return !(*this == o); }
};

struct Checkpoint {
  BodySet bodies;  // bodies.time = dt_since_time + (step - dt_since_step) x dt
  RunRecord run;
  bool verified = false;  // the file had a checksum, and it matched
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
void write_checkpoint(const std::string& path, const BodySet& bodies, const RunRecord& run);

// Reads and checks a checkpoint's header. Throws InputError naming the file and the problem: not a
// regular file, not HDF5, not an nbody checkpoint (a missing group, dataset or attribute), a link to
// another file, external or virtual storage, counts that disagree, a setting out of the command
// line's bounds (core/bounds.h: Step, Dt, Softening for the precision, Damping, Seed).
CheckpointHeader read_checkpoint_header(const std::string& path);

// Reads a checkpoint: the header's checks, then the bodies (in chunks; an interrupt stops the read
// with Interrupted): shapes, particle IDs 0..N-1 once each, finite values, the checksum.
Checkpoint read_checkpoint(const std::string& path);

}  // namespace nbody::sim
