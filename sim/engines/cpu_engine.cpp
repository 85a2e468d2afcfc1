// sim/engines/cpu_engine.cpp - the CPU engine.
#include "sim/engines/cpu_engine.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <type_traits>

#include "core/errors.h"
#include "sim/engines/simd_forces.h"
#include "sim/physics/pair_gravity.h"
#include "sim/physics/reference_forces.h"

namespace nbody::sim {

namespace {

// Below this many bodies an O(N) loop runs on one thread: waking a team costs more than it saves.
constexpr long kParallelBodies = 16384;

template <class Real>
class CpuEngine final : public SliceEngine {
 public:
  explicit CpuEngine(const EngineConfig& config)
      : config_(config), kernel_(kernel_for(Backend::cpu, config.engine, config.names)) {
    for (auto& p : positions_) p.resize(config.bodies);
    velocity_.resize(config.slice.count);
    acceleration_.resize(config.slice.count);
  }

  void bind_thread() override {
    if (config_.engine.cpu_threads > 0) omp_set_num_threads(config_.engine.cpu_threads);
  }

  void upload(const BodySet& b) override {
    current_ = 0;
    for (std::size_t j = 0; j < config_.bodies; ++j) {
      auto const& p = b.pos_mass[j];
      current()[j] = {Real(p.x), Real(p.y), Real(p.z), Real(p.w)};
    }
    next() = current();
    for (std::size_t i = 0; i < config_.slice.count; ++i) {
      auto const& v = b.velocity[config_.slice.begin + i];
      velocity_[i] = {Real(v.x), Real(v.y), Real(v.z)};
    }
    compute_forces();  // cancellable: the upload then throws StepCancelled, and the engine is discarded
  }

  void download_slice(BodySet& b) override {
    for (std::size_t i = 0; i < config_.slice.count; ++i) {
      std::size_t const g = config_.slice.begin + i;
      auto const& p = current()[g];
      b.pos_mass[g] = {p.x, p.y, p.z, p.w};
      b.velocity[g] = {velocity_[i].x, velocity_[i].y, velocity_[i].z};
    }
  }

  std::vector<Vec3d> download_accelerations() override {
    std::vector<Vec3d> a(acceleration_.size());
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = {acceleration_[i].x, acceleration_[i].y, acceleration_[i].z};
    return a;
  }

  // The O(N^2) passes check config_.cancel between bodies (each N pairs) and skip what is left once
  // it is raised; then the work is incomplete and throw_if_cancelled() ends the step.
  void compute_forces() override {
    Slice const s = config_.slice;
    double const eps2 = config_.softening * config_.softening;
    const std::atomic<bool>* cancel = config_.cancel;
    if constexpr (std::is_same_v<Real, float>) {
      if (kernel_ == Kernel::simd) {
        simd_.load(current().data(), config_.bodies);
        simd_.accelerations(s.begin, s.count, float(eps2), acceleration_.data(), cancel);
        return throw_if_cancelled();
      }
      auto const end = static_cast<long>(s.end());
      const Real4<float>* pos = current().data();
#pragma omp parallel for schedule(static) if (double(s.count) * double(config_.bodies) > 1e6)
      for (long i = static_cast<long>(s.begin); i < end; ++i) {
        if (cancel && cancel->load(std::memory_order_relaxed)) continue;
        float ax = 0, ay = 0, az = 0;
        for (std::size_t j = 0; j < config_.bodies; ++j)
          accumulate(pos[j].x - pos[i].x, pos[j].y - pos[i].y, pos[j].z - pos[i].z, pos[j].w, float(eps2), ax, ay, az);
        acceleration_[std::size_t(i) - s.begin] = {ax, ay, az};
      }
    } else if (kernel_ == Kernel::simd) {
      simd_accelerations(current().data(), config_.bodies, s.begin, s.count, eps2, acceleration_.data(), cancel);
    } else {
      reference_accelerations(current().data(), config_.bodies, s.begin, s.count, eps2, acceleration_.data(), cancel);
    }
    throw_if_cancelled();
  }

  void kick(double dt) override {
    Real const h = Real(dt);
    auto const n = static_cast<long>(config_.slice.count);
#pragma omp parallel for schedule(static) if (n > kParallelBodies)
    for (long i = 0; i < n; ++i) {
      velocity_[i].x += acceleration_[i].x * h;
      velocity_[i].y += acceleration_[i].y * h;
      velocity_[i].z += acceleration_[i].z * h;
    }
  }

  void damp(double factor) override {
    Real const f = Real(factor);
    auto const n = static_cast<long>(config_.slice.count);
#pragma omp parallel for schedule(static) if (n > kParallelBodies)
    for (long i = 0; i < n; ++i) {
      velocity_[i].x *= f;
      velocity_[i].y *= f;
      velocity_[i].z *= f;
    }
  }

