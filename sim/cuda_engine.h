// sim/cuda_engine.h - the CUDA backend's engine and device queries (plain C++ interface; the
// kernels live in cuda_engine.cu and force_kernels.cuh).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "sim/engine.h"

namespace nbody::sim {

struct CudaDeviceInfo {
  int ordinal = 0;
  std::string name;
  int multiprocessors = 0;
  std::size_t memory_bytes = 0;
  int major = 0, minor = 0;
  int clock_mhz = 0;
};

// The visible CUDA devices; empty when there are none, with the reason in `why_none`.
std::vector<CudaDeviceInfo> cuda_devices(std::string* why_none = nullptr);

// GPU force kernels: "naive" (one body per thread, j from global memory), "tiled" (classic
// shared-memory tiles of blockDim j-bodies) and "fast" (the default: several bodies per thread,
// unrolled, segments spread over blocks when N is small).
const std::vector<std::string>& cuda_kernel_names();

// Every GPU kernel sums body i's interactions in one canonical order, so all kernels, launch
// shapes and partitions give bitwise-identical accelerations: j runs over `count` segments of
// `length` bodies (positions padded with zero-mass bodies to length * count); each segment is
// summed in index order into a fresh partial, and the partials are added in segment order.
struct SegmentLayout {
  std::size_t length = 0;
  std::size_t count = 0;
  std::size_t padded() const { return length * count; }
};
SegmentLayout segment_layout(std::size_t n);

// A GPU engine also exposes its compute stream to the exchange, which makes it wait for peers.
class CudaSliceEngine : public SliceEngine {
 public:
  virtual cudaStream_t stream() const = 0;
  // Fills the accelerations (and split partial sums) with NaN bytes, so a test can tell an
  // element the next force pass did not write.
  virtual void poison_outputs() = 0;
};

// Creates the engine on config.device (allocates there). Throws InputError for a bad kernel name
// or block size and when the device lacks memory for N bodies; CudaError for CUDA failures.
std::unique_ptr<SliceEngine> make_cuda_engine(const EngineConfig& config);

// Bytes of device memory one engine with this config needs.
std::size_t cuda_engine_bytes(const EngineConfig& config);

}  // namespace nbody::sim
