// multigpu/simulation.cpp - wiring engines, exchange and scheduler into one simulation.
#include "multigpu/simulation.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <set>
#include <sstream>

#include "core/errors.h"
#include "core/interrupt.h"
#include "core/signal_watch.h"
#include "gpu/devices.h"
#include "multigpu/exchange_choice.h"
#include "multigpu/partition.h"
#include "multigpu/rank_exchange.h"
#if NBODY_HAVE_CUDA
#include "multigpu/cuda_exchange.h"
#endif

namespace nbody::multigpu {

std::size_t fixed_step_host_bytes(sim::Backend backend, const sim::EngineSettings& engine, std::size_t n,
                                  std::size_t devices, std::size_t all_devices, const std::vector<double>& weights) {
  all_devices = std::max<std::size_t>(all_devices, 1);
  std::vector<double> const every = weights.size() == all_devices ? weights : std::vector<double>{};
  std::size_t largest = 0;
  for (Slice const& s : make_partition(n, all_devices, every)) largest = std::max(largest, s.count);
  sim::EngineConfig e;
  e.bodies = n;
  e.slice = {0, largest};
  e.engine = engine;
  // types_, sample_terms_, and sim::measure's (distance, mass) pairs
  std::size_t const own = 1 + sizeof(double) + 2 * sizeof(double);
  // Positions passed through the host, twice over (the two publications in flight), in host memory or pinned on a
  // GPU: with several ranks every body's (the rank exchange's staging); GPUs of one process without peer access
  // (the staged exchange, chosen by the topology only once they are made) their slices'.
  std::size_t const real4 = engine.precision == Precision::fp32 ? 16 : 32;
  std::size_t const ranks_staging = all_devices > devices ? 2 * n * real4 : 0;
  std::size_t const gpus_staging = backend == sim::Backend::cuda && devices > 1 ? 2 * largest * real4 * devices : 0;
  return sim::engine_host_bytes(backend, e) * devices + n * own + ranks_staging + gpus_staging;
}

namespace {
std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, separator))
    if (!part.empty()) parts.push_back(part);
  return parts;
}

// Which ranks on this host share GPUs with this one (by the GPUs' UUIDs, which every process sees
// alike whatever CUDA_VISIBLE_DEVICES gives it): a GPU-side wait for a peer could then be stuck
// behind another rank's (exchange_choice.h). Collective.
void add_host_sharing(const Ranks& ranks, const std::vector<int>& devices, ExchangeConditions& c) {
  auto const visible = gpu::devices();
  std::string mine = ranks.host() + '\n';
  for (auto const& v : visible) mine += v.uuid + ' ';
  mine += '\n';
  for (int d : devices) mine += (d >= 0 && d < int(visible.size()) ? visible[std::size_t(d)].uuid : "-") + ' ';
  auto const all = ranks.all_gather(mine);
  std::vector<std::string> const own = split(all[std::size_t(ranks.rank())], '\n');
  std::set<std::string> host_gpus;
  c.local_ranks = 0;
  for (std::size_t r = 0; r < all.size(); ++r) {
    auto const theirs = split(all[r], '\n');
    if (theirs.empty() || own.empty() || theirs[0] != own[0]) continue;
    ++c.local_ranks;
    if (theirs.size() > 1)
      for (auto const& u : split(theirs[1], ' ')) host_gpus.insert(u);
    if (int(r) == ranks.rank() || theirs.size() < 3 || own.size() < 3 || !c.shared_gpu.empty()) continue;
    auto const used = split(theirs[2], ' ');
    auto const mine_used = split(own[2], ' ');
    for (std::size_t k = 0; k < mine_used.size() && k < devices.size(); ++k)
      if (mine_used[k] != "-" && std::find(used.begin(), used.end(), mine_used[k]) != used.end()) {
        c.shared_gpu = "GPU " + std::to_string(devices[k]) + " of rank " + std::to_string(ranks.rank()) +
                       " is also used by rank " + std::to_string(r);
        break;
      }
  }
  c.host_gpus = int(host_gpus.size());
}
}  // namespace

