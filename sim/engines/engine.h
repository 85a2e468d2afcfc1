// sim/engines/engine.h - one device's share of a simulation: the interface every backend implements.
//
// An engine holds the positions of all N bodies (double-buffered: current and next), and the
// velocities and accelerations of its own contiguous slice. It knows nothing of other devices:
// multigpu/ moves each engine's new slice into its peers' next buffers between `drift` and
// `swap_buffers`. Step operations may be asynchronous (GPU streams); operations that return
// host data synchronise.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/enum_names.h"
#include "core/precision.h"
#include "core/real4.h"
#include "core/setting_names.h"
#include "core/slice.h"
#include "sim/physics/body_set.h"

namespace nbody::sim {

// Where an engine runs: host memory and OpenMP threads, or one CUDA device.
enum class Backend { cpu, cuda };
inline constexpr std::array<EnumName<Backend>, 2> kBackendNames{{{Backend::cpu, "cpu"}, {Backend::cuda, "cuda"}}};
constexpr const auto& enum_names(Backend) { return kBackendNames; }

// Force kernels. GPU: "fast" (the default: several bodies per thread, unrolled, segments spread
// over blocks when N is small), "tiled" (classic shared-memory tiles of blockDim j-bodies), "naive"
// (one body per thread, j from global memory); all keep the canonical summation order
// (sim/kernels/segments.h). CPU: "simd" (the default; fp32 SIMD, in fp64 the reference
// arithmetic parallel over i) and "reference" (the fp64 reference arithmetic in the engine's
// precision).
enum class Kernel { fast, tiled, naive, simd, reference };
inline constexpr std::array<EnumName<Kernel>, 5> kKernelNames{{{Kernel::fast, "fast"},
                                                               {Kernel::tiled, "tiled"},
                                                               {Kernel::naive, "naive"},
                                                               {Kernel::simd, "simd"},
                                                               {Kernel::reference, "reference"}}};
constexpr const auto& enum_names(Kernel) { return kKernelNames; }
Backend backend_of(Kernel kernel);
Kernel default_kernel(Backend backend);
std::string kernel_names(Backend backend);  // "fast, tiled, naive"

// fp64 GPU kernels, how r^-3 is computed from r^2: from the fp32 hardware rsqrt by a first-order
// series ("series", fastest), by one Newton step ("newton"), or with CUDA's double rsqrt(),
// within 1 ulp ("precise"). See sim/kernels/interaction.cuh.
enum class Fp64Rsqrt { series, newton, precise };
inline constexpr std::array<EnumName<Fp64Rsqrt>, 3> kFp64RsqrtNames{
    {{Fp64Rsqrt::series, "series"}, {Fp64Rsqrt::newton, "newton"}, {Fp64Rsqrt::precise, "precise"}}};
constexpr const auto& enum_names(Fp64Rsqrt) { return kFp64RsqrtNames; }

// How the engines compute, chosen once by the user and passed down whole: a front end fills it in
// (driver::DeviceChoice::engine), the simulation keeps it (multigpu::SimulationConfig::engine), every
// engine gets it (EngineConfig::engine). A new engine option is a field here, named in
// for_each_engine_setting below; nothing between the front end and the engine copies fields one by one.
struct EngineSettings {
  Precision precision = Precision::fp32;
  std::optional<Kernel> kernel;  // none: the backend's default
  int block_size = 0;            // GPU threads per block (naive and tiled kernels); 0 for the kernel's default
  Fp64Rsqrt fp64_rsqrt = Fp64Rsqrt::series;  // fp64 GPU kernels: how r^-3 is computed
  // OpenMP threads; 0 for all cores. For a simulation (and the user) the threads in all; in an
  // engine's own config, that engine's share (multigpu::Simulation divides them among workers).
  int cpu_threads = 0;
};

// Calls f(name, field) for every field of `s` (EngineSettings, const or not), by the name the run
// configuration's JSON gives it (app/run_config_json.cpp walks them here, so a new field is saved
// and restored by the viewer without being listed again).
template <class Settings, class F>
void for_each_engine_setting(Settings& s, F&& f) {
  f("precision", s.precision);
  f("kernel", s.kernel);
  f("block_size", s.block_size);
  f("fp64_rsqrt", s.fp64_rsqrt);
  f("cpu_threads", s.cpu_threads);
}

// Thrown by an engine that gave up its work part-way because EngineConfig::cancel was raised: its
// state (and its simulation's) is then torn, to be destroyed, never shown or saved.
struct StepCancelled : std::runtime_error {
  StepCancelled() : std::runtime_error("the step was cancelled") {}
};

struct EngineConfig {
  std::size_t bodies = 0;   // N, all bodies
  Slice slice;              // the bodies this engine integrates
  double softening = 0.01;  // Plummer softening length, simulation units
  EngineSettings engine;    // as the simulation was given them (cpu_threads: this engine's share)
  int device = 0;           // CUDA device ordinal (GPU engines)
  bool split_forces = false;  // compute_forces_ready/_rest will be used: keep room for partial sums
  // Raised by a front end that no longer wants the work in progress (the viewer quits, or starts
  // another run): the CPU engine checks it between bodies of its O(N^2) passes (forces, potential)
  // and throws StepCancelled, so a step of minutes ends within a millisecond or so. GPU engines
  // ignore it: their steps are short, and the front end stops queuing more. Null: never.
  const std::atomic<bool>* cancel = nullptr;
  SettingNames names;  // how a refused setting is named (the front end's spelling)
};

// The kernel `settings` ask for on `backend` (its default if none); InputError, naming the setting as `names` do,
// if it has no such kernel.
Kernel kernel_for(Backend backend, const EngineSettings& settings, const SettingNames& names = {});

class SliceEngine {
 public:
  virtual ~SliceEngine() = default;
  SliceEngine() = default;
  SliceEngine(const SliceEngine&) = delete;
  SliceEngine& operator=(const SliceEngine&) = delete;

