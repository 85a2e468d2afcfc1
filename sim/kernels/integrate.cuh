// sim/kernels/integrate.cuh - the element-wise stages of a step program: kick, damp, drift, and a
// kick followed by a drift in one pass.
#pragma once

#include <cuda_runtime.h>

#include "core/real4.h"
#include "sim/kernels/drift_signal.cuh"

namespace nbody::sim::kernels {

// Other devices' position buffers a drift also stores its new positions into (the direct
// exchange: stores over NVLink instead of a copy after the kernel; same indexing as `next`), and
// where it counts itself, where flags in device memory tell the peers (drift_signal.cuh).
template <class Real>
struct PeerTargets {
  static constexpr int kMax = kMaxSignalPeers;
  Real4<Real>* to[kMax] = {};
  int count = 0;
  DriftAnnouncement announce;
};

template <class Real>
__device__ __forceinline__ void store_position(Real4<Real>* __restrict__ next, const PeerTargets<Real>& peers, int j,
                                               Real4<Real> p) {
  next[j] = p;
  for (int k = 0; k < peers.count; ++k) peers.to[k][j] = p;
}

// The arithmetic of a kick and of a drift, written once: the kernels below, fused or not, must
// give the same bits.
template <class Real>
__device__ __forceinline__ Real4<Real> kicked(Real4<Real> v, Real4<Real> a, Real dt) {
  v.x += a.x * dt;
  v.y += a.y * dt;
  v.z += a.z * dt;
  return v;
}

template <class Real>
__device__ __forceinline__ Real4<Real> drifted(Real4<Real> p, Real4<Real> v, Real dt) {
  return {p.x + v.x * dt, p.y + v.y * dt, p.z + v.z * dt, p.w};
}

template <class Real>
__global__ void kick(Real4<Real>* __restrict__ vel, const Real4<Real>* __restrict__ acc, int count, Real dt) {
  int const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count) return;
  vel[i] = kicked(vel[i], acc[i], dt);
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
  if (i < count) store_position(next, peers, begin + i, drifted(current[begin + i], vel[i], dt));
  count_drift(peers.announce, count);
}

// kick then drift in one pass: the same operations on the same values as the two kernels.
template <class Real>
__global__ void kick_drift(const Real4<Real>* __restrict__ current, Real4<Real>* __restrict__ next,
                           Real4<Real>* __restrict__ vel, const Real4<Real>* __restrict__ acc, int begin, int count,
                           Real kick_dt, Real drift_dt, PeerTargets<Real> peers) {
  int const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) {
    Real4<Real> const v = kicked(vel[i], acc[i], kick_dt);
    vel[i] = v;
    store_position(next, peers, begin + i, drifted(current[begin + i], v, drift_dt));
  }
  count_drift(peers.announce, count);
}

}  // namespace nbody::sim::kernels
