// sim/physics/reference_forces.h - the fp64 reference forces and the potential energy (CPU, O(N^2)).
#pragma once

#include <atomic>
#include <cstddef>

#include "core/precision.h"
#include "core/real4.h"

namespace nbody::sim {

// The fp64 reference: for each i in [begin, begin + count), sums body j's pull for j = 0..n-1 in
// index order with correctly rounded arithmetic. OpenMP over i only, so the result for each i
// does not depend on the thread count. The oracle for every other force path.
// `cancel` (optional), when raised, skips the bodies not yet done: the result is then incomplete,
// and the caller, seeing the flag, must not use it (sim::StepCancelled).
void reference_accelerations(const Real4<double>* pos_mass, std::size_t n, std::size_t begin, std::size_t count,
                             double eps2, Real3<double>* acc, const std::atomic<bool>* cancel = nullptr);

// terms[i - begin] = m_i * sum_{j != i} -m_j / sqrt(r_ij^2 + eps2) for i in [begin, begin + count),
// each a serial sum over j in index order, accumulated in fp64: the same bits whatever the threads.
// The potential energy is half the sum of every body's term, summed in index order (the callers).
// `cancel` as for reference_accelerations. `interruptible`: a signal (core/interrupt.h) throws Interrupted between
// chunks of the pass; false for a rank of several, which must not stop alone (the others would wait for it in their
// next collective call): the pass runs whole, and the ranks agree on a signal after it.
void reference_potential_terms(const Real4<double>* pos_mass, std::size_t n, std::size_t begin, std::size_t count,
                               double eps2, double* terms, const std::atomic<bool>* cancel = nullptr,
                               bool interruptible = true);
void potential_terms(const Real4<float>* pos_mass, std::size_t n, std::size_t begin, std::size_t count, double eps2,
                     double* terms, const std::atomic<bool>* cancel = nullptr, bool interruptible = true);

// How far any engine's accelerations may be from the reference on the same positions, as a
// relative L2 error over all bodies: 1e-12 in fp64; in fp32 1e-5 up to 4,096 bodies, growing like
// sqrt(N) beyond (rounding in sums of N fp32 terms): 4e-5 at 65,536. The one bound --validate and
// the tests use. Measured on an H100 (every GPU kernel): fp32 at most 4.95e-7 up to 4,097 bodies and
// 2.5e-7 at 65,536; fp64 at most 2.5e-14. The CPU's SIMD fp32 path: 1.2e-7 to 4.5e-7.
double force_error_bound(Precision precision, std::size_t n);

}  // namespace nbody::sim
