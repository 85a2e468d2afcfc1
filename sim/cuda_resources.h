// sim/cuda_resources.h - move-only owners of CUDA handles; each remembers its device, frees on
// it, and never throws from its destructor. Plain C++ over the runtime API.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

#include "sim/cuda_check.h"

namespace nbody::sim {

// Makes `device` current for a scope and restores the previous device after it.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    NBODY_CUDA_CHECK(cudaGetDevice(&previous_));
    if (previous_ != device) NBODY_CUDA_CHECK(cudaSetDevice(device));
  }
  ~DeviceGuard() {
    int current = previous_;
    if (cudaGetDevice(&current) == cudaSuccess && current != previous_) (void)cudaSetDevice(previous_);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
};

// Owner template: Traits provides `Handle`, `null`, and `release(Handle)` (on the right device).
template <class Traits>
class CudaOwner {
 public:
  using Handle = typename Traits::Handle;
  CudaOwner() = default;
  CudaOwner(Handle h, int device) : handle_(h), device_(device) {}
  CudaOwner(CudaOwner&& o) noexcept : handle_(std::exchange(o.handle_, Traits::null)), device_(o.device_) {}
  CudaOwner& operator=(CudaOwner&& o) noexcept {
    if (this != &o) {
      reset();
      handle_ = std::exchange(o.handle_, Traits::null);
      device_ = o.device_;
    }
    return *this;
  }
  ~CudaOwner() { reset(); }
  CudaOwner(const CudaOwner&) = delete;
  CudaOwner& operator=(const CudaOwner&) = delete;

  Handle get() const { return handle_; }
  int device() const { return device_; }
  void reset() noexcept {
    if (handle_ != Traits::null) {
      int previous = -1;
      bool const switched = cudaGetDevice(&previous) == cudaSuccess && previous != device_ &&
                            cudaSetDevice(device_) == cudaSuccess;
      Traits::release(handle_);
      if (switched) (void)cudaSetDevice(previous);
      handle_ = Traits::null;
    }
  }

 private:
  Handle handle_ = Traits::null;
  int device_ = -1;
};

struct StreamTraits {
  using Handle = cudaStream_t;
  static constexpr Handle null = nullptr;
  static void release(Handle h) noexcept { (void)cudaStreamDestroy(h); }
};
struct EventTraits {
  using Handle = cudaEvent_t;
  static constexpr Handle null = nullptr;
  static void release(Handle h) noexcept { (void)cudaEventDestroy(h); }
};
struct DeviceMemoryTraits {
  using Handle = void*;
  static constexpr Handle null = nullptr;
  static void release(Handle h) noexcept { (void)cudaFree(h); }
};
struct PinnedMemoryTraits {
  using Handle = void*;
  static constexpr Handle null = nullptr;
  static void release(Handle h) noexcept { (void)cudaFreeHost(h); }
};

class Stream : public CudaOwner<StreamTraits> {
 public:
  Stream() = default;
  explicit Stream(int device) : CudaOwner(create(device), device) {}

 private:
  static cudaStream_t create(int device) {
    DeviceGuard guard(device);
    cudaStream_t s = nullptr;
    NBODY_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    return s;
  }
};

class Event : public CudaOwner<EventTraits> {
 public:
  Event() = default;
  Event(int device, bool timing) : CudaOwner(create(device, timing), device) {}

 private:
  static cudaEvent_t create(int device, bool timing) {
    DeviceGuard guard(device);
    cudaEvent_t e = nullptr;
    NBODY_CUDA_CHECK(cudaEventCreateWithFlags(&e, timing ? cudaEventDefault : cudaEventDisableTiming));
    return e;
  }
};

template <class T>
class DeviceBuffer : public CudaOwner<DeviceMemoryTraits> {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(int device, std::size_t count) : CudaOwner(allocate(device, count), device), count_(count) {}
  T* data() const { return static_cast<T*>(get()); }
  std::size_t size() const { return count_; }

 private:
  static void* allocate(int device, std::size_t count) {
    if (count == 0) return nullptr;
    DeviceGuard guard(device);
    void* p = nullptr;
    NBODY_CUDA_CHECK(cudaMalloc(&p, count * sizeof(T)));
    return p;
  }
  std::size_t count_ = 0;
};

template <class T>
class PinnedBuffer : public CudaOwner<PinnedMemoryTraits> {
 public:
  PinnedBuffer() = default;
  PinnedBuffer(int device, std::size_t count) : CudaOwner(allocate(device, count), device), count_(count) {}
  T* data() const { return static_cast<T*>(get()); }
  std::size_t size() const { return count_; }

 private:
  static void* allocate(int device, std::size_t count) {
    if (count == 0) return nullptr;
    DeviceGuard guard(device);
    void* p = nullptr;
    NBODY_CUDA_CHECK(cudaHostAlloc(&p, count * sizeof(T), cudaHostAllocPortable));
    return p;
  }
  std::size_t count_ = 0;
};

}  // namespace nbody::sim
