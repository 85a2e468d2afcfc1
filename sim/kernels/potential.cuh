// sim/kernels/potential.cuh - the potential energy of a slice, accumulated in fp64.
#pragma once

#include <cuda_runtime.h>

#include "core/real4.h"

namespace nbody::sim::kernels {

// phi[i] = m_i * sum_{j != i, j < n} -m_j / sqrt(r^2 + eps2), accumulated in fp64.
template <class Real>
__global__ void slice_potential(const Real4<Real>* __restrict__ pos, int n, int begin, int count, double eps2,
                                double* __restrict__ phi) {
  int const t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= count) return;
  int const i = begin + t;
  Real4<Real> const pi = pos[i];
  double sum = 0.0;
  for (int j = 0; j < n; ++j) {
    if (j == i) continue;
    Real4<Real> const pj = pos[j];
    double const dx = double(pj.x) - pi.x, dy = double(pj.y) - pi.y, dz = double(pj.z) - pi.z;
    sum -= double(pj.w) / sqrt(dx * dx + dy * dy + dz * dz + eps2);
  }
  phi[t] = double(pi.w) * sum;
}

}  // namespace nbody::sim::kernels
