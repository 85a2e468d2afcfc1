// sim/engines/hermite_cpu.cpp - the CPU Hermite engine: one host "device"'s j-slice, its predictor, the force
// pass (hermite_cpu_forces.cpp) and the corrector, all from sim/physics/hermite_step.h.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/errors.h"
#include "sim/engines/hermite_cpu_forces.h"
#include "sim/engines/hermite_engine.h"
#include "sim/kernels/segments.h"

namespace nbody::sim {

namespace {

using hermite::ActiveBody;
using hermite::ForceJerk;
using hermite::V3;

// Below this many bodies an O(N) loop runs on one thread: waking a team costs more than it saves.
constexpr long kParallelBodies = 16384;
// Active bodies whose partials one engine alone (advance_blocks) computes at a time: a whole number of SIMD blocks,
// and enough to keep every thread busy (a pass over N j-bodies each).
constexpr std::size_t kBlockChunk = 4096;
static_assert(kBlockChunk % kHermiteLanes == 0, "a chunk starts on a SIMD block");

class HermiteCpuEngine final : public HermiteEngine {
 public:
  explicit HermiteCpuEngine(const HermiteEngineConfig& config)
      : config_(config), group_length_(kernels::segment_layout(config.bodies).length) {
    Slice const s = config.slice;
    if (s.end() > config.bodies || (s.begin % group_length_ != 0 && s.begin != config.bodies) ||
        (s.end() % group_length_ != 0 && s.end() != config.bodies))
      throw std::logic_error("Hermite CPU engine: the slice [" + std::to_string(s.begin) + ", " +
                             std::to_string(s.end()) + ") is not a whole number of groups");
    std::size_t const n = s.count;
    x_.resize(n), v_.resize(n), a_.resize(n), j_.resize(n);
    t_.resize(n), dt_.resize(n);
    for (auto* p : {&px_, &py_, &pz_, &pvx_, &pvy_, &pvz_, &m_}) p->resize(n);
    own_active_.reserve(n + kHermiteLanes);
    active_.reserve(config.bodies + kHermiteLanes);
    // The sums' buffers at their largest, now: a block step then allocates nothing, and no buffer grows by a copy
    // (which held the old and the new at once, more than hermite_cpu_engine_host_bytes counts).
    std::size_t const chunk = std::min(config.bodies, kBlockChunk);
    partials_.reserve(own_groups() * chunk);
    chain_.reserve(chunk);
    if (n == config.bodies) totals_.reserve(n);
  }

  void bind_thread() override {
    if (config_.engine.cpu_threads > 0) omp_set_num_threads(config_.engine.cpu_threads);
  }

  void upload(const BodySet& b, const hermite::HermiteState& state) override {
    load_bodies(b);
    Slice const s = config_.slice;
    for (std::size_t i = 0; i < s.count; ++i) {
      std::size_t const g = s.begin + i;
      a_[i] = state.acceleration[g];
      j_[i] = state.jerk[g];
      t_[i] = state.time[g];
      dt_[i] = state.step[g];
    }
    block_time_ = 0.0;
    for (std::size_t i = 0; i < s.count; ++i) block_time_ = std::max(block_time_, t_[i]);
  }

  void upload_unstarted(const BodySet& b) override {
    load_bodies(b);
    std::fill(a_.begin(), a_.end(), V3{0, 0, 0});
    std::fill(j_.begin(), j_.end(), V3{0, 0, 0});
    std::fill(t_.begin(), t_.end(), 0.0);
    std::fill(dt_.begin(), dt_.end(), 0.0);
    block_time_ = 0.0;
  }

  void download(BodySet& b, hermite::HermiteState& state) override {
    Slice const s = config_.slice;
    for (std::size_t i = 0; i < s.count; ++i) {
      std::size_t const g = s.begin + i;
      b.pos_mass[g] = {x_[i].x, x_[i].y, x_[i].z, m_[i]};
      b.velocity[g] = v_[i];
      state.acceleration[g] = a_[i];
      state.jerk[g] = j_[i];
      state.time[g] = t_[i];
      state.step[g] = dt_[i];
    }
  }

  void download_predicted(BodySet& b) override {
    Slice const s = config_.slice;
    for (std::size_t i = 0; i < s.count; ++i) {
      b.pos_mass[s.begin + i] = {px_[i], py_[i], pz_[i], m_[i]};
      b.velocity[s.begin + i] = {pvx_[i], pvy_[i], pvz_[i]};
    }
  }

  double own_next_time() override {
    double t = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < t_.size(); ++i) t = std::min(t, t_[i] + dt_[i]);
    return t;
  }

