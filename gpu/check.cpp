// gpu/check.cpp - the exception behind NBODY_CUDA_CHECK.
#include "gpu/check.h"

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
