// sim/engines/cpu_engine.h - the CPU backend's engine: OpenMP over bodies, SIMD fp32 or reference fp64.
#pragma once

#include <memory>

#include "sim/engines/engine.h"

namespace nbody::sim {

std::unique_ptr<SliceEngine> make_cpu_engine(const EngineConfig& config);

// Bytes of host memory one CPU engine with this config needs, its samples' buffers included.
std::size_t cpu_engine_bytes(const EngineConfig& config);

}  // namespace nbody::sim
