// sim/engines/hermite_cuda.cu - the CUDA Hermite engine: the own slice's fp64 state on one device, the multi-device
// protocol through pinned host memory, and whole block steps on the devices (CUDA graphs) for a single GPU and for
// several driven by one thread.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/errors.h"
#include "gpu/check.h"
#include "gpu/devices.h"
#include "gpu/resources.h"
#include "sim/engines/hermite_cuda.h"
#include "sim/kernels/hermite.cuh"
#include "sim/kernels/segments.h"

namespace nbody::sim {

namespace {

using hermite::ActiveBody;
using hermite::ForceJerk;
namespace k = kernels;

// Pinned host memory the kernels write into directly (the active list of pack_active): mapped into the device's
// address space, so O(active) bytes cross the bus and no copy needs the count first.
struct MappedMemoryTraits {
  using Handle = void*;
  static constexpr Handle null = nullptr;
  static void* allocate(std::size_t bytes) {
    void* p = nullptr;
    NBODY_CUDA_CHECK(cudaHostAlloc(&p, bytes, cudaHostAllocPortable | cudaHostAllocMapped));
    return p;
  }
  static void release(Handle h) noexcept { (void)cudaFreeHost(h); }
};
template <class T>
using MappedBuffer = gpu::Memory<T, MappedMemoryTraits>;

template <class T>
T* device_pointer(const MappedBuffer<T>& b) {
  void* d = nullptr;
  NBODY_CUDA_CHECK(cudaHostGetDevicePointer(&d, b.data(), 0));
  return static_cast<T*>(d);
}

// An instantiated graph, destroyed on its device.
class GraphExec {
 public:
  GraphExec() = default;
  GraphExec(const GraphExec&) = delete;
  GraphExec& operator=(const GraphExec&) = delete;
  ~GraphExec() { reset(); }
  void reset() noexcept {
    if (exec_) (void)cudaGraphExecDestroy(exec_);
    exec_ = nullptr;
    instantiate_failed_ = false;
  }
  void forget() noexcept { exec_ = nullptr; }
  cudaGraphExec_t get() const { return exec_; }
  // Captures what `enqueue` puts on `stream` (which must be idle of other captures) and instantiates it.
  template <class F>
  void capture(cudaStream_t stream, F&& enqueue) {
    reset();
    instantiate_failed_ = false;
    NBODY_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    cudaGraph_t graph = nullptr;
    gpu::capturing = true;
    try {
      enqueue();
    } catch (...) {
      gpu::capturing = false;
      (void)cudaStreamEndCapture(stream, &graph);
      if (graph) (void)cudaGraphDestroy(graph);
      throw;
    }
    gpu::capturing = false;
    NBODY_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
    cudaError_t const made = cudaGraphInstantiate(&exec_, graph, 0);
    (void)cudaGraphDestroy(graph);
    instantiate_failed_ = made != cudaSuccess;
    NBODY_CUDA_CHECK(made);
  }
  // The last capture was made but the driver would not instantiate the graph (cudaGraphInstantiate documents no
  // reason but cudaErrorInvalidValue): a refusal, where the same work can go on the streams.
  bool instantiate_failed() const { return instantiate_failed_; }

