// app/setup.cpp - options to simulation setup.
#include "app/setup.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "core/atomic_file.h"
#include "core/errors.h"
#include "gpu/devices.h"
#include "sim/io/tipsy.h"
#include "sim/physics/scenarios.h"

namespace nbody::app {

std::size_t available_host_memory() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  std::size_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return 0;
}

void write_text_file(const std::string& path, const std::string& text) {
  write_file_atomically(path, "output", [&](const std::string& tmp) {
    std::ofstream f(tmp, std::ios::trunc);
    f << text;
    f.flush();
    return bool(f);
  });
}

multigpu::SimulationConfig make_config(const Options& o, std::size_t bodies) {
  multigpu::SimulationConfig c;
  c.precision = o.precision == "fp64" ? Precision::fp64 : Precision::fp32;
  c.kernel = o.kernel;
  c.block_size = o.block_size;
  c.fp64_rsqrt = o.fp64_rsqrt;
  c.softening = o.softening;
  c.weights = o.weights;
  c.threading = multigpu::parse_threading(o.threading);
  c.exchange = multigpu::parse_exchange_mode(o.exchange);
  c.cpu_threads = o.threads;

  std::string why_none;
  auto const gpus = o.backend == "cpu" ? std::vector<gpu::DeviceInfo>{} : gpu::devices(&why_none);
  if (o.backend == "cuda" && gpus.empty()) throw InputError("--backend cuda: no usable CUDA device (" + why_none + ")");
  c.backend = gpus.empty() ? sim::Backend::cpu : sim::Backend::cuda;
  if (o.backend == "auto" && gpus.empty() && !o.quiet)
    std::cerr << "notice: no CUDA device (" << why_none << "); running on the CPU\n";

  if (c.backend == sim::Backend::cuda) {
    int const visible = int(gpus.size());
    if (!o.gpus.empty()) {
      for (int g : o.gpus)
        if (g >= visible)
          throw InputError("--gpus: GPU " + std::to_string(g) + " does not exist; " + std::to_string(visible) +
                           " CUDA devices are visible (0.." + std::to_string(visible - 1) + ")");
      c.devices = o.gpus;
    } else {
      int const n = o.numgpus == 0 ? visible : o.numgpus;
      if (n > visible)
        throw InputError("--numgpus " + std::to_string(n) + ": only " + std::to_string(visible) +
                         " CUDA devices are visible");
      c.devices.clear();
      for (int d = 0; d < n; ++d) c.devices.push_back(d);
    }
  } else {
    if (!o.gpus.empty()) throw InputError("--gpus applies to the CUDA backend; use --numgpus for host devices");
    if (!o.kernel.empty() && o.kernel != "simd" && o.kernel != "reference")
      throw InputError("--kernel " + o.kernel + ": the CPU backend has simd and reference");
    int const n = o.numgpus == 0 ? 1 : o.numgpus;
    c.devices.clear();
    for (int d = 0; d < n; ++d) c.devices.push_back(d);
  }
  // Host memory: the host keeps the whole state in fp64 (positions, velocities, types), and the
  // engines too where they run on the host.
  std::size_t const host_state_bytes = bodies * (sizeof(Real4<double>) + sizeof(Vec3d) + 1);
  bool const host_engines = c.backend == sim::Backend::cpu;
  std::size_t const need =
      host_state_bytes + (host_engines ? multigpu::bytes_per_device(c, bodies) * c.devices.size() : 0);
  std::size_t const have = available_host_memory();
  if (have > 0 && need > have) {
    std::ostringstream s;
    s << "--bodies " << bodies << ": needs " << (need >> 20) << " MiB of memory "
      << (host_engines ? "on " + std::to_string(c.devices.size()) + " host device(s)" : "for the host copy of the state")
      << ", " << (have >> 20) << " MiB available";
    throw InputError(s.str());
  }
  if (!o.weights.empty() && o.weights.size() != c.devices.size())
    throw InputError("--weights: " + std::to_string(o.weights.size()) + " weights for " +
                     std::to_string(c.devices.size()) + " devices; give one per device");
  return c;
}

Setup make_setup(const Options& o, std::size_t bodies) {
  Setup s;
  sim::IntegratorParams ip;
  ip.name = o.integrator;
  ip.dt = o.dt;
  ip.damping = o.damping;
  s.program = sim::make_step_program(ip);  // cheap checks first
  if (!o.load.empty()) {
    s.bodies = sim::read_tipsy(o.load);
    if (o.bodies_given && bodies != s.bodies.size())
      throw InputError("--bodies " + std::to_string(bodies) + ": " + o.load + " holds " +
                       std::to_string(s.bodies.size()) + " bodies; leave --bodies out with --load");
    s.source = o.load;
    s.config = make_config(o, s.bodies.size());
  } else {
    sim::ScenarioParams p;
    p.name = o.scenario;
    p.bodies = o.scenario == "two-body" && !o.bodies_given ? 2 : bodies;
    p.seed = o.seed;
    p.eccentricity = o.eccentricity;
    s.config = make_config(o, p.bodies);  // checks memory before the bodies are made
    s.bodies = sim::make_scenario(p);
    s.source = o.scenario + " (seed " + std::to_string(o.seed) + ")";
  }
  return s;
}

}  // namespace nbody::app
