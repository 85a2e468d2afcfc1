// sim/kernels/tiled.cuh - the classic shared-memory tiled force kernel (one body per thread).
#pragma once

#include <cuda_runtime.h>

#include "sim/kernels/interaction.cuh"

namespace nbody::sim::kernels {

// tiled: each block stages a tile of j-bodies in shared memory, every thread sweeps the tile. A
// tile is blockDim.x bodies, or one segment where segments are shorter (both are powers of two).
template <class Real, class Rsqrt>
__global__ void tiled_forces(const Real4<Real>* __restrict__ pos, ForceArgs args, Real eps2,
                             Real4<Real>* __restrict__ acc) {
  meet_peers(args.wait, [] { return true; });
  extern __shared__ unsigned char shared_bytes[];
  auto* tile = reinterpret_cast<Real4<Real>*>(shared_bytes);
  int const tile_size = min(int(blockDim.x), args.segment_length);
  int const t = blockIdx.x * blockDim.x + threadIdx.x;
  int const i = args.begin + min(t, args.count - 1);
  Real4<Real> const pi = kFromPeers<Rsqrt> ? load_coherent(pos + i) : pos[i];
  Real ax = 0, ay = 0, az = 0;
  for (int s = 0; s < args.segments; ++s) {
    Real px = 0, py = 0, pz = 0;
    int const j_end = (s + 1) * args.segment_length;
    for (int j0 = s * args.segment_length; j0 < j_end; j0 += tile_size) {
      auto const j = j0 + threadIdx.x;
      if (int(threadIdx.x) < tile_size) tile[threadIdx.x] = kFromPeers<Rsqrt> ? load_coherent(pos + j) : pos[j];
      __syncthreads();
      for (int k = 0; k < tile_size; ++k) interact<Real, Rsqrt>(pi, tile[k], eps2, px, py, pz);
      __syncthreads();
    }
    ax += px;
    ay += py;
    az += pz;
  }
  if (t < args.count) acc[t] = {ax, ay, az, Real(0)};
}

}  // namespace nbody::sim::kernels
