// sim/engines/simd_forces.h - the CPU engine's fast fp32 force path (SIMD over j, OpenMP over i).
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

}  // namespace nbody::sim
