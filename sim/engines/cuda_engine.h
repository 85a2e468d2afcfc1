// sim/engines/cuda_engine.h - the CUDA backend's engine (plain C++ interface; the kernels live in
// sim/kernels/, their launch shapes in sim/kernels/tuning.h).
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "sim/engines/engine.h"
#include "sim/kernels/drift_signal.h"

namespace nbody::sim {

// The most peers a drift kernel stores into (the direct exchange): 16 devices in one process.
inline constexpr int kMaxDriftPeers = kernels::kMaxSignalPeers;

// A GPU engine also exposes its compute stream to the exchange, which makes it wait for peers.
class CudaSliceEngine : public SliceEngine {
 public:
  virtual cudaStream_t stream() const = 0;
  // Fills the accelerations (and split partial sums) with NaN bytes, so a test can tell an
  // element the next force pass did not write.
  virtual void poison_outputs() = 0;
  // For the direct exchange: the other devices' position buffers (index 0 and 1, as
  // positions_buffer) that every drift also stores the own slice's new positions into. Empty by
  // default. InputError if there are more than the kernels take. With `signal.own` set, drifts
  // count themselves, and force kernels announce the count to the peers and wait for theirs, in
  // device memory (sim/kernels/drift_signal.cuh): `own` is this device's kernels::DriftSignal,
  // `slots[k]` where this device's drifts are counted in peer k's (in the order of `peers`),
  // `released` the mapped host word that gives up every wait once set.
  struct DriftSignalLinks {
    kernels::DriftSignal* own = nullptr;
    std::vector<unsigned long long*> slots;
    const unsigned int* released = nullptr;
  };
  virtual void set_drift_peers(const std::vector<std::array<void*, 2>>& peers, const DriftSignalLinks& signal) = 0;
};

// Creates the engine on config.device (allocates there). Throws InputError for a bad kernel name
// or block size and when the device lacks memory for N bodies; CudaError for CUDA failures.
std::unique_ptr<SliceEngine> make_cuda_engine(const EngineConfig& config);

// Bytes of device memory one engine with this config needs.
std::size_t cuda_engine_bytes(const EngineConfig& config);
// Bytes of pinned host memory it takes once a run downloads its state and samples it.
std::size_t cuda_engine_host_bytes(const EngineConfig& config);

}  // namespace nbody::sim
