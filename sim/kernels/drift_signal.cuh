// sim/kernels/drift_signal.cuh - device-side signalling of the direct exchange between GPUs.
//
// A drift kernel that stores into its peers (integrate.cuh) counts itself in its device's
// `epoch` and ends. The first block of the next force kernel on the same stream to begin (a
// ticket in `starters`, which the drift zeroed) announces that count into this device's slot of
// every peer's `arrived`, with one release at system scope: stream order puts the drift's stores
// before it, and the release is cumulative. Only that block pays for the release; the others go
// on at once. Every block waits until each peer has announced as many before any of its threads
// reads a peer's position, except a block whose segment lies in its own slice: it sums its own
// bodies while the announcements travel. The drift itself releasing cost its device about 2 us a
// step on 2 x H200, and a release by every force block 1.5 us (docs/benchmarks.md). No host
// thread, event or copy stands between one device's drift and another's forces, and a captured
// graph holds one independent chain per device.
//
// Only for engines on distinct GPUs: a force kernel spinning on a GPU that must also run the
// peer's drift could hold the very multiprocessors that drift needs. Likewise each GPU must run
// its kernels on its own: under compute-sanitizer's racecheck a tiled run on 2 GPUs did not
// progress (scripts/gpu-check.sh runs racecheck with --exchange peer). So `auto` never picks this
// exchange, and an explicit one is refused, where a host wait can stand between a drift and its
// forces or GPUs may be shared between processes (multigpu/exchange_choice.h: NBODY_DEBUG_SYNC with
// one host thread, CUDA_LAUNCH_BLOCKING=1, MPS, ranks on one host sharing GPUs). The announcing block is one
// that runs, so no wait depends on a block that has not begun. A peer that never announces (a
// failed run) is given up on through `released`, a word in pinned host memory the host sets
// without any CUDA call and a wait reads once it has lasted kPollHostAfterNs; a wait of
// kStallSeconds, which only a defect can cause, traps with a message instead of hanging; the
// host's watchdog (multigpu/watchdog.h) sets `released` long before that. The release's reliance on
// stream order between the drift and the force kernel is written down in docs/exchange.md.
#pragma once

#include <cuda/atomic>
#include <cuda_runtime.h>

#include <cstdio>

#include "core/real4.h"

#include "sim/kernels/drift_signal.h"

namespace nbody::sim::kernels {

// This device's signal, and its slot in each peer's `arrived`.
struct DriftAnnouncement {
  DriftSignal* own = nullptr;  // null: no peer reads this device's stores (or events order the exchange)
  unsigned long long* slots[kMaxSignalPeers] = {};
  int count = 0;
};

// What a force kernel announces and waits for: its own device's count, into `announce.slots`,
// and as many from each of its `announce.count` peers, unless the host has set `*released`.
struct PeerWait {
  DriftAnnouncement announce;  // announce.own null: nothing to announce or wait for here
  const unsigned int* released = nullptr;  // pinned host memory, mapped
};

inline constexpr unsigned long long kPollHostAfterNs = 20000, kPollHostEveryNs = 10000;
inline constexpr unsigned long long kStallSeconds = 600;

__device__ __forceinline__ void announce_count(const DriftAnnouncement& a, unsigned long long epoch) {
  cuda::atomic_thread_fence(cuda::memory_order_release, cuda::thread_scope_system);
  for (int k = 0; k < a.count; ++k)
    cuda::atomic_ref<unsigned long long, cuda::thread_scope_system>(*a.slots[k]).store(epoch,
                                                                                      cuda::memory_order_relaxed);
}

// Every thread of a drift kernel calls it. The count and the zeroed tickets are read by the next
// kernel on this stream. A drift of an empty slice stores nothing, and no force kernel of its
// device runs to announce it: it announces itself.
__device__ __forceinline__ void count_drift(const DriftAnnouncement& a, int count) {
  if (a.own == nullptr || blockIdx.x != 0 || threadIdx.x != 0) return;
  unsigned long long const epoch = a.own->epoch + 1;
  a.own->epoch = epoch;
  a.own->starters = 0;
  if (count == 0) announce_count(a, epoch);
}

__device__ __forceinline__ unsigned long long global_nanoseconds() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Every thread of every block of a force kernel calls it, before reading any position;
// `reads_peers()` says whether this block reads peers' positions. Thread 0 of the first block to
// begin announces this device's count; thread 0 of every block that reads the peers then polls
// with acquire loads, which order every thread's later loads after the peers' stores (through the
// barrier). A system-scope acquire fence after relaxed polling instead cost 0.7-1.4 us a step on
// 2 x H200.
template <class ReadsPeers>
__device__ __forceinline__ void meet_peers(const PeerWait& w, ReadsPeers reads_peers) {
  DriftSignal* const own = w.announce.own;
  if (own == nullptr) return;
  if (threadIdx.x == 0) {
    bool const needs_peers = reads_peers();
    unsigned long long const target = own->epoch;
    unsigned const ticket = cuda::atomic_ref<unsigned, cuda::thread_scope_device>(own->starters)
                                .fetch_add(1u, cuda::memory_order_relaxed);
    if (ticket == 0) announce_count(w.announce, target);
    unsigned long long const start = needs_peers ? global_nanoseconds() : 0;
    unsigned long long host_check = kPollHostAfterNs;  // the host word is read over the bus: rarely
    for (int k = 0; needs_peers && k < w.announce.count; ++k) {
      cuda::atomic_ref<unsigned long long, cuda::thread_scope_system> arrived(own->arrived[k]);
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

// Loads of positions a peer GPU stores into (the direct exchange's force kernels, the
// instantiations with a FromPeers policy): an ordinary coherent load (ld.global), which the PTX memory model
// orders after meet_peers' acquire through the barrier, and never the read-only path
// (ld.global.nc) the compiler takes for a `const __restrict__` pointer: for that path the model
// promises nothing, and a block that sums its own slice without waiting may have cached a line a
// peer is still storing into. Volatile, so the load stays after the barrier; other blocks' own
// stores and the one-GPU kernels are untouched (they keep ld.global.nc). The price of this against
// the read-only path is measured on a GPU (docs/exchange.md).
// A force kernel's m r^-3 policy wrapped in FromPeers is the same arithmetic with these loads:
// the kernels' instantiations for the direct exchange between GPUs. (A wrapper rather than a new
// template parameter, so that the one-GPU kernels keep their names and their machine code.)
template <class Rsqrt>
struct FromPeers : Rsqrt {};
template <class Rsqrt>
inline constexpr bool kFromPeers = false;
template <class Rsqrt>
inline constexpr bool kFromPeers<FromPeers<Rsqrt>> = true;

// Kernels write `kFromPeers<Rsqrt> ? load_coherent(pos + j) : pos[j]`: `pos[j]` itself in the
// one-GPU kernels, whose machine code a helper taking the pointer would change.
template <class Real>
__device__ __forceinline__ Real4<Real> load_coherent(const Real4<Real>* p) {
  Real4<Real> v;
  if constexpr (sizeof(Real) == 4) {
    asm volatile("ld.global.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
  } else {
    asm volatile("ld.global.v2.f64 {%0, %1}, [%2];" : "=d"(v.x), "=d"(v.y) : "l"(p));
    asm volatile("ld.global.v2.f64 {%0, %1}, [%2];" : "=d"(v.z), "=d"(v.w) : "l"(&p->z));
  }
  return v;
}

}  // namespace nbody::sim::kernels
