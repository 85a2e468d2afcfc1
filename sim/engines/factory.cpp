// sim/engines/factory.cpp - engines by backend.
#include "sim/engines/cpu_engine.h"
#include "sim/engines/cuda_engine.h"
#include "sim/engines/engine.h"

namespace nbody::sim {

std::string to_string(Backend b) { return b == Backend::cpu ? "cpu" : "cuda"; }

bool cuda_built() { return true; }

std::unique_ptr<SliceEngine> make_engine(Backend backend, const EngineConfig& config) {
  return backend == Backend::cpu ? make_cpu_engine(config) : make_cuda_engine(config);
}

std::size_t engine_bytes(Backend backend, const EngineConfig& config) {
  return backend == Backend::cpu ? cpu_engine_bytes(config) : cuda_engine_bytes(config);
}

}  // namespace nbody::sim
