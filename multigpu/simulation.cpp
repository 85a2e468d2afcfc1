// multigpu/simulation.cpp - wiring engines, exchange and scheduler into one simulation.
#include "multigpu/simulation.h"

#include <algorithm>
#include <chrono>
#include <sstream>
#include <thread>

#include "core/errors.h"
#include "core/interrupt.h"
#include "multigpu/partition.h"
#include "multigpu/rank_exchange.h"
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

namespace {
// FNV-1a over the bodies' positions, masses and velocities: ranks that read "the same" file on hosts
// without a shared file system, or that made their bodies differently, would not simulate one thing.
std::uint64_t state_hash(const sim::BodySet& b) {
  std::uint64_t h = 1469598103934665603ull;
  auto add = [&](const void* data, std::size_t bytes) {
    auto const* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ull;
  };
  add(b.pos_mass.data(), b.pos_mass.size() * sizeof(b.pos_mass[0]));
  add(b.velocity.data(), b.velocity.size() * sizeof(b.velocity[0]));
  return h;
}
}  // namespace

Simulation::Simulation(const sim::BodySet& initial, const sim::StepProgram& program, const SimulationConfig& config)
    : Simulation(initial, program, config, RunClock{0, initial.time}) {}

Simulation::Simulation(const sim::BodySet& initial, const sim::StepProgram& program, const SimulationConfig& config,
                       RunClock clock)
    : config_(config),
      program_(program),
      bodies_(initial.size()),
      types_(initial.type),
      ranks_(config.ranks ? config.ranks : &world()),
      clock_(clock) {
  Ranks const& ranks = *ranks_;
  agree(ranks, [&] {
    sim::validate(program_);  // the exchange relies on the step contract
    if (bodies_ == 0) throw InputError("no bodies to simulate");
    if (config_.devices.empty()) throw InputError("no devices to simulate on");
    if (config_.launch == Launch::graph) {
      if (config_.backend != sim::Backend::cuda)
        throw InputError("--launch graph: CUDA graphs need the CUDA backend (the CPU backend runs its steps as called)");
      if (config_.threading != Threading::single)
        throw InputError("--launch graph needs --threading single: one graph holds every device's steps, launched "
                         "from one host thread");
      if (ranks.size() > 1)
        throw InputError("--launch graph: the exchange between MPI ranks runs on the host, outside any graph; use "
                         "--launch stream with mpirun");
    }
  });
  std::size_t const device_count = config_.devices.size();
  std::string devices_text;
  for (int d : config_.devices) devices_text += (devices_text.empty() ? "" : " ") + std::to_string(d);
  if (ranks.size() == 1) {
    rank_devices_ = {device_count};
    rank_devices_text_ = {devices_text};
  } else {
    // Every rank must simulate the same thing; each brings its own devices.
    std::ostringstream what;
    what.precision(17);
    what << bodies_ << " bodies, " << name_of(config_.backend) << ' ' << name_of(config_.precision) << ", "
         << program_.integrator << " dt " << program_.dt << ", softening " << config_.softening << ", step "
         << clock.step << ", threading " << name_of(config_.threading) << ", initial state "
         << std::hex << state_hash(initial) << std::dec;
    auto const all = ranks.all_gather(what.str() + '|' + std::to_string(device_count) + '|' + devices_text);
    for (std::size_t r = 0; r < all.size(); ++r) {
      std::size_t const bar = all[r].find('|'), bar2 = all[r].find('|', bar + 1);
      rank_devices_.push_back(std::size_t(std::stoul(all[r].substr(bar + 1, bar2 - bar - 1))));
      rank_devices_text_.push_back(all[r].substr(bar2 + 1));
    }
    agree(ranks, [&] {
      for (std::size_t r = 1; r < all.size(); ++r) {
        std::string const theirs = all[r].substr(0, all[r].find('|')), first = all[0].substr(0, all[0].find('|'));
        if (theirs != first)
          throw InputError("rank " + std::to_string(r) + " would simulate " + theirs + ", rank 0 " + first +
                           "; start every rank with the same options");
      }
    });
  }
  std::size_t total_devices = 0, first_device = 0;
  for (std::size_t r = 0; r < rank_devices_.size(); ++r) {
    if (int(r) == ranks.rank()) first_device = total_devices;
    total_devices += rank_devices_[r];
  }
  agree(ranks, [&] {
    if (!config_.weights.empty() && config_.weights.size() != total_devices)
      throw InputError("--weights: " + std::to_string(config_.weights.size()) + " weights for " +
                       std::to_string(total_devices) + " devices" +
                       (ranks.size() > 1 ? " over " + std::to_string(ranks.size()) + " ranks" : std::string()) +
                       "; give one per device");
    all_slices_ = make_partition(bodies_, total_devices, config_.weights);
  });
  slices_.assign(all_slices_.begin() + std::ptrdiff_t(first_device),
                 all_slices_.begin() + std::ptrdiff_t(first_device + device_count));
  for (std::size_t r = 0, d = 0; r < rank_devices_.size(); ++r) {
    Slice range{all_slices_[d].begin, 0};
    for (std::size_t k = 0; k < rank_devices_[r]; ++k, ++d) range.count += all_slices_[d].count;
    rank_ranges_.push_back(range);
    rank_counts_.push_back(range.count);
    rank_offsets_.push_back(range.begin);
  }

  agree(ranks, [&] {
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
      e.split_forces = ranks.size() > 1;  // forces on the rank's own bodies while the others' travel
      engines_.push_back(sim::make_engine(config_.backend, e));
      raw.push_back(engines_.back().get());
    }
    std::unique_ptr<Exchange> local;
    std::unique_ptr<HostStaging> staging;
#if NBODY_HAVE_CUDA
    if (config_.backend == sim::Backend::cuda) {
      local = make_cuda_exchange(raw, config_.exchange);
      if (ranks.size() > 1) staging = make_cuda_staging(raw);
    }
#endif
    if (!local) local = make_host_exchange(raw);  // engines in host memory
    if (ranks.size() > 1 && !staging) staging = make_host_staging(raw);
    if (ranks.size() > 1)
      exchange_ = make_rank_exchange(ranks, std::move(local), std::move(staging), rank_ranges_,
                                     raw.front()->bytes_per_body(), device_count);
    else
      exchange_ = std::move(local);
    scheduler_ = make_scheduler(config_.threading, raw, *exchange_);
    scheduler_->for_each_device([&](int d) { engines_[d]->upload(initial); });
    if (config_.launch == Launch::graph)
      for (auto& g : graphs_) g = make_step_graph(raw);
  });
}

