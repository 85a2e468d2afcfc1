// gpu/devices_without_cuda.cpp - the device query of a build without CUDA: no devices, and why.
#include "core/errors.h"
#include "gpu/devices.h"

namespace nbody::gpu {

std::vector<DeviceInfo> devices(std::string* why_none) {
  if (why_none) *why_none = "this nbody was built without CUDA";
  return {};
}

bool Topology::all_pairs_peer() const { return true; }

Topology query_topology(const std::vector<int>& devices) {
  if (!devices.empty()) throw RuntimeFailure("GPU peer topology: this nbody was built without CUDA");
  return {};
}

}  // namespace nbody::gpu