  void predict(double t) override {
    auto const n = static_cast<long>(config_.slice.count);
#pragma omp parallel for schedule(static) if (n > kParallelBodies)
    for (long i = 0; i < n; ++i) {
      V3 xp, vp;
      hermite::predict(x_[i], v_[i], a_[i], j_[i], t - t_[i], xp, vp);
      px_[i] = xp.x, py_[i] = xp.y, pz_[i] = xp.z;
      pvx_[i] = vp.x, pvy_[i] = vp.y, pvz_[i] = vp.z;
    }
  }

  std::size_t pack_active(double t, bool all) override {
    own_active_.clear();
    for (std::size_t i = 0; i < t_.size(); ++i)
      if (all || t_[i] + dt_[i] == t)
        own_active_.push_back({px_[i], py_[i], pz_[i], m_[i], pvx_[i], pvy_[i], pvz_[i], config_.slice.begin + i});
    return own_active_.size();
  }
  const ActiveBody* own_active_data() const override { return own_active_.data(); }

  void set_active(const ActiveBody* bodies, std::size_t count) override {
    active_.assign(bodies, bodies + count);
    // Pad to whole SIMD blocks with copies of a real body that matches no j (its results are dropped).
    ActiveBody pad = count ? bodies[count - 1] : ActiveBody{0, 0, 0, 0, 0, 0, 0, 0};
    pad.index = std::numeric_limits<std::uint64_t>::max();
    while (active_.size() % kHermiteLanes) active_.push_back(pad);
    active_count_ = count;
    // The own active bodies form one run of the list (it is in index order): where it starts.
    Slice const s = config_.slice;
    own_first_ = std::size_t(std::lower_bound(active_.begin(), active_.begin() + long(count), s.begin,
                                              [](const ActiveBody& b, std::size_t i) { return b.index < i; }) -
                             active_.begin());
  }

  void partial_forces() override { pair_partials(config_.engine.precision == Precision::fp32); }
  void partial_forces_fp64() override { pair_partials(false); }
  void pair_partials(bool fp32) {  // `fp32`: the pair arithmetic in fp32 on the fp64 differences
    partials_.resize(own_groups() * active_count_);  // capacity kept: no allocation once the largest block was seen
    pair_partials(fp32, 0, active_count_);
  }
  // The partials of active bodies [first, first + count) into partials_ (groups x count, group-major).
  void pair_partials(bool fp32, std::size_t first, std::size_t count) {
    if (own_groups() == 0 || count == 0) return;
    HermiteJBodies const jb{px_.data(),  py_.data(),  pz_.data(), pvx_.data(),
                            pvy_.data(), pvz_.data(), m_.data(),  config_.slice.begin,
                            config_.slice.count};
    double const eps2 = config_.softening * config_.softening;
    hermite_partials(active_.data() + first, count, jb, group_length_, eps2, fp32, config_.engine.cpu_threads,
                     partials_.data());
    counters_.interactions += std::uint64_t(count) * config_.slice.count;
  }
  std::size_t own_groups() const override { return (config_.slice.count + group_length_ - 1) / group_length_; }
  const ForceJerk* partials() override { return partials_.data(); }
  const ForceJerk* add_own_groups(const ForceJerk* prefix) override {
    std::size_t const groups = own_groups(), count = active_count_;
    chain_.resize(count);  // capacity kept, as partials_'s
    for (std::size_t k = 0; k < count; ++k) {
      ForceJerk t = prefix ? prefix[k] : ForceJerk{};
      for (std::size_t g = 0; g < groups; ++g) hermite::add_partial(t, partials_[g * count + k]);
      chain_[k] = t;
    }
    return chain_.data();
  }

  void correct(const ForceJerk* totals, std::size_t count, double t) override {
    for (std::size_t k = 0; k < count; ++k) {
      std::size_t const i = local_of(own_first_ + k);
      double const dt = t - t_[i];
      double const wanted = hermite::correct(x_[i], v_[i], a_[i], j_[i], acceleration(totals[k]), jerk(totals[k]),
                                             dt, config_.params);
      ++counters_.levels[hermite::step_level(dt, config_.params)];
      t_[i] = t;
      dt_[i] = hermite::next_step(wanted, dt, t, config_.params);
      note_floor(i, t);
    }
    counters_.force_evaluations += count;
    block_time_ = t;
  }

  void initialise(const ForceJerk* totals, std::size_t count, double t) override {
    for (std::size_t k = 0; k < count; ++k) {
      std::size_t const i = local_of(own_first_ + k);
      a_[i] = acceleration(totals[k]);
      j_[i] = jerk(totals[k]);
      t_[i] = t;
      dt_[i] = hermite::start_step(a_[i], j_[i], totals[k].phi, t, config_.params);
      note_floor(i, t);
    }
    block_time_ = t;
  }

  std::int64_t floor_violation() override { return floor_body_; }

