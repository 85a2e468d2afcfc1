// sim/engines/cuda_engine.cu - the CUDA engine: device-resident state, kernel selection and launches.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>
#include <thread>
#include <type_traits>
#include <vector>

#include "core/clock.h"
#include "core/errors.h"
#include "gpu/check.h"
#include "gpu/devices.h"
#include "gpu/resources.h"
#include "sim/engines/cuda_engine.h"
#include "sim/kernels/fast.cuh"
#include "sim/kernels/integrate.cuh"
#include "sim/kernels/naive.cuh"
#include "sim/kernels/potential.cuh"
#include "sim/kernels/segments.h"
#include "sim/kernels/tiled.cuh"
#include "sim/kernels/tuning.h"

namespace nbody::sim {

namespace {

using kernels::FastShape;
using kernels::kElementwiseBlock;
using kernels::SegmentLayout;
using kernels::SmallFastShape;

template <class Real, class Rsqrt, class Shape>
constexpr auto fast_kernel() {
  return kernels::fast_forces<Real, Rsqrt, Shape::block, typename Shape::Order, Shape::max_registers, Shape::prefetch>;
}

int blocks_for(std::size_t n, int block) { return int((n + std::size_t(block) - 1) / std::size_t(block)); }

template <class Real>
class CudaEngine final : public CudaSliceEngine {
 public:
  explicit CudaEngine(const EngineConfig& config)
      : config_(config),
        layout_(kernels::segment_layout(config.bodies)),
        kernel_(kernel_for(Backend::cuda, config.engine, config.names)) {
    block_ = config.engine.block_size;
    if (kernel_ == Kernel::fast) {
      if (block_ != 0)
        throw InputError(config.names.with("--block-size", std::to_string(block_)) +
                         ": the fast kernel chooses its own launch shape; " + config.names.name("--block-size") +
                         " applies to naive and tiled");
      with_shape([&](auto shape) { block_ = decltype(shape)::block; });
    } else if (block_ == 0) {
      block_ = kernels::kDefaultBlock;
    } else if (block_ < 32 || block_ > 1024 || (block_ & (block_ - 1)) != 0) {
      throw InputError(config.names.with("--block-size", std::to_string(block_)) +
                       ": must be a power of two from 32 to 1024");
    }

    gpu::DeviceGuard guard(config.device);
    cudaDeviceProp props{};
    NBODY_CUDA_CHECK(cudaGetDeviceProperties(&props, config.device));
    multiprocessors_ = props.multiProcessorCount;
    std::size_t free_bytes = 0, total_bytes = 0;
    NBODY_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    std::size_t const need = cuda_engine_bytes(config);
    if (need > free_bytes) {
      std::ostringstream s;
      s << config.names.with("--bodies", std::to_string(config.bodies)) << ": needs " << (need >> 20) << " MiB on GPU "
        << config.device << " ("
        << props.name << "), " << (free_bytes >> 20) << " MiB free";
      throw InputError(s.str());
    }

    if (kernel_ == Kernel::fast && layout_.count > 1)
      with_policy([&](auto policy) {
        with_shape([&](auto shape) { split_ = small() || split_fills_better<decltype(policy), decltype(shape)>(); });
      });

    stream_ = gpu::Stream(config.device);
    for (auto& p : positions_) p = gpu::DeviceBuffer<Real4<Real>>(config.device, layout_.padded());
    velocity_ = gpu::DeviceBuffer<Real4<Real>>(config.device, std::max<std::size_t>(config.slice.count, 1));
    acceleration_ = gpu::DeviceBuffer<Real4<Real>>(config.device, std::max<std::size_t>(config.slice.count, 1));
    if (split_ || (config.split_forces && kernel_ == Kernel::fast && layout_.count > 1))
      partial_ = gpu::DeviceBuffer<Real4<Real>>(config.device, layout_.count * config.slice.count);
    potential_ = gpu::DeviceBuffer<double>(config.device,
                                           std::max<std::size_t>(config.slice.count, 1) * kernels::kPotentialParts);
  }

  ~CudaEngine() override {
    if (abandoned_) return;
    if (stream_.get()) (void)cudaStreamSynchronize(stream_.get());  // frees must not race running work
  }

