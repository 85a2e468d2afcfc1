// render/cuda_gl_interop.cu - cudaGraphicsGLRegisterBuffer and a device-to-device copy per frame.
#include <GL/glew.h>
#include <cuda_gl_interop.h>
#include <cuda_runtime.h>

#include "gpu/check.h"
#include "gpu/resources.h"
#include "render/cuda_gl_interop.h"

namespace nbody::render {

namespace {
struct GraphicsResourceTraits {
  using Handle = cudaGraphicsResource_t;
  static constexpr Handle null = nullptr;
  static void release(Handle h) noexcept { (void)cudaGraphicsUnregisterResource(h); }
};
}  // namespace

struct CudaGlInterop::Impl {
  gpu::CudaOwner<GraphicsResourceTraits> resource;
};

CudaGlInterop::CudaGlInterop(unsigned vbo, int device) : impl_(std::make_unique<Impl>()) {
  gpu::DeviceGuard guard(device);
  cudaGraphicsResource_t resource = nullptr;
  NBODY_CUDA_CHECK(cudaGraphicsGLRegisterBuffer(&resource, vbo, cudaGraphicsRegisterFlagsWriteDiscard));
  impl_->resource = gpu::CudaOwner<GraphicsResourceTraits>(resource, device);
}

CudaGlInterop::~CudaGlInterop() = default;

void CudaGlInterop::copy_from_device(const void* device_positions, std::size_t bytes) {
  gpu::DeviceGuard guard(impl_->resource.device());
  cudaGraphicsResource_t resource = impl_->resource.get();
  NBODY_CUDA_CHECK(cudaGraphicsMapResources(1, &resource, 0));
  void* mapped = nullptr;
  std::size_t size = 0;
  cudaError_t status = cudaGraphicsResourceGetMappedPointer(&mapped, &size, resource);
  if (status == cudaSuccess) status = cudaMemcpy(mapped, device_positions, bytes < size ? bytes : size, cudaMemcpyDeviceToDevice);
  cudaError_t const unmap = cudaGraphicsUnmapResources(1, &resource, 0);
  NBODY_CUDA_CHECK(status);
  NBODY_CUDA_CHECK(unmap);
}

}  // namespace nbody::render