Simulation::Simulation(const sim::BodySet& initial, const sim::StepProgram& program, const SimulationConfig& config)
    : Simulation(initial, program, config, RunClock{0, initial.time}) {}

Simulation::Simulation(const sim::BodySet& initial, const sim::StepProgram& program, const SimulationConfig& config,
                       RunClock clock, const sim::hermite::HermiteState* hermite)
    : config_(config),
      program_(program),
      bodies_(initial.size()),
      types_(initial.type),
      ranks_(config.ranks ? config.ranks : &world()),
      clock_(clock) {
  Ranks const& ranks = *ranks_;
  agree(ranks, [&] {
    watchdog_ = Watchdog(watchdog_seconds(config_.watchdog_seconds));
    sim::validate(program_);  // the exchange relies on the step contract
    if (bodies_ == 0) throw InputError("no bodies to simulate");
    if (config_.devices.empty()) throw InputError("no devices to simulate on");
    SettingNames const& names = config_.names;
    std::string const graph = names.with_text("--launch", "graph"), stream = names.with_text("--launch", "stream");
    if (program_.hermite && config_.launch == Launch::graph)
      throw InputError(graph + ": hermite4 runs its block steps itself (on one GPU the engine uses graphs of its own); "
                       "use " + stream);
    if (config_.launch == Launch::graph) {
      if (config_.backend != sim::Backend::cuda)
        throw InputError(graph + ": CUDA graphs need the CUDA backend (the CPU backend runs its steps as called)");
      if (config_.threading != Threading::single)
        throw InputError(graph + " needs " + names.with_text("--threading", "single") + ": one graph holds every "
                         "device's steps, launched from one host thread");
      if (ranks.size() > 1)
        throw InputError(graph + ": the exchange between MPI ranks runs on the host, outside any graph; use " + stream +
                         " with mpirun");
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
    what << bodies_ << " bodies, " << name_of(config_.backend) << ' ' << name_of(config_.engine.precision) << ", "
         << program_.integrator << " dt " << program_.dt << ", softening " << config_.softening << ", step "
         << clock.step << ", threading " << name_of(config_.threading) << ", initial state "
         << std::hex << sim::state_hash(initial) << std::dec;
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
      throw InputError(config_.names.name("--weights") + ": " + std::to_string(config_.weights.size()) +
                       " weights for " +
                       std::to_string(total_devices) + (total_devices == 1 ? " device" : " devices") +
                       (ranks.size() > 1 ? " over " + std::to_string(ranks.size()) + " ranks" : std::string()) +
                       "; give one per device");
    all_slices_ = program_.hermite ? hermite_partition(bodies_, total_devices, config_.weights)
                                   : make_partition(bodies_, total_devices, config_.weights);
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

  if (program_.hermite) {
    // Block steps: engines of their own, driven by HermiteBlocks (no exchange, no step program).
    agree(ranks, [&] {
      if (hermite && hermite->started()) {
        if (auto const why = sim::hermite::state_problem(*hermite, bodies_, "the Hermite state"); !why.empty())
          throw InputError(why);
      }
      HermiteBlocksSetup h;
      h.backend = config_.backend;
      h.engine = config_.engine;
      h.softening = config_.softening;
      h.params = *program_.hermite;
      h.devices = config_.devices;
      h.threading = config_.threading;
      h.all_slices = all_slices_;
      h.rank_devices = rank_devices_;
      h.ranks = ranks_;
      h.cancel = ranks_->size() > 1 ? nullptr : config_.cancel;
      h.names = config_.names;
      sim::hermite::HermiteState const none;
      // An fp32 run's pair takes each mass as an fp32 value, and its checkpoints hold them so: the masses it keeps
      // (for the energies, the state it hands out) are those values, so that a restart from its checkpoint reports
      // the energies of the run that never stopped. The fixed-step engines keep fp32 masses of their own.
      if (config_.engine.precision == Precision::fp32) {
        sim::BodySet rounded = initial;
        for (auto& p : rounded.pos_mass) p.w = double(float(p.w));
        hermite_ = std::make_unique<HermiteBlocks>(rounded, hermite ? *hermite : none, h);
      } else {
        hermite_ = std::make_unique<HermiteBlocks>(initial, hermite ? *hermite : none, h);
      }
    });
    if (hermite && hermite->started()) {
      double const top = sim::hermite::pow2_at_most(program_.hermite->dt_max);
      for (std::size_t i = 0; i < hermite->size(); ++i)
        if (hermite->step[i] > top) long_steps_end_ = std::max(long_steps_end_, hermite->time[i] + hermite->step[i]);
    }
    return;
  }

  ExchangeConditions conditions;
  if (config_.backend == sim::Backend::cuda && ranks.size() > 1) add_host_sharing(ranks, config_.devices, conditions);
  agree(ranks, [&] {
    int const engine_threads =
        threads_per_engine(config_.backend, config_.threading, config_.engine.cpu_threads, device_count);
    std::vector<sim::SliceEngine*> raw;
    for (std::size_t d = 0; d < device_count; ++d) {
      sim::EngineConfig e;
      e.bodies = bodies_;
      e.slice = slices_[d];
      e.softening = config_.softening;
      e.engine = config_.engine;
      e.engine.cpu_threads = engine_threads;
      e.device = config_.devices[d];
      e.split_forces = ranks.size() > 1;  // forces on the rank's own bodies while the others' travel
      // With several ranks no front end's flag: a rank that gave up a step alone would leave the others waiting in its
      // exchange. A signal stops each rank's first forces below (a pass of its own), and the ranks agree on it.
      e.cancel = ranks.size() > 1 ? &first_forces_signalled_ : config_.cancel;
      e.names = config_.names;
      engines_.push_back(sim::make_engine(config_.backend, e));
      raw.push_back(engines_.back().get());
    }
    std::unique_ptr<Exchange> local;
    std::unique_ptr<HostStaging> staging;
#if NBODY_HAVE_CUDA
    if (config_.backend == sim::Backend::cuda) {
      ExchangeConditions here = process_exchange_conditions();
      here.one_host_thread = config_.threading == Threading::single;
      here.local_ranks = conditions.local_ranks;
      here.host_gpus = conditions.host_gpus;
      here.shared_gpu = conditions.shared_gpu;
      local = make_cuda_exchange(raw, config_.exchange, here, config_.names);
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
    // The upload computes the first forces and waits for them: a first, generous guess of a step's
    // time for the watchdog, until steps have been timed.
    auto const start = std::chrono::steady_clock::now();
    // Several ranks: each rank's first forces are its own (every rank holds every position), so a signal stops them
    // (hours at N = 10^7 on a few cores) and agree() below meets the ranks, one that saw none once its pass is whole.
    std::optional<SignalWatch> watch;
    if (ranks.size() > 1) watch.emplace(first_forces_signalled_);
    try {
      scheduler_->for_each_device([&](int d) { engines_[d]->upload(initial); });
    } catch (const sim::StepCancelled&) {
      if (watch) throw_if_interrupted();
      throw;
    }
    watch.reset();  // nothing after the first forces is cancelled part-way
    double const upload = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    watchdog_.set_step_estimate(upload * std::max(1, program_.drifts()));
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
    if (exchange_) exchange_->abort();
    if (failure_.empty()) failure_ = e.what();
    throw;
  }
}

double Simulation::block_epoch() const { return hermite_ ? hermite_->epoch() : 0.0; }
double Simulation::block_time() const { return hermite_ ? hermite_->block_time() : 0.0; }

void Simulation::advance(std::uint64_t steps) {
  if (!failure_.empty())
    throw RuntimeFailure("the simulation stopped at an error and cannot go on (" + failure_ + "); start it again");
  guarded([&] { advance_unguarded(steps); });
}

void Simulation::advance_unguarded(std::uint64_t steps) {
  if (steps == 0) return;
  if (hermite_) {
    // The time limit as a block time: the epoch plus a block time is exact only where it is representable,
    // so compare like time() does.
    double limit = time_limit_ - hermite_->epoch();
    // A time that is the epoch plus a block time, as time() adds them, is that block time, though the subtraction
    // rounds off it (an epoch a finish left at 0.3, and 0.6125: 0.31250000000000006): the bodies whose block time it
    // is reach it by block steps, with no finish of an ulp, and at a multiple of the longest step every body does (a
    // run split there keeps the bits of one that is not). The coarsest grid of the steps' powers of two that gives
    // the time back is taken.
    double const top = sim::hermite::pow2_at_most(program_.hermite->dt_max);
    double const floor = sim::hermite::step_floor(limit, *program_.hermite);
    for (double step = top; step >= floor && std::isfinite(limit); step *= 0.5) {
      double const grid = std::nearbyint(limit / step) * step;
      if (grid == limit) break;
      if (hermite_->epoch() + grid == time_limit_) {
        limit = grid;
        break;
      }
    }
    // The block steps done are counted however the call ends: a step below the floor stops the run after the block
    // step that gave it, which is whole, so that the step count and the time (the state's) agree.
    std::uint64_t const before = hermite_->blocks_done();
    std::uint64_t done = 0;
    try {
      done = hermite_->advance(steps, limit);
    } catch (...) {
      clock_.step += hermite_->blocks_done() - before;
      throw;
    }
    clock_.step += done;
    at_time_limit_ = done < steps;
    // A run's end at a time: the bodies behind it brought to it. Not needed (and nothing to do) where the block time
    // is a multiple of the longest step that no longer step (a lower dt max's) outlasts: every body is then at it.
    if (at_time_limit_ && finish_at_limit_ && hermite_->block_time() <= limit) {
      bool const every_body_there =
          hermite_->block_time() == limit && sim::hermite::is_multiple(limit, top) && limit >= long_steps_end_;
      if (!every_body_there && hermite_->finish_at(limit, time_limit_)) {
        ++clock_.step;
        long_steps_end_ = 0.0;  // the finish cut every step to the longest, from its new epoch
      }
    }
    return;
  }
  watchdog_.enqueued(clock_.step + 1, steps);
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
  if (hermite_) return;  // its calls return when their work is done
  check_usable();
  guarded([&] {
    wait_for_devices({});
    scheduler_->for_each_device([&](int d) { engines_[d]->synchronize(); });  // worker threads hand back, errors surface
  });
}

// Polls rather than blocks: blocking on one device while it waits on the GPU for a failed peer
// would never return, and the failure would never be seen; and a wait needs its bound.
void Simulation::wait_for_devices(const std::function<void()>& poll) {
  watchdog_.wait(
      engines_.size(), [&](std::size_t d) { return engines_[d]->idle(); }, [&](std::size_t d) { return device_name(d); },
      [&] { watchdog_expired_give_up(); }, poll);
}

// The waits on the GPUs are let go (their forces are then wrong); devices that still do not finish
// within a few seconds are abandoned, so that destroying the simulation does not wait for them.
void Simulation::watchdog_expired_give_up() {
  exchange_->abort();
  // A failed device is done with; the watchdog reports the stall.
  auto const grace = std::chrono::duration<double>(std::min(5.0, watchdog_.margin_seconds()));
  if (idle_within(engines_.size(), [&](std::size_t d) { return engines_[d]->idle(); }, grace)) return;
  for (auto& e : engines_) e->abandon();
  exchange_->abandon();
  abandoned_ = true;
}

void Simulation::watchdog_expired() {
  std::vector<std::string> busy;
  for (std::size_t d = 0; d < engines_.size(); ++d)
    if (!engines_[d]->idle()) busy.push_back(device_name(d));
  if (busy.empty()) return watchdog_.finished();
  watchdog_.expire(busy, [&] { watchdog_expired_give_up(); });
}

std::string Simulation::device_name(std::size_t d) const {
  int const ordinal = engines_[d]->device();
  std::string name = ordinal >= 0 ? "GPU " + std::to_string(ordinal) : "host device " + std::to_string(d);
  // With several ranks a device's steps also wait for the other ranks' slices: a rank that stopped
  // holds them up as a stalled GPU would (the ranks' own bound, NBODY_RANK_TIMEOUT, may be longer).
  if (ranks_->size() > 1)
    name += " of rank " + std::to_string(ranks_->rank()) + " (or a rank whose slices its steps wait for)";
  return name;
}

void Simulation::check_usable() const {
  if (abandoned_)
    throw RuntimeFailure("the simulation's devices were given up (" + failure_ + "); it can only be destroyed");
}

bool Simulation::idle() {
  if (hermite_) return true;
  check_usable();
  return guarded([&] {
    bool all = true;
    for (auto& e : engines_) all = e->idle() && all;  // every device, so that any failure shows
    if (all)
      watchdog_.finished();
    else if (watchdog_.overdue())
      watchdog_expired();
    return all;
  });
}

void Simulation::stop_if_interrupted() {
  bool const several = ranks_->size() > 1;
  int const sig = agreed_interrupt(*ranks_);
  if (!sig) return;
  // The process is on its way out: the steps still queued are given up, not waited for (freeing
  // device memory would wait for all of them: minutes at large N).
  for (auto& e : engines_) e->abandon();
  if (exchange_) exchange_->abandon();
  throw Interrupted(sig, several);
}

void Simulation::wait_interruptibly() {
  if (hermite_) return stop_if_interrupted();
  check_usable();
  if (ranks_->size() > 1) {
    // A rank cannot stop alone in the middle of the wait (the others would wait for it in the next collective
    // call): each waits for its devices, within the watchdog's bound, and then they agree on a signal.
    synchronize();
    return stop_if_interrupted();
  }
  // The last stage of a step runs on each device's compute stream, after that device waited for
  // every copy it needed: all compute streams idle means the step, copies included, is done.
  guarded([&] { wait_for_devices([&] { stop_if_interrupted(); }); });
  synchronize();  // the worker threads have handed back, and errors surface
}

sim::BodySet Simulation::state() {
  sim::BodySet b;
  state(b);
  return b;
}

void Simulation::state(sim::BodySet& into) {
  if (hermite_) return guarded([&] { hermite_->state(into); });
  check_usable();
  guarded([&] { wait_for_devices({}); });  // bounded, before the downloads' own waits
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

sim::Diagnostics Simulation::diagnostics(bool agree_on_signal) {
  sim::BodySet now;
  return diagnostics(agree_on_signal, now);
}

sim::Diagnostics Simulation::diagnostics(bool agree_on_signal, sim::BodySet& into) {
  begin_sample(agree_on_signal);
  double const potential = end_sample(into);
  return sim::measure(into, potential);
}

void Simulation::begin_sample(bool agree_on_signal) {
  if (hermite_) {
    // Synchronised: every body predicted to the block time, and the potential of those positions.
    guarded([&] { sample_potential_ = hermite_->state_and_potential(sample_state_); });
    return;
  }
  check_usable();
  // A process alone stops in the pass at a signal. Ranks that agree on a signal after it stop in it too, each at its
  // own signal (a batch system's or mpirun's reaches every rank), and meet in the agreement, where a rank that saw
  // none arrives once its pass is whole: every rank then gives up the sample at once, so that the run stops and saves
  // as a whole. Ranks that do not agree afterwards run the pass whole.
  bool const alone = ranks_->size() == 1, agree = agree_on_signal && !alone;
  bool stopped = false;
  guarded([&] {
    wait_for_devices({});  // bounded, before the engines' own waits
    try {
      scheduler_->for_each_device([&](int d) { engines_[d]->begin_sample(alone || agree); });
    } catch (const Interrupted&) {
      if (!agree) throw;
      stopped = true;  // this rank's terms are partial: the agreement below says the signal, and none are used
    }
  });
  sample_time_ = time();
  if (agree)
    if (int const sig = agreed_interrupt(*ranks_)) throw Interrupted(sig, true);
  if (stopped) throw std::logic_error("Simulation::begin_sample: a pass stopped at a signal the ranks did not agree on");
}

double Simulation::end_sample(sim::BodySet& into) {
  if (hermite_) {
    into = sample_state_;
    return sample_potential_;
  }
  check_usable();
  into.resize(bodies_);
  into.type = types_;
  into.time = sample_time_;
  sample_terms_.resize(bodies_);  // allocates once: a series' samples have the same size
  guarded([&] { scheduler_->for_each_device([&](int d) { engines_[d]->end_sample(into, sample_terms_.data()); }); });
  if (ranks_->size() > 1) {
    ranks_->all_gather_in_place(sample_terms_.data(), sizeof(double), rank_counts_, rank_offsets_);
    ranks_->all_gather_in_place(into.pos_mass.data(), sizeof(into.pos_mass[0]), rank_counts_, rank_offsets_);
    ranks_->all_gather_in_place(into.velocity.data(), sizeof(into.velocity[0]), rank_counts_, rank_offsets_);
  }
  // Body by body in index order: the same sum whatever the slices, threads, devices or ranks.
  double total = 0.0;
  for (double t : sample_terms_) total += t;
  return 0.5 * total;
}

std::vector<Vec3d> Simulation::accelerations() {
  if (hermite_) return guarded([&] { return hermite_->accelerations(); });
  check_usable();
  guarded([&] { wait_for_devices({}); });
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

void Simulation::hermite_state(sim::BodySet& bodies, sim::hermite::HermiteState& state) {
  if (!hermite_) throw std::logic_error("hermite_state() of a simulation without block steps");
  guarded([&] { hermite_->own_time_state(bodies, state); });
}

sim::hermite::HermiteCounters Simulation::hermite_counters() {
  if (!hermite_) return {};
  return guarded([&] { return hermite_->counters(); });
}

void Simulation::start_timing(std::size_t steps) {
  if (hermite_)
    throw InputError("hermite4: per-step device timing does not apply to block steps (driver::measure times them "
                     "by the wall clock)");
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
  if (hermite_) return {};
  check_usable();
  guarded([&] { wait_for_devices({}); });
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
  if (hermite_) return nullptr;  // no full position array on any device (the viewer reads state())
  return engines_.at(std::size_t(d))->positions_buffer(int(publications_ & 1));
}

std::size_t Simulation::bytes_per_body() const { return hermite_ ? 0 : engines_.front()->bytes_per_body(); }

const void* Simulation::current_velocities(int d) const {
  return hermite_ ? nullptr : engines_.at(std::size_t(d))->velocities_buffer();
}

int Simulation::device_ordinal(int d) const {
  if (hermite_) return config_.backend == sim::Backend::cuda ? config_.devices.at(std::size_t(d)) : -1;
  return engines_.at(std::size_t(d))->device();
}

std::string Simulation::kernel_name() const {
  return hermite_ ? hermite_->kernel_name() : engines_.front()->kernel_name();
}

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
  s << ", kernel " << kernel_name() << ", " << name_of(config_.engine.precision) << ", threading "
    << name_of(config_.threading);
  if (config_.launch == Launch::graph) s << ", CUDA graphs of " << kGraphSteps << " steps";
  if (all_slices_.size() > 1)
    s << ", exchange " << (exchange_ ? exchange_->describe() : hermite_ ? hermite_->describe_exchange() : "host");
  return s.str();
}

}  // namespace nbody::multigpu