  void abandon() override {
    abandoned_ = true;
    stream_.forget();  // cudaFree and the stream's destruction would wait for the queued steps
    for (auto& p : positions_) p.forget();
    for (auto* b : {&velocity_, &acceleration_, &partial_}) b->forget();
    potential_.forget();
    sample_positions_.forget();  // a queued copy may still write into them
    sample_velocities_.forget();
    sample_potential_.forget();
    sample_taken_.forget();
    download_positions_.forget();
    download_velocities_.forget();
    for (auto& e : timing_) e.forget();
  }

  void bind_thread() override { NBODY_CUDA_CHECK(cudaSetDevice(config_.device)); }

  void upload(const BodySet& b) override {
    gpu::DeviceGuard guard(config_.device);
    std::vector<Real4<Real>> host(layout_.padded(), Real4<Real>{0, 0, 0, 0});  // zero-mass padding
    for (std::size_t j = 0; j < config_.bodies; ++j) {
      auto const& p = b.pos_mass[j];
      host[j] = {Real(p.x), Real(p.y), Real(p.z), Real(p.w)};
    }
    std::vector<Real4<Real>> v(std::max<std::size_t>(config_.slice.count, 1), Real4<Real>{0, 0, 0, 0});
    for (std::size_t i = 0; i < config_.slice.count; ++i) {
      auto const& u = b.velocity[config_.slice.begin + i];
      v[i] = {Real(u.x), Real(u.y), Real(u.z), Real(0)};
    }
    // On the engine's stream, so the copies are ordered before the force kernel and after any
    // work still queued (the stream is non-blocking: a plain cudaMemcpy would not order against it).
    current_ = 0;
    for (auto& p : positions_)
      NBODY_CUDA_CHECK(cudaMemcpyAsync(p.data(), host.data(), host.size() * sizeof(Real4<Real>),
                                       cudaMemcpyHostToDevice, stream_.get()));
    NBODY_CUDA_CHECK(cudaMemcpyAsync(velocity_.data(), v.data(), v.size() * sizeof(Real4<Real>),
                                     cudaMemcpyHostToDevice, stream_.get()));
    compute_forces();
    NBODY_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));  // `host` and `v` must outlive the copies
  }

  // Through pinned memory of the engine's own (allocated at the first download), and converted by
  // several threads at large N: a state of 1M bodies reaches the host in a few milliseconds, which a
  // script reading positions step after step notices.
  void download_slice(BodySet& b) override {
    if (config_.slice.count == 0) return;
    gpu::DeviceGuard guard(config_.device);
    std::size_t const n = config_.slice.count;
    if (download_positions_.size() != n) {
      download_positions_ = gpu::PinnedBuffer<Real4<Real>>(config_.device, n);
      download_velocities_ = gpu::PinnedBuffer<Real4<Real>>(config_.device, n);
    }
    NBODY_CUDA_CHECK(cudaMemcpyAsync(download_positions_.data(), current().data() + config_.slice.begin,
                                     n * sizeof(Real4<Real>), cudaMemcpyDeviceToHost, stream_.get()));
    NBODY_CUDA_CHECK(cudaMemcpyAsync(download_velocities_.data(), velocity_.data(), n * sizeof(Real4<Real>),
                                     cudaMemcpyDeviceToHost, stream_.get()));
    NBODY_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
    copy_slice(download_positions_.data(), download_velocities_.data(), b);
  }

  std::vector<Vec3d> download_accelerations() override {
    std::size_t const n = config_.slice.count;
    std::vector<Vec3d> out(n);
    if (n == 0) return out;
    gpu::DeviceGuard guard(config_.device);
    std::vector<Real4<Real>> a(n);
    NBODY_CUDA_CHECK(cudaMemcpyAsync(a.data(), acceleration_.data(), n * sizeof(Real4<Real>), cudaMemcpyDeviceToHost,
                                     stream_.get()));
    NBODY_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
    for (std::size_t i = 0; i < n; ++i) out[i] = {a[i].x, a[i].y, a[i].z};
    return out;
  }

