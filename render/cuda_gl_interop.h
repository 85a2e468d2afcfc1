// render/cuda_gl_interop.h - positions and colours from CUDA devices straight into the GL vertex
// buffers, with no trip through host memory. Plain C++ interface; the only file of render/ that
// touches the CUDA runtime is the .cu (a build without CUDA has a stand-in that refuses).
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "core/slice.h"
#include "render/speed_colors.h"

namespace nbody::render {

// One device's velocities: float4 per body (x, y, z, unused) in the device memory of `device`, for
// the bodies of `slice`.
struct DeviceVelocities {
  const void* data = nullptr;
  int device = 0;
  Slice slice;
};

// The positions and velocities of one moment of a GPU simulation, copied on the GPUs into buffers
// of one device, so that the simulation can go on stepping while the frame is drawn. Two frames:
// the simulation's thread fills the back one (capture), then the two swap (flip) under the lock that
// the drawing thread holds while it reads the front one.
class DeviceFrames {
 public:
  DeviceFrames(int device, std::size_t bodies);
  ~DeviceFrames();
  DeviceFrames(const DeviceFrames&) = delete;
  DeviceFrames& operator=(const DeviceFrames&) = delete;

  // Copies all N positions (float4 x, y, z, m on `positions_device`) and every device's velocity
  // slice into the back frame, and waits for the copies.
  void capture(const void* positions, int positions_device, const std::vector<DeviceVelocities>& velocities);
  void flip();

  // Copies the front frame to the host: 4 floats a body each (x, y, z, m and vx, vy, vz, -).
  void download(float* positions, float* velocities) const;

  // The front frame: float4 positions and velocities of all N bodies, on device().
  const void* positions() const;
  const void* velocities() const;
  int device() const;
  std::size_t bodies() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
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
  // the host path), from all N velocities (float4) in the interop device's memory, as DeviceFrames
  // gathers them.
  void color_by_speed(const void* device_velocities, Colormap map, ColorRange range);
  // The range fit_speed_range chooses for those speeds: only the sample comes back to the host.
  ColorRange fit_speed_range(const void* device_velocities);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nbody::render
