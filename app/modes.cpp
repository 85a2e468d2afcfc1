// app/modes.cpp - run, benchmark, validate, devices and compare-threading.
#include "app/modes.h"

#include <omp.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "app/progress.h"
#include "app/setup.h"
#include "core/errors.h"
#include "gpu/devices.h"
#include "multigpu/simulation.h"
#include "sim/io/tipsy.h"
#include "sim/physics/diagnostics.h"
#include "sim/physics/reference_forces.h"

namespace nbody::app {
namespace {

using Clock = std::chrono::steady_clock;
using json = nlohmann::json;

volatile std::sig_atomic_t g_interrupted = 0;
extern "C" void on_signal(int) { g_interrupted = 1; }

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown CPU";
}

std::string hardware(const multigpu::SimulationConfig& c, int threads) {
  if (c.backend == sim::Backend::cpu)
    return cpu_model() + ", " + std::to_string(threads) + " OpenMP thread(s)";
  std::string s;
  auto const gpus = gpu::devices();
  for (int d : c.devices) s += (s.empty() ? "" : "; ") + gpus.at(std::size_t(d)).name;
  return s;
}

int openmp_threads(const Options& o) { return o.threads > 0 ? o.threads : omp_get_max_threads(); }

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  std::size_t const m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

void print_diagnostics(const char* label, const sim::Diagnostics& d, double e0) {
  std::printf("  %-6s E = %.10e  (K = %.6e, W = %.6e)  energy error %.3e  |P| = %.3e\n", label, d.total(), d.kinetic,
              d.potential, sim::relative_energy_error(d.total(), e0), norm(d.momentum));
}

json diagnostics_json(const sim::Diagnostics& d, double e0) {
  return {{"kinetic", d.kinetic},
          {"potential", d.potential},
          {"total", d.total()},
          {"relative_energy_error", sim::relative_energy_error(d.total(), e0)},
          {"momentum", {d.momentum.x, d.momentum.y, d.momentum.z}},
          {"centre_of_mass", {d.centre_of_mass.x, d.centre_of_mass.y, d.centre_of_mass.z}}};
}

// One timed measurement: warm-up, then `steps` steps with per-device event/clock timing.
struct Measurement {
  double median_ms = 0, min_ms = 0, max_ms = 0, wall_mean_ms = 0, enqueue_ms_per_step = 0;
  std::vector<double> device_median_ms;  // per device: shows imbalance
  double interactions_per_s = 0, gflops = 0;
};

Measurement measure(multigpu::Simulation& sim, std::uint64_t warmup, std::uint64_t steps) {
  sim.advance(warmup);
  sim.synchronize();
  sim.start_timing(steps);
  auto const t0 = Clock::now();
  sim.advance(steps);
  double const enqueue = seconds_since(t0);
  sim.synchronize();
  double const wall = seconds_since(t0);
  auto const per_device = sim.step_times_ms();
  Measurement m;
  // A step lasts until the slowest device has finished it.
  std::vector<double> step_ms(steps, 0.0);
  for (auto const& t : per_device) {
    for (std::size_t k = 0; k < t.size() && k < step_ms.size(); ++k) step_ms[k] = std::max(step_ms[k], t[k]);
    m.device_median_ms.push_back(median(t));
  }
  m.median_ms = median(step_ms);
  m.min_ms = *std::min_element(step_ms.begin(), step_ms.end());
  m.max_ms = *std::max_element(step_ms.begin(), step_ms.end());
  m.wall_mean_ms = 1e3 * wall / double(steps);
  m.enqueue_ms_per_step = 1e3 * enqueue / double(steps);
  double const n = double(sim.bodies());
  double const force_evaluations = double(sim.program().drifts());  // per step: 3 for yoshida4
  m.interactions_per_s = force_evaluations * n * n / (m.median_ms * 1e-3);
  m.gflops = 20.0 * m.interactions_per_s * 1e-9;
  return m;
}

void write_json(const Options& o, const json& j) {
  if (!o.json.empty()) write_text_file(o.json, j.dump(2) + "\n");
}

}  // namespace

bool interrupted() { return g_interrupted != 0; }

bool display_available() {
  char const* x = std::getenv("DISPLAY");
  char const* w = std::getenv("WAYLAND_DISPLAY");
  return (x && *x) || (w && *w);
}

void install_signal_handlers() {
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
}