  // The fast kernel sums each segment of j into its own partial: the segments made only of ready
  // bodies (a contiguous run of them) go first, the others once they have arrived, and the partials
  // are added in segment order as always.
  void compute_forces_ready(Slice ready) override {
    ready_segments_ = {0, 0};
    std::size_t const length = layout_.length, n = config_.bodies;
    if (kernel_ != Kernel::fast || layout_.count < 2 || config_.slice.count == 0 || !partial_.data()) return;
    if (ready.begin == 0 && ready.end() >= n) return;  // everything is here: compute_forces_rest() does it whole
    // Segment s holds bodies [s L, (s + 1) L); beyond N it is zero-mass padding, always present.
    std::size_t const first = (ready.begin + length - 1) / length;
    std::size_t const last = ready.end() >= n ? layout_.count : ready.end() / length;
    if (first >= last) return;
    ready_segments_ = {first, last - first};
    with_policy([&](auto policy) { launch_segments<decltype(policy)>(first, last); });
  }

  void compute_forces_rest() override {
    if (ready_segments_.count == 0) return compute_forces();
    with_policy([&](auto policy) {
      launch_segments<decltype(policy)>(0, ready_segments_.begin);
      launch_segments<decltype(policy)>(ready_segments_.end(), layout_.count);
    });
    gpu::DeviceGuard guard(config_.device);
    kernels::reduce_partials<Real><<<blocks_for(config_.slice.count, kElementwiseBlock), kElementwiseBlock, 0,
                                     stream_.get()>>>(partial_.data(), int(layout_.count), int(config_.slice.count),
                                                      acceleration_.data());
    NBODY_CHECK_LAUNCH(stream_.get());
    ready_segments_ = {0, 0};
  }

  void compute_forces() override {
    if (config_.slice.count == 0) return;
    with_policy([&](auto policy) { launch_forces<decltype(policy)>(nullptr); });
  }

  // Split forces end in reduce_partials, which kicks as well: one launch fewer a step.
  void compute_forces_kick(double dt) override {
    if (config_.slice.count == 0) return;
    if (!(kernel_ == Kernel::fast && split_)) return SliceEngine::compute_forces_kick(dt);
    double const kick_dt = dt;
    with_policy([&](auto policy) { launch_forces<decltype(policy)>(&kick_dt); });
  }

  void kick(double dt) override {
    if (config_.slice.count == 0) return;
    gpu::DeviceGuard guard(config_.device);
    int const n = int(config_.slice.count);
    kernels::kick<Real><<<blocks_for(n, kElementwiseBlock), kElementwiseBlock, 0, stream_.get()>>>(
        velocity_.data(), acceleration_.data(), n, Real(dt));
    NBODY_CHECK_LAUNCH(stream_.get());
  }

  void damp(double factor) override {
    if (config_.slice.count == 0) return;
    gpu::DeviceGuard guard(config_.device);
    int const n = int(config_.slice.count);
    kernels::damp<Real><<<blocks_for(n, kElementwiseBlock), kElementwiseBlock, 0, stream_.get()>>>(velocity_.data(), n,
                                                                                                   Real(factor));
    NBODY_CHECK_LAUNCH(stream_.get());
  }

  // A drift that counts itself runs even on an empty slice: its peers wait for the count.
  bool drift_skipped() const { return config_.slice.count == 0 && !wait_.announce.own; }
  int drift_blocks() const { return std::max(1, blocks_for(config_.slice.count, kElementwiseBlock)); }

  void drift(double dt) override {
    if (drift_skipped()) return;
    gpu::DeviceGuard guard(config_.device);
    int const n = int(config_.slice.count);
    kernels::drift<Real><<<drift_blocks(), kElementwiseBlock, 0, stream_.get()>>>(
        current().data(), next().data(), velocity_.data(), int(config_.slice.begin), n, Real(dt), peers_[current_ ^ 1]);
    NBODY_CHECK_LAUNCH(stream_.get());
  }

  void kick_drift(double kick_dt, double drift_dt) override {
    if (drift_skipped()) return;
    gpu::DeviceGuard guard(config_.device);
    int const n = int(config_.slice.count);
    kernels::kick_drift<Real><<<drift_blocks(), kElementwiseBlock, 0, stream_.get()>>>(
        current().data(), next().data(), velocity_.data(), acceleration_.data(), int(config_.slice.begin), n,
        Real(kick_dt), Real(drift_dt), peers_[current_ ^ 1]);
    NBODY_CHECK_LAUNCH(stream_.get());
  }

