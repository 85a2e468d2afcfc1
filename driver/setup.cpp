// driver/setup.cpp - devices, fallback, memory checks, initial state, step program.
#include "driver/setup.h"

#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>
#include <tuple>
#include <vector>

#include "core/bounds.h"
#include "core/errors.h"
#include "core/interrupt.h"
#include "core/ranks.h"
#include "driver/course.h"
#include "gpu/devices.h"
#include "multigpu/scheduler.h"
#include "sim/engines/engine.h"
#include "sim/io/checkpoint.h"
#include "sim/io/tipsy.h"
#include "sim/physics/hermite_step.h"
#include "sim/physics/scenarios.h"

namespace nbody::driver {

double resolved_softening(const RunConfig& config) {
  if (config.physics.softening > 0 || config.given.softening) return config.physics.softening;
  if (!config.initial.snapshot.empty()) return 0.01;
  // The two-body scenario is Kepler's orbit, which a softening makes precess where it passes close: hermite4, which
  // takes none, runs it unsoftened (the fixed-step integrators need one).
  if (config.initial.scenario == sim::Scenario::two_body && config.physics.integrator == sim::Integrator::hermite4)
    return 0.0;
  return sim::recommended_softening(config.initial.scenario);
}

namespace {

std::optional<std::size_t> read_bytes(const std::string& file) {
  std::ifstream f(file);
  std::string text;
  if (!(f >> text) || text == "max") return std::nullopt;  // cgroup v2 writes "max" for no limit
  try {
    return std::size_t(std::stoull(text));
  } catch (...) {
    return std::nullopt;
  }
}

// What the memory cgroups of this process still allow: the least, over its cgroup and every
// ancestor up to the mount's root, of limit minus usage (v2: memory.max, memory.current; v1:
// memory.limit_in_bytes, memory.usage_in_bytes). Empty when there is no limit or nothing to read.
// Inside a container the path /proc/self/cgroup names may not exist under the mount (a cgroup
// namespace); then the mount's root is the process's own cgroup.
std::optional<std::size_t> cgroup_memory_left() {
  std::ifstream self("/proc/self/cgroup");
  std::string line;
  std::optional<std::size_t> left;
  while (std::getline(self, line)) {
    std::size_t const first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    std::string const controllers = line.substr(first + 1, second - first - 1);
    std::string const path = line.substr(second + 1);
    bool const v2 = line.compare(0, first, "0") == 0 && controllers.empty();
    bool const v1 = (',' + controllers + ',').find(",memory,") != std::string::npos;
    if (!v1 && !v2) continue;
    std::string const mount = v1 ? "/sys/fs/cgroup/memory" : "/sys/fs/cgroup";
    std::string const limit_file = v1 ? "/memory.limit_in_bytes" : "/memory.max";
    std::string const usage_file = v1 ? "/memory.usage_in_bytes" : "/memory.current";
    std::string dir = mount + path;
    if (!std::ifstream(dir + usage_file)) dir = mount;
    while (true) {
      auto const limit = read_bytes(dir + limit_file);
      auto const usage = read_bytes(dir + usage_file);
      if (limit && usage && *limit < (std::size_t(1) << 60))  // v1 writes a huge number for no limit
        left = std::min(left.value_or(*limit), *limit > *usage ? *limit - *usage : 0);
      if (dir.size() <= mount.size()) break;
      dir = dir.substr(0, dir.find_last_of('/'));
    }
  }
  return left;
}

// Whether a --load file is an nbody HDF5 snapshot (else a tipsy file, or none). An nbody checkpoint there is
// refused by name: it is a run to continue.
bool loads_hdf5_snapshot(const std::string& path, const SettingNames& names) {
  if (sim::is_nbody_snapshot(path)) return true;
  if (sim::is_nbody_checkpoint(path))
    throw InputError(path + ": an nbody checkpoint, not a snapshot; " + names.entry("--restart") + " continues it (" +
                     names.entry("--load") + " reads tipsy files and HDF5 snapshots, nbody's and others')");
  return false;
}

}  // namespace

std::size_t available_host_memory() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key, unit;
  std::size_t kib = 0, available = 0;
  while (meminfo >> key >> kib >> unit)
    if (key == "MemAvailable:") available = kib * 1024;
  if (auto const cgroup = cgroup_memory_left()) available = available ? std::min(available, *cgroup) : *cgroup;
  return available;
}

std::size_t host_memory_need(const RunConfig& run, const multigpu::SimulationConfig& c, std::size_t bodies,
                             std::size_t ranks) {
  // The whole state in fp64 (positions, velocities, types), as the host holds it.
  std::size_t const state = bodies * (sizeof(Real4<double>) + sizeof(Vec3d) + 1);
  std::size_t const all_devices = c.devices.size() * std::max<std::size_t>(ranks, 1);
  // An output's writer: its bodies' rows by family and a chunk of values (sim::write_checkpoint's, at most 2^17 rows of
  // three doubles).
  std::size_t const writer =
      bodies * sizeof(std::uint32_t) + std::min<std::size_t>(bodies, 1 << 17) * 3 * sizeof(double);
  if (run.physics.integrator == sim::Integrator::hermite4) {
    // One copy, each body's Hermite state, the block steps'; and a checkpoint's: each body at its own time, with its
    // Hermite state as the file holds it (driver::hermite_state_of), beside the writer.
    std::size_t const checkpoint = state + bodies * (4 * sizeof(Vec3d) + 2 * sizeof(double)) + writer;
    return state + bodies * (2 * sizeof(Vec3d) + 2 * sizeof(double)) + checkpoint +
           multigpu::hermite_host_bytes(c.backend, c.engine, bodies, c.devices.size(), all_devices, c.weights);
  }
  // Fixed steps: three copies (the start's bodies, which a run keeps, a sample's, and the end's or an output's, held
  // together at the end), the simulation's engines and buffers, and an output's writer.
  return 3 * state + writer +
         multigpu::fixed_step_host_bytes(c.backend, c.engine, bodies, c.devices.size(), all_devices, c.weights);
}

