// render/cuda_gl_interop_without_cuda.cpp - a build without CUDA has no interop: the viewer uploads
// positions and colours from the host, and says why.
#include "core/errors.h"
#include "render/cuda_gl_interop.h"

namespace nbody::render {

struct CudaGlInterop::Impl {};

CudaGlInterop::CudaGlInterop(unsigned, unsigned, std::size_t, int) {
  throw RuntimeFailure("CUDA-GL interop: this nbody was built without CUDA");
}

CudaGlInterop::~CudaGlInterop() = default;

void CudaGlInterop::copy_positions(const void*, std::size_t) {}

void CudaGlInterop::color_by_speed(const std::vector<DeviceVelocities>&) {}

}  // namespace nbody::render