  void swap_buffers() override { current_ ^= 1; }

  void synchronize() override {
    gpu::DeviceGuard guard(config_.device);
    NBODY_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
  }

  bool idle() override {
    gpu::DeviceGuard guard(config_.device);
    cudaError_t const status = cudaStreamQuery(stream_.get());
    if (status == cudaErrorNotReady) return false;
    NBODY_CUDA_CHECK(status);
    return true;
  }

  void begin_sample(bool /*stoppable*/) override {
    std::size_t const n = config_.slice.count;
    if (n == 0) return;
    gpu::DeviceGuard guard(config_.device);
    if (sample_positions_.size() != n) {  // once per engine: pinned memory for the copies to overlap the steps
      sample_positions_ = gpu::PinnedBuffer<Real4<Real>>(config_.device, n);
      sample_velocities_ = gpu::PinnedBuffer<Real4<Real>>(config_.device, n);
      sample_potential_ = gpu::PinnedBuffer<double>(config_.device, n * kernels::kPotentialParts);
      sample_taken_ = gpu::SyncEvent(config_.device);
    }
    enqueue_potential();
    NBODY_CUDA_CHECK(cudaMemcpyAsync(sample_potential_.data(), potential_.data(), sample_potential_.size() * sizeof(double),
                                     cudaMemcpyDeviceToHost, stream_.get()));
    NBODY_CUDA_CHECK(cudaMemcpyAsync(sample_positions_.data(), current().data() + config_.slice.begin,
                                     n * sizeof(Real4<Real>), cudaMemcpyDeviceToHost, stream_.get()));
    NBODY_CUDA_CHECK(cudaMemcpyAsync(sample_velocities_.data(), velocity_.data(), n * sizeof(Real4<Real>),
                                     cudaMemcpyDeviceToHost, stream_.get()));
    NBODY_CUDA_CHECK(cudaEventRecord(sample_taken_.get(), stream_.get()));
  }

  void end_sample(BodySet& b, double* potential) override {
    std::size_t const n = config_.slice.count;
    if (n == 0) return;
    gpu::DeviceGuard guard(config_.device);
    // Waits for the pass and the copies, which follow steps already finished: not for the steps after.
    NBODY_CUDA_CHECK(cudaEventSynchronize(sample_taken_.get()));
    copy_slice(sample_positions_.data(), sample_velocities_.data(), b);
    body_terms(sample_potential_.data(), potential + config_.slice.begin);
  }

  void start_timing(std::size_t steps) override {
    gpu::DeviceGuard guard(config_.device);
    timing_.clear();
    for (std::size_t k = 0; k <= steps; ++k) timing_.emplace_back(config_.device);
    NBODY_CUDA_CHECK(cudaEventRecord(timing_[0].get(), stream_.get()));
    marks_ = 1;
  }

  void mark_step_end() override {
    if (marks_ >= timing_.size()) return;
    NBODY_CUDA_CHECK(cudaEventRecord(timing_[marks_++].get(), stream_.get()));
  }

  std::vector<double> step_times_ms() override {
    std::vector<double> t;
    if (marks_ == 0) return t;
    gpu::DeviceGuard guard(config_.device);
    NBODY_CUDA_CHECK(cudaEventSynchronize(timing_[marks_ - 1].get()));
    for (std::size_t k = 1; k < marks_; ++k) {
      float ms = 0.0f;
      NBODY_CUDA_CHECK(cudaEventElapsedTime(&ms, timing_[k - 1].get(), timing_[k].get()));
      t.push_back(event_milliseconds(ms));
    }
    return t;
  }

  void* positions_buffer(int index) override { return positions_[index & 1].data(); }
  const void* velocities_buffer() const override { return velocity_.data(); }
  std::size_t bytes_per_body() const override { return sizeof(Real4<Real>); }
  int device() const override { return config_.device; }
  const EngineConfig& config() const override { return config_; }
  std::string kernel_name() const override {
    std::string name = name_of(kernel_);
    if (kernel_ != Kernel::fast) name += "/" + std::to_string(block_);
    if (kernel_ == Kernel::fast && small()) name += "/small-N";
    if (std::is_same_v<Real, double>)
      name += config_.engine.fp64_rsqrt == Fp64Rsqrt::newton   ? " (r^-3: fp32 seed + Newton step)"
              : config_.engine.fp64_rsqrt == Fp64Rsqrt::series ? " (r^-3: fp32 seed + series)"
                                                        : " (r^-3: double rsqrt)";
    return name;
  }
  cudaStream_t stream() const override { return stream_.get(); }