int run_simulation(const Options& o) {
  Setup setup = make_setup(o, o.bodies.front());
  std::uint64_t const steps = o.steps ? o.steps : 1000;
  multigpu::Simulation sim(setup.bodies, setup.program, setup.config);
  sim::TipsyFormat const format = o.save_format == "standard" ? sim::TipsyFormat::standard
                                                              : sim::TipsyFormat::little_endian;
  if (!o.quiet) {
    std::printf("nbody run: %zu bodies from %s\n  %s\n  %s, dt %g, %llu steps\n", sim.bodies(), setup.source.c_str(),
                sim.describe().c_str(), setup.program.integrator.c_str(), setup.program.dt, (unsigned long long)steps);
  }
  sim::Diagnostics const start = sim.diagnostics();
  double const e0 = start.total();
  if (!o.quiet) print_diagnostics("start", start, e0);

  Progress progress(steps, !o.quiet && isatty(STDERR_FILENO));
  auto const t0 = Clock::now();
  std::uint64_t done = 0, chunk = 1;
  while (done < steps && !interrupted()) {
    std::uint64_t const n = std::min(chunk, steps - done);
    auto const c0 = Clock::now();
    sim.advance(n);
    sim.synchronize();
    done += n;
    progress.update(done);
    // Aim for chunks of about 0.2 s: progress and Ctrl-C stay responsive, the GPU stays busy.
    double const per_step = seconds_since(c0) / double(n);
    chunk = std::max<std::uint64_t>(1, std::uint64_t(0.2 / std::max(per_step, 1e-9)));
  }
  progress.finish();
  double const wall = seconds_since(t0);

  sim::Diagnostics const end = sim.diagnostics();
  double const n2 = double(sim.bodies()) * double(sim.bodies());
  if (!o.quiet) {
    print_diagnostics("end", end, e0);
    std::printf("  time %.6g after %llu steps; %.3f s wall, %.2f steps/s, %.3e interactions/s\n", sim.time(),
                (unsigned long long)done, wall, double(done) / wall, n2 * double(done) / wall);
  }
  if (!o.save.empty()) {
    sim::write_tipsy(o.save, sim.state(), o.softening, format);
    if (!o.quiet) std::printf("  saved %s (%s tipsy)\n", o.save.c_str(), o.save_format.c_str());
  }
  write_json(o, {{"mode", "run"},
                 {"bodies", sim.bodies()},
                 {"source", setup.source},
                 {"backend", sim.describe()},
                 {"integrator", setup.program.integrator},
                 {"dt", setup.program.dt},
                 {"steps", done},
                 {"interrupted", interrupted()},
                 {"time", sim.time()},
                 {"wall_seconds", wall},
                 {"start", diagnostics_json(start, e0)},
                 {"end", diagnostics_json(end, e0)}});
  if (interrupted()) {
    std::fprintf(stderr, "interrupted after %llu of %llu steps%s\n", (unsigned long long)done,
                 (unsigned long long)steps, o.save.empty() ? " (no --save given: state not written)" : "; state saved");
    return 130;
  }
  return 0;
}

int run_benchmark(const Options& o) {
  Setup setup = make_setup(o, o.bodies.front());
  std::uint64_t const steps = o.steps ? o.steps : 10;
  multigpu::Simulation sim(setup.bodies, setup.program, setup.config);
  Measurement const m = measure(sim, o.warmup, steps);
  std::string const hw = hardware(setup.config, openmp_threads(o));
  std::printf("nbody benchmark\n");
  std::printf("  bodies        %zu, %s\n", sim.bodies(), setup.source.c_str());
  std::printf("  backend       %s\n", sim.describe().c_str());
  std::printf("  hardware      %s\n", hw.c_str());
  std::printf("  integrator    %s, dt %g; %llu warm-up + %llu timed steps\n", setup.program.integrator.c_str(),
              setup.program.dt, (unsigned long long)o.warmup, (unsigned long long)steps);
  std::printf("  step time     median %.4f ms  (min %.4f, max %.4f; wall-clock mean %.4f)\n", m.median_ms, m.min_ms,
              m.max_ms, m.wall_mean_ms);
  if (m.device_median_ms.size() > 1) {
    std::printf("  per device    ");
    for (double t : m.device_median_ms) std::printf("%.4f ", t);
    std::printf("ms (median step)\n");
  }
  std::printf("  interactions  %.4e /s  (N^2 / median step time)\n", m.interactions_per_s);
  std::printf("  GFLOP/s       %.1f  (at 20 flops per interaction, the CUDA samples' convention)\n", m.gflops);
  write_json(o, {{"mode", "benchmark"},
                 {"bodies", sim.bodies()},
                 {"source", setup.source},
                 {"backend", sim::to_string(setup.config.backend)},
                 {"description", sim.describe()},
                 {"kernel", sim.kernel_name()},
                 {"precision", to_string(setup.config.precision)},
                 {"devices", setup.config.devices.size()},
                 {"threading", multigpu::to_string(setup.config.threading)},
                 {"hardware", hw},
                 {"integrator", setup.program.integrator},
                 {"warmup_steps", o.warmup},
                 {"timed_steps", steps},
                 {"median_step_ms", m.median_ms},
                 {"min_step_ms", m.min_ms},
                 {"max_step_ms", m.max_ms},
                 {"wall_mean_step_ms", m.wall_mean_ms},
                 {"device_median_step_ms", m.device_median_ms},
                 {"interactions_per_second", m.interactions_per_s},
                 {"gflops", m.gflops},
                 {"flops_per_interaction", 20}});
  return 0;
}

