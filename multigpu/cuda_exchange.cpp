// multigpu/cuda_exchange.cpp - peer and staged exchange of position slices between GPUs.
//
// Publication n (the n-th drift since the upload; a step makes one per drift stage), device A owns
// [0, h), device B owns [h, N), parity p = n % 2 (publication n lives in buffer p on every device,
// whatever the host thread of B has enqueued so far):
//   A.compute: [drift A] -rec(ready_A[p])->
//   A.copy   :            wait(ready_A[p]) [peer copy slice A -> B.buffer[p]] -rec(sent_A[p])->
//   B.compute:                                       ... wait(sent_A[p]) [swap][forces B]
// Staged: A.copy copies slice A -> pinned_A[p] (host) and records sent_A[p]; B.compute waits on
// it and copies pinned_A[p] -> B.buffer[p]. Reusing pinned_A[p] at publication n + 2 is safe: A gets
// there only after waiting for B's slice of publication n + 1, which B's stream produced after its
// copy of publication n. The same chain protects A's next buffer and every device's ring of two
// events.
// Direct: A's drift kernel itself stores slice A into B.buffer[p] as well as its own. On distinct
// GPUs A's next force kernel then announces the drift in B's memory, and B's force kernel waits for
// that on the GPU (sim/kernels/drift_signal.cuh): no event, and nothing here per step. Engines
// sharing a GPU use the events: B.compute waits on ready_A[p]. Either way A's drift of publication
// n + 2 follows, on A's stream, A's forces on n + 1, which waited for B's slice of n + 1 (B
// announces it from its forces on n + 1), which B drifted after its forces on n: B no longer reads
// buffer p when A writes it. Three things that rests on:
// - Not every block of a force kernel waits (one whose segment is in its own slice does not), but
//   every forces stage of a device with bodies has a block that reads another slice, and that block
//   waits for every peer: each stage covers all segments (one launch, or the ready and rest ones).
// - A device's announcement needs its host thread to have enqueued its force kernel, not only its
//   drift: nothing between a drift and its forces may wait on the host for a peer's forces. Where
//   something may (NBODY_DEBUG_SYNC with one thread, CUDA_LAUNCH_BLOCKING, GPUs shared with other
//   processes), auto picks peer copies and an explicit direct is refused (exchange_choice.h).
// - The announcement's release is made by the force kernel after the drift kernel on the same
//   stream, and covers the drift's stores because kernels of one stream run in order: the CUDA
//   programming guide promises that order, the PTX memory model does not state it
//   (docs/exchange.md).
#include "multigpu/cuda_exchange.h"

#include <algorithm>
#include <atomic>

#include "core/errors.h"
#include "gpu/devices.h"
#include "gpu/resources.h"
#include "multigpu/publication_counters.h"
#include "multigpu/rank_exchange.h"
#include "sim/engines/cuda_engine.h"
#include "sim/kernels/drift_signal.h"