multigpu::SimulationConfig resolve_devices(const RunConfig& run, std::size_t bodies, std::vector<std::string>* notices,
                                           const std::string& count_label, std::size_t extra_bytes) {
  DeviceChoice const& d = run.devices;
  SettingNames const& names = run.names;
  multigpu::SimulationConfig c;
  c.names = names;
  c.engine = d.engine;
  c.softening = resolved_softening(run);
  // One whose pair term overflows in this precision is refused now, not as a NaN at the first step. hermite4
  // takes 0 too: it skips the self pair explicitly (and has no regularisation).
  bool const unsoftened = run.physics.integrator == sim::Integrator::hermite4 && c.softening == 0.0;
  if (auto const why = softening_problem(c.softening, c.engine.precision); !why.empty() && !unsoftened) {
    std::ostringstream value;
    value << c.softening;
    std::string const& file = run.initial.checkpoint.empty() ? run.initial.snapshot : run.initial.checkpoint;
    std::string const lead = run.given.softening ? names.with("--softening", value.str())
                             : file.empty()      ? "the softening " + value.str()
                                                 : file + "'s softening " + value.str();
    // The advice fits the value: a larger one only for a positive softening below the precision's least (a file's 1e14
    // was told to grow).
    bool const too_small = c.softening > 0 && c.softening <= kMaxSoftening;
    std::string const advice = too_small ? "give a larger " + names.name("--softening")
                                         : "give " + names.name("--softening") + " in " +
                                               interval(0, kMaxSoftening, Ends::above_min);
    throw InputError(lead + ": " + why + (run.given.softening ? "" : "; " + advice));
  }
  c.weights = d.weights;
  c.threading = d.threading;
  c.launch = d.launch;
  c.exchange = d.exchange;

  std::string why_none;
  auto const gpus = d.backend == BackendChoice::cpu ? std::vector<gpu::DeviceInfo>{} : gpu::devices(&why_none);
  if (d.backend == BackendChoice::cuda && gpus.empty()) {
    if (!sim::cuda_built())
      throw InputError(names.with_text("--backend", "cuda") +
                       ": this nbody was built without CUDA; rebuild where the CUDA toolkit (nvcc) is installed, or use " +
                       names.with_text("--backend", "cpu"));
    throw InputError(names.with_text("--backend", "cuda") + ": no usable CUDA device (" + why_none + ")");
  }
  c.backend = gpus.empty() ? sim::Backend::cpu : sim::Backend::cuda;
  if (d.backend == BackendChoice::automatic && gpus.empty() && notices)
    notices->push_back("no CUDA device (" + why_none + "); running on the CPU" +
                       (d.count > 1 ? ", " + names.with("--numgpus", std::to_string(d.count)) + " as " +
                                          std::to_string(d.count) + " host devices (they share this machine's cores)"
                                    : std::string()));
  // A kernel the backend lacks fails here, before any work; a CUDA kernel where the CPU was chosen for want of a GPU
  // says so (the engine's own refusal names the CPU's kernels, not why the CPU runs).
  if (d.engine.kernel && d.backend == BackendChoice::automatic && c.backend == sim::Backend::cpu &&
      sim::backend_of(*d.engine.kernel) != sim::Backend::cpu)
    throw InputError(names.with_text("--kernel", name_of(*d.engine.kernel)) + ": a CUDA kernel, and there is no CUDA " +
                     "device here (" + why_none + "): the CPU backend runs, with " +
                     sim::kernel_names(sim::Backend::cpu));
  if (d.engine.kernel)
    (void)sim::kernel_for(c.backend, d.engine, names);

  // With several ranks on a host, each takes its share of the host: its own GPUs (by local rank),
  // and its share of the cores.
  Ranks const& ranks = d.ranks ? *d.ranks : world();
  c.ranks = d.ranks;
  int const local_rank = ranks.local_rank(), local_ranks = ranks.local_size();
  std::string const per_rank = ranks.size() > 1 ? " for each of " + std::to_string(local_ranks) + " ranks on host " +
                                                      ranks.host() : std::string();
  if (c.backend == sim::Backend::cuda) {
    int const visible = int(gpus.size());
    if (!d.gpus.empty()) {
      for (int g : d.gpus)
        if (g < 0 || g >= visible)
          throw InputError(names.name("--gpus") + ": GPU " + std::to_string(g) + " does not exist; " + std::to_string(visible) +
                           " CUDA devices are visible (0.." + std::to_string(visible - 1) + ")");
      c.devices = d.gpus;
    } else if (local_ranks > 1 && visible < local_ranks) {
      // Fewer GPUs visible than ranks on the host: the launcher gave each rank its own (srun
      // --gpus-per-task, CUDA_VISIBLE_DEVICES per rank), or they share; either way, use what is visible.
      int const n = d.count == 0 ? visible : d.count;
      if (n > visible)
        throw InputError(names.with("--numgpus", std::to_string(n)) + ": only " + std::to_string(visible) +
                         " CUDA devices are visible to rank " + std::to_string(ranks.rank()));
      c.devices.clear();
      for (int g = 0; g < n; ++g) c.devices.push_back(g);
      if (notices)
        notices->push_back(std::to_string(visible) + " CUDA device(s) visible to each of " +
                           std::to_string(local_ranks) + " ranks on host " + ranks.host() +
                           ": each rank uses what it sees (ranks that share a GPU share its time)");
    } else if (local_ranks > 1) {
      int const n = d.count == 0 ? visible / local_ranks : d.count;
      if (d.count == 0 && visible % local_ranks != 0 && notices)
        notices->push_back(std::to_string(visible % local_ranks) + " of the " + std::to_string(visible) +
                           " GPUs on host " + ranks.host() + " are left idle: " + std::to_string(local_ranks) +
                           " ranks take " + std::to_string(n) + " each (" + names.name("--gpus") + " chooses others)");
      if (n * local_ranks > visible)
        throw InputError(names.with("--numgpus", std::to_string(n)) + per_rank + ": needs " + std::to_string(n * local_ranks) +
                         " CUDA devices, " + std::to_string(visible) + " are visible");
      c.devices.clear();
      for (int g = 0; g < n; ++g) c.devices.push_back(local_rank * n + g);
    } else {
      int const n = d.count == 0 ? visible : d.count;
      if (n > visible)
        throw InputError(names.with("--numgpus", std::to_string(n)) + ": only " + std::to_string(visible) +
                         " CUDA devices are visible");
      c.devices.clear();
      for (int g = 0; g < n; ++g) c.devices.push_back(g);
    }
  } else {
    if (!d.gpus.empty())
      throw InputError(names.name("--gpus") + " applies to the CUDA backend; use " + names.name("--numgpus") +
                       " for host devices");
    // The CUDA backend's launch shape and exchange mean nothing to host devices: refused, not ignored (saying so
    // where the CPU was chosen for want of a GPU).
    std::string const chosen = d.backend == BackendChoice::automatic ? " (no CUDA device here: the CPU backend runs)" : "";
    if (d.engine.block_size != 0)
      throw InputError(names.with("--block-size", std::to_string(d.engine.block_size)) +
                       " applies to the CUDA backend's naive and tiled kernels; the CPU backend has no thread blocks" +
                       chosen);
    if (d.engine.fp64_rsqrt != sim::Fp64Rsqrt::series)
      throw InputError(names.with_text("--fp64-rsqrt", name_of(d.engine.fp64_rsqrt)) +
                       " applies to the CUDA backend's fp64 kernels; the CPU backend takes r^-3 its own way" + chosen);
    if (d.exchange != multigpu::ExchangeMode::automatic)
      throw InputError(names.with_text("--exchange", name_of(d.exchange)) +
                       " applies to the CUDA backend (how GPUs pass positions); host devices share the host's memory" +
                       chosen);
    c.devices.assign(std::size_t(d.count == 0 ? 1 : d.count), 0);
    int const cores = omp_get_num_procs();
    if (c.engine.cpu_threads == 0 && local_ranks > 1) c.engine.cpu_threads = std::max(1, cores / local_ranks);
    // More threads than cores take turns on them, and every step waits for the last of them: many times slower,
    // with nothing else to tell why. A rank bound to cores of its own (mpirun's default) sees only those; one that
    // sees the whole host shares it with the host's other ranks.
    // Under worker threads each host device runs a team of its own, of at least one thread.
    bool const bound = cores < int(std::thread::hardware_concurrency());
    std::size_t const devices = c.devices.size();
    bool const workers = c.threading == multigpu::Threading::workers && devices > 1;
    long long const per_rank_threads =
        workers ? (long long)devices * multigpu::threads_per_engine(c.backend, c.threading, c.engine.cpu_threads, devices)
                : (c.engine.cpu_threads > 0 ? c.engine.cpu_threads : cores);
    long long const threads = per_rank_threads * (bound ? 1 : local_ranks);
    if (notices && threads > cores && (d.engine.cpu_threads > 0 || workers)) {
      std::string given = d.engine.cpu_threads > 0 ? names.with("--threads", std::to_string(c.engine.cpu_threads)) : "";
      if (workers)
        given += (given.empty() ? "" : " over ") + std::to_string(devices) + " host devices on worker threads";
      // The devices alone (a team of one each) crowd the cores, or --threads was not given: fewer devices, or one
      // thread for them all; else fewer threads.
      long long const cores_per_rank = bound ? cores : cores / std::max(1, local_ranks);
      bool const too_many_devices = workers && ((long long)devices > cores_per_rank || d.engine.cpu_threads == 0);
      std::string const most = std::to_string(std::max(1LL, cores_per_rank));
      notices->push_back(given + per_rank + ": " + std::to_string(threads) + " threads on the " +
                         std::to_string(cores) + (cores == 1 ? " core" : " cores") +
                         (bound ? " this process is bound to" : " here") +
                         " take turns, and each step waits for the last; " +
                         (too_many_devices ? "give at most " + most + (most == "1" ? " host device" : " host devices") +
                                                 (local_ranks > 1 && !bound ? " a rank" : "") + ", or " +
                                                 names.with_text("--threading", "single")
                                           : "leave " + names.name("--threads") + " out for one thread a core"));
    }
  }
  // With several ranks the weights cover every rank's devices: the simulation checks them.
  if (ranks.size() == 1 && !d.weights.empty() && d.weights.size() != c.devices.size())
    throw InputError(names.name("--weights") + ": " + std::to_string(d.weights.size()) + " weights for " +
                     std::to_string(c.devices.size()) + (c.devices.size() == 1 ? " device" : " devices") +
                     "; give one per device");

  bool const host_engines = c.backend == sim::Backend::cpu;
  bool const hermite = run.physics.integrator == sim::Integrator::hermite4;
  // Every rank of this host holds its own (the state, and its engines or lists): they share the host's memory.
  std::size_t const need = host_memory_need(run, c, bodies, std::size_t(ranks.size())) + extra_bytes;
  std::size_t const host_need = need * std::size_t(std::max(1, local_ranks));
  std::size_t const have = available_host_memory();
  if (have > 0 && host_need > have) {
    std::ostringstream s;
    // What a process holds: its host devices (each rank its own), or its copies beside the GPUs.
    std::string const held = host_engines ? std::to_string(c.devices.size()) + " host device(s)"
                             : hermite    ? "the state and the block steps' lists"
                                          : "copies of the state, and the GPUs' pinned buffers";
    s << (count_label.empty() ? names.with("--bodies", std::to_string(bodies)) : count_label) << ": needs "
      << (host_need >> 20) << " MiB of memory";
    if (local_ranks > 1)
      s << " on host " << ranks.host() << ": " << (need >> 20) << " MiB for each of its " << local_ranks
        << " ranks (" << (host_engines ? "each on " : "") << held << ")";
    else
      s << (host_engines ? " on " + held : " on the host (" + held + ")");
    s << ", " << (have >> 20) << " MiB available";
    throw InputError(s.str());
  }
  return c;
}

