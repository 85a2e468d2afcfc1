// multigpu/exchange_choice.h - which exchange `auto` picks between the GPUs of one process, and
// where the direct exchange is refused: wherever a wait can stand between one GPU's drift and a
// peer's forces that wait for it on the GPU.
#pragma once

#include <cstddef>
#include <string>

#include "core/setting_names.h"

#include "multigpu/exchange.h"

namespace nbody::multigpu {

// What the choice depends on. The direct exchange on distinct GPUs makes a force kernel spin on its
// GPU until every peer's next force kernel has begun and announced the peer's drift
// (sim/kernels/drift_signal.cuh). That holds only while every GPU runs its kernels on its own:
// - a host thread that waits after a launch (NBODY_DEBUG_SYNC with one thread driving every GPU,
//   CUDA_LAUNCH_BLOCKING=1 for any thread) waits for a kernel that waits for a launch this thread
//   has not made yet;
// - a GPU shared with another process (MPS, or ranks on one host sharing GPUs) can be filled by
//   that process's spinning kernels, which wait for a drift that needs the same multiprocessors.
// Engines sharing one GPU are ordered by events instead (no wait on the GPU): nothing applies.
struct ExchangeConditions {
  std::size_t devices = 1;       // engines in this process
  bool all_pairs_peer = true;    // every pair of their GPUs reaches the other's memory
  bool distinct_gpus = true;     // no two engines on one GPU
  bool one_host_thread = true;   // --threading single: one thread enqueues every device's work
  bool debug_sync = false;       // NBODY_DEBUG_SYNC (gpu/check.h)
  bool launch_blocking = false;  // CUDA_LAUNCH_BLOCKING=1
  bool mps = false;              // an MPS server may be running: CUDA_MPS_PIPE_DIRECTORY, or /tmp/nvidia-mps
  int local_ranks = 1;           // ranks of this run on this host
  int host_gpus = 0;             // distinct GPUs those ranks can see together (0: not known)
  std::string shared_gpu;        // non-empty: "GPU 1 is also used by rank 3": a GPU of this rank another local rank uses
};

// Why the direct exchange could hang under these conditions (a clause that completes "--exchange
// direct: ..."), or "" where it cannot.
std::string direct_exchange_hazard(const ExchangeConditions& c);

// The exchange for `requested` under `c`: auto is direct where every pair has peer access, up to
// 16 devices, and no hazard applies; peer copies where one does (or beyond 16 devices); staged
// where a pair lacks peer access. An explicit `direct` that a hazard or the topology rules out
// throws InputError with the reason, naming the setting as `names` do.
ExchangeMode choose_exchange(ExchangeMode requested, const ExchangeConditions& c, const SettingNames& names = {});

// The conditions this process can see on its own: the environment variables and MPS's pipe
// directory. The caller adds the devices, their topology, the threading and the other ranks.
ExchangeConditions process_exchange_conditions();

}  // namespace nbody::multigpu
