// render/cuda_gl_interop_without_cuda.cpp - a build without CUDA has no interop: the viewer uploads
// positions and colours from the host, and says why.
#include "core/errors.h"
#include "render/cuda_gl_interop.h"

namespace nbody::render {

struct DeviceFrames::Impl {};

DeviceFrames::DeviceFrames(int, std::size_t) {
  throw RuntimeFailure("GPU frames for the viewer: this nbody was built without CUDA");
}
DeviceFrames::~DeviceFrames() = default;
void DeviceFrames::capture(const void*, int, const std::vector<DeviceVelocities>&) {}
void DeviceFrames::flip() {}
void DeviceFrames::download(float*, float*) const {}
const void* DeviceFrames::positions() const { return nullptr; }
const void* DeviceFrames::velocities() const { return nullptr; }
int DeviceFrames::device() const { return 0; }
std::size_t DeviceFrames::bodies() const { return 0; }

struct CudaGlInterop::Impl {};

CudaGlInterop::CudaGlInterop(unsigned, unsigned, std::size_t, int) {
  throw RuntimeFailure("CUDA-GL interop: this nbody was built without CUDA");
}

CudaGlInterop::~CudaGlInterop() = default;

void CudaGlInterop::copy_positions(const void*, std::size_t) {}

void CudaGlInterop::color_by_speed(const void*, Colormap, ColorRange) {}

ColorRange CudaGlInterop::fit_speed_range(const void*) { return {}; }

}  // namespace nbody::render
