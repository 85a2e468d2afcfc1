// render/cuda_gl_interop.h - positions from a CUDA device straight into the GL vertex buffer.
// Plain C++ interface; the only file of render/ that touches the CUDA runtime is the .cu.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace nbody::render {

class CudaGlInterop {
 public:
  // Registers the GL buffer `vbo` with CUDA on `device`. Throws RuntimeFailure (with the CUDA
  // error) when the GL context is not on an NVIDIA driver that CUDA can share with.
  CudaGlInterop(unsigned vbo, int device);
  ~CudaGlInterop();
  CudaGlInterop(const CudaGlInterop&) = delete;
  CudaGlInterop& operator=(const CudaGlInterop&) = delete;

  // Maps the buffer, copies `bytes` of device memory into it (device to device), unmaps.
  void copy_from_device(const void* device_positions, std::size_t bytes);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nbody::render
