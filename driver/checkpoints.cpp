// driver/checkpoints.cpp - checkpoint records, series names, finite-state check, snapshots.
#include "driver/checkpoints.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "core/errors.h"
#include "core/output_path.h"
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
  r.units = setup.units;
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

void write_snapshot(const std::string& path, const Setup& setup, multigpu::Simulation& sim, Precision precision) {
  sim::BodySet const state = sim.state();  // every rank takes part; rank 0 writes
  agree(sim.ranks(), [&] {
    check_finite(state, sim.steps_done());
    if (sim.ranks().rank() == 0) sim::write_snapshot(path, state, run_record(setup, sim, std::nullopt), precision);
  });
}

namespace {

// "out/snap" -> ("out/snap_", ".hdf5"); "out/snap.h5" -> ("out/snap_", ".h5").
std::pair<std::string, std::string> snapshot_name(const std::string& base) {
  for (const char* ending : {".hdf5", ".h5"}) {
    std::string const e = ending;
    if (base.size() > e.size() && base.compare(base.size() - e.size(), e.size(), e) == 0 &&
        base[base.size() - e.size() - 1] != '/')
      return {base.substr(0, base.size() - e.size()) + "_", e};
  }
  return {base + "_", ".hdf5"};
}

// Looking at every name of a long series would cost more than the run's start; beyond this many,
// the first and the last (the longest) are checked, and of the others those the folder already holds.
constexpr std::uint64_t kSeriesNamesChecked = 10000;

}  // namespace

std::string SnapshotSeries::path(std::uint64_t step) const {
  auto const [prefix, suffix] = snapshot_name(base);
  char digits[32];
  std::snprintf(digits, sizeof digits, "%08llu", static_cast<unsigned long long>(step));
  return prefix + digits + suffix;
}

void SnapshotSeries::check(std::uint64_t first, std::uint64_t last,
                           const std::vector<std::pair<std::string, std::string>>& others) const {
  if (!enabled()) return;
  namespace fs = std::filesystem;
  std::string const what = "--snapshots";
  std::vector<std::uint64_t> steps{first, last};
  std::uint64_t const first_due = every ? (first / every + 1) * every : 0;
  std::uint64_t const count = every ? last / every - first / every : 0;
  if (count <= kSeriesNamesChecked) {
    for (std::uint64_t step = first_due; count && step <= last; step += every) steps.push_back(step);
  } else {
    steps.push_back(first_due);
    auto const [prefix, suffix] = snapshot_name(base);
    fs::path const folder = fs::path(path(first)).parent_path();
    std::string const stem = fs::path(prefix + "0").filename().string();
    std::string const start = stem.substr(0, stem.size() - 1);
    std::error_code ec;
    for (fs::directory_iterator it(folder.empty() ? fs::path(".") : folder, ec), end; !ec && it != end;
         it.increment(ec)) {
      std::string const name = it->path().filename().string();
      if (name.size() <= start.size() + suffix.size() || name.compare(0, start.size(), start) != 0 ||
          name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
        continue;
      std::string const digits = name.substr(start.size(), name.size() - start.size() - suffix.size());
      if (digits.size() > 19 || digits.find_first_not_of("0123456789") != std::string::npos) continue;
      std::uint64_t const step = std::stoull(digits);
      if (step > first && step < last && step % every == 0) steps.push_back(step);
    }
  }
  for (std::uint64_t step : steps) {
    check_output_path(path(step), what);
    // Another output of the run may not be one of the series' files.
    for (auto const& [option, other] : others)
      if (!other.empty()) check_distinct_outputs({{what + " (step " + std::to_string(step) + ")", path(step)}, {option, other}});
  }
}

}  // namespace nbody::driver
