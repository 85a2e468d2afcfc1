// render/cuda_gl_interop.cu - cudaGraphicsGLRegisterBuffer and a device-to-device copy per frame.
#include <GL/glew.h>
#include <cuda_gl_interop.h>
#include <cuda_runtime.h>

#include "render/cuda_gl_interop.h"
#include "sim/cuda_check.h"
#include "sim/cuda_resources.h"

namespace nbody::render {

struct CudaGlInterop::Impl {
  int device = 0;
  cudaGraphicsResource_t resource = nullptr;
};

CudaGlInterop::CudaGlInterop(unsigned vbo, int device) : impl_(std::make_unique<Impl>()) {
  impl_->device = device;
  sim::DeviceGuard guard(device);
  NBODY_CUDA_CHECK(cudaGraphicsGLRegisterBuffer(&impl_->resource, vbo, cudaGraphicsRegisterFlagsWriteDiscard));
}

CudaGlInterop::~CudaGlInterop() {
  if (impl_ && impl_->resource) {
    int previous = 0;
    (void)cudaGetDevice(&previous);
    (void)cudaSetDevice(impl_->device);
    (void)cudaGraphicsUnregisterResource(impl_->resource);
    (void)cudaSetDevice(previous);
  }
}

void CudaGlInterop::copy_from_device(const void* device_positions, std::size_t bytes) {
  sim::DeviceGuard guard(impl_->device);
  NBODY_CUDA_CHECK(cudaGraphicsMapResources(1, &impl_->resource, 0));
  void* mapped = nullptr;
  std::size_t size = 0;
  cudaError_t status = cudaGraphicsResourceGetMappedPointer(&mapped, &size, impl_->resource);
  if (status == cudaSuccess) status = cudaMemcpy(mapped, device_positions, bytes < size ? bytes : size, cudaMemcpyDeviceToDevice);
  cudaError_t const unmap = cudaGraphicsUnmapResources(1, &impl_->resource, 0);
  NBODY_CUDA_CHECK(status);
  NBODY_CUDA_CHECK(unmap);
}

}  // namespace nbody::render