int run_validate(const Options& o) {
  Setup setup = make_setup(o, o.bodies.front());
  multigpu::Simulation sim(setup.bodies, setup.program, setup.config);
  if (o.steps) sim.advance(o.steps);  // validate on an evolved state if asked
  auto const accel = sim.accelerations();
  sim::BodySet const state = sim.state();
  std::size_t const n = state.size();
  std::size_t const samples = std::min<std::size_t>(n, n <= 65536 ? 4096 : 1024);
  std::vector<std::size_t> index(samples);
  for (std::size_t k = 0; k < samples; ++k) index[k] = k * n / samples;  // spread evenly
  std::vector<Vec3d> ref(samples);
  double const eps2 = o.softening * o.softening;
#pragma omp parallel for schedule(dynamic, 16)
  for (long k = 0; k < long(samples); ++k)
    sim::reference_accelerations(state.pos_mass.data(), n, index[k], 1, eps2, &ref[k]);
  double err2 = 0, ref2 = 0, worst = 0;
  bool finite = true;
  for (std::size_t k = 0; k < samples; ++k) {
    Vec3d const d = accel[index[k]] - ref[k];
    finite = finite && std::isfinite(accel[index[k]].x) && std::isfinite(accel[index[k]].y) &&
             std::isfinite(accel[index[k]].z);
    err2 += dot(d, d);
    ref2 += dot(ref[k], ref[k]);
    if (norm(ref[k]) > 0) worst = std::max(worst, norm(d) / norm(ref[k]));
  }
  double const l2 = ref2 > 0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);
  // fp32 summation error grows like sqrt(N): 1e-5 up to 4K bodies, scaled beyond.
  double const tolerance = o.tolerance > 0 ? o.tolerance
                           : setup.config.precision == Precision::fp64
                               ? 1e-12
                               : 1e-5 * std::max(1.0, std::sqrt(double(n) / 4096.0));
  bool const pass = finite && l2 < tolerance;
  std::printf("nbody validate: %zu bodies from %s\n  %s\n", n, setup.source.c_str(), sim.describe().c_str());
  std::printf("  %zu bodies sampled against the fp64 CPU reference\n", samples);
  std::printf("  max relative error  %.3e\n  L2 relative error   %.3e  (tolerance %.1e)\n  %s\n", worst, l2, tolerance,
              pass ? "PASS" : (finite ? "FAIL: above tolerance" : "FAIL: non-finite accelerations"));
  write_json(o, {{"mode", "validate"},
                 {"bodies", n},
                 {"description", sim.describe()},
                 {"samples", samples},
                 {"max_relative_error", worst},
                 {"l2_relative_error", l2},
                 {"tolerance", tolerance},
                 {"pass", pass}});
  return pass ? 0 : 1;
}

int run_devices(const Options& o) {
  std::string why;
  auto const devices = gpu::devices(&why);
  json j = {{"mode", "devices"}, {"devices", json::array()}};
  if (devices.empty()) {
    std::printf("no CUDA devices: %s\n", why.c_str());
    j["reason"] = why;
    write_json(o, j);
    return 0;
  }
  std::printf("%zu CUDA device(s):\n", devices.size());
  for (auto const& d : devices) {
    std::printf("  %d: %s, %d SMs, %.1f GiB, compute capability %d.%d, %d MHz\n", d.ordinal, d.name.c_str(),
                d.multiprocessors, double(d.memory_bytes) / double(1ull << 30), d.major, d.minor, d.clock_mhz);
    j["devices"].push_back({{"ordinal", d.ordinal},
                            {"name", d.name},
                            {"multiprocessors", d.multiprocessors},
                            {"memory_bytes", d.memory_bytes},
                            {"compute_capability", std::to_string(d.major) + "." + std::to_string(d.minor)},
                            {"clock_mhz", d.clock_mhz}});
  }
  std::vector<int> ordinals;
  for (auto const& d : devices) ordinals.push_back(d.ordinal);
  auto const t = gpu::query_topology(ordinals);
  std::printf("peer access (row can access column):\n      ");
  for (int b : ordinals) std::printf("%4d", b);
  std::printf("\n");
  for (std::size_t a = 0; a < ordinals.size(); ++a) {
    std::printf("  %4d", ordinals[a]);
    for (std::size_t b = 0; b < ordinals.size(); ++b) std::printf("%4s", a == b ? "-" : t.can_access[a][b] ? "yes" : "no");
    std::printf("\n");
  }
  j["peer_access"] = t.can_access;
  write_json(o, j);
  return 0;
}

