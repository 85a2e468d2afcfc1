// driver/checkpoints.h - checkpoints of a running simulation: what they record, the names of a
// series, and the check that a state is still worth keeping.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "driver/setup.h"
#include "multigpu/simulation.h"
#include "sim/io/checkpoint.h"

namespace nbody::driver {

// What a checkpoint of `simulation` records: its clock and settings, and the setup's origin.
sim::RunRecord run_record(const Setup& setup, const multigpu::Simulation& simulation,
                          std::optional<double> initial_energy);

// The file of a series at `step`: "out/run.h5" -> "out/run_00000100.h5" (at least 8 digits).
std::string series_path(const std::string& path, std::uint64_t step);

// Throws RuntimeFailure when a position or velocity of `state` is not finite: the run has blown up
// (a time step too long or a softening too small for the system), and writing it would only
// replace good files with one nbody refuses to load.
void check_finite(const sim::BodySet& state, std::uint64_t step);

// Downloads the state, checks it, and writes the checkpoint whole or not at all. With several ranks
// every rank takes part (the state is gathered) and rank 0 writes.
void write_checkpoint(const std::string& path, const Setup& setup, multigpu::Simulation& simulation,
                      std::optional<double> initial_energy);

}  // namespace nbody::driver
