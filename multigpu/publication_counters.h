// multigpu/publication_counters.h - which publication each device has made, for devices driven by
// different host threads: a consumer waits until every peer has made the publication it needs.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <vector>

#include "core/errors.h"

namespace nbody::multigpu {

class PublicationCounters {
 public:
  explicit PublicationCounters(std::size_t devices) : published_(devices, 0) {}

  void publish(int device, std::uint64_t publication) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      published_[std::size_t(device)] = publication;
    }
    changed_.notify_all();
  }

  // Returns once every device but `device` has made `publication`; throws after abort().
  void wait_for_peers(int device, std::uint64_t publication) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] {
      if (aborted_) return true;
      for (std::size_t p = 0; p < published_.size(); ++p)
        if (int(p) != device && published_[p] < publication) return false;
      return true;
    });
    if (aborted_) throw RuntimeFailure("exchange aborted: another device failed");
  }

  void abort() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      aborted_ = true;
    }
    changed_.notify_all();
  }

  void reset() {
    std::lock_guard<std::mutex> lock(mutex_);
    std::fill(published_.begin(), published_.end(), 0);
    aborted_ = false;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::uint64_t> published_;
  bool aborted_ = false;
};

}  // namespace nbody::multigpu
