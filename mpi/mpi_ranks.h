// mpi/mpi_ranks.h - MPI behind core/ranks.h: started when a launcher (mpirun, srun) started this
// process, left alone otherwise.
#pragma once

#include <memory>

#include "core/ranks.h"

namespace nbody::mpi {

// True when this nbody was built with MPI.
bool mpi_built();

// True when a launcher started this process (its environment says so), and the number of ranks it
// started (0 when none did).
bool launched_by_mpi();
int launcher_world_size();

// Starts MPI when launched_by_mpi() and makes it the world (core/ranks.h) until the returned object
// is destroyed, which finalises MPI. Without a launcher, or in a build without MPI, returns null
// and the process stays one rank. Throws RuntimeFailure if MPI cannot start.
std::unique_ptr<Ranks> start(int& argc, char**& argv);

}  // namespace nbody::mpi
