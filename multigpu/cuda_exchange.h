// multigpu/cuda_exchange.h - the exchange between GPU engines.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "multigpu/exchange.h"
#include "multigpu/exchange_choice.h"

namespace nbody::multigpu {

// Direct (auto, where every pair has peer access): each drift kernel stores into the peers' buffers
// itself; on distinct GPUs it then raises a flag in each peer's memory that the peer's force kernel
// waits for (sim/kernels/drift_signal.cuh). Peer: copies on a per-device copy stream; staged: the
// slice goes device -> pinned host buffer -> each peer, double-buffered by publication parity.
// Without flags, completion is a CUDA event recorded by the producer that the consumer's stream
// waits on (cudaStreamWaitEvent); the host never waits for a device. Events are a ring of two per
// device; a host-side counter per device makes sure a consumer thread never enqueues a wait before
// the producer thread recorded that publication's event.
// `conditions`: what the process knows of its environment and its ranks
// (process_exchange_conditions() and the simulation's); the exchange adds the devices' topology and
// picks with choose_exchange(), throwing its InputError (in `names`) for a direct exchange it refuses.
std::unique_ptr<Exchange> make_cuda_exchange(const std::vector<sim::SliceEngine*>& engines, ExchangeMode mode,
                                             const ExchangeConditions& conditions, const SettingNames& names = {});

}  // namespace nbody::multigpu
