// multigpu/hermite_blocks.cpp - Hermite block steps over devices and ranks.
//
// One block step on two devices A [0, h) and B [h, N) (whole groups each), any ranks:
//   A, B: own_next_time -> t = the least (between ranks: a gather of each rank's least)
//   A, B: predict(t), pack_active(t) -> the active list, A's then B's (index order; between ranks: gathered)
//   A, B: set_active(list), partial_forces -> partials[group][k] of the own groups, on the device
//   A then B: sums[k] = sums so far + the own groups' partials[g][k] in group order (from zero on the first):
//     A's result to B by a peer copy (CUDA in one process) or through the host; between ranks, a broadcast
//   A, B: correct(their own bodies' totals from the last sums, t)
// Every step that touches a device runs on that device's thread (for_each_device: in turn, or each worker).
// With one host thread, engines of one process that read each other's memory (CUDA) run block steps on the devices
// instead (HermiteEngine::advance_together): every device keeps every body's state and does the whole block step but
// its share of the force pass, and waits on the GPU for the others' partials, not on the host.
#include "multigpu/hermite_blocks.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <thread>

#include "core/errors.h"
#include "core/interrupt.h"
#include "multigpu/partition.h"
#include "multigpu/watchdog.h"
#include "sim/kernels/segments.h"

