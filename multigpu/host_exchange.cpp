// multigpu/host_exchange.cpp - the exchange between host-memory engines.
#include <condition_variable>
#include <cstring>
#include <mutex>

#include "multigpu/exchange.h"
#include "sim/errors.h"

namespace nbody::multigpu {
namespace {

class HostExchange final : public Exchange {
 public:
  explicit HostExchange(std::vector<sim::SliceEngine*> engines)
      : engines_(std::move(engines)), published_(engines_.size(), 0) {}

  void publish(int device, std::uint64_t step) override {
    sim::SliceEngine& source = *engines_[device];
    std::size_t const bytes = source.bytes_per_body();
    sim::Slice const s = source.config().slice;
    int const buffer = int(step & 1);  // step n's positions live in buffer n % 2 everywhere
    auto const* from = static_cast<const unsigned char*>(source.positions_buffer(buffer)) + s.begin * bytes;
    for (std::size_t p = 0; p < engines_.size(); ++p) {
      if (int(p) == device || s.count == 0) continue;
      // Safe without a lock: peer p reads this buffer only after acquiring this step, and p's
      // last reads of it (its forces of step n - 2) finished before p published step n - 1,
      // which this device waited for before it could drift step n.
      auto* to = static_cast<unsigned char*>(engines_[p]->positions_buffer(buffer)) + s.begin * bytes;
      std::memcpy(to, from, s.count * bytes);
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      published_[device] = step;
    }
    changed_.notify_all();
  }

  void acquire(int device, std::uint64_t step) override {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] {
      if (aborted_) return true;
      for (std::size_t p = 0; p < published_.size(); ++p)
        if (int(p) != device && published_[p] < step) return false;
      return true;
    });
    if (aborted_) throw RuntimeFailure("exchange aborted: another device failed");
  }

  void abort() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      aborted_ = true;
    }
    changed_.notify_all();
  }

  void reset() override {
    std::lock_guard<std::mutex> lock(mutex_);
    std::fill(published_.begin(), published_.end(), 0);
    aborted_ = false;
  }

  std::string describe() const override { return "host memcpy"; }

 private:
  std::vector<sim::SliceEngine*> engines_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::uint64_t> published_;
  bool aborted_ = false;
};

}  // namespace

std::unique_ptr<Exchange> make_host_exchange(const std::vector<sim::SliceEngine*>& engines) {
  return std::make_unique<HostExchange>(engines);
}

}  // namespace nbody::multigpu
