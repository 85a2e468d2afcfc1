// render/cuda_gl_interop.h - positions and colours from CUDA devices straight into the GL vertex
// buffers, with no trip through host memory. Plain C++ interface; the only file of render/ that
// touches the CUDA runtime is the .cu (a build without CUDA has a stand-in that refuses).
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "core/slice.h"

namespace nbody::render {

// One device's velocities: float4 per body (x, y, z, unused) in the device memory of `device`, for
// the bodies of `slice`.
struct DeviceVelocities {
  const void* data = nullptr;
  int device = 0;
  Slice slice;
};

class CudaGlInterop {
 public:
  // Registers the viewer's position and colour vertex buffers (float4 each, `bodies` of them)
  // with CUDA on `device`. Throws RuntimeFailure (with the CUDA error) when the GL context is not
  // on an NVIDIA driver that CUDA can share with.
  CudaGlInterop(unsigned position_vbo, unsigned color_vbo, std::size_t bodies, int device);
  ~CudaGlInterop();
  CudaGlInterop(const CudaGlInterop&) = delete;
  CudaGlInterop& operator=(const CudaGlInterop&) = delete;

  // Copies `bytes` of positions from device memory of the interop device into the position buffer.
  void copy_positions(const void* device_positions, std::size_t bytes);

  // Colours every body by speed on the GPU, as render/speed_colors.h defines it (the same bits as
  // the host path): velocities held by other devices are copied to this one first, and only the
  // speed sample for the normalisation comes back to the host.
  void color_by_speed(const std::vector<DeviceVelocities>& slices);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nbody::render