namespace nbody::multigpu {

namespace {

class CudaExchange final : public Exchange {
 public:
  CudaExchange(const std::vector<sim::SliceEngine*>& engines, ExchangeMode mode, ExchangeConditions conditions,
               const SettingNames& names)
      : counters_(engines.size()) {
    for (auto* e : engines) {
      auto* cuda = dynamic_cast<sim::CudaSliceEngine*>(e);
      if (!cuda) throw std::logic_error("CUDA exchange needs CUDA engines");
      engines_.push_back(cuda);
    }
    std::vector<int> ordinals;
    for (auto* e : engines_) ordinals.push_back(e->device());
    gpu::Topology const topology = gpu::query_topology(ordinals);
    std::vector<int> sorted = ordinals;
    std::sort(sorted.begin(), sorted.end());
    bool const distinct = std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end();
    conditions.devices = engines_.size();
    conditions.all_pairs_peer = topology.all_pairs_peer();
    conditions.distinct_gpus = distinct;
    bool const automatic = mode == ExchangeMode::automatic;
    mode = choose_exchange(mode, conditions, names);
    if (automatic && mode == ExchangeMode::peer) not_direct_because_ = direct_exchange_hazard(conditions);
    staged_ = mode == ExchangeMode::staged;
    direct_ = mode == ExchangeMode::direct;
    if (!staged_) {
      for (std::size_t a = 0; a < engines_.size(); ++a)
        for (std::size_t b = 0; b < engines_.size(); ++b)
          if (ordinals[a] != ordinals[b] && topology.can_access[a][b]) gpu::enable_peer_access(ordinals[a], ordinals[b]);
    }
    signals_ = direct_ && engines_.size() > 1 && distinct;
    devices_.resize(engines_.size());
    for (std::size_t d = 0; d < engines_.size(); ++d) {
      PerDevice& p = devices_[d];
      int const ordinal = ordinals[d];
      p.copy = gpu::Stream(ordinal);
      for (int k = 0; k < 2; ++k) {
        p.ready[k] = gpu::SyncEvent(ordinal);
        p.sent[k] = gpu::SyncEvent(ordinal);
        if (staged_)
          p.pinned[k] = gpu::PinnedBuffer<unsigned char>(
              ordinal, std::max<std::size_t>(1, engines_[d]->config().slice.count * engines_[d]->bytes_per_body()));
      }
      if (signals_) p.signal = gpu::DeviceBuffer<sim::kernels::DriftSignal>(ordinal, 1);
    }
    if (signals_) {
      released_ = gpu::PinnedBuffer<unsigned int>(ordinals.front(), 1);
      *released_.data() = 0;
      for (int ordinal : ordinals) {  // pinned memory is mapped for every device (unified addressing)
        gpu::DeviceGuard guard(ordinal);
        void* mapped = nullptr;
        NBODY_CUDA_CHECK(cudaHostGetDevicePointer(&mapped, released_.data(), 0));
        if (mapped != released_.data()) throw std::logic_error("direct exchange: pinned memory not at its host address");
      }
      zero_signals();
    }
    if (direct_ && engines_.size() > 1)
      for (std::size_t d = 0; d < engines_.size(); ++d) {
        std::vector<std::array<void*, 2>> peers;
        sim::CudaSliceEngine::DriftSignalLinks links;
        if (signals_) links.own = devices_[d].signal.data(), links.released = released_.data();
        for (std::size_t p = 0; p < engines_.size(); ++p) {
          if (p == d) continue;
          peers.push_back({engines_[p]->positions_buffer(0), engines_[p]->positions_buffer(1)});
          // Peer p counts its peers in device order without itself: d is its d-th, or (d-1)-th.
          if (signals_) links.slots.push_back(&devices_[p].signal.data()->arrived[d < p ? d : d - 1]);
        }
        engines_[d]->set_drift_peers(peers, links);
      }
  }

  ~CudaExchange() override {
    if (abandoned_) return;
    release_waiting_kernels();  // none should wait; after a failure a peer's drift may never come
    if (direct_)
      for (auto* e : engines_) {  // the engines outlive this exchange: no drift may use its memory
        try {
          e->set_drift_peers({}, {});
        } catch (const std::exception&) {  // a destructor does not throw; nothing was allocated
        }
      }
    for (auto& p : devices_)
      if (p.copy.get()) {
        gpu::DeviceGuard guard(p.copy.device());
        (void)cudaStreamSynchronize(p.copy.get());
      }
    // Direct stores come from the peers' compute streams. After a failure a drift may still be
    // storing into a device whose engine is freed next (the exchange goes first): wait for all.
    if (direct_)
      for (auto* e : engines_) {
        gpu::DeviceGuard guard(e->device());
        (void)cudaStreamSynchronize(e->stream());
      }
  }

