// app/progress.h - a one-line progress display (steps, rate, ETA) on a terminal only.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace nbody::app {

class Progress {
 public:
  // Shows progress only when `enabled` (a terminal on stderr and not --quiet).
  Progress(std::uint64_t total, bool enabled) : total_(total), enabled_(enabled), start_(Clock::now()) {}
  ~Progress() { finish(); }

  void update(std::uint64_t done) {
    if (!enabled_) return;
    auto const now = Clock::now();
    if (done < total_ && now - last_ < std::chrono::milliseconds(250)) return;
    last_ = now;
    double const elapsed = std::chrono::duration<double>(now - start_).count();
    double const rate = elapsed > 0 ? double(done) / elapsed : 0.0;
    double const eta = rate > 0 ? double(total_ - done) / rate : 0.0;
    std::fprintf(stderr, "\rstep %llu/%llu (%3.0f%%)  %.1f steps/s  ETA %.0f s   ", (unsigned long long)done,
                 (unsigned long long)total_, 100.0 * double(done) / double(total_), rate, eta);
    std::fflush(stderr);
    shown_ = true;
  }

  // A line of its own above the progress display (a terminal), or just the line.
  void note(const std::string& text) {
    if (shown_) std::fputc('\n', stderr);
    shown_ = false;
    std::fprintf(stderr, "  %s\n", text.c_str());
  }

  // A line printed as it is (a warning), below the progress display, which the next update redraws.
  void warn(const std::string& text) {
    if (shown_) std::fputc('\n', stderr);
    shown_ = false;
    std::fprintf(stderr, "%s\n", text.c_str());
  }

  void finish() {
    if (shown_) std::fputc('\n', stderr);
    shown_ = false;
  }

 private:
  using Clock = std::chrono::steady_clock;
  std::uint64_t total_;
  bool enabled_;
  bool shown_ = false;
  Clock::time_point start_, last_{};
};

}  // namespace nbody::app
