// sim/kernels/fast.cuh - the fast force kernel (several bodies per thread, pairs issued in a
// PairOrder, optionally split over segments) and the reduction of its split partial sums.
#pragma once

#include <cuda_runtime.h>

#include <type_traits>

#include "sim/kernels/integrate.cuh"
#include "sim/kernels/interaction.cuh"
#include "sim/kernels/pair_order.h"

namespace nbody::sim::kernels {

// The distances of one step's pairs, between their two stages.
template <class Real, int kPairs>
struct StepPairs {
  Real dx[kPairs], dy[kPairs], dz[kPairs], r2[kPairs];
};

template <class Real, class Rsqrt, int kBodies, int kToken, int kStep, int kPairs>
__device__ __forceinline__ void pair_stage(const Real4<Real> (&pj)[kStep], const Real4<Real> (&pi)[kBodies], Real eps2,
                                           StepPairs<Real, kPairs>& d, Real (&px)[kBodies], Real (&py)[kBodies],
                                           Real (&pz)[kBodies]) {
  constexpr int p = kToken % kForceStage, u = p / kBodies, r = p % kBodies;
  if constexpr (kToken >= kForceStage) {
    add_scaled(Rsqrt::mass_over_r3(pj[u].w, d.r2[p]), d.dx[p], d.dy[p], d.dz[p], px[r], py[r], pz[r]);
  } else {
    d.dx[p] = pj[u].x - pi[r].x;
    d.dy[p] = pj[u].y - pi[r].y;
    d.dz[p] = pj[u].z - pi[r].z;
    d.r2[p] = softened_r2(d.dx[p], d.dy[p], d.dz[p], eps2);
  }
}

template <class Real, class Rsqrt, int kBodies, int kStep, int... kTokens>
__device__ __forceinline__ void run_step(PairOrder<kBodies, kStep, kTokens...>, const Real4<Real> (&pj)[kStep],
                                         const Real4<Real> (&pi)[kBodies], Real eps2, Real (&px)[kBodies],
                                         Real (&py)[kBodies], Real (&pz)[kBodies]) {
  StepPairs<Real, kBodies * kStep> d;
  (pair_stage<Real, Rsqrt, kBodies, kTokens>(pj, pi, eps2, d, px, py, pz), ...);
}

// Adds the interactions of Order::bodies bodies with the kTile j-bodies of a shared-memory tile,
// Order::step j-bodies at a time.
template <class Real, class Rsqrt, int kTile, class Order>
__device__ __forceinline__ void sweep_tile(const Real4<Real>* tile, const Real4<Real> (&pi)[Order::bodies], Real eps2,
                                           Real (&px)[Order::bodies], Real (&py)[Order::bodies],
                                           Real (&pz)[Order::bodies]) {
  constexpr int kBodies = Order::bodies, kStep = Order::step;
  static_assert(kTile % kStep == 0, "the tile must hold whole steps");
  if constexpr (std::is_same_v<Order, JMajorOrder<kBodies, kStep>>) {
    // The plain loop nest, unrolled by the compiler. In fp64 this ran faster than loading a whole
    // step's j-bodies first (CUDA's double rsqrt() branches, so the loads cannot move past it).
#pragma unroll kStep
    for (int k = 0; k < kTile; ++k) {
      Real4<Real> const pj = tile[k];
#pragma unroll
      for (int r = 0; r < kBodies; ++r) interact<Real, Rsqrt>(pi[r], pj, eps2, px[r], py[r], pz[r]);
    }
  } else {
#pragma unroll 1
    for (int k = 0; k < kTile; k += kStep) {
      Real4<Real> pj[kStep];
#pragma unroll
      for (int u = 0; u < kStep; ++u) pj[u] = tile[k + u];
      run_step<Real, Rsqrt>(Order{}, pj, pi, eps2, px, py, pz);
    }
  }
}

// fast: each thread integrates kBodies = Order::bodies bodies (i = base + threadIdx.x + r * kBlock,
// coalesced), so every j loaded from shared memory feeds kBodies independent interactions; the
// tile is swept Order::step j-bodies at a time, their pairs issued in Order. With gridDim.y > 1
// block row y computes only segment y and writes its partial sums to partial[y * count + i] (for
// small N, where one segment-sweep per block cannot fill the GPU); reduce_partials then adds them
// in segment order. kMaxRegisters caps the registers per thread
// (255: no cap). The cap, and whether __launch_bounds__ is given at all, change how the compiler
// allocates registers, and with that how often an instruction's operands collide in a register
// bank: worth several percent here (docs/benchmarks.md), so the engine's shape fixes both.
template <class Real, class Rsqrt, int kBlock, class Order, int kMaxRegisters = 255, bool kPrefetch = false>
__global__ void __maxnreg__(kMaxRegisters) fast_forces(const Real4<Real>* __restrict__ pos, ForceArgs args, Real eps2,
                                                      Real4<Real>* __restrict__ out) {
  constexpr int kBodies = Order::bodies;
  // A block whose segments all lie in its own slice reads no peer's position. (Worked out inside
  // meet_peers, by one thread: values live across it would change how the loop below is
  // allocated, and with it the one-GPU kernel, which meets no peer.)
  meet_peers(args.wait, [&] {
    bool const split = gridDim.y > 1;
    int const s_begin = split ? int(blockIdx.y) : 0;
    int const s_end = split ? s_begin + 1 : args.segments;
    return s_begin * args.segment_length < args.begin || s_end * args.segment_length > args.begin + args.count;
  });
  __shared__ Real4<Real> tiles[kPrefetch ? 2 : 1][kBlock];
  int const base = blockIdx.x * kBlock * kBodies + threadIdx.x;
  Real4<Real> pi[kBodies];
  Real ax[kBodies], ay[kBodies], az[kBodies];
#pragma unroll
  for (int r = 0; r < kBodies; ++r) {
    int const i = args.begin + min(base + r * kBlock, args.count - 1);
    pi[r] = kFromPeers<Rsqrt> ? load_coherent(pos + i) : pos[i];
    ax[r] = ay[r] = az[r] = Real(0);
  }
  bool const split = gridDim.y > 1;
  int const s_begin = split ? int(blockIdx.y) : 0;
  int const s_end = split ? s_begin + 1 : args.segments;
  for (int s = s_begin; s < s_end; ++s) {
    Real px[kBodies], py[kBodies], pz[kBodies];
#pragma unroll
    for (int r = 0; r < kBodies; ++r) px[r] = py[r] = pz[r] = Real(0);
    int const j_begin = s * args.segment_length, j_end = j_begin + args.segment_length;
    if constexpr (kPrefetch) {
      // Two tiles: the next tile's global load is in flight while this one is swept; one
      // barrier per tile (it also protects the buffer the next store overwrites).
      auto const first = j_begin + threadIdx.x;  // unsigned, as the index always was
      Real4<Real> next = kFromPeers<Rsqrt> ? load_coherent(pos + first) : pos[first];
      int buffer = 0;
      for (int j0 = j_begin; j0 < j_end; j0 += kBlock, buffer ^= 1) {
        tiles[buffer][threadIdx.x] = next;
        __syncthreads();
        auto const j = j0 + kBlock + threadIdx.x;
        if (j0 + kBlock < j_end) next = kFromPeers<Rsqrt> ? load_coherent(pos + j) : pos[j];
        sweep_tile<Real, Rsqrt, kBlock, Order>(tiles[buffer], pi, eps2, px, py, pz);
      }
      __syncthreads();  // the last tile is read before the next segment's first store
    } else {
      for (int j0 = j_begin; j0 < j_end; j0 += kBlock) {
        auto const j = j0 + threadIdx.x;
        tiles[0][threadIdx.x] = kFromPeers<Rsqrt> ? load_coherent(pos + j) : pos[j];
        __syncthreads();
        sweep_tile<Real, Rsqrt, kBlock, Order>(tiles[0], pi, eps2, px, py, pz);
        __syncthreads();
      }
    }
#pragma unroll
    for (int r = 0; r < kBodies; ++r) {
      ax[r] += px[r];
      ay[r] += py[r];
      az[r] += pz[r];
    }
  }
  Real4<Real>* dst = split ? out + std::size_t(blockIdx.y) * args.count : out;
#pragma unroll
  for (int r = 0; r < kBodies; ++r) {
    int const i = base + r * kBlock;
    if (i < args.count) dst[i] = {ax[r], ay[r], az[r], Real(0)};
  }
}

// Adds the per-segment partial sums of each body in segment order, starting from 0 like the
// unsplit kernels do; with `vel`, then kicks the body by dt as the kick kernel would (a kick right
// after the forces, without a pass of its own).
template <class Real>
__global__ void reduce_partials(const Real4<Real>* __restrict__ partial, int segments, int count,
                                Real4<Real>* __restrict__ acc, Real4<Real>* __restrict__ vel = nullptr,
                                Real dt = Real(0)) {
  int const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count) return;
  Real ax = 0, ay = 0, az = 0;
  for (int s = 0; s < segments; ++s) {
    Real4<Real> const p = partial[std::size_t(s) * count + i];
    ax += p.x;
    ay += p.y;
    az += p.z;
  }
  Real4<Real> const a{ax, ay, az, Real(0)};
  acc[i] = a;
  if (vel) vel[i] = kicked(vel[i], a, dt);
}

}  // namespace nbody::sim::kernels
