// sim/kernels/potential.cuh - the potential energy of a slice, each pair once, accumulated in fp64.
#pragma once

#include <cuda_runtime.h>

#include "core/real4.h"

namespace nbody::sim::kernels {

// Threads per block of slice_potential: its tile of bodies in shared memory.
inline constexpr int kPotentialBlock = 256;
// Each body's partners are split into this many parts, each summed by a thread of its own (a grid of
// kPotentialParts rows of blocks): N = 65,536 then has 262,144 threads, enough to keep an H100's fp64
// units busy. The parts are fixed, whatever the slices or the GPU.
inline constexpr int kPotentialParts = 4;

// phi[p * count + t] = m_i * sum_{o in part p of 1..n/2} w_o (-m_j / sqrt(r_ij^2 + eps2)) for body i = begin + t and
// j = (i + o) mod n, with w_o = 1/2 for o = n/2 when n is even (that pair is seen from both ends)
// and 1 otherwise. Summed over every body, phi is the potential energy W, each unordered pair
// counted once: half the work of summing over all j != i, and the same work for every body, so
// every slice of a layout costs the same. The terms are summed for each body and part in the order of
// o, and the parts in their order by the caller: nothing depends on the slices or the launch shape.
//
// Each pair in fp64: the coordinate differences of fp32 positions are exact in fp64; 1/r from the
// fp32 hardware estimate y0 (relative error < 2^-22) refined to fp64 accuracy by
// y = y0 (1 + e/2 + 3e^2/8) with e = 1 - r^2 y0^2 (the dropped term 5e^3/16 < 2e-20).
//
// The bodies of a block share their j window: thread t of a block starting at body i0 needs the
// offsets d = o + t from i0, so the block loads d = first .. last + kPotentialBlock - 1 of its part
// tile by tile into shared memory, and each thread takes the d with first <= d - t <= last.
// 1 / sqrt(r^2 + eps2) to body k of the tile, in fp64 from the fp32 estimate (see below).
__device__ __forceinline__ double inverse_distance(const double (&tile)[4][kPotentialBlock], int k, double xi,
                                                  double yi, double zi, double eps2) {
  double const dx = tile[0][k] - xi, dy = tile[1][k] - yi, dz = tile[2][k] - zi;
  double const r2 = fma(dx, dx, fma(dy, dy, fma(dz, dz, eps2)));
  double const y0 = static_cast<double>(rsqrtf(static_cast<float>(r2)));
  double const e = fma(-r2 * y0, y0, 1.0);
  return fma(y0 * e, fma(0.375, e, 0.5), y0);
}

template <class Real>
__global__ void __launch_bounds__(kPotentialBlock)
    slice_potential(const Real4<Real>* __restrict__ pos, int n, int begin, int count, double eps2,
                    double* __restrict__ phi) {
  __shared__ double tile[4][kPotentialBlock];  // x, y, z, m of the tile's bodies
  int const t = threadIdx.x;
  int const i0 = begin + blockIdx.x * kPotentialBlock;
  int const i = i0 + t;
  bool const active = t < count - blockIdx.x * kPotentialBlock;
  Real4<Real> const pi = pos[active ? i : begin];
  double const xi = pi.x, yi = pi.y, zi = pi.z;
  int const half = n / 2;
  bool const even = (n & 1) == 0;
  // This block's part of every body's offsets: [first, last] of 1 .. n/2 (blockIdx.y of
  // kPotentialParts), so that a slice of few bodies still fills the GPU.
  int const per_part = (half + kPotentialParts - 1) / kPotentialParts;
  int const first = 1 + int(blockIdx.y) * per_part, last = min(half, first + per_part - 1);
  double sum = 0.0;
  for (int base = first; base <= last + kPotentialBlock - 1; base += kPotentialBlock) {
    int const d = base + t;
    if (d <= last + kPotentialBlock - 1) {
      Real4<Real> const pj = pos[static_cast<int>((static_cast<long long>(i0) + d) % n)];
      tile[0][t] = pj.x;
      tile[1][t] = pj.y;
      tile[2][t] = pj.z;
      tile[3][t] = pj.w;
    }
    __syncthreads();
    if (base - (kPotentialBlock - 1) >= first && base + kPotentialBlock - 1 <= min(last, half - 1)) {
      // Inside the part for every thread of the block, and short of n/2: no test, no weight.
#pragma unroll 8
      for (int k = 0; k < kPotentialBlock; ++k) sum = fma(-tile[3][k], inverse_distance(tile, k, xi, yi, zi, eps2), sum);
    } else {
      int const in_tile = min(kPotentialBlock, last + kPotentialBlock - base);
      for (int k = 0; k < in_tile; ++k) {
        int const o = base + k - t;  // j - i
        if (o < first || o > last) continue;
        double const m = (even && o == half) ? 0.5 * tile[3][k] : tile[3][k];
        sum = fma(-m, inverse_distance(tile, k, xi, yi, zi, eps2), sum);
      }
    }
    __syncthreads();
  }
  if (active) phi[std::size_t(blockIdx.y) * std::size_t(count) + std::size_t(i - begin)] = static_cast<double>(pi.w) * sum;
}

}  // namespace nbody::sim::kernels
