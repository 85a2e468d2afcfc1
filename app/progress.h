// app/progress.h - a one-line progress display (steps or time, rate, ETA) on a terminal only.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

namespace nbody::app {

class Progress {
 public:
  // The simulation times a run goes from and to: block steps have no count known in advance, so their progress
  // is the time reached.
  struct TimeSpan {
    double from, to;
  };

  // Shows progress only when `enabled` (a terminal on stderr and not --quiet): steps done of `total`, or, given
  // `span`, the time reached in it (with the block steps' rate).
  Progress(std::uint64_t total, bool enabled, std::optional<TimeSpan> span = std::nullopt)
      : total_(total), enabled_(enabled), span_(span), start_(Clock::now()) {}
  ~Progress() { finish(); }

  // Drawn at most four times a second, and always at the end (a run may end short of its time: the last block
  // time before it); finish() draws what a skipped update left.
  void update(std::uint64_t done, double time) {
    if (!enabled_) return;
    done_ = done;
    time_ = time;
    if (!first_) first_ = First{Clock::now(), fraction()};
    stale_ = true;
    if (fraction() < 1.0 && Clock::now() - last_ < std::chrono::milliseconds(250)) return;
    draw();
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

  // The seconds left, at the pace of the run since the first update (`seconds` after it, the fraction done then
  // `first` and now `fraction`): the start-up's forces and the first block steps, whose pace is not the run's, are
  // left out. None until a second of that pace is measured (a first estimate of 196 s for a run of 4); 0 at the end.
  static std::optional<double> eta_seconds(double seconds, double first, double fraction) {
    if (fraction >= 1.0) return 0.0;  // the end, however soon
    if (seconds < 1.0 || !(fraction > first)) return std::nullopt;
    return seconds * (1.0 - fraction) / (fraction - first);
  }

  void finish() {
    if (enabled_ && stale_) draw();
    if (shown_) std::fputc('\n', stderr);
    shown_ = false;
  }

 private:
  using Clock = std::chrono::steady_clock;

  double fraction() const {
    if (span_ && span_->to > span_->from) return (time_ - span_->from) / (span_->to - span_->from);
    return total_ > 0 ? double(done_) / double(total_) : 1.0;
  }

  void draw() {
    auto const now = Clock::now();
    last_ = now;
    stale_ = false;
    std::uint64_t const done = done_;
    double const time = time_, fraction = this->fraction();
    double const elapsed = std::chrono::duration<double>(now - start_).count();
    double const rate = elapsed > 0 ? double(done) / elapsed : 0.0;
    auto const left = eta_seconds(std::chrono::duration<double>(now - first_->at).count(), first_->fraction, fraction);
    char eta[32] = "ETA -";
    if (left) std::snprintf(eta, sizeof eta, "ETA %.0f s", *left);
    if (span_)
      std::fprintf(stderr, "\rtime %.6g/%g (%3.0f%%), %llu block steps  %.1f block steps/s  %s   ", time,
                   span_->to, 100.0 * fraction, (unsigned long long)done, rate, eta);
    else
      std::fprintf(stderr, "\rstep %llu/%llu (%3.0f%%)  %.1f steps/s  %s   ", (unsigned long long)done,
                   (unsigned long long)total_, 100.0 * fraction, rate, eta);
    std::fflush(stderr);
    shown_ = true;
  }

  std::uint64_t total_;
  bool enabled_;
  std::optional<TimeSpan> span_;
  bool shown_ = false;
  bool stale_ = false;  // an update not drawn yet
  std::uint64_t done_ = 0;
  double time_ = 0.0;
  Clock::time_point start_, last_{};
  struct First {
    Clock::time_point at;
    double fraction;
  };
  std::optional<First> first_;  // the first update, where the pace the ETA goes by starts
};

}  // namespace nbody::app
