// core/signal_watch.h - a cancel flag raised by a signal, for work that looks at a flag rather than at signals.
#pragma once

#include <atomic>
#include <chrono>
#include <thread>

#include "core/interrupt.h"

namespace nbody {

// While it watches, a thread raises `flag` as soon as a signal has come (core/interrupt.h), looked for every 10 ms:
// for work that checks a cancel flag between chunks, not signals (the CPU engines' O(N^2) passes, a start's first
// forces among them: hours at N = 10^7 on a few cores). stop() (the destructor too) ends the watch and lowers the
// flag, so that work after it is never cancelled part-way. The flag must outlive the watch.
class SignalWatch {
 public:
  explicit SignalWatch(std::atomic<bool>& flag)
      : flag_(flag), watcher_([this] {
          while (!stopped_.load()) {
            if (interrupt_signal()) {
              flag_.store(true);
              return;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
          }
        }) {}
  ~SignalWatch() { stop(); }
  SignalWatch(const SignalWatch&) = delete;
  SignalWatch& operator=(const SignalWatch&) = delete;

  void stop() {
    stopped_.store(true);
    if (watcher_.joinable()) watcher_.join();
    flag_.store(false);
  }

 private:
  std::atomic<bool>& flag_;
  std::atomic<bool> stopped_{false};
  std::thread watcher_;  // last: it starts once the members it reads are made
};

}  // namespace nbody
