// mpi/launcher.cpp - what a launcher (Open MPI's mpirun, an MPICH/PMI or PMIx launcher such as
// srun) leaves in a rank's environment.
#include <cstdlib>

#include "mpi/mpi_ranks.h"

namespace nbody::mpi {

int launcher_world_size() {
  for (char const* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"})
    if (char const* s = std::getenv(v)) return std::atoi(s);
  return std::getenv("PMIX_RANK") ? 1 : 0;
}

bool launched_by_mpi() { return launcher_world_size() > 0; }

int launcher_world_rank() {
  for (char const* v : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"})
    if (char const* s = std::getenv(v)) return std::atoi(s);
  return -1;
}

}  // namespace nbody::mpi
