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
// not allowed: Debug builds then skip their per-launch synchronisation.
inline thread_local bool capturing = false;
}  // namespace nbody::gpu

// After every kernel launch: the launch error (bad configuration, no kernel image for this
// device). Debug builds also synchronise the device so asynchronous faults surface at the launch.
#ifdef NDEBUG
#define NBODY_CHECK_LAUNCH() NBODY_CUDA_CHECK(cudaPeekAtLastError())
#else
#define NBODY_CHECK_LAUNCH()                                                        \
  do {                                                                              \
    NBODY_CUDA_CHECK(cudaPeekAtLastError());                                        \
    if (!::nbody::gpu::capturing) NBODY_CUDA_CHECK(cudaDeviceSynchronize());       \
  } while (0)
#endif
