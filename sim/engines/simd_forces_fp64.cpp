// sim/engines/simd_forces_fp64.cpp - the CPU engine's fp64 force path: the reference arithmetic
// (sim/physics/pair_gravity.h's accumulate, j in index order for every body), vectorised over the
// i-bodies instead of the j-bodies, so that each lane adds its own body's pairs in the reference's
// order. Built with -O3 and the machine's vector units but strict IEEE arithmetic and no fused
// multiply-add (sim/engines/CMakeLists.txt): every body gets the reference's bits, in any lane,
// block, slice or thread, at a fraction of the reference's time (docs/performance.md).
#include <cmath>

#include "sim/engines/simd_forces.h"
#include "sim/physics/pair_gravity.h"

namespace nbody::sim {

void simd_accelerations(const Real4<double>* pos_mass, std::size_t n, std::size_t begin, std::size_t count,
                        double eps2, Real3<double>* acc, const std::atomic<bool>* cancel) {
  constexpr std::size_t W = kSimdLanesFp64;
  auto const blocks = static_cast<long>((count + W - 1) / W);
#pragma omp parallel for schedule(static) if (double(count) * double(n) > 1e6)
  for (long block = 0; block < blocks; ++block) {
    if (cancel && cancel->load(std::memory_order_relaxed)) continue;  // given up: skip what is left
    std::size_t const first = begin + std::size_t(block) * W;
    std::size_t const lanes = first + W <= begin + count ? W : begin + count - first;
    // Lanes past the slice's end repeat its last body; their sums are not stored.
    double xi[W], yi[W], zi[W];
    for (std::size_t l = 0; l < W; ++l) {
      Real4<double> const& p = pos_mass[first + (l < lanes ? l : lanes - 1)];
      xi[l] = p.x, yi[l] = p.y, zi[l] = p.z;
    }
    double ax[W] = {}, ay[W] = {}, az[W] = {};
    for (std::size_t j = 0; j < n; ++j) {
      Real4<double> const pj = pos_mass[j];
#pragma omp simd
      for (std::size_t l = 0; l < W; ++l) accumulate(pj.x - xi[l], pj.y - yi[l], pj.z - zi[l], pj.w, eps2, ax[l], ay[l], az[l]);
    }
    for (std::size_t l = 0; l < lanes; ++l) acc[first - begin + l] = {ax[l], ay[l], az[l]};
  }
}

}  // namespace nbody::sim