  void publish(int d, std::uint64_t publication) override {
    if (engines_.size() == 1 || signals_) return;
    sim::CudaSliceEngine& source = *engines_[d];
    PerDevice& me = devices_[d];
    int const parity = int(publication & 1);
    gpu::DeviceGuard guard(source.device());
    Slice const s = source.config().slice;
    std::size_t const bytes = s.count * source.bytes_per_body();
    std::size_t const offset = s.begin * source.bytes_per_body();
    auto const* from = static_cast<const unsigned char*>(source.positions_buffer(parity)) + offset;
    NBODY_CUDA_CHECK(cudaEventRecord(me.ready[parity].get(), source.stream()));
    if (direct_) {  // the drift has stored the slice everywhere: its end is the publication
      counters_.publish(d, publication);
      return;
    }
    NBODY_CUDA_CHECK(cudaStreamWaitEvent(me.copy.get(), me.ready[parity].get(), 0));
    if (bytes > 0) {
      if (staged_) {
        NBODY_CUDA_CHECK(
            cudaMemcpyAsync(me.pinned[parity].data(), from, bytes, cudaMemcpyDeviceToHost, me.copy.get()));
      } else {
        for (std::size_t p = 0; p < engines_.size(); ++p) {
          if (int(p) == d) continue;
          auto* to = static_cast<unsigned char*>(engines_[p]->positions_buffer(parity)) + offset;
          // Unified addressing finds both devices (a peer copy where access is enabled); unlike
          // cudaMemcpyPeerAsync it can be captured into a CUDA graph.
          NBODY_CUDA_CHECK(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDefault, me.copy.get()));
        }
      }
    }
    NBODY_CUDA_CHECK(cudaEventRecord(me.sent[parity].get(), me.copy.get()));
    counters_.publish(d, publication);  // its event is recorded: peers may now wait on it
  }

  void acquire(int d, std::uint64_t publication) override {
    if (engines_.size() == 1) return;
    if (signals_) {  // the force kernel waits on the GPU; here only a failed peer stops the run
      if (aborted_.load(std::memory_order_acquire)) throw RuntimeFailure("exchange aborted: another device failed");
      return;
    }
    counters_.wait_for_peers(d, publication);
    sim::CudaSliceEngine& sink = *engines_[d];
    int const parity = int(publication & 1);
    gpu::DeviceGuard guard(sink.device());
    for (std::size_t p = 0; p < engines_.size(); ++p) {
      if (int(p) == d) continue;
      auto const& from = devices_[p];
      NBODY_CUDA_CHECK(cudaStreamWaitEvent(sink.stream(), (direct_ ? from.ready : from.sent)[parity].get(), 0));
      if (staged_) {
        Slice const s = engines_[p]->config().slice;
        std::size_t const bytes = s.count * sink.bytes_per_body();
        if (bytes == 0) continue;
        auto* to = static_cast<unsigned char*>(sink.positions_buffer(parity)) + s.begin * sink.bytes_per_body();
        NBODY_CUDA_CHECK(
            cudaMemcpyAsync(to, devices_[p].pinned[parity].data(), bytes, cudaMemcpyHostToDevice, sink.stream()));
      }
    }
  }

  // A failed device's peers may be waiting for its drift on the GPU: their waits are given up
  // (their forces are then wrong, and the failure is reported), and their host threads stop at
  // their next acquire.
  void abort() override {
    aborted_.store(true, std::memory_order_release);
    counters_.abort();
    release_waiting_kernels();
  }

  // Called with no step in flight, or after abort(): every device finishes what it was given (the
  // kernels abort() released included), then the counts start from zero on every device. A device
  // that cannot finish has failed, and that failure is reported by whoever called abort():
  // reset() itself does not throw for it.
  void reset() override {
    counters_.reset();
    if (!signals_) return;
    bool finished = true;
    for (std::size_t d = 0; d < engines_.size(); ++d) {
      gpu::DeviceGuard guard(engines_[d]->device(), std::nothrow);
      finished = cudaStreamSynchronize(engines_[d]->stream()) == cudaSuccess && finished;
      finished = cudaStreamSynchronize(devices_[d].copy.get()) == cudaSuccess && finished;
    }
    if (!finished) return;
    try {
      zero_signals();
    } catch (const std::exception&) {  // as above: the failure that matters is already on its way
      return;
    }
    __atomic_store_n(released_.data(), 0u, __ATOMIC_RELEASE);
    aborted_.store(false, std::memory_order_release);
  }

  void abandon() override {
    abandoned_ = true;
    counters_.abort();
    release_waiting_kernels();
    released_.forget();
    for (auto& p : devices_) {
      p.copy.forget();
      p.signal.forget();
      for (int k = 0; k < 2; ++k) p.ready[k].forget(), p.sent[k].forget(), p.pinned[k].forget();
    }
  }

  std::string describe() const override {
    if (engines_.size() == 1) return "none (one device)";
    if (staged_) return "staged through pinned host memory";
    if (!direct_) return not_direct_because_.empty() ? "peer copies" : "peer copies (not direct: " + not_direct_because_ + ")";
    return signals_ ? "direct stores into peers, flags in device memory" : "direct stores into peers";
  }

