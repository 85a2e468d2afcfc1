// sim/io/checkpoint.h - checkpoints: the exact state of a run and every setting needed to continue it
// bit for bit, in HDF5, laid out like GADGET and SWIFT snapshots so that h5py, yt and pynbody read
// them as they are.
//
// Layout (one file, one particle type):
//   /Header attributes   GADGET: NumPart_ThisFile, NumPart_Total, NumPart_Total_HighWord,
//                        MassTable (zeros: masses are per particle), Time, Redshift (0), BoxSize,
//                        NumFilesPerSnapshot (1), Omega0 / OmegaLambda (0: not cosmological),
//                        HubbleParam (1), Flag_* (0), Flag_DoublePrecision;
//                        the run: Step, StartTime, Precision, Integrator, Dt, Softening, Damping,
//                        Scenario, Seed, InitialEnergy (when known), Code
//   /PartType1/Coordinates (N x 3), Velocities (N x 3), Masses (N)   in the run's precision
//   /PartType1/ParticleIDs (N, uint64)   the body's index: restart puts every body back in place
//   /PartType1/BodyType    (N, uint8)    0 gas, 1 dark matter, 2 star (tipsy's families)
// Time is StartTime + Step x Dt, computed the same way by the run and the restart.
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
  Precision precision = Precision::fp32;
  std::string integrator;        // the integrator's name (sim::Integrator)
  double dt = 0.0;
  double softening = 0.0;
  double damping = 1.0;          // euler-damped's factor per step
  std::string scenario;          // the initial conditions: a scenario's name, or "file:" and a path
  std::uint64_t seed = 0;
  std::optional<double> initial_energy;  // E at step 0, the baseline of the energy error
};

struct Checkpoint {
  BodySet bodies;  // bodies.time = start_time + step x dt
  RunRecord run;
};

// True when this nbody was built with HDF5 (checkpoints need it).
bool checkpoints_built();

// Writes the checkpoint whole or not at all (core/atomic_file.h). Positions, velocities and
// masses go out in `run.precision`: in fp32 they are the engine's floats, exactly.
void write_checkpoint(const std::string& path, const BodySet& bodies, const RunRecord& run);

// Reads a checkpoint. Throws InputError naming the file and the problem: not a regular file, not
// HDF5, not an nbody checkpoint (a missing group, dataset or attribute), inconsistent sizes,
// particle IDs that are not 0..N-1 once each, a value that is not finite.
Checkpoint read_checkpoint(const std::string& path);

}  // namespace nbody::sim
