// sim/cpu_forces.h - all-pairs accelerations and potential energy on the CPU.
#pragma once

#include <cstddef>
#include <vector>

#include "sim/real4.h"

namespace nbody::sim {

// The fp64 reference: for each i in [begin, begin + count), sums body j's pull for j = 0..n-1 in
// index order with correctly rounded arithmetic. OpenMP over i only, so the result for each i
// does not depend on the thread count. The oracle for every other force path.
void reference_accelerations(const Real4<double>* pos_mass, std::size_t n, std::size_t begin, std::size_t count,
                             double eps2, Real3<double>* acc);

// Sum over i in [begin, begin + count) of m_i * sum_{j != i} -m_j / sqrt(r_ij^2 + eps2); the total
// potential energy of all bodies is half of this over i = 0..n-1. Accumulated in fp64.
double reference_slice_potential(const Real4<double>* pos_mass, std::size_t n, std::size_t begin, std::size_t count,
                                 double eps2);
double slice_potential(const Real4<float>* pos_mass, std::size_t n, std::size_t begin, std::size_t count,
                       double eps2);

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
  void accelerations(std::size_t begin, std::size_t count, float eps2, Real3<float>* acc) const;

 private:
  std::vector<float> x_, y_, z_, m_;
};

}  // namespace nbody::sim
