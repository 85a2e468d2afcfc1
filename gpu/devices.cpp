// gpu/devices.cpp - device properties, the peer-access matrix, and peer access enabled.
#include "gpu/devices.h"

#include <cuda_runtime_api.h>

#include <map>
#include <mutex>
#include <utility>

#include "gpu/check.h"
#include "gpu/resources.h"

namespace nbody::gpu {

std::vector<DeviceInfo> devices(std::string* why_none) {
  int count = 0;
  cudaError_t const status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    (void)cudaGetLastError();  // clear the sticky-free error so later queries start clean
    if (why_none) {
      if (status == cudaErrorInsufficientDriver)  // also what the runtime says when there is no driver at all
        *why_none = "no NVIDIA driver, or one too old for CUDA " + std::to_string(CUDART_VERSION / 1000);
      else if (status == cudaErrorNoDevice || status == cudaSuccess)
        *why_none = "no CUDA device is visible";
      else
        *why_none = cudaGetErrorString(status);
    }
    return {};
  }
  std::vector<DeviceInfo> list;
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp p{};
    NBODY_CUDA_CHECK(cudaGetDeviceProperties(&p, d));
    int clock_khz = 0;
    NBODY_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, d));
    list.push_back({d, p.name, p.multiProcessorCount, p.totalGlobalMem, p.major, p.minor, clock_khz / 1000, {}});
    static char const kHex[] = "0123456789abcdef";
    for (char byte : p.uuid.bytes) {
      list.back().uuid += kHex[(unsigned char)byte >> 4];
      list.back().uuid += kHex[(unsigned char)byte & 15];
    }
  }
  return list;
}

bool Topology::all_pairs_peer() const {
  for (auto const& row : can_access)
    for (bool ok : row)
      if (!ok) return false;
  return true;
}

bool enable_peer_access(int device, int peer) {
  static std::mutex mutex;
  static std::map<std::pair<int, int>, bool> asked;  // the pairs enabled, and those that cannot be
  std::lock_guard<std::mutex> lock(mutex);
  if (auto const found = asked.find({device, peer}); found != asked.end()) return found->second;
  int can = device == peer;
  if (!can) NBODY_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, device, peer));
  if (can && device != peer) {
    DeviceGuard guard(device);
    cudaError_t const status = cudaDeviceEnablePeerAccess(peer, 0);
    if (status == cudaErrorPeerAccessAlreadyEnabled)
      (void)cudaGetLastError();
    else
      NBODY_CUDA_CHECK(status);
  }
  asked[{device, peer}] = can != 0;
  return can != 0;
}

Topology query_topology(const std::vector<int>& devices) {
  Topology t{devices, std::vector<std::vector<bool>>(devices.size(), std::vector<bool>(devices.size(), true))};
  for (std::size_t a = 0; a < devices.size(); ++a)
    for (std::size_t b = 0; b < devices.size(); ++b) {
      if (devices[a] == devices[b]) continue;
      int ok = 0;
      NBODY_CUDA_CHECK(cudaDeviceCanAccessPeer(&ok, devices[a], devices[b]));
      t.can_access[a][b] = ok != 0;
    }
  return t;
}

}  // namespace nbody::gpu
