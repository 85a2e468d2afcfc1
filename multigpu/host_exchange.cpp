// multigpu/host_exchange.cpp - the exchange between host-memory engines.
#include <cstring>

#include "multigpu/exchange.h"
#include "multigpu/publication_counters.h"
#include "multigpu/rank_exchange.h"

namespace nbody::multigpu {
namespace {

class HostExchange final : public Exchange {
 public:
  explicit HostExchange(std::vector<sim::SliceEngine*> engines)
      : engines_(std::move(engines)), counters_(engines_.size()) {}

  void publish(int device, std::uint64_t publication) override {
    sim::SliceEngine& source = *engines_[device];
    std::size_t const bytes = source.bytes_per_body();
    Slice const s = source.config().slice;
    int const buffer = int(publication & 1);  // publication p lives in buffer p % 2 everywhere
    auto const* from = static_cast<const unsigned char*>(source.positions_buffer(buffer)) + s.begin * bytes;
    for (std::size_t p = 0; p < engines_.size(); ++p) {
      if (int(p) == device || s.count == 0) continue;
      // Safe without a lock: peer p reads this buffer only after acquiring this publication, and
      // p's last reads of it (its forces on publication n - 2) finished before p made publication
      // n - 1, which this device waited for before it could drift publication n.
      auto* to = static_cast<unsigned char*>(engines_[p]->positions_buffer(buffer)) + s.begin * bytes;
      std::memcpy(to, from, s.count * bytes);
    }
    counters_.publish(device, publication);
  }

  void acquire(int device, std::uint64_t publication) override { counters_.wait_for_peers(device, publication); }
  void abort() override { counters_.abort(); }
  void reset() override { counters_.reset(); }
  void abandon() override {}

  std::string describe() const override { return "host memcpy"; }

 private:
  std::vector<sim::SliceEngine*> engines_;
  PublicationCounters counters_;
};

// Host engines meet host memory with plain copies, done when the call returns.
class HostStagingImpl final : public HostStaging {
 public:
  explicit HostStagingImpl(std::vector<sim::SliceEngine*> engines) : engines_(std::move(engines)) {
    bytes_ = engines_.front()->bytes_per_body();
    for (auto& b : buffers_) b.resize(engines_.front()->config().bodies * bytes_);
  }
  void* host_buffer(int parity) override { return buffers_[parity & 1].data(); }
  void stage_out(int d, std::uint64_t publication) override {
    int const parity = int(publication & 1);
    Slice const s = engines_[std::size_t(d)]->config().slice;
    if (s.count == 0) return;
    std::memcpy(buffers_[parity].data() + s.begin * bytes_,
                static_cast<const unsigned char*>(engines_[std::size_t(d)]->positions_buffer(parity)) + s.begin * bytes_,
                s.count * bytes_);
  }
  void wait_out(int, std::uint64_t) override {}
  void input_may_start(int, std::uint64_t) override {}
  void input_done(int, std::uint64_t) override {}
  void stage_in(int d, std::uint64_t publication, Slice bodies) override {
    int const parity = int(publication & 1);
    std::memcpy(static_cast<unsigned char*>(engines_[std::size_t(d)]->positions_buffer(parity)) + bodies.begin * bytes_,
                buffers_[parity].data() + bodies.begin * bytes_, bodies.count * bytes_);
  }
  void abandon() override {}
  const char* describe() const override { return "through host memory"; }

 private:
  std::vector<sim::SliceEngine*> engines_;
  std::size_t bytes_ = 0;
  std::vector<unsigned char> buffers_[2];
};

}  // namespace

std::unique_ptr<HostStaging> make_host_staging(const std::vector<sim::SliceEngine*>& engines) {
  return std::make_unique<HostStagingImpl>(engines);
}

std::unique_ptr<Exchange> make_host_exchange(const std::vector<sim::SliceEngine*>& engines) {
  return std::make_unique<HostExchange>(engines);
}

}  // namespace nbody::multigpu
