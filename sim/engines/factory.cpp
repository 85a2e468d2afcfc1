// sim/engines/factory.cpp - engines by backend.
#include "core/errors.h"
#include "sim/engines/cpu_engine.h"
#include "sim/engines/engine.h"
#if NBODY_HAVE_CUDA
#include "sim/engines/cuda_engine.h"
#endif

namespace nbody::sim {

std::string to_string(Backend b) { return b == Backend::cpu ? "cpu" : "cuda"; }

#if NBODY_HAVE_CUDA
bool cuda_built() { return true; }

std::unique_ptr<SliceEngine> make_engine(Backend backend, const EngineConfig& config) {
  return backend == Backend::cpu ? make_cpu_engine(config) : make_cuda_engine(config);
}

std::size_t engine_bytes(Backend backend, const EngineConfig& config) {
  return backend == Backend::cpu ? cpu_engine_bytes(config) : cuda_engine_bytes(config);
}
#else
bool cuda_built() { return false; }

std::unique_ptr<SliceEngine> make_engine(Backend backend, const EngineConfig& config) {
  if (backend == Backend::cuda) throw InputError("--backend cuda: this nbody was built without CUDA");
  return make_cpu_engine(config);
}

std::size_t engine_bytes(Backend backend, const EngineConfig& config) {
  return backend == Backend::cpu ? cpu_engine_bytes(config) : 0;
}
#endif

}  // namespace nbody::sim
