// tools/mpi_gather_bench.cpp - the MPI all-gather nbody's exchange between ranks makes, timed:
// every rank contributes `bytes` (a slice of positions) and receives everyone's, for sizes from
// 16 bytes to 64 MiB. Prints the median time of each size and the bandwidth per rank; the
// latency (the smallest size) and bandwidth feed docs/scaling.md's model.
//
//   mpirun -np 2 build/mpi_gather_bench
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == 0) std::printf("%d ranks; MPI_Allgatherv in place, median of the repetitions\n%12s %12s %14s\n", size,
                             "bytes/rank", "time us", "GB/s per rank");
  for (std::size_t bytes = 16; bytes <= (std::size_t(64) << 20); bytes *= 4) {
    std::size_t const ranks = static_cast<std::size_t>(size);
    std::vector<char> buffer(bytes * ranks, static_cast<char>(rank));
    std::vector<int> counts(ranks, static_cast<int>(bytes)), offsets(ranks);
    for (int r = 0; r < size; ++r) offsets[std::size_t(r)] = r * int(bytes);
    int const reps = bytes < (1u << 20) ? 200 : 20;
    std::vector<double> t;
    for (int k = 0; k < reps + 3; ++k) {
      MPI_Barrier(MPI_COMM_WORLD);
      double const t0 = MPI_Wtime();
      MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buffer.data(), counts.data(), offsets.data(), MPI_BYTE,
                     MPI_COMM_WORLD);
      double const dt = MPI_Wtime() - t0;
      if (k >= 3) t.push_back(dt);  // the first calls set up connections
    }
    std::sort(t.begin(), t.end());
    double const median = t[t.size() / 2];
    // Each rank receives (size - 1) pieces of `bytes`.
    if (rank == 0)
      std::printf("%12zu %12.2f %14.3f\n", bytes, median * 1e6, double(bytes) * double(size - 1) / median * 1e-9);
  }
  MPI_Finalize();
  return 0;
}