 private:
  // Gives up every wait on the GPU, now and until reset(): a plain store into mapped host memory,
  // which needs neither a CUDA call nor a free multiprocessor (waiting kernels may fill them all).
  void release_waiting_kernels() noexcept {
    if (released_.data()) __atomic_store_n(released_.data(), 1u, __ATOMIC_RELEASE);
  }

  // Every device's counts to zero, on its compute stream (ordered with its kernels), and waits.
  void zero_signals() {
    for (std::size_t d = 0; d < engines_.size(); ++d) {
      gpu::DeviceGuard guard(engines_[d]->device());
      NBODY_CUDA_CHECK(
          cudaMemsetAsync(devices_[d].signal.data(), 0, sizeof(sim::kernels::DriftSignal), engines_[d]->stream()));
    }
    for (auto* e : engines_) {
      gpu::DeviceGuard guard(e->device());
      NBODY_CUDA_CHECK(cudaStreamSynchronize(e->stream()));
    }
  }

  struct PerDevice {
    gpu::Stream copy;  // declared first: outlives the events and buffers used on it
    gpu::SyncEvent ready[2], sent[2];
    gpu::PinnedBuffer<unsigned char> pinned[2];
    gpu::DeviceBuffer<sim::kernels::DriftSignal> signal;  // signals_ only
  };
  std::vector<sim::CudaSliceEngine*> engines_;
  std::vector<PerDevice> devices_;
  bool staged_ = false;
  bool direct_ = false;  // drift kernels store into the peers' buffers themselves
  bool signals_ = false;  // ... and announce it in device memory (distinct GPUs; drift_signal.cuh)
  gpu::PinnedBuffer<unsigned int> released_;  // signals_: set, every wait on the GPU gives up
  std::atomic<bool> aborted_{false};
  bool abandoned_ = false;
  std::string not_direct_because_;  // auto chose peer copies over direct stores for this reason
  PublicationCounters counters_;
};

// GPU engines meet host memory through pinned buffers: each device copies its slice out on a copy
// stream of its own once its drift is done (an event), and copies the other ranks' ranges in on its
// compute stream, ahead of its forces.
class CudaStaging final : public HostStaging {
 public:
  explicit CudaStaging(const std::vector<sim::SliceEngine*>& engines) {
    for (auto* e : engines) {
      auto* cuda = dynamic_cast<sim::CudaSliceEngine*>(e);
      if (!cuda) throw std::logic_error("CUDA staging needs CUDA engines");
      engines_.push_back(cuda);
    }
    bytes_ = engines_.front()->bytes_per_body();
    std::size_t const all = engines_.front()->config().bodies * bytes_;
    for (auto& b : buffers_) b = gpu::PinnedBuffer<unsigned char>(engines_.front()->device(), all);
    devices_.resize(engines_.size());
    for (std::size_t d = 0; d < engines_.size(); ++d) {
      int const ordinal = engines_[d]->device();
      devices_[d].out = gpu::Stream(ordinal);
      devices_[d].in = gpu::Stream(ordinal);
      for (int k = 0; k < 2; ++k) {
        devices_[d].drifted[k] = gpu::SyncEvent(ordinal);
        devices_[d].landed[k] = gpu::SyncEvent(ordinal);
        devices_[d].free[k] = gpu::SyncEvent(ordinal);
        devices_[d].landed_in[k] = gpu::SyncEvent(ordinal);
      }
    }
  }
  ~CudaStaging() override {
    if (abandoned_) return;
    for (auto& p : devices_) {
      gpu::DeviceGuard guard(p.out.device());
      (void)cudaStreamSynchronize(p.out.get());
      (void)cudaStreamSynchronize(p.in.get());
    }
  }

  void* host_buffer(int parity) override { return buffers_[parity & 1].data(); }

