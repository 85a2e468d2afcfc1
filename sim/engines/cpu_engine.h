// sim/engines/cpu_engine.h - the CPU backend's engine: OpenMP over bodies, SIMD fp32 or reference fp64.
#pragma once

#include <memory>

#include "sim/engines/engine.h"

namespace nbody::sim {

// CPU kernels: "simd" (fp32 default: the SIMD fast path; fp64: the reference, parallel over i)
// and "reference" (the fp64 reference arithmetic in the engine's precision).
const std::vector<std::string>& cpu_kernel_names();

std::unique_ptr<SliceEngine> make_cpu_engine(const EngineConfig& config);

// Bytes of host memory one CPU engine with this config needs.
std::size_t cpu_engine_bytes(const EngineConfig& config);

}  // namespace nbody::sim