namespace {

std::string number(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

// A checkpoint's settings, restored into `run` where the user named none; a named one that
// differs wins, with a notice. Returns the place in `notices` of the --eta-start one, if any (what it changes
// depends on whether the file's bodies start again, known later).
std::optional<std::size_t> restore_settings(const sim::RunRecord& saved, const std::string& path, RunConfig& run,
                                            std::vector<std::string>& notices, std::vector<std::string>& warnings) {
  auto overrides = [&](const std::string& option, const std::string& given, const std::string& stored,
                       bool text = false) {
    if (given == stored) return;
    notices.push_back((text ? run.names.with_text(option, given) : run.names.with(option, given)) + " overrides " +
                      path + "'s " + stored);
  };
  std::optional<std::size_t> eta_start_notice;
  auto const integrator = from_name<sim::Integrator>(saved.integrator);
  if (!integrator)
    throw InputError(path + ": integrator '" + saved.integrator + "' is not one this nbody has (" +
                     valid_names<sim::Integrator>() + ")");
  PhysicsChoice& p = run.physics;
  if (run.given.integrator) overrides("--integrator", name_of(p.integrator), saved.integrator, true);
  else p.integrator = *integrator;
  // hermite4 has no --dt (its Dt is dt_max): a switch to or from it leaves dt at the integrator's default.
  bool const hermite_involved = *integrator == sim::Integrator::hermite4 || p.integrator == sim::Integrator::hermite4;
  // (A hermite4 file's Dt is its dt_max: a --dt given for another integrator overrides nothing of it.)
  if (run.given.dt && *integrator != sim::Integrator::hermite4) overrides("--dt", number(p.dt), number(saved.dt));
  else if (!run.given.dt) p.dt = hermite_involved ? 0.0 : saved.dt;
  if (!run.given.dt && *integrator == sim::Integrator::hermite4 && p.integrator != sim::Integrator::hermite4)
    notices.push_back(name_of(p.integrator) + " goes on from " + path + "'s hermite4 run, which has no fixed step, at " +
                      name_of(p.integrator) + "'s dt " + number(sim::default_dt(p.integrator)) +
                      " (" + run.names.name("--dt") + " chooses another)");
  if (saved.hermite) {
    auto restore = [&](bool given, const char* option, double& value, double stored) {
      if (given) overrides(option, number(value), number(stored));
      else value = stored;
    };
    restore(run.given.eta, "--eta", p.hermite.eta, saved.hermite->eta);
    std::size_t const before = notices.size();
    restore(run.given.eta_start, "--eta-start", p.hermite.eta_start, saved.hermite->eta_start);
    if (notices.size() > before) eta_start_notice = before;
    restore(run.given.dt_max, "--dt-max", p.hermite.dt_max, saved.hermite->dt_max);
  }
  if (run.given.damping) overrides("--damping", number(p.damping), number(saved.damping));
  else p.damping = saved.damping;
  if (run.given.softening) {
    overrides("--softening", number(p.softening), number(saved.softening));
  } else if (saved.softening == 0.0) {
    // hermite4's "no softening" (the reader takes 0 from no other integrator's file). 0 elsewhere means "none
    // chosen" (the scenario's), so it is kept as a chosen one: every later setting of this run keeps it too.
    if (p.integrator != sim::Integrator::hermite4)
      throw InputError(path + "'s softening 0 (hermite4's, no softening): " + name_of(p.integrator) +
                       " needs a softening length; give " + run.names.name("--softening"));
    p.softening = 0.0;
    run.given.softening = true;
  } else {
    p.softening = saved.softening;
  }
  if (run.given.precision)
    overrides("--precision", name_of(run.devices.engine.precision), name_of(saved.precision), true);
  else run.devices.engine.precision = saved.precision;
  // Units are what the files say, not physics: new ones relabel the whole run, its time reached and the times its
  // series were written at included. A warning, which --quiet does not hide: a mistyped exponent in a job script's
  // restart line would otherwise pass unseen.
  // The same scale in other words (1e5Msun as 100000Msun, 1pc as 0.001kpc) relabels nothing.
  if (run.given.units && !run.units.same_scale(saved.units))
    warnings.push_back(run.names.with("--mass-unit and --length-unit", run.units.describe()) + " override " + path +
                       "'s " + saved.units.describe() + ": the same numbers in other units, so the run's time reached, " +
                       "its series' times and every length and mass read anew in them (" + run.units.derived() + ")");
  else if (!run.given.units)
    run.units = saved.units;
  return eta_start_notice;
}

}  // namespace

void check_no_shared_positions(const sim::BodySet& bodies, double softening, const std::string& source,
                               const SettingNames& names) {
  if (softening != 0.0 || bodies.size() < 2) return;
  std::vector<std::uint32_t> order(bodies.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = std::uint32_t(i);
  auto const key = [&](std::uint32_t i) {
    auto const& p = bodies.pos_mass[i];
    return std::make_tuple(p.x, p.y, p.z, i);
  };
  auto const less = [&](std::uint32_t a, std::uint32_t b) { return key(a) < key(b); };
  // A start-up phase like any other: sorted a block at a time, then merged, with a signal's check between (10^8
  // bodies take minutes on one core).
  constexpr std::size_t kBlock = std::size_t(1) << 20;
  std::size_t const n = order.size();
  for (std::size_t b = 0; b < n; b += kBlock) {
    throw_if_interrupted();
    std::sort(order.begin() + long(b), order.begin() + long(std::min(n, b + kBlock)), less);
  }
  for (std::size_t width = kBlock; width < n; width *= 2)
    for (std::size_t b = 0; b + width < n; b += 2 * width) {
      throw_if_interrupted();
      std::inplace_merge(order.begin() + long(b), order.begin() + long(b + width),
                         order.begin() + long(std::min(n, b + 2 * width)), less);
    }
  for (std::size_t k = 1; k < order.size(); ++k) {
    auto const& a = bodies.pos_mass[order[k - 1]];
    auto const& b = bodies.pos_mass[order[k]];
    if (a.x != b.x || a.y != b.y || a.z != b.z) continue;
    std::ostringstream s;
    s << source << ": bodies " << std::min(order[k - 1], order[k]) << " and " << std::max(order[k - 1], order[k])
      << " are at the same position (" << number(a.x) << ", " << number(a.y) << ", " << number(a.z) << "): with "
      << names.with("--softening", "0")
      // Two test particles pull on neither, but their pair is 0 x infinity all the same, which no sum survives.
      << (a.w == 0.0 && b.w == 0.0 ? " their pair is 0/0, though neither has mass"
                                   : " their force is infinite")
      << "; give a softening, or move one of them";
    throw InputError(s.str());
  }
}

std::string massless_notice(const sim::BodySet& bodies, const std::string& source) {
  std::size_t const massive = static_cast<std::size_t>(
      std::count_if(bodies.pos_mass.begin(), bodies.pos_mass.end(), [](const auto& p) { return p.w != 0.0; }));
  if (bodies.size() > 0 && massive == 0)
    return "every body of " + source + " has mass 0: none attracts another, so each moves in a straight line";
  // One body with mass among test particles (a star and its massless planetesimals): the energy is that body's
  // alone, so its error stays 0 however the test particles' orbits go.
  if (bodies.size() > 1 && massive == 1)
    return "one body of " + source + " has mass, the others are massless test particles: they carry no energy, so the "
           "energy error measures nothing of their orbits (compare them with their analytic orbits instead)";
  return {};
}

void check_time_resolution(double time, const sim::StepProgram& program, const std::string& source,
                           const SettingNames& names) {
  double const least = std::abs(time) * sim::hermite::kRelativeFloor;
  double const step = program.hermite ? sim::hermite::pow2_at_most(program.hermite->dt_max) : program.dt;
  if (step >= least) return;
  std::string const option = program.hermite ? "--dt-max" : "--dt";
  throw InputError(source + ": at time " + number(time) + ", " + names.with(option, number(step)) +
                   " is below what fp64 times resolve there (steps of at least 2^-44 of the time, " + number(least) +
                   "), so the clock would not advance; start from a time nearer 0, or give a longer step");
}

std::string dt_max_notice(const RunConfig& run) {
  auto const& p = run.physics;
  if (p.integrator != sim::Integrator::hermite4 || !run.given.dt_max) return {};
  double const top = sim::hermite::pow2_at_most(p.hermite.dt_max);
  if (top == p.hermite.dt_max) return {};
  return run.names.with("--dt-max", number(p.hermite.dt_max)) + ": the longest step is " + number(top) +
         ", the power of two at or below it (every step is a power of two)";
}

std::string eta_notice(const RunConfig& run) {
  auto const& p = run.physics;
  if (p.integrator != sim::Integrator::hermite4) return {};
  bool const fp32 = run.devices.engine.precision == Precision::fp32;
  double const least = fp32 ? 1e-3 : 1e-7;
  if (p.hermite.eta >= least) return {};
  return run.names.with("--eta", number(p.hermite.eta)) + ": below about " + number(least) + " with " +
         run.names.with_text("--precision", fp32 ? "fp32" : "fp64") +
         ", the forces' rounding, not the orbits, sets the steps, which shrink towards the floor and slow the run "
         "many times over; eta is usually 0.01 to 0.05" +
         (fp32 ? " (" + run.names.with_text("--precision", "fp64") + " allows one down to about 1e-7)" : "");
}

void check_integrator_options(const RunConfig& run) {
  bool const hermite = run.physics.integrator == sim::Integrator::hermite4;
  GivenSettings const& g = run.given;
  SettingNames const& n = run.names;
  if (g.damping && run.physics.integrator != sim::Integrator::euler_damped)
    throw InputError(n.with("--damping", number(run.physics.damping)) + ": " + name_of(run.physics.integrator) +
                     " does not damp velocities (only euler-damped has a damping factor)");
  if (hermite && g.dt)
    throw InputError(n.with("--dt", number(run.physics.dt)) + ": hermite4 chooses each body's step (a power of two up to " +
                     n.name("--dt-max") + ", from " + n.name("--eta") + "); give " + n.name("--dt-max") + " instead");
  if (hermite && run.devices.engine.kernel)
    throw InputError(n.with_text("--kernel", name_of(*run.devices.engine.kernel)) +
                     ": hermite4 has its own force+jerk kernels; leave " + n.name("--kernel") + " out");
  // The fixed-step kernels' launch shape and fp64 r^-3: nothing to hermite4's own kernels.
  if (hermite && run.devices.engine.block_size != 0)
    throw InputError(n.with("--block-size", std::to_string(run.devices.engine.block_size)) +
                     ": hermite4 has its own force+jerk kernels and launch shapes; leave " + n.name("--block-size") +
                     " out");
  if (hermite && run.devices.engine.fp64_rsqrt != sim::Fp64Rsqrt::series)
    throw InputError(n.with_text("--fp64-rsqrt", name_of(run.devices.engine.fp64_rsqrt)) +
                     ": hermite4's fp64 pair has its own r^-1; leave " + n.name("--fp64-rsqrt") + " out");
  if (!hermite && g.softening && run.physics.softening == 0.0)
    throw InputError(n.with("--softening", "0") + ": must be a length in (0, " + number(kMaxSoftening) + "]" +
                     "; 0 (no softening) only with " + n.with_text("--integrator", "hermite4") + " (this run's is " +
                     name_of(run.physics.integrator) + ")");
  if (!hermite && (g.eta || g.eta_start || g.dt_max))
    throw InputError(n.name(g.eta ? "--eta" : g.eta_start ? "--eta-start" : "--dt-max") + ": applies to " +
                     n.with_text("--integrator", "hermite4") + " only (" + name_of(run.physics.integrator) +
                     " takes one " + n.name("--dt") + " for every body)");
}

bool hermite_state_goes_on(const sim::hermite::HermiteState& state, double was, double now,
                           const std::optional<sim::hermite::HermiteParams>& was_steps,
                           const sim::hermite::HermiteParams& now_steps) {
  if (!state.stepped() || was != now) return false;
  return (was_steps && sim::hermite::same_step_settings(*was_steps, now_steps)) ||
         sim::hermite::first_below_floor(state, now_steps) < 0;
}

std::string floor_restart_notice(const sim::hermite::HermiteState& state, double time, const std::string& source,
                                 const sim::hermite::HermiteParams& now_steps) {
  if (!state.stepped()) return {};  // not started, or before its first block step: no step refused yet
  std::int64_t const body = sim::hermite::first_below_floor(state, now_steps);
  if (body < 0) return {};
  std::ostringstream m;
  m.precision(3);
  m << "hermite4 starts every body again at time " << number(time) << ": " << source
    << " holds the state of a run that stopped at the floor (body " << body << "'s step "
    << state.step[std::size_t(body)] << "), which other step settings do not keep";
  return m.str();
}

namespace {
// The bodies' positions and velocities from a Hermite state's, which are fp64 in every file (each body's at its own
// time).
void take_hermite_bodies(sim::BodySet& bodies, const sim::hermite::HermiteState& state) {
  if (state.position.size() != bodies.size() || state.velocity.size() != bodies.size())
    throw std::logic_error("take_hermite_bodies: the Hermite state is not of these bodies");
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    auto const& x = state.position[i];
    bodies.pos_mass[i] = {x.x, x.y, x.z, bodies.pos_mass[i].w};
    bodies.velocity[i] = state.velocity[i];
  }
}
// The bodies every one at the state's block time, as a simulation's state() gives them: each predicted in fp64 from
// its own time's position, velocity, acceleration and jerk (an fp32 file's particle groups hold these rounded).
void take_synchronised_hermite_bodies(sim::BodySet& bodies, const sim::hermite::HermiteState& state) {
  if (state.position.size() != bodies.size() || state.velocity.size() != bodies.size() ||
      state.acceleration.size() != bodies.size() || state.jerk.size() != bodies.size())
    throw std::logic_error("take_synchronised_hermite_bodies: the Hermite state is not of these bodies");
  double const now = state.block_time();
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    Vec3d x, v;
    sim::hermite::predict(state.position[i], state.velocity[i], state.acceleration[i], state.jerk[i],
                          now - state.time[i], x, v);
    bodies.pos_mass[i] = {x.x, x.y, x.z, bodies.pos_mass[i].w};
    bodies.velocity[i] = v;
  }
}
}  // namespace