  std::uint64_t advance_blocks(std::uint64_t blocks, double t_stop) override {
    if (config_.slice.count != config_.bodies)
      throw std::logic_error("Hermite CPU engine: advance_blocks needs the whole system on one engine");
    std::uint64_t done = 0;
    while (done < blocks && floor_body_ < 0) {
      double const t = own_next_time();
      if (!(t <= t_stop)) break;
      predict(t);
      std::size_t const count = pack_active(t, false);
      set_active(own_active_.data(), count);
      // One device holds every group: the totals are the partials added in group order, from zero. The active
      // bodies go kBlockChunk at a time, each with the sums of its own: the partials then take at most
      // groups x kBlockChunk x 64 bytes (4 MiB) where a block of every body took groups x N x 64 (1 KiB a body).
      bool const fp32 = config_.engine.precision == Precision::fp32;
      std::size_t const groups = own_groups();
      totals_.assign(count, ForceJerk{});
      partials_.resize(groups * std::min(count, kBlockChunk));
      for (std::size_t first = 0; first < count; first += kBlockChunk) {
        std::size_t const chunk = std::min(kBlockChunk, count - first);
        pair_partials(fp32, first, chunk);
        for (std::size_t g = 0; g < groups; ++g)
          for (std::size_t k = 0; k < chunk; ++k) hermite::add_partial(totals_[first + k], partials_[g * chunk + k]);
      }
      correct(totals_.data(), count, t);
      block_time_ = t;
      ++done;
    }
    counters_.block_steps += done;
    return done;
  }

  double block_time() const override { return block_time_; }
  hermite::HermiteCounters counters() override { return counters_; }

  void synchronize() override {}
  bool idle() override { return true; }
  void abandon() noexcept override {}
  int device() const override { return -1; }
  const HermiteEngineConfig& config() const override { return config_; }
  std::string kernel_name() const override {
    return std::string("hermite simd x") + std::to_string(kHermiteLanes) + " (" + name_of(config_.engine.precision) +
           ")";
  }

 private:
  void load_bodies(const BodySet& b) {
    Slice const s = config_.slice;
    for (std::size_t i = 0; i < s.count; ++i) {
      auto const& p = b.pos_mass[s.begin + i];
      x_[i] = {p.x, p.y, p.z};
      m_[i] = p.w;
      v_[i] = b.velocity[s.begin + i];
      px_[i] = p.x, py_[i] = p.y, pz_[i] = p.z;
      pvx_[i] = v_[i].x, pvy_[i] = v_[i].y, pvz_[i] = v_[i].z;
    }
    counters_ = {};
    floor_body_ = -1;
  }
  std::size_t local_of(std::size_t active_position) const { return active_[active_position].index - config_.slice.begin; }
  static V3 acceleration(const ForceJerk& f) { return {f.ax, f.ay, f.az}; }
  static V3 jerk(const ForceJerk& f) { return {f.jx, f.jy, f.jz}; }
  void note_floor(std::size_t i, double t) {
    if (hermite::below_floor(dt_[i], t, config_.params) && floor_body_ < 0)
      floor_body_ = std::int64_t(config_.slice.begin + i);
  }

  HermiteEngineConfig config_;
  std::size_t group_length_;
  std::vector<V3> x_, v_, a_, j_;         // own bodies at their own times
  std::vector<double> t_, dt_;            // block time and step of each own body
  std::vector<double> px_, py_, pz_, pvx_, pvy_, pvz_, m_;  // predicted, structure of arrays for the j loop
  std::vector<ActiveBody> own_active_, active_;
  std::size_t active_count_ = 0, own_first_ = 0;
  std::vector<ForceJerk> partials_, totals_, chain_;
  hermite::HermiteCounters counters_;
  std::int64_t floor_body_ = -1;
  double block_time_ = 0.0;
};

}  // namespace

std::unique_ptr<HermiteEngine> make_hermite_cpu_engine(const HermiteEngineConfig& config) {
  return std::make_unique<HermiteCpuEngine>(config);
}

std::size_t hermite_cpu_engine_host_bytes(const HermiteEngineConfig& config) {
  std::size_t const own = config.slice.count, n = config.bodies;
  std::size_t const length = kernels::segment_layout(n).length, groups = (own + length - 1) / length;
  // x, v, a, j; t, dt; the predicted structure of arrays; the own active list
  std::size_t const per_own = 4 * sizeof(V3) + 2 * sizeof(double) + 7 * sizeof(double) + sizeof(ActiveBody);
  // As the constructor reserves them: the active list (of every body's), and the sums of kBlockChunk active bodies
  // at a time, alone (advance_blocks) or in the devices' protocol (whose chunks are no longer): their partials and
  // running sums, and, alone, the whole block's totals.
  std::size_t const chunk = std::min(n, kBlockChunk);
  return own * per_own + (n + kHermiteLanes) * sizeof(ActiveBody) + (groups + 1) * chunk * sizeof(ForceJerk) +
         (own == n ? n * sizeof(ForceJerk) : 0);
}

}  // namespace nbody::sim