  // Called once on the host thread that will drive this engine (a worker binds its device here).
  virtual void bind_thread() = 0;

  // Loads all positions and the own slice's velocities, then computes the accelerations.
  virtual void upload(const BodySet& bodies) = 0;
  // Writes the own slice's current positions and velocities into `bodies` (synchronises).
  virtual void download_slice(BodySet& bodies) = 0;
  // The own slice's accelerations, in fp64 (synchronises).
  virtual std::vector<Vec3d> download_accelerations() = 0;

  // Step operations on the own slice (see StageKind).
  virtual void compute_forces() = 0;
  // The forces in two parts, for an exchange that delivers some bodies later (another rank's):
  // first what the bodies in `ready` (already in the current buffer) allow, then, once every body
  // has arrived, the rest. The result is compute_forces()'s, bit for bit. An engine that cannot
  // split computes nothing in the first part and everything in the second.
  virtual void compute_forces_ready(Slice /*ready*/) {}
  virtual void compute_forces_rest() { compute_forces(); }
  // compute_forces() then kick(dt), bit for bit, with one pass fewer where the engine can.
  virtual void compute_forces_kick(double dt) {
    compute_forces();
    kick(dt);
  }
  virtual void kick(double dt) = 0;
  virtual void damp(double factor) = 0;
  virtual void drift(double dt) = 0;  // writes the own slice of the next positions
  // kick(kick_dt) then drift(drift_dt), bit for bit, in one pass where the engine can.
  virtual void kick_drift(double kick_dt, double drift_dt) {
    kick(kick_dt);
    drift(drift_dt);
  }
  virtual void swap_buffers() = 0;    // next becomes current
  virtual void synchronize() = 0;
  // True when no work given to the engine is still running; never waits.
  virtual bool idle() = 0;
  // Gives up the work still queued (after an interrupt): the engine's destructor then neither waits
  // for it nor frees what it may still use. Only a process about to exit should call it.
  virtual void abandon() = 0;

  // A sample of the own slice, in two halves, so that the devices need not wait for the host:
  // begin_sample() takes the slice's state and potential as they are now (a GPU engine enqueues the
  // potential pass and the copies into pinned memory of its own, and returns; the CPU engine computes
  // and copies at once); end_sample() waits for those alone and writes, for each body b of the slice,
  // its position and velocity into `bodies` and its share of twice the potential energy into
  // `potential[b]` (fp64). Steps may be enqueued in between.
  //
  // A body's share is the same on every layout: the CPU counts every pair from both of its bodies,
  // m_i sum_{j != i} -m_j / r_ij; CUDA counts each pair once, doubled, from one of them (half the
  // work). Only the sum over all bodies has a meaning, and summed in index order by the caller, it is
  // the same bits whatever the slices, the threads or the ranks.
  //
  // `stoppable`: a signal (core/interrupt.h) stops the CPU engine's pass between chunks (Interrupted). The caller
  // says whether it may: a process alone, or ranks that agree on a signal once every one is past the pass (a rank
  // that stopped early then waits there for the others); not a rank of several whose next collective call does not
  // agree (the others would wait for it in vain). GPU passes are short and run whole.
  virtual void begin_sample(bool stoppable) = 0;
  virtual void end_sample(BodySet& bodies, double* potential) = 0;

  // Per-step timing: prepare for `steps` markers (allocates here, not per step), mark the end of
  // each step as it is enqueued, then read the step durations in ms (synchronises).
  virtual void start_timing(std::size_t steps) = 0;
  virtual void mark_step_end() = 0;
  virtual std::vector<double> step_times_ms() = 0;

  // For the exchange: one of the two full position arrays (host or device memory of `device()`).
  // Counting publications (drift stages) from the last upload, which fills buffer 0, publication
  // p is in buffer p % 2 on every engine. A peer must address a buffer by that parity, never by
  // "this engine's next buffer": the engine may not have swapped for the previous one yet.
  virtual void* positions_buffer(int index) = 0;
  // The own slice's velocities where the engine keeps them: Real4 (w unused) in device memory on
  // a GPU, Real3 in host memory on the CPU. For the viewer's colours; valid until the next step.
  virtual const void* velocities_buffer() const = 0;
  virtual std::size_t bytes_per_body() const = 0;
  virtual int device() const = 0;  // CUDA ordinal, or -1 for host memory

  virtual const EngineConfig& config() const = 0;
  virtual std::string kernel_name() const = 0;  // the kernel and its launch shape, for reports
};

}  // namespace nbody::sim

namespace nbody::sim {

// True when this nbody was built with the CUDA engine.
bool cuda_built();

// Creates the engine of `backend` for `config` (allocates). Throws InputError for what the user
// can change (a kernel the backend lacks, too little memory, a build without CUDA).
std::unique_ptr<SliceEngine> make_engine(Backend backend, const EngineConfig& config);

// Bytes of memory (device memory for CUDA, host memory for the CPU) one engine of this config needs.
std::size_t engine_bytes(Backend backend, const EngineConfig& config);
// Bytes of host memory one engine of this config takes in a run: all of a CPU engine's, a GPU engine's pinned
// buffers for downloads and samples.
std::size_t engine_host_bytes(Backend backend, const EngineConfig& config);

}  // namespace nbody::sim
