// driver/validation.h - a simulation's forces against the fp64 CPU reference.
#pragma once

#include <cstddef>

#include "multigpu/simulation.h"

namespace nbody::driver {

struct ValidationResult {
  std::size_t bodies = 0, samples = 0;  // bodies sampled evenly (all of them up to 4096)
  double max_relative_error = 0;        // worst |a - a_ref| / |a_ref| over the samples
  double l2_relative_error = 0;         // ||a - a_ref|| / ||a_ref|| over the samples
  double tolerance = 0;
  bool finite = true;                   // no NaN or infinity among the accelerations
  bool pass = false;                    // finite and l2_relative_error < tolerance
};

// Compares the simulation's current accelerations with the fp64 reference, computed on the CPU
// from the same positions for up to 4096 bodies (1024 above N = 65,536). `tolerance` 0 means
// sim::force_error_bound for the run's precision and N. Throws Interrupted within a short chunk of
// reference work after a signal.
ValidationResult validate_forces(multigpu::Simulation& simulation, double tolerance = 0);

}  // namespace nbody::driver
