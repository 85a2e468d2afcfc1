// multigpu/rank_exchange.cpp - slices between ranks: host-staged, gathered by MPI on a thread of
// its own.
//
// Publication p, rank A (devices a0, a1) and rank B:
//   a0, a1: [drift] publish: local peers + stage_out -> host_buffer[p % 2]
//   comm thread of A: wait until a0 and a1 published p; wait_out(a0, p), wait_out(a1, p);
//                     all-gather of every rank's range into host_buffer[p % 2]; arrived = p
//   a0: acquire(p): local peers' slices; wait arrived >= p; stage_in the other ranks' ranges; [forces]
// Reusing host_buffer[p % 2] for publication p + 2 is safe: the comm thread starts that gather only
// after every local device's copy of p + 2 landed, and each device enqueued that copy after its
// forces on p + 1, so after its stage_in of p (the CPU's copies are done when called; a GPU's are on
// the device's own stream, before its drift of p + 2).
#include "multigpu/rank_exchange.h"

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <mutex>
#include <thread>

#include "core/errors.h"

namespace nbody::multigpu {
namespace {

class RankExchange final : public Exchange {
 public:
  RankExchange(const Ranks& ranks, std::unique_ptr<Exchange> local, std::unique_ptr<HostStaging> staging,
               std::vector<Slice> rank_ranges, std::size_t bytes_per_body, std::size_t local_devices)
      : ranks_(ranks),
        local_(std::move(local)),
        staging_(std::move(staging)),
        ranges_(std::move(rank_ranges)),
        bytes_(bytes_per_body),
        published_(local_devices, 0) {
    for (auto const& r : ranges_) {
      counts_.push_back(r.count);
      offsets_.push_back(r.begin);
    }
    Slice const mine = ranges_[std::size_t(ranks_.rank())];
    before_ = {0, mine.begin};
    after_ = {mine.end(), ranges_.back().end() - mine.end()};
    thread_ = std::thread([this] { communicate(); });
  }

  ~RankExchange() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }

  void publish(int d, std::uint64_t publication) override {
    local_->publish(d, publication);
    staging_->stage_out(d, publication);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      published_[std::size_t(d)] = publication;
    }
    changed_.notify_all();
  }

  // acquire: this rank's bodies (the local exchange); acquire_rest: the other ranks'. Forces on
  // segments of this rank's bodies run between the two, while the gather is in flight.
  void acquire(int d, std::uint64_t publication) override {
    local_->acquire(d, publication);
    staging_->input_may_start(d, publication);
  }

  std::optional<Slice> ready_early(int) const override { return ranges_[std::size_t(ranks_.rank())]; }

  void acquire_rest(int d, std::uint64_t publication) override {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return aborted_ || arrived_ >= publication; });
      if (aborted_) throw RuntimeFailure(failure_.empty() ? "exchange aborted: another device failed" : failure_);
    }
    if (before_.count) staging_->stage_in(d, publication, before_);
    if (after_.count) staging_->stage_in(d, publication, after_);
    staging_->input_done(d, publication);
  }

  void abort() override {
    local_->abort();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      aborted_ = true;
    }
    changed_.notify_all();
  }

  void reset() override {
    // A reset follows a failure on a worker: the other ranks are mid-step and cannot restart with
    // this one (nor can a gather it gave up be taken back), so the job ends, saying why (the
    // scheduler resets inside the handler of the worker's failure).
    std::string what = "a device failed during a step";
    try {
      if (auto const failure = std::current_exception()) std::rethrow_exception(failure);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    std::fprintf(stderr, "error: rank %d of %d (%s): %s (a device's worker failed during a step; ending the run)\n",
                 ranks_.rank(), ranks_.size(), ranks_.host().c_str(), what.c_str());
    std::fflush(nullptr);
    ranks_.abort(1);
    local_->reset();
    std::lock_guard<std::mutex> lock(mutex_);
    std::fill(published_.begin(), published_.end(), 0);
    arrived_ = 0;
    aborted_ = false;
    failure_.clear();
  }

  void abandon() override {
    abort();
    local_->abandon();
    staging_->abandon();
  }

  std::string describe() const override {
    return (published_.size() > 1 ? local_->describe() + " inside a rank; " : std::string()) +
           "MPI all-gather between ranks, " + staging_->describe();
  }

 private:
  // The communication thread: one gather per publication, in order.
  void communicate() {
    std::uint64_t next = 1;
    while (true) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] {
          if (stopping_) return true;
          if (aborted_) return false;
          if (arrived_ + 1 != next) next = arrived_ + 1;  // after a reset
          return *std::min_element(published_.begin(), published_.end()) >= next;
        });
        if (stopping_) return;
      }
      try {
        for (std::size_t d = 0; d < published_.size(); ++d) staging_->wait_out(int(d), next);
        auto gather = ranks_.start_all_gather(staging_->host_buffer(int(next & 1)), bytes_, counts_, offsets_);
        // Polled, so an abort or the end of the simulation never waits on a rank that is gone. MPI
        // moves a large gather only while it is being tested: a pause between tests would stretch
        // it (a 20 us sleep made an 8 MB gather take about 4x as long), so the thread keeps testing,
        // yielding the core to any thread that needs it.
        while (!gather->test()) {
          std::this_thread::yield();
          std::lock_guard<std::mutex> lock(mutex_);
          if (stopping_ || aborted_) break;
        }
        std::lock_guard<std::mutex> lock(mutex_);
        if (!aborted_ && !stopping_) arrived_ = next;
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(mutex_);
        aborted_ = true;
        failure_ = e.what();
      }
      changed_.notify_all();
      ++next;
    }
  }

  const Ranks& ranks_;
  std::unique_ptr<Exchange> local_;
  std::unique_ptr<HostStaging> staging_;
  std::vector<Slice> ranges_;
  std::vector<std::size_t> counts_, offsets_;
  std::size_t bytes_ = 0;
  Slice before_, after_;  // the other ranks' bodies: before and after this rank's range

  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::uint64_t> published_;  // per local device
  std::uint64_t arrived_ = 0;             // the latest publication gathered
  bool aborted_ = false, stopping_ = false;
  std::string failure_;
  std::thread thread_;  // last: starts after everything it uses
};

}  // namespace

std::unique_ptr<Exchange> make_rank_exchange(const Ranks& ranks, std::unique_ptr<Exchange> local,
                                             std::unique_ptr<HostStaging> staging, std::vector<Slice> rank_ranges,
                                             std::size_t bytes_per_body, std::size_t local_devices) {
  return std::make_unique<RankExchange>(ranks, std::move(local), std::move(staging), std::move(rank_ranges),
                                        bytes_per_body, local_devices);
}

}  // namespace nbody::multigpu
