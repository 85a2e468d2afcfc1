// render/cuda_gl_interop.cu - cudaGraphicsGLRegisterBuffer, a device-to-device copy of the positions
// per frame, and colour by speed computed where the velocities are.
#include <GL/glew.h>
#include <cuda_gl_interop.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "gpu/check.h"
#include "gpu/resources.h"
#include "render/cuda_gl_interop.h"
#include "render/speed_colors.h"

namespace nbody::render {

namespace {

struct GraphicsResourceTraits {
  using Handle = cudaGraphicsResource_t;
  static constexpr Handle null = nullptr;
  static void release(Handle h) noexcept { (void)cudaGraphicsUnregisterResource(h); }
};
using GraphicsResource = gpu::CudaOwner<GraphicsResourceTraits>;

GraphicsResource register_buffer(unsigned vbo, int device) {
  gpu::DeviceGuard guard(device);
  cudaGraphicsResource_t resource = nullptr;
  NBODY_CUDA_CHECK(cudaGraphicsGLRegisterBuffer(&resource, vbo, cudaGraphicsRegisterFlagsWriteDiscard));
  return GraphicsResource(resource, device);
}

// The buffer of `resource` mapped for CUDA, in `stream`'s order, while the object lives: GL uses it
// again once the work queued on `stream` before the unmap is done.
class Mapped {
 public:
  Mapped(const GraphicsResource& r, cudaStream_t stream) : resource_(r.get()), stream_(stream) {
    NBODY_CUDA_CHECK(cudaGraphicsMapResources(1, &resource_, stream_));
    cudaError_t const status = cudaGraphicsResourceGetMappedPointer(&pointer_, &bytes_, resource_);
    if (status != cudaSuccess) {
      (void)cudaGraphicsUnmapResources(1, &resource_, stream_);
      NBODY_CUDA_CHECK(status);
    }
  }
  ~Mapped() { (void)cudaGraphicsUnmapResources(1, &resource_, stream_); }
  Mapped(const Mapped&) = delete;
  Mapped& operator=(const Mapped&) = delete;
  void* pointer() const { return pointer_; }
  std::size_t bytes() const { return bytes_; }

