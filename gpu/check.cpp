// gpu/check.cpp - the exception behind NBODY_CUDA_CHECK.
#include "gpu/check.h"

#include <cstdlib>
#include <cstring>
#include <sstream>

namespace nbody::gpu {

void throw_cuda_error(cudaError_t code, const char* call, const char* file, int line) {
  int device = -1;
  std::ostringstream s;
  s << "CUDA error " << cudaGetErrorName(code) << " (" << cudaGetErrorString(code) << ") in " << call << " at " << file
    << ':' << line;
  if (code != cudaErrorNoDevice && code != cudaErrorInsufficientDriver && cudaGetDevice(&device) == cudaSuccess)
    s << " on device " << device;
  throw CudaError(s.str(), code);
}

}  // namespace nbody::gpu

namespace nbody::gpu {

bool debug_sync() {
  static bool const on = [] {
    const char* value = std::getenv("NBODY_DEBUG_SYNC");
    return value != nullptr && *value != '\0' && std::strcmp(value, "0") != 0;
  }();
  return on;
}

}  // namespace nbody::gpu