 private:
  cudaGraphExec_t exec_ = nullptr;
  bool instantiate_failed_ = false;
};

// Block steps per captured graph, and graphs enqueued between two looks at the control: a look every 64 block
// steps (about a millisecond at N = 65,536), one batch always queued behind the one being looked at.
constexpr std::uint64_t kGraphSteps = 8;
constexpr std::uint64_t kBatchSteps = 64;

std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

template <class Real>
class HermiteCudaEngine final : public CudaHermiteEngine {
 public:
  explicit HermiteCudaEngine(const HermiteEngineConfig& config)
      : config_(config), layout_(k::segment_layout(config.bodies)) {
    Slice const s = config.slice;
    std::size_t const L = layout_.length;
    if (s.end() > config.bodies || (s.begin % L != 0 && s.begin != config.bodies) ||
        (s.end() % L != 0 && s.end() != config.bodies))
      throw std::logic_error("Hermite CUDA engine: the slice [" + std::to_string(s.begin) + ", " +
                             std::to_string(s.end()) + ") is not a whole number of groups");
    span_length_ = hermite::hermite_span_length(L);
    own_groups_ = ceil_div(s.count, L);
    padded_ = std::max<std::size_t>(own_groups_ * L, 1);
    // Room for every body's state where the slice is not all of them: advance_together keeps every body's state on
    // every device (the own slice at its place).
    state_size_ = std::max(config.bodies, s.begin + padded_);

    gpu::DeviceGuard guard(config.device);
    cudaDeviceProp props{};
    NBODY_CUDA_CHECK(cudaGetDeviceProperties(&props, config.device));
    int per_sm = 0;
    NBODY_CUDA_CHECK(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k::hermite_forces<Real, false>, k::kHermiteForceBlock, 0));
    resident_blocks_ = std::max(1, per_sm) * props.multiProcessorCount;
    force_grid_ = resident_blocks_;
    // The protocol's passes (with the potential) run their own instantiation, which may keep fewer blocks resident.
    int protocol_per_sm = 0;
    NBODY_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&protocol_per_sm, k::hermite_forces<Real, true>,
                                                                   k::kHermiteForceBlock, 0));
    protocol_resident_ = std::max(1, protocol_per_sm) * props.multiProcessorCount;
    protocol_grid_ = protocol_resident_;
    int fp64_per_sm = protocol_per_sm;
    if constexpr (!std::is_same_v<Real, double>)
      NBODY_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fp64_per_sm, k::hermite_forces<double, true>,
                                                                     k::kHermiteForceBlock, 0));
    fp64_protocol_resident_ = std::max(1, fp64_per_sm) * props.multiProcessorCount;
    fp64_protocol_grid_ = fp64_protocol_resident_;
    multiprocessors_ = props.multiProcessorCount;
    // advance_together's corrector, whose every block waits for the other devices (meet_in_every_block): never more
    // blocks than stay resident together.
    int correct_per_sm = 0;
    NBODY_CUDA_CHECK(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&correct_per_sm, k::hermite_correct<true>, k::kHermiteBlock, 0));
    resident_correct_ = std::max(1, correct_per_sm) * multiprocessors_;
    programmatic_ = props.major >= 9;
    list_blocks_ = list_grid(s.count);

    std::size_t free_bytes = 0, total_bytes = 0;
    NBODY_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    if (std::size_t const need = device_bytes(); need > free_bytes) {
      std::ostringstream m;
      m << config.names.with("--bodies", std::to_string(config.bodies)) << ": the Hermite engine needs " << (need >> 20)
        << " MiB on GPU "
        << config.device << " (" << props.name << "), " << (free_bytes >> 20) << " MiB free";
      throw InputError(m.str());
    }

    stream_ = gpu::Stream(config.device);
    for (auto* b : {&x_, &v_, &a_, &jerk_}) *b = gpu::DeviceBuffer<Real4<double>>(config.device, state_size_);
    for (auto* b : {&xp_, &vp_}) *b = gpu::DeviceBuffer<Real4<double>>(config.device, padded_);
    t_ = gpu::DeviceBuffer<double>(config.device, state_size_);
    dt_ = gpu::DeviceBuffer<double>(config.device, state_size_);
    active_ = gpu::DeviceBuffer<ActiveBody>(config.device, std::max<std::size_t>(config.bodies, 1));
    totals_in_ = gpu::DeviceBuffer<ForceJerk>(config.device, std::max<std::size_t>(s.count, 1));
    allocate_sums();
    ctl_ = gpu::DeviceBuffer<k::HermiteControl>(config.device, 1);
    counts_ = gpu::DeviceBuffer<unsigned>(config.device, std::size_t(list_blocks_));
    if (std::is_same_v<Real, float>) split_ = gpu::DeviceBuffer<float4>(config.device, 4 * padded_);
    ctl_host_ = gpu::PinnedBuffer<k::HermiteControl>(config.device, 2);
    own_active_ = MappedBuffer<ActiveBody>(config.device, std::max<std::size_t>(s.count, 1));
    pack_count_ = MappedBuffer<unsigned>(config.device, 1);
    own_active_device_ = device_pointer(own_active_);
    pack_count_device_ = device_pointer(pack_count_);
    active_staging_ = gpu::PinnedBuffer<ActiveBody>(config.device, std::max<std::size_t>(config.bodies, 1));
    totals_staging_ = gpu::PinnedBuffer<ForceJerk>(config.device, std::max<std::size_t>(s.count, 1));
    snapshot_taken_[0] = gpu::SyncEvent(config.device);
    snapshot_taken_[1] = gpu::SyncEvent(config.device);
    reset_control(0.0);
  }

  ~HermiteCudaEngine() override {
    if (abandoned_) return;
    if (stream_.get()) (void)cudaStreamSynchronize(stream_.get());  // frees must not race running work
  }

  bool abandoned() const noexcept override { return abandoned_; }

  void abandon() noexcept override {
    abandoned_ = true;
    // This device's waits on the GPU for another (advance_together) end: nothing of this work is used any more.
    release_waits();
    stream_.forget();
    graph_.forget();
    together_graph_.forget();
    device_graph_.forget();
    for (auto* b : {&x_, &v_, &a_, &jerk_, &xp_, &vp_}) b->forget();
    for (auto* b : {&t_, &dt_}) b->forget();
    active_.forget();
    for (auto* b : {&totals_in_, &span_, &group_, &total_, &chain_in_, &chain_out_, &by_index_}) b->forget();
    ctl_.forget();
    counts_.forget();
    split_.forget();
    ctl_host_.forget();  // a queued copy may still write into the pinned buffers
    own_active_.forget();
    pack_count_.forget();
    active_staging_.forget();
    totals_staging_.forget();
    partials_host_.forget();
    chain_host_.forget();
    chain_done_.forget();
    tail_.forget();
    signals_.forget();
    released_.forget();  // still read by a wait on the GPU, which it ends (set above)
    for (auto& e : snapshot_taken_) e.forget();
    announced_.forget();
    fork_.forget();
  }

  void bind_thread() override { NBODY_CUDA_CHECK(cudaSetDevice(config_.device)); }

  // ---- state in and out ----

  void upload(const BodySet& b, const hermite::HermiteState& state) override {
    std::size_t const n = config_.slice.count, first = config_.slice.begin;
    std::vector<Real4<double>> a(n), j(n);
    std::vector<double> t(n), dt(n);
    double reached = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      Vec3d const ai = state.acceleration[first + i], ji = state.jerk[first + i];
      a[i] = {ai.x, ai.y, ai.z, 0.0};
      j[i] = {ji.x, ji.y, ji.z, 0.0};
      t[i] = state.time[first + i];
      dt[i] = state.step[first + i];
      reached = std::max(reached, t[i]);
    }
    load(b, a, j, t, dt, reached);
  }

  void upload_unstarted(const BodySet& b) override {
    std::size_t const n = config_.slice.count;
    load(b, std::vector<Real4<double>>(n, Real4<double>{0, 0, 0, 0}), std::vector<Real4<double>>(n, Real4<double>{0, 0, 0, 0}),
         std::vector<double>(n, 0.0), std::vector<double>(n, 0.0), 0.0);
  }

  void download(BodySet& b, hermite::HermiteState& state) override {
    std::size_t const n = config_.slice.count, first = config_.slice.begin;
    if (n == 0) return;
    std::vector<Real4<double>> x(n), v(n), a(n), j(n);
    std::vector<double> t(n), dt(n);
    gpu::DeviceGuard guard(config_.device);
    wait_for_stream();  // a copy to pageable memory waits for the stream's work with no bound
    k::HermiteSlice const own = slice();
    copy_out(x.data(), own.x, n);
    copy_out(v.data(), own.v, n);
    copy_out(a.data(), own.a, n);
    copy_out(j.data(), own.jerk, n);
    copy_out(t.data(), own.t, n);
    copy_out(dt.data(), own.dt, n);
    wait_for_stream();
    for (std::size_t i = 0; i < n; ++i) {
      b.pos_mass[first + i] = x[i];
      b.velocity[first + i] = {v[i].x, v[i].y, v[i].z};
      state.acceleration[first + i] = {a[i].x, a[i].y, a[i].z};
      state.jerk[first + i] = {j[i].x, j[i].y, j[i].z};
      state.time[first + i] = t[i];
      state.step[first + i] = dt[i];
    }
  }

  void download_predicted(BodySet& b) override {
    std::size_t const n = config_.slice.count, first = config_.slice.begin;
    if (n == 0) return;
    std::vector<Real4<double>> x(n), v(n);
    gpu::DeviceGuard guard(config_.device);
    wait_for_stream();  // as in download()
    copy_out(x.data(), xp_.data(), n);
    copy_out(v.data(), vp_.data(), n);
    wait_for_stream();
    for (std::size_t i = 0; i < n; ++i) {
      b.pos_mass[first + i] = x[i];
      b.velocity[first + i] = {v[i].x, v[i].y, v[i].z};
    }
  }

  // ---- the multi-device protocol ----

  double own_next_time() override {
    if (config_.slice.count == 0) return std::numeric_limits<double>::infinity();
    gpu::DeviceGuard guard(config_.device);
    if (!next_started_) start_next_time();
    next_started_ = false;
    wait_for_stream();
    // The whole control came back: the floor the last corrector found is known without another round trip.
    floor_known_ = true;
    return k::key_time(ctl_host_.data()[0].next_key);
  }
  void start_next_time() override {
    if (config_.slice.count == 0) return;
    gpu::DeviceGuard guard(config_.device);
    k::hermite_arm<<<1, 1, 0, stream_.get()>>>(ctl_.data(), 0.0, 0.0, 0, false);
    NBODY_CHECK_LAUNCH(stream_.get());
    k::hermite_next_time<<<elementwise_grid(config_.slice.count), k::kHermiteBlock, 0, stream_.get()>>>(
        slice(), &ctl_.data()->next_key);
    NBODY_CHECK_LAUNCH(stream_.get());
    floor_known_ = false;  // the copy below writes ctl_host_[0]
    NBODY_CUDA_CHECK(cudaMemcpyAsync(&ctl_host_.data()[0], ctl_.data(), sizeof(k::HermiteControl),
                                     cudaMemcpyDeviceToHost, stream_.get()));
    next_started_ = true;
  }

  void predict(double t) override {
    if (config_.slice.count == 0) return;
    gpu::DeviceGuard guard(config_.device);
    k::hermite_predict<<<list_blocks_, k::kHermiteBlock, 0, stream_.get()>>>(slice(), {nullptr, t}, true, false,
                                                                             nullptr);
    NBODY_CHECK_LAUNCH(stream_.get());
  }

  std::size_t pack_active(double t, bool all) override {
    if (config_.slice.count == 0) return 0;
    gpu::DeviceGuard guard(config_.device);
    if (!(pack_started_ && pack_t_ == t && pack_all_ == all)) start_pack(t, all);
    pack_started_ = false;
    wait_for_stream();  // the list is in host memory now
    return *pack_count_.data();
  }
  void start_pack(double t, bool all) override {
    if (config_.slice.count == 0) return;
    gpu::DeviceGuard guard(config_.device);
    k::BlockClock const clock{nullptr, t};
    k::hermite_predict<<<list_blocks_, k::kHermiteBlock, 0, stream_.get()>>>(slice(), clock, false, all,
                                                                             counts_.data());
    NBODY_CHECK_LAUNCH(stream_.get());
    k::hermite_compact<<<list_blocks_, k::kHermiteBlock, 0, stream_.get()>>>(slice(), clock, all, counts_.data(),
                                                                             own_active_device_, pack_count_device_);
    NBODY_CHECK_LAUNCH(stream_.get());
    pack_started_ = true, pack_t_ = t, pack_all_ = all;
  }

  const ActiveBody* own_active_data() const override { return own_active_.data(); }

  void set_active(const ActiveBody* bodies, std::size_t count) override {
    if (count > config_.bodies) throw std::logic_error("Hermite CUDA engine: more active bodies than bodies");
    gpu::DeviceGuard guard(config_.device);
    // The staging buffer is free: every block step waits for this stream (own_next_time, pack_active) before the
    // next set_active, and a pass in chunks through the host waits in add_own_groups. A slice with no groups (more
    // devices than groups) waits for nothing and needs no list: nothing is copied.
    if (count && own_groups_ > 0) {
      if (bodies != active_staging_.data()) std::memcpy(active_staging_.data(), bodies, count * sizeof(ActiveBody));
      NBODY_CUDA_CHECK(cudaMemcpyAsync(active_.data(), active_staging_.data(), count * sizeof(ActiveBody),
                                       cudaMemcpyHostToDevice, stream_.get()));
    }
    active_count_ = count;
    // The list is in index order: the own bodies are one run of it.
    Slice const s = config_.slice;
    auto const below = [](const ActiveBody& b, std::size_t i) { return b.index < i; };
    own_first_ = std::size_t(std::lower_bound(bodies, bodies + count, s.begin, below) - bodies);
    own_count_ = std::size_t(std::lower_bound(bodies, bodies + count, s.end(), below) - bodies) - own_first_;
  }

  void partial_forces() override { pair_partials<Real>(protocol_grid_); }
  // fp32's engine runs the fp64 engine's instantiation (the j-bodies' xp and vp are fp64 in both).
  void partial_forces_fp64() override { pair_partials<double>(fp64_protocol_grid_); }
  template <class Pair>
  void pair_partials(int grid) {
    partials_ready_ = 0;
    if (own_groups_ == 0 || active_count_ == 0) return;
    gpu::DeviceGuard guard(config_.device);
    k::HermiteSums const sums = sums_for(false, grid);
    k::hermite_forces<Pair, true><<<grid, k::kHermiteForceBlock, 0, stream_.get()>>>(
        force_args(sums, k::ActiveCount{nullptr, unsigned(active_count_)}, nullptr), eps2());
    NBODY_CHECK_LAUNCH(stream_.get());
    k::hermite_span_groups<<<elementwise_grid(own_groups_ * active_count_), k::kHermiteBlock, 0, stream_.get()>>>(
        sums, k::ActiveCount{nullptr, unsigned(active_count_)}, nullptr);
    NBODY_CHECK_LAUNCH(stream_.get());
    partials_ready_ = own_groups_ * active_count_;
    host_interactions_ += std::uint64_t(active_count_) * config_.slice.count;
  }

  std::size_t own_groups() const override { return own_groups_; }

  const ForceJerk* partials() override {
    gpu::DeviceGuard guard(config_.device);
    ensure_partials_host(partials_ready_);
    if (partials_ready_) copy_out(partials_host_.data(), group_.data(), partials_ready_);
    wait_for_stream();
    return partials_host_.data();
  }

  const ForceJerk* add_own_groups(const ForceJerk* prefix) override {
    std::size_t const n = active_count_;
    gpu::DeviceGuard guard(config_.device);
    ensure_chain();
    if (n == 0) return chain_host_.data();
    // Through pinned memory (chain_host_, free: the last call waited for its copy out, and this copy in reads it
    // before this copy out writes it): a copy from pageable memory (the ranks' sums in totals_) may wait for this
    // stream's work with no bound before it returns. Another engine's result is pinned too, but copying O(active)
    // bytes costs less than asking.
    if (prefix) {
      if (prefix != chain_host_.data()) std::memcpy(chain_host_.data(), prefix, n * sizeof(ForceJerk));
      copy_in(chain_in_.data(), chain_host_.data(), n);
    }
    k::hermite_add_groups<<<elementwise_grid(n), k::kHermiteBlock, 0, stream_.get()>>>(
        group_.data(), partials_ready_ ? int(own_groups_) : 0, k::ActiveCount{nullptr, unsigned(n)},
        prefix ? chain_in_.data() : nullptr, chain_out_.data(), nullptr);
    NBODY_CHECK_LAUNCH(stream_.get());
    copy_out(chain_host_.data(), chain_out_.data(), n);
    wait_for_stream();
    return chain_host_.data();
  }

  bool sums_on_device() const override { return true; }

  void set_active_from(const std::vector<HermiteEngine*>& engines, const std::vector<std::size_t>& counts) override {
    std::size_t total = 0, first = 0, mine = 0;
    bool listed = false;
    for (std::size_t e = 0; e < engines.size(); ++e) {
      if (engines[e] == this) first = total, mine = counts[e], listed = true;
      total += counts[e];
    }
    if (!listed) throw std::logic_error("Hermite CUDA engine: set_active_from without this engine");
    if (total > config_.bodies) throw std::logic_error("Hermite CUDA engine: more active bodies than bodies");
    gpu::DeviceGuard guard(config_.device);
    if (own_groups_ > 0) {  // as set_active: a slice with no groups needs no list
      std::size_t at = 0;
      for (std::size_t e = 0; e < engines.size(); ++e) {
        // Each engine's list is in pinned host memory (portable), as pack_active left it, until its next pack:
        // every block step waits for every stream before it packs again.
        if (counts[e])
          NBODY_CUDA_CHECK(cudaMemcpyAsync(active_.data() + at, same_kind(*engines[e]).own_active_.data(),
                                           counts[e] * sizeof(ActiveBody), cudaMemcpyHostToDevice, stream_.get()));
        at += counts[e];
      }
    }
    active_count_ = total;
    own_first_ = first;  // device order is index order: the own bodies are this engine's packed run
    own_count_ = mine;
  }

  void add_own_groups_on_device(HermiteEngine* previous) override {
    HermiteCudaEngine* const before = previous ? &same_kind(*previous) : nullptr;
    std::size_t const n = active_count_;
    gpu::DeviceGuard guard(config_.device);
    ensure_chain();
    if (n && before) {
      before->ensure_chain();
      read_after(*before);
      NBODY_CUDA_CHECK(cudaMemcpyPeerAsync(chain_in_.data(), config_.device, before->chain_out_.data(),
                                           before->config_.device, n * sizeof(ForceJerk), stream_.get()));
    }
    if (n) {
      k::hermite_add_groups<<<elementwise_grid(n), k::kHermiteBlock, 0, stream_.get()>>>(
          group_.data(), partials_ready_ ? int(own_groups_) : 0, k::ActiveCount{nullptr, unsigned(n)},
          before ? chain_in_.data() : nullptr, chain_out_.data(), nullptr);
      NBODY_CHECK_LAUNCH(stream_.get());
    }
    NBODY_CUDA_CHECK(cudaEventRecord(chain_done_.get(), stream_.get()));
  }
  void correct_from(HermiteEngine& last, double t) override { finish_from(same_kind(last), t, false); }
  void initialise_from(HermiteEngine& last, double t) override { finish_from(same_kind(last), t, true); }

  void correct(const ForceJerk* own_totals, std::size_t count, double t) override { finish(own_totals, count, t, false); }
  void initialise(const ForceJerk* own_totals, std::size_t count, double t) override {
    finish(own_totals, count, t, true);
  }

  // ---- several devices of one process: whole block steps on the devices ----
  bool can_advance_together(const std::vector<HermiteEngine*>& engines) override {
    if (engines.size() < 2 || engines.size() > std::size_t(k::kHermiteMaxPeers) || engines.front() != this) return false;
    std::vector<HermiteCudaEngine*> all;
    std::size_t next = 0;  // the slices in order, one after another, every body once (each device's replica is whole)
    for (HermiteEngine* e : engines) {
      auto* c = dynamic_cast<HermiteCudaEngine*>(e);
      if (!c || c->own_groups_ == 0 || c->config_.slice.count == 0 || c->config_.bodies != config_.bodies ||
          c->config_.slice.begin != next)
        return false;
      next = c->config_.slice.end();
      all.push_back(c);
    }
    if (next != config_.bodies) return false;
    for (HermiteCudaEngine* a : all)
      for (HermiteCudaEngine* b : all) {
        if (a->config_.device == b->config_.device) continue;
        int can = 0;
        NBODY_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, a->config_.device, b->config_.device));
        if (!can) return false;
      }
    for (HermiteCudaEngine* a : all)
      if (!a->prepare_together()) {
        for (HermiteCudaEngine* b : all) b->by_index_ = {};  // the others' partials would go unused
        return false;
      }
    for (HermiteCudaEngine* a : all)
      for (HermiteCudaEngine* b : all) gpu::enable_peer_access(a->config_.device, b->config_.device);
    return true;
  }

  // Every device holds every body's state (sim/kernels/hermite.cuh: several devices of one process) and does each block
  // step itself, but for the force pass on its own j-bodies, in device order (every wait a device's wait for the
  // others' announcements: on the GPU between distinct GPUs, by events between engines that share one; none on the
  // host):
  //   hermite_predict_list<true> (the block's time and active list from its own replica), the force pass on its own
  //     groups, hermite_scatter_groups (its group partials by body index, the buffer of the block step's parity)
  //   after every device's partials: hermite_correct<true>, every active body's total the sum of every device's
  //     group partials in group order, read where they are; every device corrects every active body alike
  // The replicas are made (each own slice copied to every other device) where an engine's own state changed since
  // the last call, or the engines are others. In batches of kBatchSteps as advance_blocks: every device's control
  // copied after each, and looked at once the next batch is queued.
  std::uint64_t advance_together(const std::vector<HermiteEngine*>& engines, std::uint64_t blocks, double t,
                                 double t_stop) override {
    if (!can_advance_together(engines))
      throw std::logic_error("Hermite CUDA engine: advance_together on engines that cannot run it");
    std::vector<HermiteCudaEngine*> all;
    for (HermiteEngine* e : engines) all.push_back(&same_kind(*e));
    std::size_t const devices = all.size();
    k::HermiteGroupsOnDevices partials[2]{};
    std::vector<k::HermiteMeeting> meeting(devices);
    std::vector<std::uint64_t> engine_set;
    for (int parity = 0; parity < 2; ++parity) {
      partials[parity].count = int(devices);
      partials[parity].bodies = config_.bodies;
    }
    for (std::size_t d = 0; d < devices; ++d) {
      HermiteCudaEngine& e = *all[d];
      e.floor_known_ = false;
      for (int parity = 0; parity < 2; ++parity) {
        partials[parity].group[d] = e.by_index(parity);
        partials[parity].groups[d] = int(e.own_groups_);
      }
      engine_set.push_back(e.serial_);
    }
    // Engines on distinct GPUs wait for each other on the GPUs; engines that share one, by events (see
    // sim/kernels/hermite.cuh).
    bool shared = false;
    unsigned long long const stall = stall_nanoseconds(all);
    for (std::size_t d = 0; d < devices; ++d) {
      meeting[d].count = int(devices);
      meeting[d].self = int(d);
      meeting[d].released = all[d]->released_device_;
      meeting[d].stall_ns = stall;
      meeting[d].waits_for = 0;
      for (std::size_t o = 0; o < devices; ++o) {
        meeting[d].device[o] = all[o]->signals_.data();
        if (o == d) continue;
        if (all[o]->config_.device != all[d]->config_.device)
          meeting[d].waits_for |= 1u << o;
        else
          shared = true;
      }
      if (all[d]->isolated_for_test_) {  // a meeting of its own: it neither announces to nor waits for the others
        meeting[d].count = 1;
        meeting[d].self = 0;
        meeting[d].device[0] = all[d]->signals_.data();
      }
    }
    if (blocks == 0) return 0;
    std::uint64_t const before = control().block_steps;
    // Every device's counts from zero, before any device announces (each stores into the others' signals).
    for (HermiteCudaEngine* e : all) {
      gpu::DeviceGuard guard(e->config_.device);
      NBODY_CUDA_CHECK(cudaMemsetAsync(e->signals_.data(), 0, sizeof(k::HermiteSignals), e->stream_.get()));
    }
    for (HermiteCudaEngine* e : all) e->synchronize();
    bool current = true;
    for (HermiteCudaEngine* e : all) current = current && e->replica_current_ && e->replica_set_ == engine_set;
    if (!current) {
      // Every stream is idle: each own slice is copied to every other device, and every copy is done before any
      // device's block steps change its own.
      for (HermiteCudaEngine* e : all)
        for (HermiteCudaEngine* o : all)
          if (o != e) e->copy_own_state_of(*o);
      for (HermiteCudaEngine* e : all) e->synchronize();
      for (HermiteCudaEngine* e : all) e->replica_current_ = true, e->replica_set_ = engine_set;
    }
    // The devices' waits hold from here (a call before that ended early released them, and the engine went on).
    for (HermiteCudaEngine* e : all) *static_cast<volatile unsigned*>(e->released_.data()) = 0;
    // A host that waits after each launch, and engines that share a GPU, queue every device's announcement before any
    // device's wait (the latter record an event after each announcement, which the engines on the same GPU wait for
    // before their wait); otherwise each device's corrector announces and waits itself (see sim/kernels/hermite.cuh).
    bool const ordered = host_waits_after_launches() || shared;
    // The announcements each wait is for were queued before it, in the same block step (in a capture, recorded in it).
    auto await = [&](std::size_t d) {
      HermiteCudaEngine& e = *all[d];
      for (std::size_t o = 0; o < devices; ++o)
        if (o != d && all[o]->config_.device == e.config_.device)
          NBODY_CUDA_CHECK(cudaStreamWaitEvent(e.stream_.get(), all[o]->announced_.get(), 0));
      e.launch_after(k::hermite_await, 1, 1, e.stream_.get(), meeting[d], e.ctl_.data());
    };
    auto announced = [&](std::size_t d) {
      if (shared) NBODY_CUDA_CHECK(cudaEventRecord(all[d]->announced_.get(), all[d]->stream_.get()));
    };
    for (HermiteCudaEngine* e : all) {
      gpu::DeviceGuard guard(e->config_.device);
      cudaStream_t const s = e->stream_.get();
      k::hermite_arm<<<1, 1, 0, s>>>(e->ctl_.data(), t, t_stop, blocks, true);
      NBODY_CHECK_LAUNCH(s);
      k::hermite_next_time<<<e->elementwise_grid(config_.bodies), k::kHermiteBlock, 0, s>>>(e->replica(),
                                                                                          &e->ctl_.data()->key[0]);
      NBODY_CHECK_LAUNCH(s);
    }
    // The block steps' parity: which of the two buffers of partials a block step's go to. A graph holds an even number
    // of block steps, and the steps on the streams outside graphs come last in a call.
    int parity = 0;
    // Device d's part of a block step of parity `par` before the meeting (its partials, and where the host orders the
    // meeting, its announcement) and after it (the corrector).
    auto produce = [&](std::size_t d, int par) {
      HermiteCudaEngine& e = *all[d];
      gpu::DeviceGuard guard(e.config_.device);
      cudaStream_t const s = e.stream_.get();
      k::HermiteControl* const ctl = e.ctl_.data();
      e.launch_after(k::hermite_predict_list<true>, e.list_blocks_, k::kHermiteBlock, s, e.replica(), ctl,
                     e.active_.data(), int(e.config_.slice.begin), int(e.config_.slice.end()));
      k::ActiveCount const count{&ctl->active, 0};
      k::HermiteSums const sums = e.sums_for(false);
      e.launch_after(k::hermite_forces<Real, false>, e.force_grid_, k::kHermiteForceBlock, s,
                     e.force_args(sums, count, ctl, true), e.eps2());
      e.launch_after(k::hermite_scatter_groups, e.elementwise_grid(e.own_groups_ * config_.bodies), k::kHermiteBlock, s,
                     sums, count, e.active_.data(), e.by_index(par), std::uint64_t(config_.bodies),
                     static_cast<const k::HermiteControl*>(ctl));
      if (ordered) {
        e.launch_after(k::hermite_announce, 1, 1, s, meeting[d], static_cast<const k::HermiteControl*>(ctl));
        announced(d);
      }
    };
    auto finish = [&](std::size_t d, int par) {
      HermiteCudaEngine& e = *all[d];
      gpu::DeviceGuard guard(e.config_.device);
      k::HermiteControl* const ctl = e.ctl_.data();
      if (ordered) await(d);
      k::HermiteCorrectArgs c{};
      c.active = e.active_.data();
      c.own_first = {nullptr, 0};
      c.own_count = {&ctl->active, 0};
      c.sums = e.sums_for(false);
      c.active_count = {&ctl->active, 0};
      c.clock = {ctl, 0.0};
      c.ctl = ctl;
      c.j_bodies = e.config_.slice.count;
      c.initialise = false;
      c.params = e.config_.params;
      c.devices = partials[par];
      c.meeting = meeting[d];
      c.meet = !ordered;
      c.counted_begin = e.config_.slice.begin;
      c.counted_end = e.config_.slice.end();
      e.launch_after(k::hermite_correct<true>,
                     std::min({e.elementwise_grid(config_.bodies), 2 * e.multiprocessors_, e.resident_correct_}),
                     k::kHermiteBlock, e.stream_.get(), e.replica(), c);
    };
    auto enqueue_block_step = [&] {
      for (std::size_t d = 0; d < devices; ++d) produce(d, parity);
      for (std::size_t d = 0; d < devices; ++d) finish(d, parity);
      parity ^= 1;
    };
    static_assert(kGraphSteps % 2 == 0, "a graph's block steps end at the parity they begin with");
    static_assert(kBatchSteps % kGraphSteps == 0, "a batch's steps on the streams come after its graphs, at its end");
    // Graphs of kGraphSteps block steps: one launch where the streams took several launches a device and block step,
    // which held the devices back whenever a block step took the GPUs less time than the host its launches.
    //  - Where the devices meet by themselves (!ordered), one graph a device, of its own steps on its own stream: the
    //    devices wait for each other only at their meetings, not at graph boundaries (one graph over both H200s cost
    //    2.7 us a block step of N = 262,144 more: docs/benchmarks.md), and the batches bound each device's queue.
    //  - Where the host orders the meetings (events between streams), one graph over every stream, on the first one:
    //    the capture starts there; the others join it after an event there and end with the first stream waiting for
    //    their last work, so a graph begins after the work before it on the first stream and ends with all of its own.
    cudaStream_t const first = stream_.get();
    bool const graphs =
        graphs_ && blocks >= kGraphSteps &&
        graphs_for(
            all, ordered,
            [&] {
              NBODY_CUDA_CHECK(cudaEventRecord(fork_.get(), first));
              for (std::size_t d = 1; d < devices; ++d)
                NBODY_CUDA_CHECK(cudaStreamWaitEvent(all[d]->stream_.get(), fork_.get(), 0));
              for (std::uint64_t s = 0; s < kGraphSteps; ++s) enqueue_block_step();
              // A call the driver refuses during a capture (querying a capturing stream): the test of the fallback.
              if (refuse_capture_for_test_) NBODY_CUDA_CHECK(cudaStreamQuery(first));
              for (std::size_t d = 1; d < devices; ++d) {
                gpu::DeviceGuard guard(all[d]->config_.device);
                NBODY_CUDA_CHECK(cudaEventRecord(all[d]->tail_.get(), all[d]->stream_.get()));
              }
              for (std::size_t d = 1; d < devices; ++d)
                NBODY_CUDA_CHECK(cudaStreamWaitEvent(first, all[d]->tail_.get(), 0));
            },
            [&](std::size_t d) {
              for (std::uint64_t s = 0; s < kGraphSteps; ++s) {
                produce(d, int(s & 1));
                finish(d, int(s & 1));
              }
              if (refuse_capture_for_test_ && d + 1 == devices) NBODY_CUDA_CHECK(cudaStreamQuery(all[d]->stream_.get()));
            });
    parity = 0;  // a capture refused part way left it anywhere
    auto launch_graph = [&] {
      if (parity != 0) throw std::logic_error("Hermite CUDA engine: a graph of block steps after an odd number on the streams");
      if (!ordered) {
        for (HermiteCudaEngine* e : all) {
          gpu::DeviceGuard guard(e->config_.device);
          NBODY_CUDA_CHECK(cudaGraphLaunch(e->device_graph_.get(), e->stream_.get()));
        }
        return;
      }
      // The graph over every stream: the first stream first waits for every other stream's work (outside the graph),
      // and every other stream then waits for the graph (the next block step on the streams, the control read).
      for (std::size_t d = 1; d < devices; ++d) {
        gpu::DeviceGuard guard(all[d]->config_.device);
        NBODY_CUDA_CHECK(cudaEventRecord(all[d]->tail_.get(), all[d]->stream_.get()));
      }
      gpu::DeviceGuard guard(config_.device);
      for (std::size_t d = 1; d < devices; ++d) NBODY_CUDA_CHECK(cudaStreamWaitEvent(first, all[d]->tail_.get(), 0));
      NBODY_CUDA_CHECK(cudaGraphLaunch(together_graph_.get(), first));
      NBODY_CUDA_CHECK(cudaEventRecord(tail_.get(), first));
      for (std::size_t d = 1; d < devices; ++d) {
        gpu::DeviceGuard other(all[d]->config_.device);
        NBODY_CUDA_CHECK(cudaStreamWaitEvent(all[d]->stream_.get(), tail_.get(), 0));
      }
    };
    // Every device halts at the same block (the same block time, floor and steps left, each from its own replica): the
    // first one's control says when. Batches as in advance_blocks, each device's queue bounded by its own. Whatever
    // ends the call early (a wait past its bound, a launch that NBODY_DEBUG_SYNC waited for in vain) ends every
    // device's waits too.
    gpu::DeviceGuard guard(config_.device);
    released_on_failure(all, [&] {
      enqueue_batches(all, blocks, graphs, launch_graph, enqueue_block_step);
    });
    released_on_failure(all, [&] {
      for (HermiteCudaEngine* e : all) {
        k::HermiteControl const c = e->control();
        e->block_time_ = c.t;
      }
    });
    return control().block_steps - before;
  }

  std::int64_t floor_violation() override {
    k::HermiteControl const c = floor_known_ ? ctl_host_.data()[0] : control();
    return c.floor_body == k::kNoBody ? -1 : std::int64_t(c.floor_body);
  }

  // ---- one device: whole block steps on the GPU ----
  // Each block step is three kernels that take every value they need from HermiteControl (the block time, the
  // active count): predict, active list and the waiting bodies' next time in one pass -> forces -> corrector (with
  // the span sums to totals for small blocks, and the corrected bodies' next time). Launched as graphs of
  // kGraphSteps block steps (or kernel by kernel on the stream), in batches of kBatchSteps; after each batch
  // the control is copied to pinned memory, and the host looks at batch b's copy only once batch b + 1 is
  // queued, so the GPU never waits for the host. Steps past `blocks`, t_stop or a floor violation do nothing.
  std::uint64_t advance_blocks(std::uint64_t blocks, double t_stop) override {
    floor_known_ = false;
    replica_current_ = false;
    if (config_.slice.count != config_.bodies)
      throw std::logic_error("Hermite CUDA engine: advance_blocks needs the whole system on one engine");
    if (blocks == 0 || config_.bodies == 0) return 0;
    gpu::DeviceGuard guard(config_.device);
    std::uint64_t const before = control().block_steps;
    k::hermite_arm<<<1, 1, 0, stream_.get()>>>(ctl_.data(), block_time_, t_stop, blocks, true);
    NBODY_CHECK_LAUNCH(stream_.get());
    // The first block's time; each block step then finds the next one's as it goes (HermiteControl::key).
    k::hermite_next_time<<<elementwise_grid(config_.slice.count), k::kHermiteBlock, 0, stream_.get()>>>(
        slice(), &ctl_.data()->key[0]);
    NBODY_CHECK_LAUNCH(stream_.get());
    if (graphs_ && blocks >= kGraphSteps && !graph_.get()) graph_.capture(stream_.get(), [&] {
      for (std::uint64_t s = 0; s < kGraphSteps; ++s) enqueue_block_step();
    });
    enqueue_batches(
        {this}, blocks, graphs_, [&] { NBODY_CUDA_CHECK(cudaGraphLaunch(graph_.get(), stream_.get())); },
        [&] { enqueue_block_step(); });
    k::HermiteControl const c = control();
    block_time_ = c.t;
    return c.block_steps - before;
  }

  double block_time() const override { return block_time_; }

  hermite::HermiteCounters counters() override {
    k::HermiteControl const c = control();
    hermite::HermiteCounters out;
    out.block_steps = c.block_steps;
    out.force_evaluations = c.force_evaluations;
    out.interactions = c.interactions + host_interactions_;
    for (int l = 0; l < hermite::kLevels; ++l) out.levels[l] = c.levels[l];
    return out;
  }

  void synchronize() override {
    gpu::DeviceGuard guard(config_.device);
    wait_for_stream();
  }

  bool idle() override {
    if (abandoned_) return true;  // its stream is let go of: nothing of it is waited for
    gpu::DeviceGuard guard(config_.device);
    cudaError_t const status = cudaStreamQuery(stream_.get());
    if (status == cudaErrorNotReady) return false;
    NBODY_CUDA_CHECK(status);
    return true;
  }

  int device() const override { return config_.device; }
  const HermiteEngineConfig& config() const override { return config_; }
  std::string kernel_name() const override {
    return std::string("hermite cuda ") + name_of(config_.engine.precision) + " (" +
           std::to_string(k::kHermiteForceBlock) + " active bodies a block, j tiles of " +
           std::to_string(k::kHermiteTile) + ", spans of " + std::to_string(span_length_) + ", " +
           std::to_string(force_grid_) + " blocks; " +
           (!graphs_ ? "stream" : together_graph_refused_ ? "graphs on one GPU, no graph over several" : "graphs") + ")";
  }

  void set_graph_launch(bool graphs) override { graphs_ = graphs; }
  void set_isolated_for_test(bool isolated) override { isolated_for_test_ = isolated; }
  void set_refuse_capture_for_test(bool refuse) override { refuse_capture_for_test_ = refuse; }
  cudaStream_t stream() const override { return stream_.get(); }
  bool graph_launch() const override { return graphs_; }
  void set_force_grid(int blocks) override {
    gpu::DeviceGuard guard(config_.device);
    wait_for_stream();
    force_grid_ = blocks > 0 ? blocks : resident_blocks_;
    protocol_grid_ = blocks > 0 ? blocks : protocol_resident_;
    fp64_protocol_grid_ = blocks > 0 ? blocks : fp64_protocol_resident_;
    graph_.reset();
  }

 private:
  // Every wait for this GPU is bounded (gpu::bounded_sync): at most two batches of kBatchSteps block steps are
  // queued, each at most N^2 force+jerk pairs, so 2 kBatchSteps N^2 pairs at 1e10 a second (some thirty times
  // slower than an H100's rate) bound it, and never less than 60 s. HermiteEngineConfig::wait_seconds replaces it,
  // and NBODY_WATCHDOG_SECONDS both (gpu::bounded_sync).
  double wait_bound_seconds() const {
    if (config_.wait_seconds > 0.0) return config_.wait_seconds;
    double const n = double(config_.bodies);
    return std::max(60.0, 2.0 * double(kBatchSteps) * n * n / 1e10);
  }
  // advance_together: how long a wait on the GPU for another GPU may last before it traps. Longer than the host's
  // bound on a batch, which holds every wait of the batch, so that the host gives up first (naming the GPU it
  // waited for, and ending every wait on the GPUs) wherever it is alive to.
  static unsigned long long stall_nanoseconds(const std::vector<HermiteCudaEngine*>& all) {
    double seconds = double(k::kStallSeconds);
    for (HermiteCudaEngine* e : all) seconds = std::max(seconds, gpu::bound_seconds(e->wait_bound_seconds()) + 60.0);
    return static_cast<unsigned long long>(std::min(seconds, 1e9) * 1e9);
  }
  std::string waiter_name() const { return "GPU " + std::to_string(config_.device) + " (hermite4 block steps)"; }
  void wait_for_stream() {
    bounded([&] { gpu::bounded_sync(stream_.get(), wait_bound_seconds(), waiter_name()); });
  }
  // A wait past its bound leaves the work queued: the engine lets go of it (abandon) so that its destructor
  // neither waits for it nor frees what it may still use, and the run ends with the message.
  template <class Wait>
  void bounded(Wait&& wait) {
    try {
      wait();
    } catch (const gpu::CudaError&) {
      throw;
    } catch (const RuntimeFailure&) {
      abandon();
      throw;
    }
  }
  static constexpr std::size_t kSumBytes = sizeof(ForceJerk);
  // CUDA_LAUNCH_BLOCKING=1, or NBODY_DEBUG_SYNC (gpu/check.h): the host waits for each kernel after launching it.
  // Read once: CUDA reads CUDA_LAUNCH_BLOCKING once too, and a graph captured for one answer is kept.
  static bool host_waits_after_launches() {
    static bool const waits = [] {
      const char* blocking = std::getenv("CUDA_LAUNCH_BLOCKING");
      return gpu::debug_sync() || (blocking && std::string(blocking) == "1");
    }();
    return waits;
  }
  // `wait`, and where a wait past its bound gives up (the engine that waited abandons itself), every engine's waits
  // on the GPUs end too: each device polls its own engine's word, and a device that waits for the one given up on
  // would otherwise wait until its trap.
  template <class Wait>
  static void released_on_failure(const std::vector<HermiteCudaEngine*>& all, Wait&& wait) {
    try {
      wait();
    } catch (const RuntimeFailure&) {
      // The released waits let the correctors go on with partials that may never have been made.
      for (HermiteCudaEngine* e : all) e->release_waits(), e->replica_current_ = false;
      throw;
    }
  }
  void release_waits() noexcept {
    if (released_.data()) *static_cast<volatile unsigned*>(released_.data()) = 1;
  }
  static std::uint64_t next_serial() {
    static std::atomic<std::uint64_t> made{0};
    return ++made;
  }

  double eps2() const { return config_.softening * config_.softening; }

  // The own bodies' state (at their place in the arrays of every body's, where the slice is not all of them).
  k::HermiteSlice slice() {
    std::size_t const b = config_.slice.begin;
    return {x_.data() + b, v_.data() + b, a_.data() + b, jerk_.data() + b, t_.data() + b, dt_.data() + b,
            xp_.data(), vp_.data(), int(b), int(config_.slice.count), split()};
  }
  // advance_together's: every body's state (begin 0, count N), the own j arrays (hermite_predict_list<true>).
  k::HermiteSlice replica() {
    return {x_.data(), v_.data(), a_.data(), jerk_.data(), t_.data(), dt_.data(), xp_.data(), vp_.data(),
            0, int(config_.bodies), split()};
  }
  static int list_grid(std::size_t n) {
    return int(std::clamp<std::size_t>(ceil_div(n, k::kHermiteBlock), 1, k::kHermiteMaxListBlocks));
  }
  // fp32: the predicted j-bodies as double-single pairs (see HermiteSplit), four arrays of padded_; fp64: none.
  k::HermiteSplit split() const {
    float4* const p = split_.data();
    if (!p) return {nullptr, nullptr, nullptr, nullptr};
    return {p, p + padded_, p + 2 * padded_, p + 3 * padded_};
  }

  int elementwise_grid(std::size_t n) const {
    return int(std::clamp<std::size_t>(ceil_div(n, k::kHermiteBlock), 1, std::size_t(4 * multiprocessors_)));
  }

  // Only a device that holds every group folds them itself (the single-device path); elsewhere the partials
  // leave per group and are added across devices.
  bool fold_allowed() const { return config_.slice.count == config_.bodies; }

  // `slots`: the grid of the force pass these sums are for (hermite_force_mode cuts the work by it).
  k::HermiteSums sums_for(bool fold, int slots = 0) {
    k::HermiteCut const cut{int(own_groups_), int(layout_.length / span_length_), fold,
                            unsigned(slots > 0 ? slots : force_grid_),
                            unsigned(most_active_per_span())};
    return {span_.data(), group_.data(), total_.data(), cut};
  }

  // `split`: the block steps of advance_blocks (hermite_predict_list wrote the split arrays, not xp, vp).
  k::HermiteForceArgs force_args(const k::HermiteSums& sums, k::ActiveCount count, const k::HermiteControl* ctl,
                                 bool split = false) {
    return {xp_.data(), vp_.data(), int(config_.slice.begin), int(config_.slice.count), int(layout_.length),
            int(span_length_), active_.data(), count, sums, ctl, split ? split_.data() : nullptr};
  }

  // The most active bodies whose sums the force pass may leave per span (hermite_force_mode): a buffer of at most
  // kSpanSumBytes, whole tiles. Group partials may hold every body (the protocol's start and potential passes make
  // every body active, on one device too); totals only on a device that holds every group.
  static constexpr std::size_t kSpanSumBytes = std::size_t(256) << 20;
  std::size_t most_active_per_span() const {
    if (spans() == 0) return 0;
    std::size_t const fits = kSpanSumBytes / (spans() * kSumBytes) / k::kHermiteForceBlock * k::kHermiteForceBlock;
    return std::min(config_.bodies, std::max<std::size_t>(fits, k::kHermiteForceBlock));
  }
  std::size_t spans() const { return own_groups_ * (layout_.length / span_length_); }
  std::size_t span_sums() const { return std::max<std::size_t>(most_active_per_span() * spans(), 1); }
  std::size_t group_sums() const { return std::max<std::size_t>(config_.bodies * own_groups_, 1); }
  std::size_t total_sums() const { return fold_allowed() ? std::max<std::size_t>(config_.bodies, 1) : 1; }
  std::size_t device_bytes() const {
    return state_size_ * (4 * sizeof(Real4<double>) + 2 * sizeof(double)) +
           padded_ * (2 * sizeof(Real4<double>) + (std::is_same_v<Real, float> ? 4 * sizeof(float4) : 0)) +
           config_.bodies * sizeof(ActiveBody) +
           (config_.slice.count + span_sums() + group_sums() + total_sums() + 2 * config_.bodies) * kSumBytes;
  }

  void allocate_sums() {
    if (!span_.data()) span_ = gpu::DeviceBuffer<ForceJerk>(config_.device, span_sums());
    if (!group_.data()) group_ = gpu::DeviceBuffer<ForceJerk>(config_.device, group_sums());
    if (!total_.data()) total_ = gpu::DeviceBuffer<ForceJerk>(config_.device, total_sums());
  }

  // The running sums' buffers (the first force pass of the protocol: room for every body active).
  void ensure_chain() {
    if (chain_out_.data()) return;
    std::size_t const most = std::max<std::size_t>(config_.bodies, 1);
    chain_in_ = gpu::DeviceBuffer<ForceJerk>(config_.device, most);
    chain_out_ = gpu::DeviceBuffer<ForceJerk>(config_.device, most);
    chain_host_ = gpu::PinnedBuffer<ForceJerk>(config_.device, most);
    chain_done_ = gpu::SyncEvent(config_.device);
  }
  static HermiteCudaEngine& same_kind(HermiteEngine& e) {
    auto* cuda = dynamic_cast<HermiteCudaEngine*>(&e);
    if (!cuda) throw std::logic_error("Hermite CUDA engine: running sums from an engine of another kind or precision");
    return *cuda;
  }
  // This stream's next work waits for `other`'s last running sums, read where they are: from this device directly
  // where it may read the other's memory, else the copy goes through the host (cudaMemcpyPeerAsync does either).
  void read_after(HermiteCudaEngine& other) {
    gpu::enable_peer_access(config_.device, other.config_.device);
    NBODY_CUDA_CHECK(cudaStreamWaitEvent(stream_.get(), other.chain_done_.get(), 0));
  }
  // advance_together's buffers and events, made by can_advance_together (never in a block step): false where the
  // device has no room for the partials by body index (two block steps' of every own group), and the protocol
  // through the host runs instead.
  bool prepare_together() {
    if (by_index_.data()) return true;
    gpu::DeviceGuard guard(config_.device);
    std::size_t const sums = 2 * own_groups_ * config_.bodies;
    std::size_t free_bytes = 0, total_bytes = 0;
    NBODY_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    if (sums * kSumBytes + (std::size_t(64) << 20) > free_bytes) return false;
    by_index_ = gpu::DeviceBuffer<ForceJerk>(config_.device, sums);
    together_buffers_ = next_serial();  // graphs captured with the buffers before are not these engines' any more
    tail_ = gpu::SyncEvent(config_.device);
    fork_ = gpu::SyncEvent(config_.device);
    signals_ = gpu::DeviceBuffer<k::HermiteSignals>(config_.device, 1);
    released_ = MappedBuffer<unsigned>(config_.device, 1);
    *released_.data() = 0;
    released_device_ = device_pointer(released_);
    announced_ = gpu::SyncEvent(config_.device);
    return true;
  }
  ForceJerk* by_index(int parity) { return by_index_.data() + std::size_t(parity) * own_groups_ * config_.bodies; }
  // `other`'s own state into this engine's replica, on this stream (every stream idle: advance_together).
  void copy_own_state_of(HermiteCudaEngine& other) {
    std::size_t const b = other.config_.slice.begin, n = other.config_.slice.count;
    if (n == 0) return;
    gpu::DeviceGuard guard(config_.device);
    auto copy = [&](auto& into, auto& from) {
      NBODY_CUDA_CHECK(cudaMemcpyPeerAsync(into.data() + b, config_.device, from.data() + b, other.config_.device,
                                           n * sizeof(*into.data()), stream_.get()));
    };
    copy(x_, other.x_);
    copy(v_, other.v_);
    copy(a_, other.a_);
    copy(jerk_, other.jerk_);
    copy(t_, other.t_);
    copy(dt_, other.dt_);
  }
  // advance_together's graphs for the engines `all` (this one first): where `ordered`, one over every stream (this
  // engine's), captured by `together`; else one a device (each engine's), captured by `own(d)` on device d's stream.
  // Kept while they are for these engines with these grids. False where the driver cannot capture or instantiate one:
  // the block steps then go kernel by kernel on the streams (the same bits), and no capture is tried again.
  template <class Together, class Own>
  bool graphs_for(const std::vector<HermiteCudaEngine*>& all, bool ordered, Together&& together, Own&& own) {
    // What a capture bakes in: the kernels the steps queue, the meetings' stall bound (NBODY_WATCHDOG_SECONDS may
    // change it between calls), and each engine's buffers (prepare_together's, made again after being freed).
    std::vector<std::uint64_t> key{std::uint64_t(host_waits_after_launches()), std::uint64_t(ordered),
                                   std::uint64_t(stall_nanoseconds(all))};
    for (HermiteCudaEngine* e : all)
      key.insert(key.end(), {e->serial_, e->together_buffers_, std::uint64_t(e->force_grid_),
                             std::uint64_t(e->isolated_for_test_)});
    if (ordered && together_graph_.get() && key == together_key_) return true;
    if (!ordered && std::all_of(all.begin(), all.end(), [&](HermiteCudaEngine* e) {
          return e->device_graph_.get() && e->device_graph_key_ == key;
        }))
      return true;
    auto drop_graphs = [&] {  // before a capture, and after one failed part way
      together_key_.clear();
      together_graph_.reset();
      for (HermiteCudaEngine* e : all) e->device_graph_key_.clear(), e->device_graph_.reset();
    };
    drop_graphs();
    if (together_graph_refused_) return false;
    try {
      if (ordered) {
        together_graph_.capture(stream_.get(), together);
        together_key_ = key;
      } else {
        for (std::size_t d = 0; d < all.size(); ++d) {
          HermiteCudaEngine& e = *all[d];
          gpu::DeviceGuard guard(e.config_.device);
          e.device_graph_.capture(e.stream_.get(), [&] { own(d); });
          e.device_graph_key_ = key;
        }
      }
    } catch (const gpu::CudaError& e) {
      // GraphExec::capture ended the capture on the stream it began on; a stream that joined it and is somehow still
      // capturing ends it too, so that the block steps can go on the streams. Only a capture the driver refuses
      // falls back; any other error ends the run.
      for (HermiteCudaEngine* o : all) {
        gpu::DeviceGuard guard(o->config_.device);
        cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
        NBODY_CUDA_CHECK(cudaStreamIsCapturing(o->stream_.get(), &status));
        if (status == cudaStreamCaptureStatusNone) continue;
        cudaGraph_t left = nullptr;
        (void)cudaStreamEndCapture(o->stream_.get(), &left);
        if (left) (void)cudaGraphDestroy(left);
        (void)cudaGetLastError();
        NBODY_CUDA_CHECK(cudaStreamIsCapturing(o->stream_.get(), &status));
        if (status != cudaStreamCaptureStatusNone)
          throw std::logic_error("Hermite CUDA engine: the stream of GPU " + std::to_string(o->config_.device) +
                                 " is still capturing after a capture failed (" + e.what() + ")");
      }
      bool instantiate_failed = together_graph_.instantiate_failed();
      for (HermiteCudaEngine* o : all) instantiate_failed = instantiate_failed || o->device_graph_.instantiate_failed();
      drop_graphs();
      if (!gpu::refused_capture(e.code) && !instantiate_failed) throw;
      (void)cudaGetLastError();
      together_graph_refused_ = true;
      return false;
    }
    return true;
  }

  // Grows the pinned copy of the partials to `n` (the largest block so far: no allocation once it was seen).
  void ensure_partials_host(std::size_t n) {
    if (partials_host_.size() >= n) return;
    wait_for_stream();  // a copy into the old buffer may be queued
    partials_host_ = gpu::PinnedBuffer<ForceJerk>(config_.device, n);
  }

  template <class T>
  void copy_out(T* host, const T* device, std::size_t n) {
    NBODY_CUDA_CHECK(cudaMemcpyAsync(host, device, n * sizeof(T), cudaMemcpyDeviceToHost, stream_.get()));
  }
  template <class T>
  void copy_in(T* device, const T* host, std::size_t n) {
    if (n) NBODY_CUDA_CHECK(cudaMemcpyAsync(device, host, n * sizeof(T), cudaMemcpyHostToDevice, stream_.get()));
  }

  void load(const BodySet& b, const std::vector<Real4<double>>& a, const std::vector<Real4<double>>& j,
            const std::vector<double>& t, const std::vector<double>& dt, double reached) {
    std::size_t const n = config_.slice.count, first = config_.slice.begin;
    std::vector<Real4<double>> x(n), v(n);
    for (std::size_t i = 0; i < n; ++i) {
      x[i] = b.pos_mass[first + i];
      Vec3d const u = b.velocity[first + i];
      v[i] = {u.x, u.y, u.z, 0.0};
    }
    gpu::DeviceGuard guard(config_.device);
    // The j arrays start as the bodies themselves; past the own bodies, zero-mass padding (never written again).
    for (auto* buffer : {&xp_, &vp_}) NBODY_CUDA_CHECK(cudaMemsetAsync(buffer->data(), 0, padded_ * sizeof(Real4<double>), stream_.get()));
    if (split_.data()) NBODY_CUDA_CHECK(cudaMemsetAsync(split_.data(), 0, split_.size() * sizeof(float4), stream_.get()));
    k::HermiteSlice const own = slice();
    copy_in(own.x, x.data(), n);
    copy_in(xp_.data(), x.data(), n);
    copy_in(own.v, v.data(), n);
    copy_in(vp_.data(), v.data(), n);
    copy_in(own.a, a.data(), n);
    copy_in(own.jerk, j.data(), n);
    copy_in(own.t, t.data(), n);
    copy_in(own.dt, dt.data(), n);
    replica_current_ = false;
    reset_control(reached);
    wait_for_stream();  // the host vectors must outlive the copies
    host_interactions_ = 0;
    active_count_ = own_first_ = own_count_ = 0;
  }

  void reset_control(double reached) {
    gpu::DeviceGuard guard(config_.device);
    floor_known_ = next_started_ = pack_started_ = false;
    k::HermiteControl& c = ctl_host_.data()[0];
    std::memset(&c, 0, sizeof c);
    c.next_key = k::time_key(std::numeric_limits<double>::infinity());
    c.t = reached;
    c.t_next = reached;
    c.floor_body = k::kNoBody;
    NBODY_CUDA_CHECK(cudaMemcpyAsync(ctl_.data(), &c, sizeof c, cudaMemcpyHostToDevice, stream_.get()));
    wait_for_stream();
    block_time_ = reached;
  }

  // The control as the stream leaves it (synchronises).
  k::HermiteControl control() {
    gpu::DeviceGuard guard(config_.device);
    NBODY_CUDA_CHECK(cudaMemcpyAsync(&ctl_host_.data()[0], ctl_.data(), sizeof(k::HermiteControl),
                                     cudaMemcpyDeviceToHost, stream_.get()));
    wait_for_stream();
    return ctl_host_.data()[0];
  }

  // correct() and initialise(): the own active bodies' totals in, then the corrector (or the start) on them.
  void finish(const ForceJerk* own_totals, std::size_t count, double t, bool initialise) {
    floor_known_ = false;  // the corrector below may find one
    replica_current_ = false;
    if (count != own_count_)
      throw std::logic_error("Hermite CUDA engine: " + std::to_string(count) + " totals for " +
                             std::to_string(own_count_) + " own active bodies");
    block_time_ = t;
    if (count == 0) return;
    gpu::DeviceGuard guard(config_.device);
    // The previous step's copy out of the staging buffer is done: the stream was waited for since (add_own_groups).
    std::memcpy(totals_staging_.data(), own_totals, count * sizeof(ForceJerk));
    copy_in(totals_in_.data(), totals_staging_.data(), count);
    launch_corrector(count, t, initialise);
  }

  // finish() with the own totals copied from `last`'s device result (the running sums after every group).
  void finish_from(HermiteCudaEngine& last, double t, bool initialise) {
    floor_known_ = false;
    replica_current_ = false;
    block_time_ = t;
    if (own_count_ == 0) return;
    gpu::DeviceGuard guard(config_.device);
    last.ensure_chain();
    read_after(last);
    NBODY_CUDA_CHECK(cudaMemcpyPeerAsync(totals_in_.data(), config_.device, last.chain_out_.data() + own_first_,
                                         last.config_.device, own_count_ * sizeof(ForceJerk), stream_.get()));
    launch_corrector(own_count_, t, initialise);
  }

  // The corrector (or the start) on the own active bodies, their totals in totals_in_.
  void launch_corrector(std::size_t count, double t, bool initialise) {
    k::HermiteCorrectArgs c{};
    c.active = active_.data();
    c.own_first = {nullptr, unsigned(own_first_)};
    c.own_count = {nullptr, unsigned(count)};
    c.own_totals = totals_in_.data();
    c.sums = sums_for(false);
    c.active_count = {nullptr, unsigned(active_count_)};
    c.clock = {nullptr, t};
    c.ctl = ctl_.data();
    c.j_bodies = config_.slice.count;
    c.initialise = initialise;
    c.params = config_.params;
    k::hermite_correct<false><<<elementwise_grid(count), k::kHermiteBlock, 0, stream_.get()>>>(slice(), c);
    NBODY_CHECK_LAUNCH(stream_.get());
  }

  // `kernel`<<<grid, block, 0, stream>>>(args...), launched once the blocks of the kernel before it on the stream
  // have exited, or earlier where that one lets it (programmatic dependent launch, on GPUs that have it): the kernel
  // waits for that one's writes itself (kernels::follow_previous_kernel). A kernel after anything but a kernel waits
  // as after any launch.
  template <class... Params, class... Args>
  void launch_after(void (*kernel)(Params...), int grid, int block, cudaStream_t stream, Args&&... args) {
    cudaLaunchAttribute follow{};
    follow.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    follow.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t launch{};
    launch.gridDim = dim3(unsigned(grid));
    launch.blockDim = dim3(unsigned(block));
    launch.dynamicSmemBytes = 0;
    launch.stream = stream;
    launch.attrs = &follow;
    launch.numAttrs = programmatic_ ? 1 : 0;
    NBODY_CUDA_CHECK(cudaLaunchKernelEx(&launch, kernel, std::forward<Args>(args)...));
    NBODY_CHECK_LAUNCH(stream);
  }

  // advance_blocks' and advance_together's queue: `blocks` block steps in batches of kBatchSteps, whole graphs of
  // kGraphSteps (`launch_graph`) where `graphs`, the rest one by one (`enqueue_step`). After each batch every engine's
  // control (`all`: this one first) is copied to pinned memory on its stream; the host looks at batch b's copies only
  // once batch b + 1 is queued (a bounded wait for each device's, in turn), so the GPUs never wait for the host and no
  // device has more than two batches queued, and queues no more once this engine's copy says the steps halted.
  template <class LaunchGraph, class EnqueueStep>
  void enqueue_batches(const std::vector<HermiteCudaEngine*>& all, std::uint64_t blocks, bool graphs,
                       LaunchGraph&& launch_graph, EnqueueStep&& enqueue_step) {
    std::uint64_t enqueued = 0;
    int batch = 0;
    bool stop = false;
    while (!stop && enqueued < blocks) {
      std::uint64_t const steps = std::min<std::uint64_t>(kBatchSteps, blocks - enqueued);
      for (std::uint64_t s = 0; s < steps;) {
        if (graphs && steps - s >= kGraphSteps) {
          launch_graph();
          s += kGraphSteps;
        } else {
          enqueue_step();
          s += 1;
        }
      }
      enqueued += steps;
      int const parity = batch & 1;
      if (batch > 0) {
        for (HermiteCudaEngine* e : all)
          e->bounded([&] {
            gpu::bounded_sync(e->snapshot_taken_[parity ^ 1].get(), e->wait_bound_seconds(), e->waiter_name());
          });
        stop = ctl_host_.data()[parity ^ 1].halted != 0;
      }
      for (HermiteCudaEngine* e : all) {
        gpu::DeviceGuard guard(e->config_.device);
        NBODY_CUDA_CHECK(cudaMemcpyAsync(&e->ctl_host_.data()[parity], e->ctl_.data(), sizeof(k::HermiteControl),
                                         cudaMemcpyDeviceToHost, e->stream_.get()));
        NBODY_CUDA_CHECK(cudaEventRecord(e->snapshot_taken_[parity].get(), e->stream_.get()));
      }
      ++batch;
    }
  }

  // One block step, every value from the control (see advance_blocks).
  void enqueue_block_step() {
    cudaStream_t const s = stream_.get();
    k::HermiteControl* const ctl = ctl_.data();
    k::BlockClock const clock{ctl, 0.0};
    launch_after(k::hermite_predict_list<false>, list_blocks_, k::kHermiteBlock, s, slice(), ctl, active_.data(), 0, 0);
    k::ActiveCount const count{&ctl->active, 0};
    k::HermiteSums const sums = sums_for(true);
    k::HermiteForceArgs forces = force_args(sums, count, ctl, true);
    forces.corrector_early = true;
    launch_after(k::hermite_forces<Real, false>, force_grid_, k::kHermiteForceBlock, s, forces, eps2());
    k::HermiteCorrectArgs c{};
    c.active = active_.data();
    c.own_first = {nullptr, 0};
    c.own_count = count;
    c.own_totals = nullptr;
    c.sums = sums;
    c.active_count = count;
    c.clock = clock;
    c.ctl = ctl;
    c.j_bodies = config_.slice.count;
    c.initialise = false;
    c.params = config_.params;
    c.early = programmatic_;
    // Two blocks an SM (what stays resident): a block of a few bodies should not launch a grid for every body.
    launch_after(k::hermite_correct<false>, std::min(elementwise_grid(config_.slice.count), 2 * multiprocessors_),
                 k::kHermiteBlock, s, slice(), c);
  }

  HermiteEngineConfig config_;
  k::SegmentLayout layout_;
  std::size_t span_length_ = 0, own_groups_ = 0, padded_ = 1, state_size_ = 1;
  int resident_blocks_ = 1, force_grid_ = 1, multiprocessors_ = 1, list_blocks_ = 1;
  int protocol_resident_ = 1, protocol_grid_ = 1;  // hermite_forces<Real, true>: the protocol's passes
  int fp64_protocol_resident_ = 1, fp64_protocol_grid_ = 1;  // hermite_forces<double, true>: partial_forces_fp64
  int resident_correct_ = 1;  // resident blocks of hermite_correct<true>
  bool graphs_ = true;
  bool programmatic_ = false;  // programmatic dependent launch (compute capability 9.0 and later)
  // The stream is declared before the buffers, so it outlives what is freed after work on it.
  gpu::Stream stream_;
  GraphExec graph_;
  gpu::DeviceBuffer<Real4<double>> x_, v_, a_, jerk_, xp_, vp_;
  gpu::DeviceBuffer<double> t_, dt_;
  gpu::DeviceBuffer<ActiveBody> active_;
  gpu::DeviceBuffer<ForceJerk> totals_in_, span_, group_, total_;
  gpu::DeviceBuffer<ForceJerk> chain_in_, chain_out_;  // add_own_groups' prefix and result (the protocol only)
  gpu::DeviceBuffer<k::HermiteControl> ctl_;
  gpu::DeviceBuffer<unsigned> counts_;
  gpu::DeviceBuffer<float4> split_;  // fp32: the split j-bodies of advance_blocks (see split())
  gpu::PinnedBuffer<k::HermiteControl> ctl_host_;  // [0]: synchronous reads; [0], [1]: the batches (enqueue_batches)
  MappedBuffer<ActiveBody> own_active_;            // pack_active's list, written by the kernel
  MappedBuffer<unsigned> pack_count_;
  ActiveBody* own_active_device_ = nullptr;
  unsigned* pack_count_device_ = nullptr;
  gpu::PinnedBuffer<ActiveBody> active_staging_;
  gpu::PinnedBuffer<ForceJerk> totals_staging_, partials_host_, chain_host_;
  gpu::SyncEvent snapshot_taken_[2];
  gpu::SyncEvent chain_done_;  // recorded after add_own_groups_on_device's result is in chain_out_
  // advance_together: the own groups' partials by body index, two block steps' (hermite_scatter_groups, read by every
  // device); whether this device's replica of every body's state is the engines' (replica_set_: their serials) as
  // they are now; the flags by which the devices wait for each other on the GPUs (kernels::HermiteSignals, zeroed by
  // each call) and the host's word that ends those waits (abandon); an event after the stream's work so far (graph
  // launches, the capture's end).
  gpu::DeviceBuffer<ForceJerk> by_index_;
  std::uint64_t together_buffers_ = 0;  // which making of these buffers (graphs_for's key)
  bool replica_current_ = false;
  std::vector<std::uint64_t> replica_set_;
  gpu::DeviceBuffer<k::HermiteSignals> signals_;
  MappedBuffer<unsigned> released_;
  const unsigned* released_device_ = nullptr;
  gpu::SyncEvent tail_;
  gpu::SyncEvent announced_;  // after this device's announcement of its partials (engines that share a GPU)
  bool isolated_for_test_ = false;
  bool refuse_capture_for_test_ = false;
  // advance_together's graph of kGraphSteps block steps of every device where the host orders the meetings (on the
  // first engine), the engines and force grids it was captured for, and the event its other streams join the capture
  // after.
  GraphExec together_graph_;
  std::vector<std::uint64_t> together_key_;
  gpu::SyncEvent fork_;
  bool together_graph_refused_ = false;  // the first engine's: a graph over several devices was refused (either kind)
  // advance_together's graph of this device's own kGraphSteps block steps where the devices meet by themselves, and
  // the engines it was captured for (graphs_for).
  GraphExec device_graph_;
  std::vector<std::uint64_t> device_graph_key_;
  std::uint64_t const serial_ = next_serial();  // tells engines apart where one is freed and another made at its place
  std::size_t active_count_ = 0, own_first_ = 0, own_count_ = 0, partials_ready_ = 0;
  // start_next_time() and start_pack() queued what own_next_time() and pack_active() wait for; floor_known_:
  // ctl_host_[0] holds the floor as the last corrector left it (own_next_time read it since).
  bool next_started_ = false, pack_started_ = false, pack_all_ = false, floor_known_ = false;
  double pack_t_ = 0.0;
  std::uint64_t host_interactions_ = 0;  // the protocol's force passes (advance_blocks counts on the device)
  double block_time_ = 0.0;
  bool abandoned_ = false;
};

}  // namespace

std::size_t hermite_cuda_engine_host_bytes(const HermiteEngineConfig& config) {
  std::size_t const own = config.slice.count, n = config.bodies;
  // Pinned: the active list's staging and the running sums (N: the start's and the potential's passes go through
  // the host on one GPU too), the totals' staging and the mapped own active list (own). The upload's pageable
  // staging: x, v, a, j, t and dt. (The partials' host copy is made only where they are read on the host, which the
  // block steps never ask for.)
  return n * (sizeof(ActiveBody) + sizeof(ForceJerk)) + own * (sizeof(ForceJerk) + sizeof(ActiveBody)) +
         own * (4 * sizeof(Real4<double>) + 2 * sizeof(double));
}

std::unique_ptr<HermiteEngine> make_hermite_cuda_engine(const HermiteEngineConfig& config) {
  gpu::require_device(config.device);
  if (config.engine.precision == Precision::fp32) return std::make_unique<HermiteCudaEngine<float>>(config);
  return std::make_unique<HermiteCudaEngine<double>>(config);
}

}  // namespace nbody::sim
