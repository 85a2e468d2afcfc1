// sim/engines/simd_forces.h - the CPU engine's SIMD force paths: fp32 (SIMD over j, OpenMP over i)
// and fp64 (the reference's bits, SIMD over i).
#pragma once

#include <atomic>
#include <cstddef>
#include <vector>

#include "core/real4.h"

namespace nbody::sim {

// The fast fp32 path: SoA copies of all N bodies, padded with zero-mass bodies to a multiple of
// kSimdWidth, kept between steps so a step allocates nothing.
class SimdForces {
 public:
  static constexpr std::size_t kSimdWidth = 8;       // j lanes per vector block (one AVX2 register)
  static constexpr std::size_t kBodiesPerBlock = 4;  // i-bodies sharing each loaded j block

  // Copies positions (O(N)) into the SoA layout the inner loop streams.
  void load(const Real4<float>* pos_mass, std::size_t n);
  // Accelerations of bodies [begin, begin + count) from all n loaded bodies. OpenMP over i,
  // SIMD over j in fixed blocks of kSimdWidth lanes reduced in a fixed order, kBodiesPerBlock
  // i-bodies per block to hide the rsqrt latency: the result for
  // each i depends only on the positions, not on threads, slices or memory alignment.
  // `cancel` (optional) is checked before each block of i-bodies (kBodiesPerBlock x N pairs): once
  // raised, the blocks not yet done are skipped and the result is incomplete (the caller must see
  // the flag and not use it).
  void accelerations(std::size_t begin, std::size_t count, float eps2, Real3<float>* acc,
                     const std::atomic<bool>* cancel = nullptr) const;

 private:
  std::vector<float> x_, y_, z_, m_;
};

// The fp64 path: the accelerations of bodies [begin, begin + count) from all n bodies, bit for bit
// sim::reference_accelerations (each body's pairs added in index order, in strict IEEE arithmetic),
// computed for kSimdLanesFp64 bodies at a time in the lanes of the machine's vectors; OpenMP over
// those blocks. `cancel` as for SimdForces::accelerations (checked before each block).
constexpr std::size_t kSimdLanesFp64 = 8;
void simd_accelerations(const Real4<double>* pos_mass, std::size_t n, std::size_t begin, std::size_t count,
                        double eps2, Real3<double>* acc, const std::atomic<bool>* cancel = nullptr);

}  // namespace nbody::sim
