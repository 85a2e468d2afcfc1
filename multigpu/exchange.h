// multigpu/exchange.h - moving each device's new slice of positions to every peer.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/engines/engine.h"

namespace nbody::multigpu {

// How slices travel between GPUs: peer copies where peer access works (auto), always peer
// copies, or always staged through pinned host memory (for testing the fallback).
enum class ExchangeMode { automatic, peer, staged };
ExchangeMode parse_exchange_mode(const std::string& name);
std::string to_string(ExchangeMode m);

// After device d drifts its slice for step `step` (steps count from 1), `publish(d, step)` sends
// that slice into every peer's next-positions buffer. Before device d swaps buffers and computes
// forces for that step, `acquire(d, step)` makes d's further work wait until every peer's slice
// of that step has arrived. Either may be called from the thread that drives device d only.
class Exchange {
 public:
  virtual ~Exchange() = default;
  virtual void publish(int device, std::uint64_t step) = 0;
  virtual void acquire(int device, std::uint64_t step) = 0;
  // Makes every current and future acquire give up (throw), so a failing worker cannot leave
  // the others waiting forever.
  virtual void abort() = 0;
  // Starts the step count again (after a re-upload); no step may be in flight.
  virtual void reset() = 0;
  virtual std::string describe() const = 0;
};

// For engines in host memory (the CPU backend's "devices"): memcpy into the peers' buffers, and
// per-device published-step counters under a mutex in place of CUDA events.
std::unique_ptr<Exchange> make_host_exchange(const std::vector<sim::SliceEngine*>& engines);

}  // namespace nbody::multigpu
