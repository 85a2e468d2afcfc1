// gpu/resources.h - move-only owners of CUDA handles; each remembers its device, frees on it,
// and never throws from its destructor. Plain C++ over the runtime API.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <new>
#include <utility>

#include "gpu/check.h"

namespace nbody::gpu {

// Makes `device` current for a scope and restores the previous device after it. The first form
// throws when the switch fails; the std::nothrow form (for destructors and cleanup) tries its best
// and never throws. Restoring never throws.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    NBODY_CUDA_CHECK(cudaGetDevice(&previous_));
    if (previous_ != device) NBODY_CUDA_CHECK(cudaSetDevice(device));
  }
  DeviceGuard(int device, std::nothrow_t) noexcept : restore_(cudaGetDevice(&previous_) == cudaSuccess) {
    if (restore_ && previous_ != device) (void)cudaSetDevice(device);
  }
  ~DeviceGuard() {
    int current = previous_;
    if (restore_ && cudaGetDevice(&current) == cudaSuccess && current != previous_) (void)cudaSetDevice(previous_);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
  bool restore_ = true;
};

// Owner template: Traits provides `Handle`, `null`, and `release(Handle)`, called on the owner's
// device.
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
  // Lets go of the handle without releasing it: for work abandoned on a device (an interrupt), whose
  // memory and streams a release would wait for. The process is about to exit and the driver
  // reclaims them.
  void forget() noexcept { handle_ = Traits::null; }
  void reset() noexcept {
    if (handle_ != Traits::null) {
      DeviceGuard guard(device_, std::nothrow);
      Traits::release(handle_);
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
  static void* allocate(std::size_t bytes) {
    void* p = nullptr;
    NBODY_CUDA_CHECK(cudaMalloc(&p, bytes));
    return p;
  }
  static void release(Handle h) noexcept { (void)cudaFree(h); }
};
// Pinned host memory, usable from every device (cudaHostAllocPortable).
struct PinnedMemoryTraits {
  using Handle = void*;
  static constexpr Handle null = nullptr;
  static void* allocate(std::size_t bytes) {
    void* p = nullptr;
    NBODY_CUDA_CHECK(cudaHostAlloc(&p, bytes, cudaHostAllocPortable));
    return p;
  }
  static void release(Handle h) noexcept { (void)cudaFreeHost(h); }
};

// A non-blocking stream (it does not synchronise with the legacy default stream).
class Stream : public CudaOwner<StreamTraits> {
 public:
  Stream() = default;
  explicit Stream(int device) : CudaOwner(create(device, false), device) {}
  // A stream whose blocks the GPU schedules ahead of those of the default priority as soon as an SM
  // has room: short work (a frame for the viewer) that should not wait behind a long force pass.
  static Stream urgent(int device) { return Stream(create(device, true), device); }

 private:
  Stream(cudaStream_t s, int device) : CudaOwner(s, device) {}
  static cudaStream_t create(int device, bool urgent) {
    DeviceGuard guard(device);
    int least = 0, greatest = 0;
    if (urgent) NBODY_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    cudaStream_t s = nullptr;
    NBODY_CUDA_CHECK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, urgent ? greatest : 0));
    return s;
  }
};

// Events: SyncEvent only orders work (cheaper: no timestamp); TimingEvent also measures time.
template <unsigned kFlags>
class BasicEvent : public CudaOwner<EventTraits> {
 public:
  BasicEvent() = default;
  explicit BasicEvent(int device) : CudaOwner(create(device), device) {}

 private:
  static cudaEvent_t create(int device) {
    DeviceGuard guard(device);
    cudaEvent_t e = nullptr;
    NBODY_CUDA_CHECK(cudaEventCreateWithFlags(&e, kFlags));
    return e;
  }
};
using SyncEvent = BasicEvent<cudaEventDisableTiming>;
using TimingEvent = BasicEvent<cudaEventDefault>;

// `count` elements of T in device memory (DeviceBuffer) or pinned host memory (PinnedBuffer).
template <class T, class Traits>
class Memory : public CudaOwner<Traits> {
 public:
  Memory() = default;
  Memory(int device, std::size_t count) : CudaOwner<Traits>(allocate(device, count), device), count_(count) {}
  T* data() const { return static_cast<T*>(this->get()); }
  std::size_t size() const { return count_; }

 private:
  static void* allocate(int device, std::size_t count) {
    if (count == 0) return nullptr;
    DeviceGuard guard(device);
    return Traits::allocate(count * sizeof(T));
  }
  std::size_t count_ = 0;
};
template <class T>
using DeviceBuffer = Memory<T, DeviceMemoryTraits>;
template <class T>
using PinnedBuffer = Memory<T, PinnedMemoryTraits>;

}  // namespace nbody::gpu
