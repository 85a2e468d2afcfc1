// multigpu/rank_exchange.h - the exchange between ranks (processes, possibly on other hosts),
// chained after the exchange between one rank's own devices.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/ranks.h"
#include "core/slice.h"
#include "multigpu/exchange.h"

namespace nbody::multigpu {

// How a rank's engines meet host memory, for the exchange between ranks. Two host buffers (one per
// publication parity) each hold all N positions, as the engines lay them out.
class HostStaging {
 public:
  virtual ~HostStaging() = default;
  virtual void* host_buffer(int parity) = 0;
  // After engine d's drift that made publication p: copies d's own slice into host_buffer(p % 2),
  // at the slice's place (may return before the copy has landed).
  virtual void stage_out(int d, std::uint64_t publication) = 0;
  // Waits until stage_out(d, p) has landed in host memory.
  virtual void wait_out(int d, std::uint64_t publication) = 0;
  // Engine d has enqueued everything before its forces on publication p: the copies of stage_in
  // may go alongside its work from here on (they write only bodies those forces do not read yet).
  virtual void input_may_start(int d, std::uint64_t publication) = 0;
  // Copies `bodies` of host_buffer(p % 2) into engine d's positions buffer p % 2, ahead of d's
  // further work (may return before the copy has landed; d's next stage waits for it).
  virtual void stage_in(int d, std::uint64_t publication, Slice bodies) = 0;
  // After the stage_in calls of publication p: engine d's further work waits for them.
  virtual void input_done(int d, std::uint64_t publication) = 0;
  // Gives up the copies still queued (an interrupt; see SliceEngine::abandon).
  virtual void abandon() = 0;
  virtual const char* describe() const = 0;
};

std::unique_ptr<HostStaging> make_host_staging(const std::vector<sim::SliceEngine*>& engines);
#if NBODY_HAVE_CUDA
std::unique_ptr<HostStaging> make_cuda_staging(const std::vector<sim::SliceEngine*>& engines);
#endif

// Ranks r = 0..R-1 own contiguous ranges of bodies, `rank_ranges[r]`, made of their devices'
// slices. After all of this rank's devices published p (each to its local peers through `local`,
// and to host memory through `staging`), a communication thread gathers every rank's range of
// publication p into host_buffer(p % 2) on every rank (a non-blocking MPI all-gather). acquire(d, p)
// waits for the local peers only: the rank's own bodies are then ready (ready_early), and forces
// on them can run while the gather is in flight. acquire_rest(d, p) waits for the gather and copies
// the other ranks' ranges into engine d. The host waits only for the copies to host memory that MPI
// needs.
std::unique_ptr<Exchange> make_rank_exchange(const Ranks& ranks, std::unique_ptr<Exchange> local,
                                             std::unique_ptr<HostStaging> staging, std::vector<Slice> rank_ranges,
                                             std::size_t bytes_per_body, std::size_t local_devices);

}  // namespace nbody::multigpu
