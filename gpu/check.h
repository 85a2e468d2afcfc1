// gpu/check.h - CUDA error checking that throws with file, line, call, error and device.
// Plain C++ (the runtime API header only), so host code compiled by g++ can use it.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "core/errors.h"

namespace nbody::gpu {

struct CudaError : RuntimeFailure {
  CudaError(const std::string& what, cudaError_t status) : RuntimeFailure(what), code(status) {}
  cudaError_t code;
};

[[noreturn]] void throw_cuda_error(cudaError_t code, const char* call, const char* file, int line);

}  // namespace nbody::gpu

#define NBODY_CUDA_CHECK(call)                                                             \
  do {                                                                                     \
    cudaError_t const nbody_cuda_status_ = (call);                                         \
    if (nbody_cuda_status_ != cudaSuccess)                                                 \
      ::nbody::gpu::throw_cuda_error(nbody_cuda_status_, #call, __FILE__, __LINE__);       \
  } while (0)

namespace nbody::gpu {
// True on a thread while it captures a CUDA graph (multigpu/step_graph.h), where synchronising is
// not allowed: the per-launch synchronisation of NBODY_DEBUG_SYNC is then skipped.
inline thread_local bool capturing = false;

// Whether NBODY_DEBUG_SYNC is set in the environment (to anything but "" or "0"), read once per
// process: every checked launch then waits for its stream, so an asynchronous fault surfaces at
// the launch that caused it (as CUB_DEBUG_SYNC does for CCCL). Off by default in every build type:
// a wait on the host after a launch can stand between one GPU's drift and the peer's forces that
// wait for it on the GPU (multigpu/exchange_choice.h), and it serialises what should overlap.
bool debug_sync();

// How long NBODY_DEBUG_SYNC waits for a launch's stream: NBODY_WATCHDOG_SECONDS when set to a positive
// number, else 60 s (the watchdog's floor). A launch queued behind work that this same thread would
// enqueue only later never finishes; the bound turns that into an error naming the launch.
double debug_sync_seconds();

// The wait of NBODY_DEBUG_SYNC: polls `stream` until it is idle (its error, if any, is thrown), at
// most debug_sync_seconds().
void debug_sync_wait(cudaStream_t stream, const char* file, int line);

// cudaStreamSynchronize / cudaEventSynchronize with a bound: waits until the work is done (its error,
// if any, is thrown as NBODY_CUDA_CHECK would) or `seconds` have passed, and then throws RuntimeFailure
// "<what> has not finished after S s" (the work stays queued: the caller can only be abandoned). It
// spins on the query (yielding) for the first 20 ms, so a short wait ends within a query of the work's
// end, then polls every 100 us (at most a fraction of a percent of a wait that long).
// NBODY_WATCHDOG_SECONDS, when set, replaces `seconds` (as it does the watchdog's bound).
void bounded_sync(cudaStream_t stream, double seconds, const std::string& what);
void bounded_sync(cudaEvent_t event, double seconds, const std::string& what);
// The bound bounded_sync(..., seconds, ...) waits for: NBODY_WATCHDOG_SECONDS when set, else `seconds`.
double bound_seconds(double seconds);

// Whether `code`, from capturing a stream, says the driver will not capture this work (an operation or topology it
// does not support), so that the work can go on the streams; any other code is an error of its own.
bool refused_capture(cudaError_t code);

// What NBODY_CHECK_LAUNCH expands to: the launch error, and with debug_sync() a wait for `stream`
// (only that stream: other streams, and other threads' GPUs, go on).
struct LaunchCheck {
  const char* file;
  int line;
  void operator()(cudaStream_t stream = nullptr) const {
    cudaError_t const launched = cudaPeekAtLastError();
    if (launched != cudaSuccess) throw_cuda_error(launched, "cudaPeekAtLastError() after a launch", file, line);
    if (capturing || !debug_sync()) return;
    debug_sync_wait(stream, file, line);
  }
};
}  // namespace nbody::gpu

// After every kernel launch, given the stream it was launched on (none: the default stream):
// the launch error (bad configuration, no kernel image for this device), and under
// NBODY_DEBUG_SYNC=1 a synchronisation of that stream, so asynchronous faults surface there.
#define NBODY_CHECK_LAUNCH(...) (::nbody::gpu::LaunchCheck{__FILE__, __LINE__}(__VA_ARGS__))