  void set_drift_peers(const std::vector<std::array<void*, 2>>& peers, const DriftSignalLinks& signal) override {
    static_assert(kernels::PeerTargets<Real>::kMax == kMaxDriftPeers);
    if (peers.size() > std::size_t(kMaxDriftPeers))
      throw InputError(config_.names.with_text("--exchange", "direct") + ": " + std::to_string(peers.size() + 1) +
                       " devices; at most " +
                       std::to_string(kMaxDriftPeers + 1));
    if (signal.own && (signal.slots.size() != peers.size() || !signal.released))
      throw std::logic_error("set_drift_peers: one signal slot per peer, and the release word");
    kernels::DriftAnnouncement announce;
    if (signal.own) {
      announce.own = signal.own;
      for (auto* slot : signal.slots) announce.slots[announce.count++] = slot;
    }
    for (int k = 0; k < 2; ++k) {
      peers_[k] = {};
      for (auto const& p : peers) peers_[k].to[peers_[k].count++] = static_cast<Real4<Real>*>(p[std::size_t(k)]);
      peers_[k].announce = announce;
    }
    wait_ = {announce, signal.own ? signal.released : nullptr};
  }

  void poison_outputs() override {
    gpu::DeviceGuard guard(config_.device);
    NBODY_CUDA_CHECK(cudaMemsetAsync(acceleration_.data(), 0xff, acceleration_.size() * sizeof(Real4<Real>), stream_.get()));
    if (partial_.size())
      NBODY_CUDA_CHECK(cudaMemsetAsync(partial_.data(), 0xff, partial_.size() * sizeof(Real4<Real>), stream_.get()));
  }

 private:
  // Calls f(policy) with the m r^-3 policy the run uses (--fp64-rsqrt for fp64), wrapped in
  // kernels::FromPeers where peer GPUs store into the positions while force kernels read them (the
  // direct exchange between distinct GPUs): those kernels load positions coherently.
  template <class F>
  void with_policy(F&& f) const {
    auto const pick = [&](auto policy) {
      if (wait_.announce.own) return f(kernels::FromPeers<decltype(policy)>{});
      f(policy);
    };
    if constexpr (std::is_same_v<Real, double>) {
      if (config_.engine.fp64_rsqrt == Fp64Rsqrt::newton) return pick(kernels::RsqrtNewtonFromFloat{});
      if (config_.engine.fp64_rsqrt == Fp64Rsqrt::series) return pick(kernels::InvR3FromFloat{});
    }
    pick(kernels::RsqrtHardware{});
  }

  // The forces; with `kick_dt` (split fast kernel only), the kick after them in the reduction.
  template <class Rsqrt>
  void launch_forces(const double* kick_dt) {
    gpu::DeviceGuard guard(config_.device);
    kernels::ForceArgs const args{int(layout_.length), int(layout_.count), int(config_.slice.begin),
                                  int(config_.slice.count), wait_};
    Real const eps2 = Real(config_.softening * config_.softening);
    cudaStream_t const s = stream_.get();
    if (kernel_ == Kernel::naive) {
      kernels::naive_forces<Real, Rsqrt><<<blocks_for(args.count, block_), block_, 0, s>>>(current().data(), args, eps2,
                                                                                           acceleration_.data());
      NBODY_CHECK_LAUNCH(stream_.get());
    } else if (kernel_ == Kernel::tiled) {
      kernels::tiled_forces<Real, Rsqrt><<<blocks_for(args.count, block_), block_, block_ * sizeof(Real4<Real>), s>>>(
          current().data(), args, eps2, acceleration_.data());
      NBODY_CHECK_LAUNCH(stream_.get());
    } else {
      with_shape([&](auto shape) {
        using Shape = decltype(shape);
        dim3 const grid(blocks_for(args.count, Shape::block * Shape::bodies), split_ ? args.segments : 1);
        fast_kernel<Real, Rsqrt, Shape>()<<<grid, Shape::block, 0, s>>>(
            current().data(), args, eps2, split_ ? partial_.data() : acceleration_.data());
        NBODY_CHECK_LAUNCH(stream_.get());
        if (split_) {
          kernels::reduce_partials<Real><<<blocks_for(args.count, kElementwiseBlock), kElementwiseBlock, 0, s>>>(
              partial_.data(), args.segments, args.count, acceleration_.data(), kick_dt ? velocity_.data() : nullptr,
              Real(kick_dt ? *kick_dt : 0.0));
          NBODY_CHECK_LAUNCH(stream_.get());
        }
      });
    }
  }

