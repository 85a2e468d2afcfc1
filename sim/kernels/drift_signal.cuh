// sim/kernels/drift_signal.cuh - device-side signalling of the direct exchange between GPUs.
//
// A drift kernel that stores into its peers (integrate.cuh) ends with announce_drift: each block,
// once its stores are done, orders them before its ticket at device scope; the block that takes
// the last ticket counts the drift in its device's `epoch` and releases the new count, at system
// scope, into this device's slot of every peer's `arrived`. A force kernel begins with
// await_peers: its `epoch` is the drifts it has made itself (the previous kernel on its stream
// counted the last), and it waits until every peer has announced as many, before any thread reads
// a position. So no host thread, event or copy stands between one device's drift and another's
// forces, and a captured graph holds one independent chain per device.
//
// Only for engines on distinct GPUs: a force kernel spinning on a GPU that must also run the
// peer's drift could hold the very multiprocessors that drift needs. A peer that never announces
// (a failed run) is given up on through `released`, a word in pinned host memory the host sets
// without any CUDA call and a wait reads once it has lasted kPollHostAfterNs; a wait of
// kStallSeconds, which only a defect can cause, traps with a message instead of hanging.
#pragma once

#include <cuda/atomic>
#include <cuda_runtime.h>

#include <cstdio>

#include "sim/kernels/drift_signal.h"

namespace nbody::sim::kernels {

// Where a drift announces itself: its own signal, and its slot in each peer's `arrived`.
struct DriftAnnouncement {
  DriftSignal* own = nullptr;  // null: this drift stores into no peer (or events order the exchange)
  unsigned long long* slots[kMaxSignalPeers] = {};
  int count = 0;
};

// What a force kernel waits for: its own device's signal, with `peers` slots of `arrived` in use,
// unless the host has set `*released`.
struct PeerWait {
  const DriftSignal* own = nullptr;  // null: nothing to wait for here
  int peers = 0;
  const unsigned int* released = nullptr;  // pinned host memory, mapped
};

inline constexpr unsigned long long kPollHostAfterNs = 20000, kPollHostEveryNs = 10000;
inline constexpr unsigned long long kStallSeconds = 600;

// Every thread of every block calls it, after its last store; no thread may have returned before.
// One release at system scope per drift, by the last block, covers every block's stores: each
// block orders its stores before its ticket at device scope, the last block acquires them all
// through the ticket, and its release is cumulative. A system-scope fence in every block as well
// cost 2 us more a step on 2 x H200 at N = 1,024 to 4,096 (docs/benchmarks.md).
__device__ __forceinline__ void announce_drift(const DriftAnnouncement& a) {
  if (a.own == nullptr) return;
  __syncthreads();
  if (threadIdx.x != 0) return;
  cuda::atomic_thread_fence(cuda::memory_order_release, cuda::thread_scope_device);
  unsigned const done = cuda::atomic_ref<unsigned, cuda::thread_scope_device>(a.own->ticket).fetch_add(
      1u, cuda::memory_order_relaxed);
  if (done + 1 != gridDim.x) return;
  cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_device);
  a.own->ticket = 0;  // the next drift starts after this kernel has ended
  unsigned long long const epoch = a.own->epoch + 1;
  a.own->epoch = epoch;
  for (int k = 0; k < a.count; ++k)
    cuda::atomic_ref<unsigned long long, cuda::thread_scope_system>(*a.slots[k]).store(epoch,
                                                                                      cuda::memory_order_release);
}

__device__ __forceinline__ unsigned long long global_nanoseconds() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Every thread of every block calls it, before reading any position. Thread 0 polls with acquire
// loads, which order every thread's later loads after the peers' stores (through the barrier). A
// system-scope acquire fence after relaxed polling instead cost 0.7-1.4 us a step on 2 x H200.
__device__ __forceinline__ void await_peers(const PeerWait& w) {
  if (w.own == nullptr) return;
  if (threadIdx.x == 0) {
    unsigned long long const target = w.own->epoch;
    unsigned long long const start = global_nanoseconds();
    unsigned long long host_check = kPollHostAfterNs;  // the host word is read over the bus: rarely
    for (int k = 0; k < w.peers; ++k) {
      cuda::atomic_ref<unsigned long long, cuda::thread_scope_system> arrived(
          const_cast<unsigned long long&>(w.own->arrived[k]));
      while (arrived.load(cuda::memory_order_acquire) < target) {
        __nanosleep(32);
        unsigned long long const waited = global_nanoseconds() - start;
        if (waited < host_check) continue;
        host_check = waited + kPollHostEveryNs;
        if (cuda::atomic_ref<unsigned int, cuda::thread_scope_system>(const_cast<unsigned int&>(*w.released))
                .load(cuda::memory_order_relaxed) != 0) {
          host_check = 0;  // the other peers' waits end at once too
          break;           // given up on: the forces are wrong, and the host reports why
        }
        if (waited > kStallSeconds * 1000000000ull) {
          printf("nbody: a GPU waited %llu s for a peer GPU's positions (drift %llu); giving up\n", kStallSeconds,
                 target);
          __trap();
        }
      }
    }
  }
  __syncthreads();
}

}  // namespace nbody::sim::kernels
