// multigpu/simulation.cpp - wiring engines, exchange and scheduler into one simulation.
#include "multigpu/simulation.h"

#include <algorithm>
#include <chrono>
#include <sstream>
#include <thread>

#include "core/errors.h"
#include "core/interrupt.h"
#include "multigpu/partition.h"
#if NBODY_HAVE_CUDA
#include "multigpu/cuda_exchange.h"
#endif

namespace nbody::multigpu {

std::size_t bytes_per_device(const SimulationConfig& config, std::size_t n) {
  sim::EngineConfig e;
  e.bodies = n;
  e.slice = {0, n};
  e.precision = config.precision;
  return sim::engine_bytes(config.backend, e);
}

Simulation::Simulation(const sim::BodySet& initial, const sim::StepProgram& program, const SimulationConfig& config)
    : Simulation(initial, program, config, RunClock{0, initial.time}) {}

Simulation::Simulation(const sim::BodySet& initial, const sim::StepProgram& program, const SimulationConfig& config,
                       RunClock clock)
    : config_(config),
      program_(program),
      bodies_(initial.size()),
      types_(initial.type),
      start_time_(clock.start_time),
      steps_done_(clock.step) {
  sim::validate(program_);  // the exchange relies on the step contract
  if (bodies_ == 0) throw InputError("no bodies to simulate");
  if (config_.devices.empty()) throw InputError("no devices to simulate on");
  slices_ = make_partition(bodies_, config_.devices.size(), config_.weights);

  std::size_t const device_count = config_.devices.size();
  int threads_per_engine = config_.cpu_threads;
  if (config_.backend == sim::Backend::cpu && config_.threading == Threading::workers) {
    // Each worker runs its own OpenMP team: share the cores instead of oversubscribing them.
    int const total = config_.cpu_threads > 0 ? config_.cpu_threads : int(std::max(1u, std::thread::hardware_concurrency()));
    threads_per_engine = std::max(1, total / int(device_count));
  }
  std::vector<sim::SliceEngine*> raw;
  for (std::size_t d = 0; d < device_count; ++d) {
    sim::EngineConfig e;
    e.bodies = bodies_;
    e.slice = slices_[d];
    e.softening = config_.softening;
    e.precision = config_.precision;
    e.kernel = config_.kernel;
    e.block_size = config_.block_size;
    e.fp64_rsqrt = config_.fp64_rsqrt;
    e.device = config_.devices[d];
    e.cpu_threads = threads_per_engine;
    engines_.push_back(sim::make_engine(config_.backend, e));
    raw.push_back(engines_.back().get());
  }
#if NBODY_HAVE_CUDA
  if (config_.backend == sim::Backend::cuda) exchange_ = make_cuda_exchange(raw, config_.exchange);
#endif
  if (!exchange_) exchange_ = make_host_exchange(raw);  // engines in host memory
  scheduler_ = make_scheduler(config_.threading, raw, *exchange_);
  scheduler_->for_each_device([&](int d) { engines_[d]->upload(initial); });
}

void Simulation::advance(std::uint64_t steps) {
  if (steps == 0) return;
  scheduler_->run(program_, publications_ + 1, steps);
  steps_done_ += steps;
  publications_ += steps * std::uint64_t(program_.drifts());
}

void Simulation::synchronize() {
  scheduler_->for_each_device([&](int d) { engines_[d]->synchronize(); });
}

bool Simulation::idle() {
  for (auto& e : engines_)
    if (!e->idle()) return false;
  return true;
}

void Simulation::stop_if_interrupted() {
  int const sig = interrupt_signal();
  if (!sig) return;
  // The process is on its way out: the steps still queued are given up, not waited for (freeing
  // device memory would wait for all of them: minutes at large N).
  for (auto& e : engines_) e->abandon();
  exchange_->abandon();
  throw Interrupted(sig);
}

void Simulation::wait_interruptibly() {
  // The last stage of a step runs on each device's compute stream, after that device waited for
  // every copy it needed: all compute streams idle means the step, copies included, is done.
  while (!idle()) {
    stop_if_interrupted();
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  synchronize();  // the worker threads have handed back, and errors surface
}

sim::BodySet Simulation::state() {
  sim::BodySet b;
  state(b);
  return b;
}

void Simulation::state(sim::BodySet& into) {
  into.resize(bodies_);
  into.type = types_;
  into.time = time();
  scheduler_->for_each_device([&](int d) { engines_[d]->download_slice(into); });
}

sim::Diagnostics Simulation::diagnostics() {
  std::vector<double> potential(engines_.size(), 0.0);
  scheduler_->for_each_device([&](int d) { potential[d] = engines_[d]->slice_potential(); });
  double total = 0.0;
  for (double p : potential) total += p;  // fixed order: the same sum for either scheduler
  return sim::measure(state(), 0.5 * total);
}

std::vector<Vec3d> Simulation::accelerations() {
  std::vector<Vec3d> all(bodies_);
  scheduler_->for_each_device([&](int d) {
    auto const a = engines_[d]->download_accelerations();
    std::copy(a.begin(), a.end(), all.begin() + std::ptrdiff_t(slices_[d].begin));
  });
  return all;
}

void Simulation::start_timing(std::size_t steps) {
  scheduler_->for_each_device([&](int d) { engines_[d]->start_timing(steps); });
}

std::vector<std::vector<double>> Simulation::step_times_ms() {
  std::vector<std::vector<double>> t(engines_.size());
  scheduler_->for_each_device([&](int d) { t[d] = engines_[d]->step_times_ms(); });
  return t;
}

const void* Simulation::current_positions(int d) const {
  return engines_.at(std::size_t(d))->positions_buffer(int(publications_ & 1));
}

std::size_t Simulation::bytes_per_body() const { return engines_.front()->bytes_per_body(); }

const void* Simulation::current_velocities(int d) const { return engines_.at(std::size_t(d))->velocities_buffer(); }

int Simulation::device_ordinal(int d) const { return engines_.at(std::size_t(d))->device(); }

std::string Simulation::kernel_name() const { return engines_.front()->kernel_name(); }

std::string Simulation::describe() const {
  std::ostringstream s;
  s << name_of(config_.backend) << " x" << engines_.size();
  if (config_.backend == sim::Backend::cuda) {
    s << " (GPU";
    for (int d : config_.devices) s << ' ' << d;
    s << ')';
  }
  s << ", kernel " << kernel_name() << ", " << name_of(config_.precision) << ", threading "
    << name_of(config_.threading);
  if (engines_.size() > 1) s << ", exchange " << exchange_->describe();
  return s.str();
}

}  // namespace nbody::multigpu