  // The fast kernel over segments [first, last) only, into their partials: the kernel sees positions
  // and partials from segment `first` on, as if they were a layout of last - first segments (one
  // segment launches unsplit, which sums it the same way).
  template <class Rsqrt>
  void launch_segments(std::size_t first, std::size_t last) {
    if (first >= last) return;
    gpu::DeviceGuard guard(config_.device);
    std::size_t const offset = first * layout_.length;
    kernels::ForceArgs const args{int(layout_.length), int(last - first), int(config_.slice.begin) - int(offset),
                                  int(config_.slice.count), wait_};
    Real const eps2 = Real(config_.softening * config_.softening);
    with_shape([&](auto shape) {
      using Shape = decltype(shape);
      dim3 const grid(blocks_for(args.count, Shape::block * Shape::bodies), unsigned(last - first));
      fast_kernel<Real, Rsqrt, Shape>()<<<grid, Shape::block, 0, stream_.get()>>>(
          current().data() + offset, args, eps2, partial_.data() + first * config_.slice.count);
      NBODY_CHECK_LAUNCH(stream_.get());
    });
  }

  // The fast kernel runs as whole sweeps (one block per group of bodies) or split into one block
  // per (group, segment). Both give the same bits; pick the grid whose last wave is fuller: e.g.
  // 342 blocks on 264 resident slots leave the second wave 30% full, 16 times as many blocks
  // leave almost no tail. Resident slots come from the occupancy calculator, for the kernel the
  // run launches (the fp64 policies use different numbers of registers).
  template <class Rsqrt, class Shape>
  bool split_fills_better() const {
    int per_sm = 0;
    NBODY_CUDA_CHECK(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fast_kernel<Real, Rsqrt, Shape>(), Shape::block, 0));
    double const slots = double(std::max(1, per_sm) * multiprocessors_);
    auto fill = [&](double blocks) { return blocks / (std::ceil(blocks / slots) * slots); };
    double const whole = double(blocks_for(config_.slice.count, Shape::block * Shape::bodies));
    // On a tie split too: many short blocks also even out SMs that would hold one block or two.
    return fill(whole * double(layout_.count)) >= fill(whole);
  }

  // Calls f(shape) with the fast kernel's launch shape for this N: for short segments, blocks of
  // one segment's length.
  template <class F>
  void with_shape(F&& f) const {
    if (small()) {
      if (layout_.length == 64) return f(SmallFastShape<Real, 64>{});
      if (layout_.length == 128) return f(SmallFastShape<Real, 128>{});
      return f(SmallFastShape<Real, 256>{});
    }
    f(FastShape<Real>{});
  }

  // Segments of at most kSmallShapeLongestSegment: the fast kernel's small-N launch shape.
  bool small() const { return layout_.length <= kernels::kSmallShapeLongestSegment; }

  // The slice's positions and velocities from host copies `p`, `v` into `b`, in fp64; split over up to
  // 8 threads from 2^16 bodies (the writes, 56 bytes a body, are what costs).
  void copy_slice(const Real4<Real>* p, const Real4<Real>* v, BodySet& b) const {
    std::size_t const n = config_.slice.count, first = config_.slice.begin;
    auto rows = [&](std::size_t from, std::size_t to) {
      for (std::size_t i = from; i < to; ++i) {
        b.pos_mass[first + i] = {p[i].x, p[i].y, p[i].z, p[i].w};
        b.velocity[first + i] = {v[i].x, v[i].y, v[i].z};
      }
    };
    std::size_t const parts = n < (std::size_t(1) << 16) ? 1 : std::min<std::size_t>(8, std::max<std::size_t>(1, std::thread::hardware_concurrency()));
    if (parts == 1) return rows(0, n);
    std::vector<std::thread> helpers;
    for (std::size_t k = 1; k < parts; ++k) helpers.emplace_back(rows, k * n / parts, (k + 1) * n / parts);
    rows(0, n / parts);
    for (auto& t : helpers) t.join();
  }

  // The potential pass into potential_ (kPotentialParts rows of the slice's bodies).
  void enqueue_potential() {
    std::size_t const n = config_.slice.count;
    double const eps2 = config_.softening * config_.softening;
    dim3 const grid(unsigned(blocks_for(n, kernels::kPotentialBlock)), unsigned(kernels::kPotentialParts));
    kernels::slice_potential<Real><<<grid, kernels::kPotentialBlock, 0, stream_.get()>>>(
        current().data(), int(config_.bodies), int(config_.slice.begin), int(n), eps2, potential_.data());
    NBODY_CHECK_LAUNCH(stream_.get());
  }
  // Each body's share of twice the potential from the pass's parts, summed in their order. The pass
  // counts each pair once, from one of its bodies; the share doubles it, so the sum over all bodies
  // counts it from both, as the CPU's does.
  void body_terms(const double* parts, double* terms) const {
    std::size_t const n = config_.slice.count;
    for (std::size_t i = 0; i < n; ++i) {
      double sum = 0.0;
      for (std::size_t p = 0; p < std::size_t(kernels::kPotentialParts); ++p) sum += parts[p * n + i];
      terms[i] = 2.0 * sum;
    }
  }

  gpu::DeviceBuffer<Real4<Real>>& current() { return positions_[current_]; }
  gpu::DeviceBuffer<Real4<Real>>& next() { return positions_[current_ ^ 1]; }

  EngineConfig config_;
  SegmentLayout layout_;
  Kernel kernel_;
  int block_ = 256;
  int multiprocessors_ = 0;
  bool split_ = false;  // one block per (group of bodies, segment), then reduce_partials
  Slice ready_segments_;  // segments computed by compute_forces_ready, awaiting the rest
  // The stream is declared before the buffers, so it outlives what is freed after work on it.
  gpu::Stream stream_;
  gpu::DeviceBuffer<Real4<Real>> positions_[2];
  int current_ = 0;
  kernels::PeerTargets<Real> peers_[2];  // by buffer index: where drifts also store (direct exchange)
  kernels::PeerWait wait_;                // what force kernels announce and wait for (direct exchange with signals)
  gpu::DeviceBuffer<Real4<Real>> velocity_, acceleration_, partial_;
  gpu::DeviceBuffer<double> potential_;
  // begin_sample()'s copies, and the event that says they are done.
  gpu::PinnedBuffer<Real4<Real>> sample_positions_, sample_velocities_;
  gpu::PinnedBuffer<double> sample_potential_;
  gpu::PinnedBuffer<Real4<Real>> download_positions_, download_velocities_;  // download_slice's
  gpu::SyncEvent sample_taken_;
  std::vector<gpu::TimingEvent> timing_;
  std::size_t marks_ = 0;
  bool abandoned_ = false;
};

}  // namespace

std::unique_ptr<SliceEngine> make_cuda_engine(const EngineConfig& config) {
  gpu::require_device(config.device);
  if (config.engine.precision == Precision::fp32) return std::make_unique<CudaEngine<float>>(config);
  return std::make_unique<CudaEngine<double>>(config);
}

std::size_t cuda_engine_bytes(const EngineConfig& config) {
  std::size_t const real4 = config.engine.precision == Precision::fp32 ? 16 : 32;
  SegmentLayout const layout = kernels::segment_layout(config.bodies);
  // two padded position buffers, velocity + acceleration (+ split partials, at most) + potential
  return 2 * real4 * layout.padded() + (2 + layout.count) * real4 * config.slice.count +
         8 * std::size_t(kernels::kPotentialParts) * config.slice.count;
}

std::size_t cuda_engine_host_bytes(const EngineConfig& config) {
  std::size_t const real4 = config.engine.precision == Precision::fp32 ? 16 : 32;
  // download_slice's positions and velocities, and a sample's, with its potential parts
  return (4 * real4 + 8 * std::size_t(kernels::kPotentialParts)) * config.slice.count;
}

}  // namespace nbody::sim
