// sim/engines/factory.cpp - engines by backend.
#include <stdexcept>

#include "core/errors.h"
#include "sim/engines/cpu_engine.h"
#include "sim/engines/engine.h"
#if NBODY_HAVE_CUDA
#include "sim/engines/cuda_engine.h"
#endif

namespace nbody::sim {

Backend backend_of(Kernel kernel) {
  return kernel == Kernel::simd || kernel == Kernel::reference ? Backend::cpu : Backend::cuda;
}

Kernel default_kernel(Backend backend) { return backend == Backend::cpu ? Kernel::simd : Kernel::fast; }

std::string kernel_names(Backend backend) {
  std::string s;
  for (auto const& k : enum_names(Kernel{}))
    if (backend_of(k.value) == backend) s += (s.empty() ? "" : ", ") + std::string(k.name);
  return s;
}

// The kernel the settings ask for on `backend`, or InputError naming the ones it has.
Kernel kernel_for(Backend backend, const EngineSettings& settings, const SettingNames& names) {
  Kernel const k = settings.kernel.value_or(default_kernel(backend));
  if (backend_of(k) != backend)
    throw InputError(names.with_text("--kernel", name_of(k)) + ": the " + name_of(backend) + " backend has " +
                     kernel_names(backend));
  return k;
}

#if NBODY_HAVE_CUDA
bool cuda_built() { return true; }

std::unique_ptr<SliceEngine> make_engine(Backend backend, const EngineConfig& config) {
  return backend == Backend::cpu ? make_cpu_engine(config) : make_cuda_engine(config);
}

std::size_t engine_bytes(Backend backend, const EngineConfig& config) {
  return backend == Backend::cpu ? cpu_engine_bytes(config) : cuda_engine_bytes(config);
}

std::size_t engine_host_bytes(Backend backend, const EngineConfig& config) {
  return backend == Backend::cpu ? cpu_engine_bytes(config) : cuda_engine_host_bytes(config);
}
#else
bool cuda_built() { return false; }

std::unique_ptr<SliceEngine> make_engine(Backend backend, const EngineConfig& config) {
  if (backend == Backend::cuda)
    throw InputError(config.names.with_text("--backend", "cuda") + ": this nbody was built without CUDA");
  return make_cpu_engine(config);
}

std::size_t engine_bytes(Backend backend, const EngineConfig& config) {
  return backend == Backend::cpu ? cpu_engine_bytes(config) : 0;
}

std::size_t engine_host_bytes(Backend backend, const EngineConfig& config) { return engine_bytes(backend, config); }
#endif

}  // namespace nbody::sim

#include "sim/engines/hermite_engine.h"

namespace nbody::sim {

// Engines that keep no sums on a device (sums_on_device() false) are never asked to.
void HermiteEngine::set_active_from(const std::vector<HermiteEngine*>&, const std::vector<std::size_t>&) {
  throw std::logic_error("Hermite engine: the running sums cannot stay on this engine's device");
}
void HermiteEngine::add_own_groups_on_device(HermiteEngine*) {
  throw std::logic_error("Hermite engine: the running sums cannot stay on this engine's device");
}
std::uint64_t HermiteEngine::advance_together(const std::vector<HermiteEngine*>&, std::uint64_t, double, double) {
  throw std::logic_error("Hermite engine: advance_together on engines that cannot run it");
}
void HermiteEngine::correct_from(HermiteEngine&, double) {
  throw std::logic_error("Hermite engine: the running sums cannot stay on this engine's device");
}
void HermiteEngine::initialise_from(HermiteEngine&, double) {
  throw std::logic_error("Hermite engine: the running sums cannot stay on this engine's device");
}

std::size_t hermite_engine_host_bytes(Backend backend, const HermiteEngineConfig& config) {
  if (backend == Backend::cpu) return hermite_cpu_engine_host_bytes(config);
#if NBODY_HAVE_HERMITE_CUDA
  return hermite_cuda_engine_host_bytes(config);
#else
  return 0;
#endif
}

// The CUDA Hermite engine is built where the build defines NBODY_HAVE_HERMITE_CUDA (sim/engines/CMakeLists.txt).
std::unique_ptr<HermiteEngine> make_hermite_engine(Backend backend, const HermiteEngineConfig& config) {
  if (backend == Backend::cpu) return make_hermite_cpu_engine(config);
#if NBODY_HAVE_HERMITE_CUDA
  return make_hermite_cuda_engine(config);
#else
  SettingNames const& names = config.names;
  std::string const cuda = names.with_text("--backend", "cuda");
  std::string const hermite4 = names.with_text("--integrator", "hermite4") + (names.keywords ? ", " : " ");
  throw InputError(cuda_built() ? hermite4 + cuda +
                                      ": this nbody was built without the CUDA Hermite engine; use " +
                                      names.with_text("--backend", "cpu")
                                : cuda + ": this nbody was built without CUDA");
#endif
}

}  // namespace nbody::sim