  void drift(double dt) override {
    Real const h = Real(dt);
    auto const n = static_cast<long>(config_.slice.count);
    Real4<Real>* out = next().data() + config_.slice.begin;
    const Real4<Real>* in = current().data() + config_.slice.begin;
#pragma omp parallel for schedule(static) if (n > kParallelBodies)
    for (long i = 0; i < n; ++i) {
      out[i] = {in[i].x + velocity_[i].x * h, in[i].y + velocity_[i].y * h, in[i].z + velocity_[i].z * h, in[i].w};
    }
  }

  void swap_buffers() override { current_ ^= 1; }
  void synchronize() override {}
  bool idle() override { return true; }  // CPU stages run to completion when called
  void abandon() override {}              // nothing runs after a call returns

  void begin_sample(bool stoppable) override {
    std::size_t const n = config_.slice.count;
    sample_positions_.resize(n);
    sample_velocities_.resize(n);
    sample_potential_.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      sample_positions_[i] = current()[config_.slice.begin + i];
      sample_velocities_[i] = velocity_[i];
    }
    double const eps2 = config_.softening * config_.softening;
    Slice const s = config_.slice;
    if constexpr (std::is_same_v<Real, float>)
      potential_terms(current().data(), config_.bodies, s.begin, s.count, eps2, sample_potential_.data(), config_.cancel,
                      stoppable);
    else
      reference_potential_terms(current().data(), config_.bodies, s.begin, s.count, eps2, sample_potential_.data(),
                                config_.cancel, stoppable);
    throw_if_cancelled();
  }
  void end_sample(BodySet& b, double* potential) override {
    for (std::size_t i = 0; i < sample_positions_.size(); ++i) {
      auto const& p = sample_positions_[i];
      b.pos_mass[config_.slice.begin + i] = {p.x, p.y, p.z, p.w};
      b.velocity[config_.slice.begin + i] = {sample_velocities_[i].x, sample_velocities_[i].y, sample_velocities_[i].z};
      potential[config_.slice.begin + i] = sample_potential_[i];
    }
  }

  void start_timing(std::size_t steps) override {
    marks_.clear();
    marks_.reserve(steps + 1);
    marks_.push_back(Clock::now());
  }
  void mark_step_end() override {
    if (marks_.size() < marks_.capacity()) marks_.push_back(Clock::now());
  }
  std::vector<double> step_times_ms() override {
    std::vector<double> t;
    for (std::size_t k = 1; k < marks_.size(); ++k)
      t.push_back(std::chrono::duration<double, std::milli>(marks_[k] - marks_[k - 1]).count());
    return t;
  }

  void* positions_buffer(int index) override { return positions_[index & 1].data(); }
  const void* velocities_buffer() const override { return velocity_.data(); }
  std::size_t bytes_per_body() const override { return sizeof(Real4<Real>); }
  int device() const override { return -1; }
  const EngineConfig& config() const override { return config_; }
  std::string kernel_name() const override { return name_of(kernel_); }

 private:
  using Clock = std::chrono::steady_clock;
  std::vector<Real4<Real>>& current() { return positions_[current_]; }
  // Raised at any time during a pass, even after its last body: the caller wanted it abandoned.
  void throw_if_cancelled() const {
    if (config_.cancel && config_.cancel->load(std::memory_order_relaxed)) throw StepCancelled();
  }
  std::vector<Real4<Real>>& next() { return positions_[current_ ^ 1]; }

  EngineConfig config_;
  Kernel kernel_;
  std::vector<Real4<Real>> positions_[2];
  int current_ = 0;
  std::vector<Real3<Real>> velocity_, acceleration_;
  // The last begin_sample()'s slice and its bodies' potential terms, until end_sample().
  std::vector<Real4<Real>> sample_positions_;
  std::vector<Real3<Real>> sample_velocities_;
  std::vector<double> sample_potential_;
  SimdForces simd_;
  std::vector<Clock::time_point> marks_;
};

}  // namespace

std::unique_ptr<SliceEngine> make_cpu_engine(const EngineConfig& config) {
  if (config.engine.precision == Precision::fp32) return std::make_unique<CpuEngine<float>>(config);
  return std::make_unique<CpuEngine<double>>(config);
}

std::size_t cpu_engine_bytes(const EngineConfig& config) {
  std::size_t const real = config.engine.precision == Precision::fp32 ? 4 : 8;
  // two position buffers of N, velocity and acceleration of the slice, SoA scratch (fp32), and a sample's copy of
  // the slice (positions, velocities, each body's potential term), made at the first sample and kept
  return 2 * 4 * real * config.bodies + 6 * real * config.slice.count +
         (config.engine.precision == Precision::fp32 ? 16 * config.bodies : 0) +
         (7 * real + sizeof(double)) * config.slice.count;
}

}  // namespace nbody::sim
