// sim/kernels/integrate.cuh - the element-wise stages of a step program: kick, damp, drift, and a
// kick followed by a drift in one pass.
#pragma once

#include <cuda_runtime.h>

#include "core/real4.h"

namespace nbody::sim::kernels {

// Other devices' position buffers a drift also stores its new positions into (the direct
// exchange: stores over NVLink instead of a copy after the kernel). Same indexing as `next`.
template <class Real>
struct PeerTargets {
  static constexpr int kMax = 15;
  Real4<Real>* to[kMax] = {};
  int count = 0;
};

template <class Real>
__device__ __forceinline__ void store_position(Real4<Real>* __restrict__ next, const PeerTargets<Real>& peers, int j,
                                               Real4<Real> p) {
  next[j] = p;
  for (int k = 0; k < peers.count; ++k) peers.to[k][j] = p;
}

template <class Real>
__global__ void kick(Real4<Real>* __restrict__ vel, const Real4<Real>* __restrict__ acc, int count, Real dt) {
  int const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count) return;
  Real4<Real> v = vel[i];
  Real4<Real> const a = acc[i];
  v.x += a.x * dt;
  v.y += a.y * dt;
  v.z += a.z * dt;
  vel[i] = v;
}

template <class Real>
__global__ void damp(Real4<Real>* __restrict__ vel, int count, Real factor) {
  int const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count) return;
  Real4<Real> v = vel[i];
  v.x *= factor;
  v.y *= factor;
  v.z *= factor;
  vel[i] = v;
}

template <class Real>
__global__ void drift(const Real4<Real>* __restrict__ current, Real4<Real>* __restrict__ next,
                      const Real4<Real>* __restrict__ vel, int begin, int count, Real dt, PeerTargets<Real> peers) {
  int const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count) return;
  Real4<Real> const p = current[begin + i];
  Real4<Real> const v = vel[i];
  store_position(next, peers, begin + i, {p.x + v.x * dt, p.y + v.y * dt, p.z + v.z * dt, p.w});
}

// kick then drift in one pass: the same operations on the same values as the two kernels.
template <class Real>
__global__ void kick_drift(const Real4<Real>* __restrict__ current, Real4<Real>* __restrict__ next,
                           Real4<Real>* __restrict__ vel, const Real4<Real>* __restrict__ acc, int begin, int count,
                           Real kick_dt, Real drift_dt, PeerTargets<Real> peers) {
  int const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count) return;
  Real4<Real> v = vel[i];
  Real4<Real> const a = acc[i];
  v.x += a.x * kick_dt;
  v.y += a.y * kick_dt;
  v.z += a.z * kick_dt;
  vel[i] = v;
  Real4<Real> const p = current[begin + i];
  store_position(next, peers, begin + i, {p.x + v.x * drift_dt, p.y + v.y * drift_dt, p.z + v.z * drift_dt, p.w});
}

}  // namespace nbody::sim::kernels