void continue_hermite(Setup& s, sim::hermite::HermiteState state) {
  if (state.started()) take_hermite_bodies(s.bodies, state);
  // Under a lower dt max (a restart's, a front end's change between steps) a step longer than the new longest one is
  // cut to the shortest power of two from that up that still ends after the block time (the latest body time): a
  // body's time is a multiple of its step, so of every shorter power of two, and its polynomial from there holds for
  // the shorter step. At a time every body shares (a frame's or a span's end, a finish) that is the new longest step,
  // so the body ends at the next multiple of it with every other body, corrected there, where the step kept would
  // have left it predicted (a viewer's frame, a series' sample); elsewhere it ends as soon as it can.
  if (s.program.hermite && state.started()) {
    double const top = sim::hermite::pow2_at_most(s.program.hermite->dt_max);
    double const block = state.block_time();
    for (std::size_t i = 0; i < state.size(); ++i) {
      double p = top;
      while (p < state.step[i] && !(state.time[i] + p > block)) p *= 2.0;
      state.step[i] = std::min(state.step[i], p);
    }
  }
  s.hermite = std::move(state);
}

namespace {

// make_setup's work; with `bodies` false only its checks, returning before the bodies are read or made.
Setup prepare(const RunConfig& requested, const std::atomic<bool>* cancel, bool bodies) {
  Setup s;
  RunConfig run = requested;
  InitialConditions const& ic = run.initial;
  if (!ic.checkpoint.empty() && !ic.snapshot.empty())
    throw InputError("--restart and --load both given; a checkpoint already holds the bodies");
  if (!ic.checkpoint.empty()) {
    // The header first: settings, bounds and the body count, so that memory is checked before the
    // bodies are read (a small file may declare a billion of them).
    sim::CheckpointHeader const header = sim::read_checkpoint_header(ic.checkpoint, run.names);
    sim::RunRecord const& saved = header.run;
    std::optional<std::size_t> const eta_start_notice = restore_settings(saved, ic.checkpoint, run, s.notices, s.warnings);
    check_integrator_options(run);
    if (ic.bodies != 0 && ic.bodies != header.bodies)
      throw InputError(run.names.with("--bodies", std::to_string(ic.bodies)) + ": " + ic.checkpoint + " holds " +
                       std::to_string(header.bodies) + " bodies; leave " + run.names.name("--bodies") + " out with " +
                       run.names.name("--restart"));
    if (run.given.seed && !from_name<sim::Scenario>(saved.scenario))
      throw InputError(run.names.with("--seed", std::to_string(ic.seed)) + ": " + ic.checkpoint + "'s bodies came from " +
                       saved.scenario + ", not a seeded scenario; leave " + run.names.name("--seed") + " out with " +
                       run.names.name("--restart"));
    if (run.given.seed && ic.seed != saved.seed)
      throw InputError(run.names.with("--seed", std::to_string(ic.seed)) + ": " + ic.checkpoint +
                       "'s bodies were made with seed " + std::to_string(saved.seed) + "; leave " +
                       run.names.name("--seed") + " out with " + run.names.name("--restart"));
    s.program = sim::make_step_program(integrator_params(run.physics));
    // Reading keeps the file's values beside the state for a moment: row indices and one chunk.
    s.config = resolve_devices(run, std::size_t(header.bodies), &s.notices,
                               ic.checkpoint + " holds " + std::to_string(header.bodies) + " bodies",
                               std::size_t(header.bodies) * sizeof(std::uint64_t));
    if (!bodies) return s;
    sim::Checkpoint checkpoint = sim::read_checkpoint(ic.checkpoint, run.names);
    // The file is opened twice; another run may have replaced it (atomically) in between.
    if (checkpoint.bodies.size() != header.bodies || checkpoint.run != saved)
      throw InputError(ic.checkpoint + ": the file changed while it was read (another run writes it?); try again");
    if (!checkpoint.verified)
      s.notices.push_back(ic.checkpoint + " has no checksum (written by hand, or by an older nbody): read unverified");
    s.clock = {saved.step, saved.start_time, saved.dt_since_step, saved.dt_since_time};
    // A new dt goes on from the time reached, not from step 0 at the new rate.
    if (s.program.dt != saved.dt) s.clock = s.clock.with_new_dt(saved.dt);
    s.initial_energy = saved.initial_energy;
    // Another softening is another potential: the file's start energy is not this system's, and an error measured
    // from it would be the change of potential. The baseline becomes this run's start.
    if (s.initial_energy && run.physics.softening != saved.softening) {
      s.initial_energy.reset();
      s.notices.push_back("the energy error is measured from this run's start, not " + ic.checkpoint +
                          "'s: another softening is another potential");
    } else if (s.initial_energy && !checkpoint.verified) {
      // Bodies edited by hand are another system (as bodies set from Python are): its start energy is not theirs.
      s.initial_energy.reset();
      s.notices.push_back("the energy error is measured from this run's start, not " + ic.checkpoint +
                          "'s: its bodies, unverified, may have been edited");
    }
    s.scenario = saved.scenario;
    s.seed = saved.seed;
    bool const blocks = saved.integrator == name_of(sim::Integrator::hermite4);
    s.file_end = {saved.end_time, saved.end_step, blocks};
    auto const cadence = [](const std::optional<std::uint64_t>& every, const std::optional<double>& dt) {
      return Cadence{every.value_or(0), dt.value_or(0.0)};
    };
    s.continued_cadences = {cadence(saved.diagnostics_every, saved.diagnostics_dt),
                            cadence(saved.checkpoint_every, saved.checkpoint_dt),
                            cadence(saved.snapshot_every, saved.snapshot_dt),
                            blocks,
                            saved.step,
                            ic.checkpoint,
                            saved.diagnostics_digest};
    s.bodies = std::move(checkpoint.bodies);
    s.bodies.time = s.clock.time(s.program.dt);
    // A hermite4 file's particle groups hold every body predicted to the file's time (the writer's own prediction),
    // in the run's precision; its Hermite group holds what they were predicted from, in fp64. An fp64 file's groups
    // are that state to the bit. An fp32 file's are rounded to fp32, though hermite4 keeps positions in fp64: the
    // state is predicted again from the Hermite group (before the first block step, every body is as it started), so
    // that a run that starts every body again from such a file (another softening, say) goes on from hermite4's own
    // positions, to the bit those of a CPU run that changed the setting in place (a GPU's predictor rounds in its
    // own way: to within its last bits).
    // A file with no checksum was edited by hand (h5py), where what a user edits is the particle groups: their
    // bodies are taken, and the Hermite group, which may no longer be of them (its accelerations and jerks are of the
    // old masses and positions), is not.
    bool const edited = !checkpoint.verified && checkpoint.hermite.started();
    if (checkpoint.hermite.started() && !edited) {
      if (checkpoint.hermite.block_time() == 0.0)
        take_hermite_bodies(s.bodies, checkpoint.hermite);
      else if (saved.precision == Precision::fp32)
        take_synchronised_hermite_bodies(s.bodies, checkpoint.hermite);
    }
    // Each body at its own time, bit for bit; but where the file's accelerations and jerks are of another softening
    // (another potential), or no block step was made (the start steps are this run's settings'), every body starts
    // again from the synchronised state.
    bool const softening_changed = run.physics.softening != saved.softening;
    bool hermite_goes_on = false;  // each body goes on from its own step (eta_start then chooses none)
    if (s.program.hermite && edited) {
      s.notices.push_back("hermite4 starts every body again at time " + number(s.bodies.time) + " from " +
                          ic.checkpoint + "'s particle groups (PartType*), as edited: its /Hermite state, unverified, "
                          "may be of the bodies before the edit; the energy error is measured from this run's start");
      // Another system, as new bodies are: its error is not measured from the file's start energy.
      s.initial_energy.reset();
    } else if (s.program.hermite && checkpoint.hermite.started() && softening_changed) {
      s.notices.push_back("hermite4 starts every body again at time " + number(s.bodies.time) + ": " +
                          ic.checkpoint + "'s accelerations and jerks were of the softening " +
                          number(saved.softening));
    } else if (s.program.hermite && hermite_state_goes_on(checkpoint.hermite, saved.softening, run.physics.softening,
                                                          saved.hermite, *s.program.hermite)) {
      hermite_goes_on = true;
      // eta_start chooses first steps only: where every body goes on from its own step, a new one changes nothing.
      if (eta_start_notice)
        s.notices[*eta_start_notice] +=
            " (it chooses first steps: the file's bodies go on from their own, so it changes nothing now)";
      continue_hermite(s, std::move(checkpoint.hermite));
    } else if (std::string const notice =
                   s.program.hermite
                       ? floor_restart_notice(checkpoint.hermite, s.bodies.time, ic.checkpoint, *s.program.hermite)
                       : std::string();
               !notice.empty()) {
      s.notices.push_back(notice);
    } else if (s.program.hermite && saved.integrator != name_of(sim::Integrator::hermite4)) {
      s.notices.push_back("hermite4 starts from " + ic.checkpoint + "'s " + saved.integrator +
                          " state at time " + number(s.bodies.time) +
                          ": each body's acceleration, jerk and first step are computed there, as at a run's start");
    }
    // The course: the checkpoint's, unless a setting that decides the trajectory is another now (the run branches at
    // its step; one named with the value it had, or one that acts on nothing here, changes none), or its bodies were
    // edited.
    sim::StepProgram was;
    was.integrator = saved.integrator;
    was.dt = saved.dt;
    was.hermite = saved.hermite;
    std::string const settings = course_settings(s.program, run.physics.softening, run.devices.engine.precision,
                                                 run.physics.damping, !hermite_goes_on);
    std::string const saved_settings =
        course_settings(was, saved.softening, saved.precision, saved.damping, !hermite_goes_on);
    s.course_changed = settings != saved_settings;
    // A file without its checksum may hold bodies edited by hand (any integrator's): another course from its step.
    bool const unverified = !checkpoint.verified;
    s.course = s.course_changed || unverified
                   ? branch_course(course_of(saved), saved.step, settings, unverified ? &s.bodies : nullptr)
                   : course_of(saved);
    if (s.course_changed && !unverified)
      s.branched = Setup::CourseBranch{course_of(saved), saved.step, saved_settings, false, 0};
    if (s.course_changed || unverified) s.course_from = saved.step;
    s.source = ic.checkpoint + " (step " + std::to_string(s.clock.step) + ", time " + number(s.bodies.time) + ")";
  } else if (!ic.snapshot.empty()) {
    check_integrator_options(run);
    s.program = sim::make_step_program(integrator_params(run.physics));  // cheap checks first
    auto check_count = [&](std::size_t held) {
      if (ic.bodies != 0 && ic.bodies != held)
        throw InputError(run.names.with("--bodies", std::to_string(ic.bodies)) + ": " + ic.snapshot + " holds " +
                         std::to_string(held) + " bodies; leave " + run.names.name("--bodies") + " out with " +
                         run.names.name("--load"));
    };
    // A tipsy file, or an nbody HDF5 snapshot: bodies, a time and a softening (a snapshot's units too), no settings;
    // or another program's HDF5 snapshot in the GADGET/SWIFT layout: bodies, a time and units where it states them.
    bool const hdf5 = loads_hdf5_snapshot(ic.snapshot, run.names);
    bool const foreign = !hdf5 && sim::is_foreign_snapshot(ic.snapshot);
    // The header, before the bodies are read.
    check_count(hdf5      ? std::size_t(sim::read_snapshot(ic.snapshot, run.names, false).count)
                : foreign ? std::size_t(sim::read_foreign_snapshot(ic.snapshot, run.names, false).count)
                          : sim::read_tipsy_bodies(ic.snapshot, run.names));
    if (!bodies) return s;
    sim::TipsyInfo info;
    std::string said;  // what the file is, and what it lacks
    // Units named for a file that states its own relabel its numbers, as a restart's do: warned, as there (a
    // system 1000 times smaller, for 1pc given with a file in kpc). Another program's constants for the same units
    // (GADGET's solar mass, 3e-4 from the IAU's) are the same scale; nbody's own files are held to a restart's 1e-12.
    auto relabels = [&](const sim::Units& stated, const std::string& where, double tolerance) {
      if (run.given.units && stated.physical() && !run.units.same_scale(stated, tolerance))
        s.warnings.push_back(run.names.with("--mass-unit and --length-unit", run.units.describe()) + " override " +
                             where + "'s " + stated.describe() + ": its numbers read in other units, not converted, " +
                             "so every length, mass, velocity and time is another (" + run.units.derived() +
                             "); leave them out to run in the file's units");
    };
    if (foreign) {
      sim::ForeignSnapshot snapshot = sim::read_foreign_snapshot(ic.snapshot, run.names);
      s.bodies = std::move(snapshot.bodies);
      run.initial.unkept = "another program's HDF5 layout and whatever else its groups hold";
      info.softening = std::nullopt;
      if (snapshot.units_stated) relabels(snapshot.units, ic.snapshot, 1e-3);
      if (!run.given.units && snapshot.units_stated) {
        run.units = snapshot.units;
        s.notices.push_back("units " + run.units.describe() + " from " + ic.snapshot + " (velocities and time in the " +
                            "G = 1 units of its mass and length; " + run.names.name("--mass-unit and --length-unit") +
                            " relabel them)");
      } else if (!run.given.units) {
        s.notices.push_back(ic.snapshot + " states no units (GADGET keeps them in its parameter file), so its " +
                            "values are read as N-body units, G = 1, velocities included (not km/s); a file in other " +
                            "units states them in GADGET-4's /Parameters group (UnitLength_in_cm, UnitMass_in_g, " +
                            "UnitVelocity_in_cm_per_s; or AREPO's Header attributes of those names), which nbody " +
                            "then converts");
      } else if (!snapshot.units_stated) {
        // Units named for a file that states none: its velocities are read in the unit they make, which GADGET's
        // customary ones (kpc, 1e10 Msun, km/s) are not (G is 43007 there): 207 times too fast, with exit 0.
        char velocity[48];
        std::snprintf(velocity, sizeof velocity, "%.4g km/s", run.units.velocity_cm_per_s() / 1e5);
        s.warnings.push_back(ic.snapshot + " states no units, and " +
                             run.names.with("--mass-unit and --length-unit", run.units.describe()) +
                             " make its values G = 1 units: its velocities are read in units of " + velocity +
                             ", right for a file in G = 1 units, but not for one in km/s, as GADGET's customary " +
                             "units (kpc, 1e10 Msun, km/s) keep them; such a file states its units in /Parameters " +
                             "(UnitLength_in_cm, UnitMass_in_g, UnitVelocity_in_cm_per_s), which nbody then converts");
      }
      if (!snapshot.cosmology.empty())
        s.warnings.push_back(ic.snapshot + "'s header names a cosmology (" + snapshot.cosmology + ") and does not " +
                             "say whether its run was comoving: if it was, its positions are comoving (in units " +
                             "with h) and its Time the scale factor, which nbody reads as physical values and a " +
                             "time, in open space (no box, no expansion), and what nbody can run of it is a halo cut " +
                             "out in physical units; if it was not, an attribute ComovingIntegrationOn = 0 in a " +
                             "/Parameters group says so");
      if (!snapshot.dropped.empty()) {
        // (A cosmological simulation's groups hold a hundred fields: the first dozen named, the rest counted.)
        constexpr std::size_t kNamed = 12;
        std::vector<std::string> named(snapshot.dropped.begin(),
                                       snapshot.dropped.begin() + long(std::min(snapshot.dropped.size(), kNamed)));
        if (std::size_t const more = snapshot.dropped.size() - named.size())
          named.push_back(std::to_string(more) + " more");
        s.notices.push_back(ic.snapshot + "'s " + spoken_list(named) + (snapshot.dropped.size() == 1 ? " is" : " are") +
                            " not kept (nbody integrates gravity alone: its outputs hold none of them)");
      }
      said = ic.snapshot + " is another program's HDF5 snapshot: " + snapshot.layout +
             "; PartType0 read as gas, 4 as stars, the others as dark matter, numbered 0, 1, ... in the file's order" +
             (snapshot.renumbered ? " (its ParticleIDs are not kept)" : "") + "; no softening, step count or time step";
      // IDs other than that order (GADGET's from 1, say) would pair every body with another where outputs are matched
      // to the file by ID: a warning, which --quiet does not hide.
      if (auto const& r = snapshot.renumbered)
        s.warnings.push_back(ic.snapshot + "'s ParticleIDs are not kept: nbody numbers the bodies 0, 1, ... in the " +
                             "file's order (PartType0 first), and body " + std::to_string(r->body) + " has the ID " +
                             std::to_string(r->id) + " there; its outputs' ParticleIDs are that order, so match " +
                             "them to the file by position in it, not by ID");
    } else if (hdf5) {
      sim::Snapshot snapshot = sim::read_snapshot(ic.snapshot, run.names);
      s.bodies = std::move(snapshot.bodies);
      info.softening = snapshot.softening;
      relabels(snapshot.units, ic.snapshot, 1e-12);
      if (!run.given.units && snapshot.units.physical()) {
        run.units = snapshot.units;
        s.notices.push_back("units " + run.units.describe() + " from " + ic.snapshot + " (" +
                            run.names.name("--mass-unit and --length-unit") + " relabel them)");
      }
      said = ic.snapshot + " is an nbody snapshot of step " + std::to_string(snapshot.step) + ": " +
             name_of(snapshot.precision) + " values" +
             (snapshot.precision == Precision::fp32 ? "" : ", positions to the shift's rounding") +
             ", no integrator or time step; this is a new run from step 0 at its time";
    } else {
      s.bodies = sim::read_tipsy(ic.snapshot, &info, run.names);
      said = ic.snapshot + " is a tipsy snapshot: float32 positions and velocities, no step count, integrator or time step";
      // nbody integrates gravity alone: the other fields of its gas and stars are read past, and a save writes 0.
      std::string const fields = std::string("its ") +
                                 (info.gas_fields ? std::string("gas's density, temperature and metals") +
                                                        (info.star_fields ? " and its stars'" : "")
                                                  : "stars'") +
                                 (info.star_fields ? " metals and formation times" : "");
      if (info.gas_fields || info.star_fields)
        said += "; " + fields + " are not kept (nbody integrates gravity alone: a save writes them as 0)";
      // What a save over the file would lose (driver::check_outputs_spare_inputs): those fields, and each body's own
      // eps (a gas's smoothing length), where they differ (nbody keeps one softening).
      std::vector<std::string> lost;
      if (info.gas_fields || info.star_fields) lost.push_back(fields);
      if (!info.softening)
        lost.push_back("its bodies' own softenings (eps from " + number(info.eps_min) + " to " + number(info.eps_max) +
                       ")");
      run.initial.unkept = spoken_list(lost);
      // Tipsy holds no units; nbody states them beside the file it saves in units.
      std::string const param = sim::tipsy_param_path(ic.snapshot);
      // Units given go past the file beside it, whatever it holds (nbody's damaged, another program's refused): what
      // it states, where it can be read, is only compared with them.
      if (run.given.units) try {
          if (auto const stated = sim::read_tipsy_param(ic.snapshot))
            relabels(*stated, param, sim::is_nbody_tipsy_param(param) ? 1e-12 : 1e-3);
        } catch (const InputError&) {
        }
      auto param_units = [&]() -> std::optional<sim::Units> {
        if (run.given.units) return std::nullopt;
        try {
          return sim::read_tipsy_param(ic.snapshot);
        } catch (const InputError& e) {  // another program's file, which the user may not edit: the way past it
          if (sim::is_nbody_tipsy_param(param)) throw;
          throw InputError(std::string(e.what()) + "; " + run.names.name("--mass-unit and --length-unit") +
                           " give the run units of its own, past it");
        }
      };
      if (auto const stated = param_units()) {
        run.units = *stated;
        s.notices.push_back("units " + run.units.describe() + " from " + param + " (" +
                            run.names.name("--mass-unit and --length-unit") + " relabel them)");
      } else if (std::error_code ec; !run.given.units && std::filesystem::exists(param, ec)) {
        s.notices.push_back(param + " beside " + ic.snapshot + " states no units (dMsolUnit and dKpcUnit, which " +
                            "pynbody takes together only), so this run is in N-body units (" +
                            run.names.name("--mass-unit and --length-unit") + " name them)");
      } else if (!run.given.units) {
        // A gasoline run's parameter file (run.param) states the units of every tipsy file of its folder to pynbody.
        if (auto const other = sim::nearest_other_param_file(param))
          s.notices.push_back(std::string(other->above ? "the folder above " : "the folder of ") + ic.snapshot +
                              " holds " + other->path + ", from which pynbody " + (other->above ? "" : "and yt ") +
                              "may take its units; " +
                              "nbody takes them only from " + param + ", so this run is in N-body units (" +
                              run.names.name("--mass-unit and --length-unit") + " name them)");
      }
    }
    check_count(s.bodies.size());
    // The file's softening, where its bodies give one that this integrator takes; else the default, said with why.
    if (run.physics.softening == 0 && !run.given.softening && s.bodies.size() > 0) {
      std::string const option = run.names.name("--softening");
      bool const hermite = run.physics.integrator == sim::Integrator::hermite4;
      if (info.softening && (*info.softening > 0 || hermite)) {
        run.physics.softening = *info.softening;
        if (*info.softening == 0) run.given.softening = true;  // hermite4's "no softening", not "none chosen"
        s.notices.push_back("softening " + number(*info.softening) + " from " + ic.snapshot +
                            (*info.softening > 0 ? "" : ": no softening, which hermite4 takes") + " (" + option +
                            " overrides it)");
      } else {
        run.physics.softening = 0.01;
        std::string const why =
            foreign          ? std::string(" states no softening (GADGET keeps it in its parameter file)")
            : info.softening ? std::string(hdf5 ? "'s softening is 0" : "'s bodies carry eps 0") +
                                 " (no softening), which only hermite4 takes"
                           : "'s bodies carry eps from " + number(info.eps_min) + " to " + number(info.eps_max) +
                                 ", and nbody has one softening for every body";
        s.notices.push_back(ic.snapshot + why + ": this run's is 0.01 (" + option + " sets it)");
      }
    }
    s.notices.push_back(said + "; a " + run.names.name("--checkpoint") + " file continues a run exactly");
    s.source = ic.snapshot;
    s.scenario = "file:" + ic.snapshot;
    s.config = resolve_devices(run, s.bodies.size(), &s.notices);
    s.clock = {0, s.bodies.time};
  } else {
    check_integrator_options(run);
    s.program = sim::make_step_program(integrator_params(run.physics));  // cheap checks first
    sim::ScenarioParams p;
    p.scenario = ic.scenario;
    p.bodies = ic.bodies != 0 ? ic.bodies : sim::default_bodies(ic.scenario);
    p.seed = ic.seed;
    p.eccentricity = ic.eccentricity;
    sim::check_scenario(p, run.names);
    s.config = resolve_devices(run, p.bodies, &s.notices);  // checks memory before the bodies are made
    if (!bodies) return s;
    try {
      s.bodies = sim::make_scenario(p, cancel, run.names);
    } catch (const sim::GenerationCancelled&) {
      throw sim::StepCancelled();  // the front end's one word for work it gave up
    }
    // two-body draws nothing: no seed to name.
    s.source = name_of(ic.scenario) +
               (ic.scenario == sim::Scenario::two_body ? std::string() : " (seed " + std::to_string(ic.seed) + ")");
    s.scenario = name_of(ic.scenario);
    s.seed = ic.seed;
    s.clock = {0, s.bodies.time};
  }
  check_no_shared_positions(s.bodies, s.config.softening, s.source, run.names);  // the softening the run takes
  check_time_resolution(s.bodies.time, s.program, s.source, run.names);
  if (std::string const notice = massless_notice(s.bodies, s.source); !notice.empty()) s.notices.push_back(notice);
  if (s.course.empty())  // a new run: its course starts here
    s.course =
        new_course(s.bodies, s.program, run.physics.softening, run.devices.engine.precision, run.physics.damping);
  if (std::string const notice = dt_max_notice(run); !notice.empty()) s.notices.push_back(notice);
  if (std::string const notice = eta_notice(run); !notice.empty()) s.notices.push_back(notice);
  // Said, not refused: the viewer and Python may switch this run to fp64 later, where it acts.
  if (s.config.backend == sim::Backend::cuda && run.devices.engine.fp64_rsqrt != sim::Fp64Rsqrt::series &&
      run.devices.engine.precision == Precision::fp32)
    s.notices.push_back(run.names.with_text("--fp64-rsqrt", name_of(run.devices.engine.fp64_rsqrt)) +
                        " acts on the fp64 kernels only: this run is fp32 (" +
                        run.names.with_text("--precision", "fp64") + " uses it)");
  s.damping = run.physics.damping;
  s.units = run.units;
  s.run = run;
  return s;
}

}  // namespace