 private:
  cudaGraphicsResource_t resource_;
  cudaStream_t stream_;
  void* pointer_ = nullptr;
  std::size_t bytes_ = 0;
};

__global__ void sample_speeds(const float4* __restrict__ v, int n, int stride, float* __restrict__ out) {
  int const k = blockIdx.x * blockDim.x + threadIdx.x;
  long long const i = (long long)k * stride;
  if (i < n) out[k] = speed_of(v[i].x, v[i].y, v[i].z);
}

// The map by value (3 KiB of kernel parameters, read through the constant cache).
__global__ void speed_colors(const float4* __restrict__ v, int n, const ColormapTable map, SpeedToUnit unit,
                             float4* __restrict__ colors) {
  int const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  Color const c = speed_color(map, unit, speed_of(v[i].x, v[i].y, v[i].z));
  colors[i] = make_float4(c.r, c.g, c.b, c.a);
}

constexpr int kBlock = 256;
int blocks(std::size_t n) { return int((n + kBlock - 1) / kBlock); }

}  // namespace

struct DeviceFrames::Impl {
  int device = 0;
  std::size_t bodies = 0;
  gpu::DeviceBuffer<float4> positions[2], velocities[2];
  int front = 0;
};

DeviceFrames::DeviceFrames(int device, std::size_t bodies) : impl_(std::make_unique<Impl>()) {
  impl_->device = device;
  impl_->bodies = bodies;
  for (int k = 0; k < 2; ++k) {
    impl_->positions[k] = gpu::DeviceBuffer<float4>(device, std::max<std::size_t>(bodies, 1));
    impl_->velocities[k] = gpu::DeviceBuffer<float4>(device, std::max<std::size_t>(bodies, 1));
  }
}

DeviceFrames::~DeviceFrames() = default;

void DeviceFrames::capture(const void* positions, int positions_device, const std::vector<DeviceVelocities>& velocities) {
  Impl& m = *impl_;
  int const back = m.front ^ 1;
  gpu::DeviceGuard guard(m.device);
  NBODY_CUDA_CHECK(cudaMemcpyPeer(m.positions[back].data(), m.device, positions, positions_device,
                                  m.bodies * sizeof(float4)));
  for (auto const& v : velocities)
    if (v.slice.count)
      NBODY_CUDA_CHECK(cudaMemcpyPeer(m.velocities[back].data() + v.slice.begin, m.device, v.data, v.device,
                                      v.slice.count * sizeof(float4)));
  NBODY_CUDA_CHECK(cudaDeviceSynchronize());
}

void DeviceFrames::flip() { impl_->front ^= 1; }

void DeviceFrames::download(float* positions, float* velocities) const {
  Impl const& m = *impl_;
  gpu::DeviceGuard guard(m.device);
  NBODY_CUDA_CHECK(cudaMemcpy(positions, m.positions[m.front].data(), m.bodies * sizeof(float4), cudaMemcpyDeviceToHost));
  NBODY_CUDA_CHECK(cudaMemcpy(velocities, m.velocities[m.front].data(), m.bodies * sizeof(float4), cudaMemcpyDeviceToHost));
}
const void* DeviceFrames::positions() const { return impl_->positions[impl_->front].data(); }
const void* DeviceFrames::velocities() const { return impl_->velocities[impl_->front].data(); }
int DeviceFrames::device() const { return impl_->device; }
std::size_t DeviceFrames::bodies() const { return impl_->bodies; }

struct CudaGlInterop::Impl {
  int device = 0;
  std::size_t bodies = 0;
  GraphicsResource positions, colors;
  // The frame's copies and colour kernels, ahead of the simulation's blocks: on the legacy stream at
  // the default priority they waited for the whole force pass queued before them (up to a step, half a
  // second at a million bodies), and the frame showing a drag with them.
  gpu::Stream stream;
  gpu::DeviceBuffer<float> sample;
  std::vector<float> host_sample;
};

CudaGlInterop::CudaGlInterop(unsigned position_vbo, unsigned color_vbo, std::size_t bodies, int device)
    : impl_(std::make_unique<Impl>()) {
  impl_->device = device;
  impl_->bodies = bodies;
  impl_->positions = register_buffer(position_vbo, device);
  impl_->colors = register_buffer(color_vbo, device);
  impl_->stream = gpu::Stream::urgent(device);
}

CudaGlInterop::~CudaGlInterop() = default;

void CudaGlInterop::copy_positions(const void* device_positions, std::size_t bytes) {
  gpu::DeviceGuard guard(impl_->device);
  Mapped const mapped(impl_->positions, impl_->stream.get());
  NBODY_CUDA_CHECK(cudaMemcpyAsync(mapped.pointer(), device_positions, bytes < mapped.bytes() ? bytes : mapped.bytes(),
                                   cudaMemcpyDeviceToDevice, impl_->stream.get()));
}

ColorRange CudaGlInterop::fit_speed_range(const void* device_velocities) {
  Impl& m = *impl_;
  std::size_t const n = m.bodies;
  if (n == 0) return {};
  gpu::DeviceGuard guard(m.device);
  std::size_t const stride = speed_sample_stride(n);
  std::size_t const count = (n + stride - 1) / stride;
  if (m.sample.size() != count) m.sample = gpu::DeviceBuffer<float>(m.device, count);
  sample_speeds<<<blocks(count), kBlock, 0, m.stream.get()>>>(static_cast<const float4*>(device_velocities), int(n),
                                                              int(stride), m.sample.data());
  NBODY_CHECK_LAUNCH(m.stream.get());
  m.host_sample.resize(count);
  NBODY_CUDA_CHECK(cudaMemcpyAsync(m.host_sample.data(), m.sample.data(), count * sizeof(float), cudaMemcpyDeviceToHost,
                                   m.stream.get()));
  gpu::bounded_sync(m.stream.get(), gpu::debug_sync_seconds(), "the viewer's sample of the speeds");
  return render::fit_speed_range(m.host_sample.data(), count);
}

void CudaGlInterop::color_by_speed(const void* device_velocities, Colormap map, ColorRange range) {
  Impl& m = *impl_;
  std::size_t const n = m.bodies;
  if (n == 0) return;
  gpu::DeviceGuard guard(m.device);
  Mapped const mapped(m.colors, m.stream.get());
  speed_colors<<<blocks(n), kBlock, 0, m.stream.get()>>>(static_cast<const float4*>(device_velocities), int(n), colormap_table(map),
                                      speed_to_unit(range), static_cast<float4*>(mapped.pointer()));
  NBODY_CHECK_LAUNCH(m.stream.get());
}

}  // namespace nbody::render
