// sim/kernels/naive.cuh - the naive force kernel: one body per thread, j from global memory.
#pragma once

#include <cuda_runtime.h>

#include "sim/kernels/interaction.cuh"

namespace nbody::sim::kernels {

// naive: one body per thread, j read straight from global memory (L1 broadcasts).
template <class Real, class Rsqrt>
__global__ void naive_forces(const Real4<Real>* __restrict__ pos, ForceArgs args, Real eps2,
                             Real4<Real>* __restrict__ acc) {
  meet_peers(args.wait, [] { return true; });
  int const t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= args.count) return;  // no barrier after this
  Real4<Real> const pi = kFromPeers<Rsqrt> ? load_coherent(pos + args.begin + t) : pos[args.begin + t];
  Real ax = 0, ay = 0, az = 0;
  for (int s = 0; s < args.segments; ++s) {
    Real px = 0, py = 0, pz = 0;
    int const j_end = (s + 1) * args.segment_length;
    for (int j = s * args.segment_length; j < j_end; ++j)
      if constexpr (kFromPeers<Rsqrt>)
        interact<Real, Rsqrt>(pi, load_coherent(pos + j), eps2, px, py, pz);
      else
        interact<Real, Rsqrt>(pi, pos[j], eps2, px, py, pz);
    ax += px;
    ay += py;
    az += pz;
  }
  acc[t] = {ax, ay, az, Real(0)};
}

}  // namespace nbody::sim::kernels