  void stage_out(int d, std::uint64_t publication) override {
    sim::CudaSliceEngine& e = *engines_[std::size_t(d)];
    PerDevice& me = devices_[std::size_t(d)];
    int const parity = int(publication & 1);
    Slice const s = e.config().slice;
    gpu::DeviceGuard guard(e.device());
    NBODY_CUDA_CHECK(cudaEventRecord(me.drifted[parity].get(), e.stream()));
    NBODY_CUDA_CHECK(cudaStreamWaitEvent(me.out.get(), me.drifted[parity].get(), 0));
    if (s.count)
      NBODY_CUDA_CHECK(cudaMemcpyAsync(buffers_[parity].data() + s.begin * bytes_,
                                       static_cast<const unsigned char*>(e.positions_buffer(parity)) + s.begin * bytes_,
                                       s.count * bytes_, cudaMemcpyDeviceToHost, me.out.get()));
    NBODY_CUDA_CHECK(cudaEventRecord(me.landed[parity].get(), me.out.get()));
  }

  void wait_out(int d, std::uint64_t publication) override {
    PerDevice& me = devices_[std::size_t(d)];
    gpu::DeviceGuard guard(me.out.device());
    NBODY_CUDA_CHECK(cudaEventSynchronize(me.landed[publication & 1].get()));
  }

  // The other ranks' bodies go in on a stream of their own, alongside the forces on this rank's: the
  // copies wait only for what came before those forces (the buffer's last readers), and the forces
  // on the rest wait for the copies.
  void input_may_start(int d, std::uint64_t publication) override {
    sim::CudaSliceEngine& e = *engines_[std::size_t(d)];
    PerDevice& me = devices_[std::size_t(d)];
    gpu::DeviceGuard guard(e.device());
    cudaEvent_t const free = me.free[publication & 1].get();
    NBODY_CUDA_CHECK(cudaEventRecord(free, e.stream()));
    NBODY_CUDA_CHECK(cudaStreamWaitEvent(me.in.get(), free, 0));
  }

  void stage_in(int d, std::uint64_t publication, Slice bodies) override {
    sim::CudaSliceEngine& e = *engines_[std::size_t(d)];
    int const parity = int(publication & 1);
    gpu::DeviceGuard guard(e.device());
    NBODY_CUDA_CHECK(cudaMemcpyAsync(static_cast<unsigned char*>(e.positions_buffer(parity)) + bodies.begin * bytes_,
                                     buffers_[parity].data() + bodies.begin * bytes_, bodies.count * bytes_,
                                     cudaMemcpyHostToDevice, devices_[std::size_t(d)].in.get()));
  }

  void input_done(int d, std::uint64_t publication) override {
    sim::CudaSliceEngine& e = *engines_[std::size_t(d)];
    PerDevice& me = devices_[std::size_t(d)];
    gpu::DeviceGuard guard(e.device());
    cudaEvent_t const landed = me.landed_in[publication & 1].get();
    NBODY_CUDA_CHECK(cudaEventRecord(landed, me.in.get()));
    NBODY_CUDA_CHECK(cudaStreamWaitEvent(e.stream(), landed, 0));
  }

  void abandon() override {
    abandoned_ = true;
    for (auto& p : devices_) {
      p.out.forget();
      p.in.forget();
      for (int k = 0; k < 2; ++k) p.drifted[k].forget(), p.landed[k].forget(), p.free[k].forget(), p.landed_in[k].forget();
    }
    for (auto& b : buffers_) b.forget();
  }

  const char* describe() const override { return "staged through pinned host memory"; }

 private:
  struct PerDevice {
    gpu::Stream out, in;  // declared first: outlive the events used on them
    gpu::SyncEvent drifted[2], landed[2], free[2], landed_in[2];
  };
  std::vector<sim::CudaSliceEngine*> engines_;
  std::vector<PerDevice> devices_;
  gpu::PinnedBuffer<unsigned char> buffers_[2];
  std::size_t bytes_ = 0;
  bool abandoned_ = false;
};

}  // namespace

std::unique_ptr<HostStaging> make_cuda_staging(const std::vector<sim::SliceEngine*>& engines) {
  return std::make_unique<CudaStaging>(engines);
}

std::unique_ptr<Exchange> make_cuda_exchange(const std::vector<sim::SliceEngine*>& engines, ExchangeMode mode,
                                             const ExchangeConditions& conditions, const SettingNames& names) {
  return std::make_unique<CudaExchange>(engines, mode, conditions, names);
}

}  // namespace nbody::multigpu
