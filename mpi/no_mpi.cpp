// mpi/no_mpi.cpp - a build without MPI: every process is one rank. A launch as one of several ranks
// is refused: each would run the whole simulation alone.
#include "core/errors.h"
#include "mpi/mpi_ranks.h"

namespace nbody::mpi {

bool mpi_built() { return false; }

std::unique_ptr<Ranks> start(int&, char**&) {
  int const size = launcher_world_size();
  if (size > 1)
    throw InputError("started as one of " + std::to_string(size) +
                     " MPI ranks, but this nbody was built without MPI; install libopenmpi-dev and rebuild "
                     "(-DNBODY_WITH_MPI=ON), or run it without mpirun");
  return nullptr;
}

std::unique_ptr<Ranks> ranks_for_handle(std::uintptr_t) {
  throw InputError("an MPI communicator was given, but this nbody was built without MPI; install libopenmpi-dev and "
                   "rebuild (-DNBODY_WITH_MPI=ON), or leave the communicator out");
}

std::string library_version() { return {}; }

}  // namespace nbody::mpi