namespace nbody::multigpu {

using sim::hermite::ActiveBody;
using sim::hermite::ForceJerk;

std::vector<Slice> hermite_partition(std::size_t n, std::size_t devices, const std::vector<double>& weights) {
  auto const layout = sim::kernels::segment_layout(n);
  std::vector<Slice> const groups = make_partition(layout.count, devices, weights);
  std::vector<Slice> slices;
  for (Slice const& g : groups) {
    std::size_t const begin = std::min(n, g.begin * layout.length), end = std::min(n, g.end() * layout.length);
    slices.push_back({begin, end - begin});
  }
  return slices;
}

namespace {
// Bodies a force pass with every body active takes at a time (the start and the potential): each device's
// partials then need at most 16 x 4096 x 64 bytes (4 MiB) whatever N. On the CPU, fewer: a chunk is where a signal
// stops the pass, so it holds about 2^25 pairs (about 0.1 s on two cores, 4096 x 65,536 pairs took 1 s), and at
// least 64 bodies. The chunks change no sum: each active body's force is its own.
constexpr std::size_t kAllActiveChunk = 4096;
constexpr std::size_t kCpuChunkPairs = std::size_t(1) << 25;

std::size_t all_active_chunk(sim::Backend backend, std::size_t bodies) {
  if (backend != sim::Backend::cpu || bodies == 0) return kAllActiveChunk;
  return std::clamp<std::size_t>(kCpuChunkPairs / bodies, 64, kAllActiveChunk);
}
}  // namespace

std::size_t hermite_host_bytes(sim::Backend backend, const sim::EngineSettings& engine, std::size_t n,
                               std::size_t devices, std::size_t all_devices, const std::vector<double>& weights) {
  all_devices = std::max<std::size_t>(all_devices, 1);
  std::vector<double> const every = weights.size() == all_devices ? weights : std::vector<double>{};
  std::size_t largest = 0;
  for (Slice const& s : hermite_partition(n, all_devices, every)) largest = std::max(largest, s.count);
  sim::HermiteEngineConfig e;
  e.bodies = n;
  e.slice = {0, largest};
  e.engine = engine;
  std::size_t const engines = sim::hermite_engine_host_bytes(backend, e) * devices;
  // active_ (every body at the start), totals_ (a chunk at a time on the CPU), finish_at's copies: the state and
  // its Hermite state, and each body's held step, time, acceleration and jerk.
  std::size_t const totals = backend == sim::Backend::cpu ? std::min(n, kAllActiveChunk) : n;
  std::size_t const finish = sizeof(Real4<double>) + sizeof(Vec3d) + 1 + 2 * sizeof(Vec3d) + 2 * sizeof(double) +
                             2 * sizeof(double) + 2 * sizeof(Vec3d);
  return engines + n * sizeof(ActiveBody) + totals * sizeof(ForceJerk) + n * finish;
}

HermiteBlocks::HermiteBlocks(const sim::BodySet& initial, const sim::hermite::HermiteState& state,
                             const HermiteBlocksSetup& setup)
    : setup_(setup),
      ranks_(setup.ranks ? *setup.ranks : world()),
      bodies_(initial.size()),
      types_(initial.type) {
  auto const layout = sim::kernels::segment_layout(bodies_);
  groups_ = layout.count;
  std::size_t first_device = 0;
  for (std::size_t r = 0; r < setup_.rank_devices.size(); ++r) {
    if (int(r) == ranks_.rank()) break;
    first_device += setup_.rank_devices[r];
  }
  std::size_t const devices = setup_.devices.size();
  slices_.assign(setup_.all_slices.begin() + std::ptrdiff_t(first_device),
                 setup_.all_slices.begin() + std::ptrdiff_t(first_device + devices));
  for (Slice const& s : slices_) first_group_.push_back(s.begin / layout.length);
  for (std::size_t r = 0, d = 0; r < setup_.rank_devices.size(); ++r) {
    std::size_t begin = setup_.all_slices[d].begin, count = 0, groups = 0;
    for (std::size_t k = 0; k < setup_.rank_devices[r]; ++k, ++d) {
      count += setup_.all_slices[d].count;
      groups += (setup_.all_slices[d].count + layout.length - 1) / layout.length;
    }
    rank_counts_.push_back(count);
    rank_offsets_.push_back(begin);
    rank_group_counts_.push_back(groups);
    rank_group_offsets_.push_back(begin / layout.length);
  }
  single_ = setup_.all_slices.size() == 1;
  epoch_ = state.started() ? state.epoch : initial.time;
  finished_ = state.started() && state.finished;

  try {
    start_up(initial, state, devices);
  } catch (...) {
    let_go_of_engines();  // the destructor does not run
    throw;
  }
}

void HermiteBlocks::start_up(const sim::BodySet& initial, const sim::hermite::HermiteState& state,
                             std::size_t devices) {
  int const engine_threads = threads_per_engine(setup_.backend, setup_.threading, setup_.engine.cpu_threads, devices);
  for (std::size_t d = 0; d < devices; ++d) {
    sim::HermiteEngineConfig e;
    e.bodies = bodies_;
    e.slice = slices_[d];
    e.softening = setup_.softening;
    e.engine = setup_.engine;
    e.engine.cpu_threads = engine_threads;
    e.device = setup_.devices[d];
    e.params = setup_.params;
    e.names = setup_.names;
    engines_.push_back(setup_.make_engine ? setup_.make_engine(e) : sim::make_hermite_engine(setup_.backend, e));
  }
  threads_ = make_device_threads(setup_.threading, devices, [this](int d) { engines_[std::size_t(d)]->bind_thread(); });
  sums_on_device_ = !engines_.empty();
  for (auto const& e : engines_) {
    sums_on_device_ = sums_on_device_ && e->sums_on_device();
    engine_list_.push_back(e.get());
  }
  together_ = !single_ && ranks_.size() == 1 && threads_->threading() == Threading::single && engines_.size() > 1 &&
              engines_.front()->can_advance_together(engine_list_);
  active_.reserve(bodies_);
  device_counts_.resize(devices);
  device_offsets_.resize(devices);
  std::size_t const rank_count = std::size_t(ranks_.size());
  rank_active_.resize(rank_count);
  active_counts_.resize(rank_count);
  active_offsets_.resize(rank_count);
  rank_ones_.assign(rank_count, 1);
  rank_from_.assign(rank_count, 0);
  rank_zero_offsets_.assign(rank_count, 0);
  for (std::size_t r = 0; r < rank_count; ++r) rank_index_.push_back(r);

  if (state.started()) {
    threads_->for_each_device([&](int d) { engines_[std::size_t(d)]->upload(initial, state); });
    // After a block at t, the bodies it corrected are at t and the others before it.
    block_time_ = state.block_time();
    // A state in which a body's next step is below the floor (that of a run that stopped there) can be looked at,
    // saved and checkpointed, but its first block step is refused (advance): that step is the one the run refused.
    held_below_floor_ = sim::hermite::first_below_floor(state, setup_.params);
  } else {
    threads_->for_each_device([&](int d) { engines_[std::size_t(d)]->upload_unstarted(initial); });
    block_time_ = 0.0;
    gather_active(0.0, true);
    force_pass(0.0, Pass::initialise, all_active_chunk(setup_.backend, bodies_));
    check_start_floor();
  }
}

HermiteBlocks::~HermiteBlocks() { let_go_of_engines(); }

void HermiteBlocks::check_usable() const {
  for (auto const& e : engines_)
    if (e->abandoned())
      throw RuntimeFailure("hermite4: a device gave up its work after a wait past its bound; the simulation can only "
                           "be destroyed");
}

void HermiteBlocks::let_go_of_engines() noexcept {
  bool gave_up = false;
  for (auto& e : engines_) gave_up = gave_up || e->abandoned();
  if (!gave_up && idle_within(engines_.size(), [&](std::size_t d) { return engines_[d]->idle(); },
                              std::chrono::seconds(5)))
    return;
  for (auto& e : engines_) e->abandon();
}

void HermiteBlocks::gather_active(double t, bool all, bool host_list) {
  // One thread for every device: each device's work is queued before any is waited for. (A worker a device waits
  // for its own only.)
  bool const one_thread = threads_->threading() == Threading::single;
  threads_->for_each_device([&](int d) {
    auto& e = *engines_[std::size_t(d)];
    e.predict(t);
    if (one_thread) e.start_pack(t, all);
    else device_counts_[std::size_t(d)] = e.pack_active(t, all);
  });
  if (one_thread)
    threads_->for_each_device([&](int d) { device_counts_[std::size_t(d)] = engines_[std::size_t(d)]->pack_active(t, all); });
  std::size_t local = 0;
  for (std::size_t c : device_counts_) local += c;
  std::size_t mine = 0, total = local;
  if (ranks_.size() > 1) {
    std::size_t const me = std::size_t(ranks_.rank());
    rank_active_[me] = local;
    ranks_.all_gather_in_place(rank_active_.data(), sizeof(std::uint64_t), rank_ones_, rank_index_);
    total = 0;
    for (std::size_t r = 0; r < rank_active_.size(); ++r) {
      if (r == me) mine = total;
      total += rank_active_[r];
    }
  }
  active_total_ = total;
  if (host_list || ranks_.size() > 1) active_.resize(total);
  for (std::size_t d = 0, at = mine; d < engines_.size(); ++d) {
    device_offsets_[d] = at;
    if (host_list || ranks_.size() > 1)
      std::copy_n(engines_[d]->own_active_data(), device_counts_[d], active_.begin() + std::ptrdiff_t(at));
    at += device_counts_[d];
  }
  if (ranks_.size() > 1) {
    for (std::size_t r = 0; r < rank_active_.size(); ++r) {
      active_counts_[r] = rank_active_[r];
      active_offsets_[r] = r ? active_offsets_[r - 1] + active_counts_[r - 1] : 0;
    }
    ranks_.all_gather_in_place(active_.data(), sizeof(ActiveBody), active_counts_, active_offsets_);
  }
}

std::size_t HermiteBlocks::correct_chunk() const {
  if (setup_.backend == sim::Backend::cpu) return all_active_chunk(setup_.backend, bodies_);
  return std::max<std::size_t>(active_total_, 1);
}

double HermiteBlocks::force_pass(double t, Pass pass, std::size_t chunk, std::vector<Vec3d>* accelerations) {
  double sum = 0.0;
  std::size_t const total = active_total_;
  std::size_t const me = std::size_t(ranks_.rank());
  // Whether a rank before this one holds groups: this rank's first device with groups continues their sums.
  bool groups_before = false;
  for (std::size_t r = 0; r < me; ++r) groups_before = groups_before || rank_group_counts_[r] > 0;
  for (std::size_t c0 = 0; c0 < total; c0 += chunk) {
    // A pass in chunks (the start, the potential: N x N pairs, minutes on a CPU at large N) stops between them on a
    // signal, as every start-up phase does; the ranks agree on it first, so that all of them stop at one chunk. A
    // corrector's pass does not: its block step would be left half made.
    if (c0 > 0 && pass != Pass::correct) {
      int const sig = agreed_interrupt(ranks_);
      if (sig) throw Interrupted(sig, ranks_.size() > 1);
      // The start alone: a cancelled potential pass would leave a simulation that can only be destroyed, for a pass
      // that changes nothing of the run (one process: nothing to agree).
      if (pass == Pass::initialise && setup_.cancel && setup_.cancel->load()) throw sim::StepCancelled();
    }
    std::size_t const count = std::min(chunk, total - c0);
    totals_.resize(count);
    // Inside one process, for the corrector or the start in one go, the running sums stay on the devices (below),
    // and each device reads the active list from every device's packed bodies directly.
    bool const measures = pass == Pass::potential || pass == Pass::accelerations;  // changes nothing
    bool const on_device = sums_on_device_ && ranks_.size() == 1 && !measures && count == total;
    // Every device starts its pass before any is waited for.
    threads_->for_each_device([&](int d) {
      auto& e = *engines_[std::size_t(d)];
      if (on_device)
        e.set_active_from(engine_list_, device_counts_);
      else
        e.set_active(active_.data() + c0, count);
      if (pass == Pass::potential)
        e.partial_forces_fp64();
      else
        e.partial_forces();
    });
    // The canonical order's last stage: the groups' partials in group order, from zero (docs/architecture.md),
    // device after device in the order of the groups: each adds its own groups, where they are, to the sums of
    // the groups before it (O(active) bytes a device, where every device's partials were O(groups x active)).
    // Inside one process, for the corrector or the start in one go, the sums stay on the devices: each reads the
    // one before's by a peer copy ordered after it, and each its own bodies' totals from the last (no host round
    // trip). Otherwise (ranks, the potential's sum, a start in chunks) they pass through the host.
    if (on_device) {
      sim::HermiteEngine* last = nullptr;
      for (std::size_t d = 0; d < engines_.size(); ++d) {
        if (engines_[d]->own_groups() == 0) continue;
        threads_->for_each_device([&](int x) {
          if (std::size_t(x) == d) engines_[d]->add_own_groups_on_device(last);
        });
        last = engines_[d].get();
      }
      threads_->for_each_device([&](int d) {
        if (device_counts_[std::size_t(d)] == 0 || !last) return;  // as below: no own active body, nothing to do
        auto& e = *engines_[std::size_t(d)];
        if (pass == Pass::correct)
          e.correct_from(*last, t);
        else
          e.initialise_from(*last, t);
      });
      continue;
    }
    bool started = groups_before;
    for (std::size_t r = 0; r < std::size_t(ranks_.size()); ++r) {
      if (r == me) {
        // Each device reads the one before's result where it is (valid until that engine's next call).
        const ForceJerk* prefix = started ? totals_.data() : nullptr;
        for (std::size_t d = 0; d < engines_.size(); ++d) {
          if (engines_[d]->own_groups() == 0) continue;
          threads_->for_each_device([&](int x) {
            if (std::size_t(x) == d) prefix = engines_[d]->add_own_groups(prefix);
          });
        }
        if (prefix && prefix != totals_.data()) std::copy_n(prefix, count, totals_.begin());
        started = started || prefix;
      }
      if (ranks_.size() > 1 && rank_group_counts_[r] > 0) {  // rank r's sums to every rank
        std::vector<std::size_t>& from = rank_from_;
        std::fill(from.begin(), from.end(), 0);
        from[r] = count;  // in ForceJerk units: one datatype whatever the count
        ranks_.all_gather_in_place(totals_.data(), sizeof(ForceJerk), from, rank_zero_offsets_);
        started = true;
      }
    }
    if (!started) std::fill(totals_.begin(), totals_.end(), ForceJerk{});  // no groups anywhere (N = 0)
    if (measures) {
      for (std::size_t k = 0; k < count; ++k) sum += active_[c0 + k].m * totals_[k].phi;
      if (accelerations)
        for (std::size_t k = 0; k < count; ++k)
          (*accelerations)[active_[c0 + k].index] = {totals_[k].ax, totals_[k].ay, totals_[k].az};
      continue;
    }
    threads_->for_each_device([&](int d) {
      std::size_t const begin = std::max(device_offsets_[std::size_t(d)], c0);
      std::size_t const end = std::min(device_offsets_[std::size_t(d)] + device_counts_[std::size_t(d)], c0 + count);
      if (end <= begin) return;
      auto& e = *engines_[std::size_t(d)];
      if (pass == Pass::correct)
        e.correct(totals_.data() + (begin - c0), end - begin, t);
      else
        e.initialise(totals_.data() + (begin - c0), end - begin, t);
    });
  }
  return sum;
}

std::uint64_t HermiteBlocks::advance(std::uint64_t blocks, double t_stop) {
  check_usable();
  if (blocks > 0 && held_below_floor_ >= 0) floor_failure(std::size_t(held_below_floor_), Floor::held);
  if (single_) {
    auto& e = *engines_.front();
    std::uint64_t const done = e.advance_blocks(blocks, t_stop);
    block_time_ = e.block_time();
    blocks_done_ += done;
    check_floor();
    return done;
  }
  if (together_) {
    std::uint64_t const done = engines_.front()->advance_together(engine_list_, blocks, block_time_, t_stop);
    block_time_ = engines_.front()->block_time();
    blocks_done_ += done;
    check_floor();
    return done;
  }
  std::uint64_t done = 0;
  std::vector<double> next(engines_.size());
  std::vector<double> rank_next(std::size_t(ranks_.size()));
  bool floor_checked = true;  // the block before this call's first: checked by the call before, or at the start
  for (; done < blocks; ++done) {
    if (threads_->threading() == Threading::single)  // as in gather_active
      threads_->for_each_device([&](int d) { engines_[std::size_t(d)]->start_next_time(); });
    threads_->for_each_device([&](int d) { next[std::size_t(d)] = engines_[std::size_t(d)]->own_next_time(); });
    // The block before's floor, read with the next times (no round trip of its own): before any block uses it.
    if (!floor_checked) check_floor();
    floor_checked = true;
    double t = std::numeric_limits<double>::infinity();
    for (double x : next) t = std::min(t, x);
    if (ranks_.size() > 1) {
      rank_next[std::size_t(ranks_.rank())] = t;
      ranks_.all_gather_in_place(rank_next.data(), sizeof(double), rank_ones_, rank_index_);
      for (double x : rank_next) t = std::min(t, x);
    }
    if (!(t <= t_stop)) break;
    gather_active(t, false, !(sums_on_device_ && ranks_.size() == 1));
    force_pass(t, Pass::correct, correct_chunk());
    block_time_ = t;
    ++blocks_done_;
    floor_checked = false;
  }
  if (!floor_checked) check_floor();
  return done;
}

bool HermiteBlocks::finish_at(double t, double time) {
  check_usable();
  // This rank's own slices, as each engine holds them (the other ranks' bodies are left as made: no engine reads
  // them), changed in place and loaded again: an upload starts an engine's counts again, so they are carried.
  sim::BodySet b;
  b.resize(bodies_);
  b.type = types_;
  sim::hermite::HermiteState s;
  s.resize(bodies_);
  auto download = [&] { threads_->for_each_device([&](int d) { engines_[std::size_t(d)]->download(b, s); }); };
  auto upload = [&] {
    for (auto& e : engines_) carried_ += e->counters();
    threads_->for_each_device([&](int d) { engines_[std::size_t(d)]->upload(b, s); });
  };
  download();
  bool behind = false, exact = true;
  for (Slice const& slice : slices_)
    for (std::size_t i = slice.begin; i < slice.end(); ++i)
      if (s.time[i] < t) {
        behind = true;
        // The step t - t_i must end at t exactly: the packing and the next block's time compare times exactly.
        exact = exact && s.time[i] + (t - s.time[i]) == t;
      }
  if (ranks_.size() > 1) {
    behind = ranks_.max(behind ? 1 : 0) == 1;
    exact = ranks_.max(exact ? 0 : 1) == 0;
  }
  if (!behind || !exact) return false;
  // The own bodies' steps, times, accelerations and jerks before their last step: the steps are kept through it, and
  // the derivatives give the criterion at its end.
  std::vector<double> const held = s.step, before = s.time;
  std::vector<Vec3d> const a0 = s.acceleration, j0 = s.jerk;
  for (Slice const& slice : slices_)
    for (std::size_t i = slice.begin; i < slice.end(); ++i)
      if (s.time[i] < t) s.step[i] = t - s.time[i];
  upload();
  // The block step of the bodies whose next time is now t: the protocol's, on every layout alike (its corrector takes
  // each body's step as t - t_i; the criterion's next step it gives is not kept).
  gather_active(t, false, !(sums_on_device_ && ranks_.size() == 1));
  force_pass(t, Pass::correct, correct_chunk());
  download();
  // Each body that took a last step goes on with the step the criterion gives at its end, from the step it held, as
  // after a block step (the corrector's own next step halves t - t_i, which is no power of two): a run cut into many
  // such finishes (outputs at times more often than the steps) shortens a body's step where its orbit needs it, as
  // the run straight through does. A step longer than the longest (a lower dt max's, not yet ended:
  // driver::continue_hermite) is cut to it, as a restart from this state would cut it: block time 0 is a multiple of
  // every step, and the floor is block time 0's.
  // Over a last step short against the step held, the criterion measures rounding, not the orbit: its a2 and a3 are
  // (a0 - a1) / dt^2 and / dt^3, and a0, of the predicted position at t_i, is off the corrected one's by about the
  // corrector's change; the step it gives shrinks with t - t_i (a few hundred times it), to below the floor for an
  // ulp. There it may halve the step held, no more: outputs that often still shorten a step the orbit shortens, down
  // to where the criterion measures it again.
  double const top = sim::hermite::pow2_at_most(setup_.params.dt_max), floor = sim::hermite::step_floor(0.0, setup_.params);
  for (Slice const& slice : slices_)
    for (std::size_t i = slice.begin; i < slice.end(); ++i) {
      double const kept = std::min(held[i], top);
      if (before[i] < t) {
        using V3 = sim::hermite::V3;
        V3 const a{a0[i].x, a0[i].y, a0[i].z}, j{j0[i].x, j0[i].y, j0[i].z};
        V3 const a1{s.acceleration[i].x, s.acceleration[i].y, s.acceleration[i].z};
        V3 const j1{s.jerk[i].x, s.jerk[i].y, s.jerk[i].z};
        double const last = t - before[i];
        double const wanted = sim::hermite::step_criterion(a, j, a1, j1, last, setup_.params.eta);
        if (last >= kept / 4)
          s.step[i] = sim::hermite::next_step(wanted, kept, 0.0, top, floor);
        else
          s.step[i] = wanted < kept && kept / 2 >= floor ? kept / 2 : kept;
      } else {
        s.step[i] = kept;
      }
      s.time[i] = 0.0;
    }
  upload();
  // A step the criterion cut below the floor is refused at the next block step, as a continued state's is.
  std::int64_t mine = -1;
  for (Slice const& slice : slices_)
    for (std::size_t i = slice.begin; i < slice.end() && mine < 0; ++i)
      if (sim::hermite::below_floor(s.step[i], 0.0, setup_.params)) mine = std::int64_t(i);
  if (std::int64_t const body = lowest_on_any_rank(mine); body >= 0) held_below_floor_ = body;
  epoch_ = time;
  block_time_ = 0.0;
  finished_ = true;
  ++blocks_done_;
  if (single_) ++carried_.block_steps;  // the engine counts only its own advance_blocks
  return true;
}

std::int64_t HermiteBlocks::floor_violation() {
  std::vector<std::int64_t> found(engines_.size());
  threads_->for_each_device([&](int d) { found[std::size_t(d)] = engines_[std::size_t(d)]->floor_violation(); });
  std::int64_t worst = -1;
  for (std::int64_t v : found)
    if (v >= 0 && (worst < 0 || v < worst)) worst = v;
  return lowest_on_any_rank(worst);
}

std::int64_t HermiteBlocks::lowest_on_any_rank(std::int64_t mine) const {
  // max of -(index) over ranks, with "none" as the least value.
  int const none = std::numeric_limits<int>::min();
  int const negated = mine < 0 ? none : -int(mine);
  int const any = ranks_.size() > 1 ? ranks_.max(negated) : negated;
  return any == none ? -1 : -std::int64_t(any);
}

void HermiteBlocks::check_floor() {
  if (std::int64_t const body = floor_violation(); body >= 0) floor_failure(std::size_t(body), Floor::step);
}

void HermiteBlocks::check_start_floor() {
  if (floor_violation() < 0) return;
  // Every rank holds the whole state after own_time_state and finds the same steps from it, in body order.
  sim::BodySet b;
  sim::hermite::HermiteState s;
  own_time_state(b, s);
  std::vector<std::size_t> below;
  for (std::size_t i = 0; i < bodies_; ++i)
    if (sim::hermite::below_floor(s.step[i], s.time[i], setup_.params)) below.push_back(i);
  // One pass over N for each such body, in parallel (each body's step is its own: the same bits on any thread count),
  // in chunks between which a signal or a cancel stops the start, as the start's force pass does: every rank walks
  // the same chunks, so they agree at the same points.
  constexpr std::size_t kChunk = 512;
  std::vector<double> steps(below.size());
  for (std::size_t c0 = 0; c0 < below.size(); c0 += kChunk) {
    if (c0 > 0) {
      if (int const sig = agreed_interrupt(ranks_)) throw Interrupted(sig, ranks_.size() > 1);
      if (setup_.cancel && setup_.cancel->load()) throw sim::StepCancelled();
    }
    auto const end = std::ptrdiff_t(std::min(below.size(), c0 + kChunk));
#pragma omp parallel for schedule(dynamic)
    for (std::ptrdiff_t k = std::ptrdiff_t(c0); k < end; ++k) {
      std::size_t const i = below[std::size_t(k)];
      double const wanted = sim::hermite::cancelled_start_criterion(b, i, s.acceleration[i], s.jerk[i],
                                                                    setup_.softening, setup_.params.eta_start);
      steps[std::size_t(k)] = wanted > 0.0 ? sim::hermite::start_step(wanted, s.time[i], setup_.params) : s.step[i];
    }
  }
  for (std::size_t k = 0; k < below.size(); ++k) {
    if (sim::hermite::below_floor(steps[k], s.time[below[k]], setup_.params)) floor_failure(below[k], Floor::start);
    s.step[below[k]] = steps[k];
  }
  for (auto& e : engines_) carried_ += e->counters();  // an upload starts an engine's counts again
  threads_->for_each_device([&](int d) { engines_[std::size_t(d)]->upload(b, s); });
}

void HermiteBlocks::floor_failure(std::size_t body, Floor why) {
  sim::BodySet now, own;
  sim::hermite::HermiteState hs;
  state(now);
  own_time_state(own, hs);
  double const floor = sim::hermite::step_floor(hs.time[body], setup_.params);
  if (why == Floor::start) {
    throw StoppedWhole(sim::hermite::start_floor_message(now, body, floor, time(), setup_.params.eta_start,
                                                         hs.acceleration[body], hs.jerk[body], setup_.softening));
  }
  if (why == Floor::held)
    throw StoppedWhole(sim::hermite::continued_floor_message(now, body, hs.step[body], floor, time()));
  throw StoppedWhole(sim::hermite::floor_message(now, body, floor, time(), setup_.params.eta, hs.acceleration[body],
                                                 setup_.softening));
}

void HermiteBlocks::state(sim::BodySet& into) {
  check_usable();
  into.resize(bodies_);
  into.type = types_;
  into.time = time();
  threads_->for_each_device([&](int d) {
    auto& e = *engines_[std::size_t(d)];
    e.predict(block_time_);
    e.download_predicted(into);
  });
  if (ranks_.size() > 1) {
    ranks_.all_gather_in_place(into.pos_mass.data(), sizeof(into.pos_mass[0]), rank_counts_, rank_offsets_);
    ranks_.all_gather_in_place(into.velocity.data(), sizeof(into.velocity[0]), rank_counts_, rank_offsets_);
  }
}

double HermiteBlocks::state_and_potential(sim::BodySet& into) {
  state(into);
  gather_active(block_time_, true);
  double const sum = force_pass(block_time_, Pass::potential, all_active_chunk(setup_.backend, bodies_));
  potential_interactions_ += std::uint64_t(bodies_) * bodies_;
  return 0.5 * sum;
}

void HermiteBlocks::own_time_state(sim::BodySet& b, sim::hermite::HermiteState& s) {
  check_usable();
  b.resize(bodies_);
  b.type = types_;
  b.time = time();
  s.resize(bodies_);
  s.epoch = epoch_;
  s.finished = finished_ && block_time_ == 0.0;
  threads_->for_each_device([&](int d) { engines_[std::size_t(d)]->download(b, s); });
  if (ranks_.size() > 1) {
    ranks_.all_gather_in_place(b.pos_mass.data(), sizeof(b.pos_mass[0]), rank_counts_, rank_offsets_);
    ranks_.all_gather_in_place(b.velocity.data(), sizeof(b.velocity[0]), rank_counts_, rank_offsets_);
    ranks_.all_gather_in_place(s.acceleration.data(), sizeof(Vec3d), rank_counts_, rank_offsets_);
    ranks_.all_gather_in_place(s.jerk.data(), sizeof(Vec3d), rank_counts_, rank_offsets_);
    ranks_.all_gather_in_place(s.time.data(), sizeof(double), rank_counts_, rank_offsets_);
    ranks_.all_gather_in_place(s.step.data(), sizeof(double), rank_counts_, rank_offsets_);
  }
}

std::vector<Vec3d> HermiteBlocks::accelerations() {
  check_usable();
  std::vector<Vec3d> a(bodies_);
  gather_active(block_time_, true);
  force_pass(block_time_, Pass::accelerations, all_active_chunk(setup_.backend, bodies_), &a);
  potential_interactions_ += std::uint64_t(bodies_) * bodies_;  // not the run's block steps' pairs
  return a;
}

sim::hermite::HermiteCounters HermiteBlocks::counters() {
  check_usable();
  sim::hermite::HermiteCounters mine = carried_;
  for (auto& e : engines_) mine += e->counters();
  std::vector<sim::hermite::HermiteCounters> all(std::size_t(ranks_.size()));
  all[std::size_t(ranks_.rank())] = mine;
  if (ranks_.size() > 1)
    ranks_.all_gather_in_place(all.data(), sizeof(sim::hermite::HermiteCounters), rank_ones_, rank_index_);
  sim::hermite::HermiteCounters total;
  for (auto const& c : all) total += c;
  if (!single_) total.block_steps = blocks_done_;
  total.interactions -= std::min(total.interactions, potential_interactions_);
  return total;
}

std::string HermiteBlocks::kernel_name() const { return engines_.front()->kernel_name(); }

}  // namespace nbody::multigpu