double typed_time(const std::string& option, const std::string& text, const sim::Units& units,
                  const SettingNames& names) {
  NamedSetting named = names.setting(option);
  named.typed = text;
  std::string const given = named.with(text);
  auto const time = sim::physical_time(text);
  if (!time)
    throw InputError(given + ": not a number and a time unit (" + sim::kTimeUnitNames + "; case matters), e.g. 10Myr");
  double const value = sim::in_run_units(*time, units, given, names);
  TimeRange const* const range = time_range(option);
  // A subnormal step would not advance time (dt_problem); the value as %.6g, which is how the notices give it.
  std::string why = range && !in_interval(value, range->min, range->max, range->ends)
                        ? std::string("must be ") + range->what + " in " + interval(range->min, range->max, range->ends)
                        : std::string();
  if (why.empty() && option == "--dt") why = dt_problem(value);
  if (why.empty()) return value;
  char number[32];
  std::snprintf(number, sizeof number, "%.6g", value);
  throw InputError(given + " (" + number + " in the " + (names.keywords ? "simulation" : "run") + "'s units, " +
                   units.describe() + "): " + why);
}

sim::Units units_of_start(const RunConfig& run) {
  if (run.given.units) return run.units;
  if (!run.initial.checkpoint.empty()) return sim::read_checkpoint_header(run.initial.checkpoint, run.names).run.units;
  if (!run.initial.snapshot.empty()) {
    if (loads_hdf5_snapshot(run.initial.snapshot, run.names))
      return sim::read_snapshot(run.initial.snapshot, run.names, false).units;
    if (sim::is_foreign_snapshot(run.initial.snapshot))
      return sim::read_foreign_snapshot(run.initial.snapshot, run.names, false).units;
    sim::read_tipsy_bodies(run.initial.snapshot, run.names);  // a file that is none (missing, junk) is said as such
    if (auto const stated = sim::read_tipsy_param(run.initial.snapshot)) return *stated;
  }
  return run.units;
}

Setup make_setup(const RunConfig& run, const std::atomic<bool>* cancel) { return prepare(run, cancel, true); }

void check_setup(const RunConfig& run) { prepare(run, nullptr, false); }

namespace {
std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown CPU";
}
}  // namespace

int cpu_threads(const multigpu::SimulationConfig& c) {
  if (c.backend != sim::Backend::cpu) return 0;
  // Worker threads: a team of its own for each host device, of its share of the threads (at least one).
  if (c.threading == multigpu::Threading::workers && c.devices.size() > 1)
    return int(c.devices.size()) * multigpu::threads_per_engine(c.backend, c.threading, c.engine.cpu_threads,
                                                                c.devices.size());
  return c.engine.cpu_threads > 0 ? c.engine.cpu_threads : omp_get_max_threads();
}

std::string hardware_description(const multigpu::SimulationConfig& c) {
  if (c.backend == sim::Backend::cpu) return cpu_model() + ", " + std::to_string(cpu_threads(c)) + " OpenMP thread(s)";
  std::string s;
  auto const gpus = gpu::devices();
  for (int d : c.devices) s += (s.empty() ? "" : "; ") + gpus.at(std::size_t(d)).name;
  return s;
}

}  // namespace nbody::driver
