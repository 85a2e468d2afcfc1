// mpi/mpi_ranks.h - MPI behind core/ranks.h: started when a launcher (mpirun, srun) started this
// process, left alone otherwise; or over a communicator a caller hands in (mpi4py's).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/ranks.h"

namespace nbody::mpi {

// True when this nbody was built with MPI.
bool mpi_built();

// True when a launcher started this process (its environment says so), and the number of ranks it
// started (0 when none did).
bool launched_by_mpi();
int launcher_world_size();
// This process's rank as the launcher's environment gives it, before MPI starts; -1 where it gives none.
int launcher_world_rank();

// Starts MPI when launched_by_mpi() and makes it the world (core/ranks.h) until the returned object
// is destroyed, which finalises MPI. Without a launcher, or in a build without MPI, returns null
// and the process stays one rank. Throws RuntimeFailure if MPI cannot start.
std::unique_ptr<Ranks> start(int& argc, char**& argv);

// The ranks of a communicator that the caller's MPI (mpi4py, an application that called MPI_Init)
// made: `comm` is the MPI_Comm's value as an integer (a pointer in Open MPI, an int in MPICH;
// mpi4py's MPI._handleof(comm)). Collective over `comm`: each of its processes calls it. The ranks
// work on their own duplicate of it, with every bound of the world's (NBODY_RANK_TIMEOUT), and
// neither initialise nor finalise MPI; they must outlive every simulation made with them. Throws
// InputError when MPI is not initialised, for MPI_COMM_NULL or an intercommunicator, or when MPI
// was initialised below MPI_THREAD_SERIALIZED; in a build without MPI, always.
std::unique_ptr<Ranks> ranks_for_handle(std::uintptr_t comm);

// The MPI library this nbody was built with (MPI_Get_library_version; "" without MPI): a caller's
// communicator is only meaningful to the same library.
std::string library_version();

}  // namespace nbody::mpi