int run_compare_threading(const Options& o) {
  std::uint64_t const steps = o.steps ? o.steps : 10;
  multigpu::SimulationConfig const probe = make_config(o, o.bodies.front());
  int const max_devices = int(probe.devices.size());
  struct Row {
    std::string model;
    int devices;
    std::size_t n;
    Measurement m;
    double speedup, efficiency;
  };
  std::vector<Row> rows;
  for (std::size_t n : o.bodies) {
    Options on = o;
    on.bodies = {n};
    on.bodies_given = true;
    Setup base = make_setup(on, n);
    for (std::string model : {"single", "workers"}) {
      double one_device_ms = 0;
      for (int g = 1; g <= max_devices; ++g) {
        Options og = on;
        og.threading = model;
        og.gpus.clear();
        if (!o.gpus.empty())
          og.gpus.assign(o.gpus.begin(), o.gpus.begin() + g);
        else
          og.numgpus = g;
        og.weights.clear();
        if (!o.weights.empty()) og.weights.assign(o.weights.begin(), o.weights.begin() + g);
        multigpu::SimulationConfig const c = make_config(og, n);
        multigpu::Simulation sim(base.bodies, base.program, c);
        Measurement const m = measure(sim, o.warmup, steps);
        if (g == 1) one_device_ms = m.median_ms;
        double const speedup = one_device_ms / m.median_ms;
        rows.push_back({model, g, n, m, speedup, speedup / g});
        if (!o.quiet)
          std::fprintf(stderr, "  measured %s, %d device(s), N = %zu: %.4f ms\n", model.c_str(), g, n, m.median_ms);
      }
    }
  }
  std::printf("nbody compare-threading: %s backend, %s, %llu warm-up + %llu timed steps per row\n",
              sim::to_string(probe.backend).c_str(), o.precision.c_str(), (unsigned long long)o.warmup,
              (unsigned long long)steps);
  std::printf("%-8s %4s %9s %12s %14s %8s %6s %12s  %s\n", "model", "devs", "N", "median ms", "interactions/s",
              "speed-up", "eff.", "enqueue ms", "per-device median ms");
  std::ostringstream csv;
  csv << "model,devices,bodies,median_step_ms,interactions_per_s,speedup,efficiency,enqueue_ms_per_step,"
         "device_median_ms\n";
  json j = {{"mode", "compare-threading"}, {"rows", json::array()}};
  for (auto const& r : rows) {
    std::string per;
    for (double t : r.m.device_median_ms) per += fmt("%.4f ", t);
    std::printf("%-8s %4d %9zu %12.4f %14.4e %7.2fx %5.0f%% %12.4f  %s\n", r.model.c_str(), r.devices, r.n,
                r.m.median_ms, r.m.interactions_per_s, r.speedup, 100 * r.efficiency, r.m.enqueue_ms_per_step,
                per.c_str());
    csv << r.model << ',' << r.devices << ',' << r.n << ',' << r.m.median_ms << ',' << r.m.interactions_per_s << ','
        << r.speedup << ',' << r.efficiency << ',' << r.m.enqueue_ms_per_step << ",\"" << per << "\"\n";
    j["rows"].push_back({{"model", r.model},
                         {"devices", r.devices},
                         {"bodies", r.n},
                         {"median_step_ms", r.m.median_ms},
                         {"interactions_per_second", r.m.interactions_per_s},
                         {"speedup", r.speedup},
                         {"efficiency", r.efficiency},
                         {"enqueue_ms_per_step", r.m.enqueue_ms_per_step},
                         {"device_median_step_ms", r.m.device_median_ms}});
  }
  if (probe.backend == sim::Backend::cpu)
    std::printf("(CPU backend: host devices run their steps synchronously, so 'enqueue' is the whole step)\n");
  if (!o.csv.empty()) write_text_file(o.csv, csv.str());
  write_json(o, j);
  return 0;
}

}  // namespace nbody::app
