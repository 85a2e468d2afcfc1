// sim/kernels/drift_signal.h - the flags in device memory by which GPUs of one process tell each
// other that a drift's direct stores have landed (the direct exchange; the device code is in
// drift_signal.cuh). Plain C++: the exchange allocates and connects them.
#pragma once

namespace nbody::sim::kernels {

// The most peers a device signals or waits for: 16 devices in one process.
inline constexpr int kMaxSignalPeers = 15;

// One per device, in its own memory, zeroed before the first step.
struct DriftSignal {
  unsigned long long epoch;                      // drifts this device has finished
  unsigned int starters;                         // blocks of force kernels begun since the last drift
  unsigned long long arrived[kMaxSignalPeers];   // arrived[k]: drifts of peer k that have landed here (peer k writes it)
};

}  // namespace nbody::sim::kernels