template <class F>
auto Simulation::guarded(F&& work) -> decltype(work()) {
  try {
    return work();
  } catch (const Interrupted&) {
    throw;
  } catch (const std::exception& e) {
    exchange_->abort();
    if (failure_.empty()) failure_ = e.what();
    throw;
  }
}

void Simulation::advance(std::uint64_t steps) {
  if (!failure_.empty())
    throw RuntimeFailure("the simulation stopped at an error and cannot go on (" + failure_ + "); start it again");
  guarded([&] { advance_unguarded(steps); });
}

void Simulation::advance_unguarded(std::uint64_t steps) {
  if (steps == 0) return;
  std::uint64_t const drifts = std::uint64_t(program_.drifts());
  if (config_.launch == Launch::graph) {
    // Whole blocks replay the graph of their starting parity (captured the first time: capturing
    // enqueues nothing, so the block is then launched like every later one); what is left goes
    // step by step. A timing mark follows each launch and the single steps.
    for (; steps >= kGraphSteps; steps -= kGraphSteps) {
      StepGraph& graph = *graphs_[publications_ & 1];
      // A replay leaves the host's record of publications behind; the single scheduler makes every
      // device's publication before any device acquires it, so the steps after need no more.
      if (!graph_captured_[publications_ & 1]) {
        std::uint64_t const first = publications_ + 1;
        graph.capture([&] { scheduler_->run(program_, first, kGraphSteps, false); });
        graph_captured_[publications_ & 1] = true;
      }
      graph.launch();
      clock_.step += kGraphSteps;
      publications_ += kGraphSteps * drifts;
      if (graph_timing_) graphs_[0]->mark(), graph_interval_steps_.push_back(kGraphSteps);
    }
    if (steps == 0) return;
  }
  scheduler_->run(program_, publications_ + 1, steps, config_.launch == Launch::stream);
  clock_.step += steps;
  publications_ += steps * drifts;
  if (graph_timing_) graphs_[0]->mark(), graph_interval_steps_.push_back(steps);
}

