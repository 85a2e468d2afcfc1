// gpu/devices.h - the visible CUDA devices and which of them can reach each other's memory.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/errors.h"

namespace nbody::gpu {

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int multiprocessors = 0;
  std::size_t memory_bytes = 0;
  int major = 0, minor = 0;
  int clock_mhz = 0;
  std::string uuid;  // the GPU's own identity (hex), the same in every process whatever CUDA_VISIBLE_DEVICES says
};

// The visible CUDA devices; empty when there are none, with the reason in `why_none`.
std::vector<DeviceInfo> devices(std::string* why_none = nullptr);

// For an engine about to be made on GPU `device`: InputError when no CUDA device is usable (saying why) or
// `device` is not one of the visible ones.
inline void require_device(int device) {
  std::string why;
  auto const visible = devices(&why);
  if (visible.empty()) throw InputError("--backend cuda: no usable CUDA device (" + why + ")");
  if (device < 0 || device >= int(visible.size()))
    throw InputError("GPU " + std::to_string(device) + ": only " + std::to_string(visible.size()) +
                     " CUDA devices are visible");
}

// can_access[a][b]: device a can read and write device b's memory directly
// (cudaDeviceCanAccessPeer). The diagonal is true, and so is a pair naming one device twice.
struct Topology {
  std::vector<int> devices;
  std::vector<std::vector<bool>> can_access;
  bool all_pairs_peer() const;
};
Topology query_topology(const std::vector<int>& devices);

// Lets `device` read and write `peer`'s memory directly where the pair can (returns whether it can). The driver is
// asked once a pair for the whole process, whoever asks (the exchange, the Hermite engines of either precision, one
// set after another): asking again returns an error that tools such as compute-sanitizer report.
bool enable_peer_access(int device, int peer);

}  // namespace nbody::gpu
