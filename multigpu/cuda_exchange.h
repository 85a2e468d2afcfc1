// multigpu/cuda_exchange.h - the exchange between GPU engines.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "multigpu/exchange.h"

namespace nbody::multigpu {

// Publishes by the drift's own stores into every peer (direct, and auto where every pair has peer
// access), by peer copies on a per-device copy stream (peer), or through a pinned host buffer
// (staged, and auto otherwise), double-buffered by publication parity. Completion is a CUDA event
// recorded by the producer that the consumer's stream waits on (cudaStreamWaitEvent); the host
// never waits for a device. Events are a ring of two per device; a host-side counter per device
// makes sure a consumer thread never enqueues a wait before the producer thread recorded that
// publication's event.
// With own_slice_first, a device's forces may start on its own slice before the peers' arrive:
// ready_early() is the own slice, and acquire() leaves the waits for the peers to acquire_rest().
// Only for the exchange of the whole simulation (not one chained under an exchange between ranks,
// whose early bodies are the rank's).
std::unique_ptr<Exchange> make_cuda_exchange(const std::vector<sim::SliceEngine*>& engines, ExchangeMode mode,
                                             bool own_slice_first);

}  // namespace nbody::multigpu
