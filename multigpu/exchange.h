// multigpu/exchange.h - moving each device's new slice of positions to every peer.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/enum_names.h"
#include "core/slice.h"
#include "sim/engines/engine.h"

namespace nbody::multigpu {

// How slices travel between GPUs: auto (direct where every pair has peer access, for up to 16
// devices, unless a host wait can stand between a drift and its forces: exchange_choice.h; peer
// beyond or then; staged where some pair lacks peer access), direct (the drift kernel stores
// each new position into every peer's buffer itself, over NVLink: no copy and no copy stream
// between one device's drift and another's forces), peer copies after the drift, or staged
// through pinned host memory (the fallback, and for testing it).
enum class ExchangeMode { automatic, peer, staged, direct };
inline constexpr std::array<EnumName<ExchangeMode>, 4> kExchangeModeNames{{{ExchangeMode::automatic, "auto"},
                                                                          {ExchangeMode::peer, "peer"},
                                                                          {ExchangeMode::staged, "staged"},
                                                                          {ExchangeMode::direct, "direct"}}};
constexpr const auto& enum_names(ExchangeMode) { return kExchangeModeNames; }

// Publications are numbered from 1 after the last upload (the upload itself is publication 0); every
// drift stage makes the next one (sim/physics/integrator.h: the step contract). After device d
// drifts, `publish(d, p)` sends its new slice into buffer p % 2 of every peer. Before device d
// swaps buffers and computes forces on publication p, `acquire(d, p)` makes d's further work wait
// until every peer's slice of p has arrived. Either may be called from the thread that drives
// device d only.
class Exchange {
 public:
  virtual ~Exchange() = default;
  virtual void publish(int device, std::uint64_t publication) = 0;
  virtual void acquire(int device, std::uint64_t publication) = 0;
  // Where some bodies arrive later (from other ranks): the bodies present once acquire(d, p)
  // returned, and acquire_rest(d, p), which makes d's further work wait for the others too. Here
  // every body is present after acquire: none.
  virtual std::optional<Slice> ready_early(int /*device*/) const { return std::nullopt; }
  virtual void acquire_rest(int /*device*/, std::uint64_t /*publication*/) {}
  // Makes every current and future acquire give up (throw), so a failing worker cannot leave
  // the others waiting forever.
  virtual void abort() = 0;
  // Starts the publication count again (after a re-upload); no step may be in flight.
  virtual void reset() = 0;
  // Gives up the copies still queued (after an interrupt; see SliceEngine::abandon).
  virtual void abandon() = 0;
  virtual std::string describe() const = 0;
};

// For engines in host memory (the CPU backend's "devices"): memcpy into the peers' buffers, and
// per-device publication counters under a mutex in place of CUDA events.
std::unique_ptr<Exchange> make_host_exchange(const std::vector<sim::SliceEngine*>& engines);

}  // namespace nbody::multigpu
