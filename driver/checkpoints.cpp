// driver/checkpoints.cpp - checkpoint records, series names, finite-state check.
#include "driver/checkpoints.h"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "core/errors.h"
#include "core/ranks.h"

namespace nbody::driver {

sim::RunRecord run_record(const Setup& setup, const multigpu::Simulation& sim, std::optional<double> initial_energy) {
  sim::RunRecord r;
  multigpu::RunClock const clock = sim.clock();
  r.step = clock.step;
  r.start_time = clock.start_time;
  r.dt_since_step = clock.dt_since_step;
  r.dt_since_time = clock.dt_since_time;
  r.precision = sim.config().precision;
  r.integrator = sim.program().integrator;
  r.dt = sim.program().dt;
  r.softening = sim.config().softening;
  r.damping = setup.damping;
  r.scenario = setup.scenario;
  r.seed = setup.seed;
  r.initial_energy = initial_energy;
  return r;
}

std::string series_path(const std::string& path, std::uint64_t step) {
  std::size_t const slash = path.find_last_of('/');
  std::size_t const dot = path.find_last_of('.');
  bool const has_extension = dot != std::string::npos && (slash == std::string::npos || dot > slash + 1);
  char digits[32];
  std::snprintf(digits, sizeof digits, "_%08llu", static_cast<unsigned long long>(step));
  return has_extension ? path.substr(0, dot) + digits + path.substr(dot) : path + digits;
}

void check_finite(const sim::BodySet& state, std::uint64_t step) {
  for (std::size_t i = 0; i < state.size(); ++i) {
    auto const& p = state.pos_mass[i];
    auto const& v = state.velocity[i];
    if (std::isfinite(p.x) && std::isfinite(p.y) && std::isfinite(p.z) && std::isfinite(v.x) && std::isfinite(v.y) &&
        std::isfinite(v.z))
      continue;
    std::ostringstream s;
    s << "the state is no longer finite at step " << step << " (time " << state.time << "): body " << i
      << " has position (" << p.x << ", " << p.y << ", " << p.z << "), velocity (" << v.x << ", " << v.y << ", "
      << v.z << "); the time step is too long or the softening too small for this system (--dt, --softening)";
    throw RuntimeFailure(s.str());
  }
}

void write_checkpoint(const std::string& path, const Setup& setup, multigpu::Simulation& sim,
                      std::optional<double> initial_energy) {
  sim::BodySet const state = sim.state();  // every rank takes part; rank 0 writes
  // Every rank sees the same state and the outcome of rank 0's write: one message, a clean end.
  agree(sim.ranks(), [&] {
    check_finite(state, sim.steps_done());
    if (sim.ranks().rank() == 0) sim::write_checkpoint(path, state, run_record(setup, sim, initial_energy));
  });
}

}  // namespace nbody::driver