void Simulation::synchronize() {
  // Several devices are polled first: blocking on one while it waits on the GPU for a failed peer
  // would never return, and the failure would never be seen. Briefly by spinning, so that a step
  // of microseconds is not timed in sleeps.
  if (engines_.size() > 1) {
    auto const start = std::chrono::steady_clock::now();
    while (!idle()) {
      if (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(1))
        std::this_thread::yield();
      else
        std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
  guarded([&] { scheduler_->for_each_device([&](int d) { engines_[d]->synchronize(); }); });
}

bool Simulation::idle() {
  return guarded([&] {
    bool all = true;
    for (auto& e : engines_) all = e->idle() && all;  // every device, so that any failure shows
    return all;
  });
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
  if (ranks_->size() > 1) {
    ranks_->all_gather_in_place(into.pos_mass.data(), sizeof(into.pos_mass[0]), rank_counts_, rank_offsets_);
    ranks_->all_gather_in_place(into.velocity.data(), sizeof(into.velocity[0]), rank_counts_, rank_offsets_);
  }
}

std::vector<double> Simulation::gather_per_device(const std::vector<double>& mine, std::size_t per_device) const {
  std::vector<std::size_t> counts, offsets;
  std::size_t total = 0;
  for (std::size_t devices : rank_devices_) {
    offsets.push_back(total);
    counts.push_back(devices * per_device);
    total += devices * per_device;
  }
  std::vector<double> all(total);
  std::copy(mine.begin(), mine.end(), all.begin() + std::ptrdiff_t(offsets[std::size_t(ranks_->rank())]));
  ranks_->all_gather_in_place(all.data(), sizeof(double), counts, offsets);
  return all;
}

sim::Diagnostics Simulation::diagnostics() {
  std::vector<double> potential(engines_.size(), 0.0);
  scheduler_->for_each_device([&](int d) { potential[d] = engines_[d]->slice_potential(); });
  if (ranks_->size() > 1) potential = gather_per_device(potential, 1);
  double total = 0.0;
  for (double p : potential) total += p;  // fixed order, every device of every rank: the same sum for any scheduler
  return sim::measure(state(), 0.5 * total);
}

std::vector<Vec3d> Simulation::accelerations() {
  std::vector<Vec3d> all(bodies_);
  scheduler_->for_each_device([&](int d) {
    auto const a = engines_[d]->download_accelerations();
    std::copy(a.begin(), a.end(), all.begin() + std::ptrdiff_t(slices_[d].begin));
  });
  if (ranks_->size() > 1) {
    ranks_->all_gather_in_place(all.data(), sizeof(Vec3d), rank_counts_, rank_offsets_);
  }
  return all;
}

void Simulation::start_timing(std::size_t steps) {
  if (config_.launch == Launch::graph) {
    // Steps in a graph cannot be marked one by one: marks go between launches (a block, or the
    // single steps of one advance()), and a step's time is its interval's mean.
    graphs_[0]->start_timing(steps + 2);
    graph_interval_steps_.clear();
    graph_interval_steps_.reserve(steps + 1);
    graph_timing_ = true;
    graphs_[0]->mark();
    return;
  }
  scheduler_->for_each_device([&](int d) { engines_[d]->start_timing(steps); });
}

std::vector<std::vector<double>> Simulation::step_times_ms() {
  std::vector<std::vector<double>> t(engines_.size());
  if (config_.launch == Launch::graph) {
    graph_timing_ = false;
    auto const intervals = graphs_[0]->intervals_ms();
    std::vector<double> per_step;
    for (std::size_t k = 0; k < intervals.size() && k < graph_interval_steps_.size(); ++k)
      per_step.insert(per_step.end(), graph_interval_steps_[k], intervals[k] / double(graph_interval_steps_[k]));
    for (auto& device : t) device = per_step;  // a graph's steps end together on every device
    return t;
  }
  scheduler_->for_each_device([&](int d) { t[d] = engines_[d]->step_times_ms(); });
  if (ranks_->size() == 1) return t;
  // Every rank timed the same number of steps on each of its devices.
  std::size_t const steps = ranks_->max(int(t.empty() ? 0 : t.front().size()));
  std::vector<double> mine;
  for (auto& d : t) {
    d.resize(steps, 0.0);
    mine.insert(mine.end(), d.begin(), d.end());
  }
  std::vector<double> const all = gather_per_device(mine, steps);
  std::vector<std::vector<double>> out;
  for (std::size_t k = 0; k + steps <= all.size() && steps > 0; k += steps)
    out.emplace_back(all.begin() + std::ptrdiff_t(k), all.begin() + std::ptrdiff_t(k + steps));
  return out;
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
  s << name_of(config_.backend) << " x" << all_slices_.size();
  if (ranks_->size() > 1) {
    s << " over " << ranks_->describe() << " (";
    for (std::size_t r = 0; r < rank_devices_.size(); ++r)
      s << (r ? "; " : "") << "rank " << r << ": "
        << (config_.backend == sim::Backend::cuda ? "GPU " + rank_devices_text_[r]
                                                  : std::to_string(rank_devices_[r]) + " host device(s)");
    s << ')';
  } else if (config_.backend == sim::Backend::cuda) {
    s << " (GPU";
    for (int d : config_.devices) s << ' ' << d;
    s << ')';
  }
  s << ", kernel " << kernel_name() << ", " << name_of(config_.precision) << ", threading "
    << name_of(config_.threading);
  if (config_.launch == Launch::graph) s << ", CUDA graphs of " << kGraphSteps << " steps";
  if (all_slices_.size() > 1) s << ", exchange " << exchange_->describe();
  return s.str();
}

}  // namespace nbody::multigpu
