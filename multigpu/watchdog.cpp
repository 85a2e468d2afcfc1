// multigpu/watchdog.cpp - the host-side bound on waits for devices.
#include "multigpu/watchdog.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <thread>

#include "core/clock.h"
#include "core/errors.h"

namespace nbody::multigpu {

double watchdog_seconds(double configured) {
  if (configured > 0.0) return configured;
  return seconds_from_environment("NBODY_WATCHDOG_SECONDS", 0.0,
                                  "how long a wait for the devices may outlast its steps");
}

Watchdog::Watchdog(double margin_seconds) : fixed_margin_(margin_seconds) { samples_.reserve(kSamples); }

void Watchdog::enqueued(std::uint64_t first, std::uint64_t count) {
  if (count == 0) return;
  if (pending_steps_ == 0) {
    started_ = Clock::now();
    pending_first_ = first;
  }
  pending_steps_ += count;
}

void Watchdog::finished() {
  if (pending_steps_ == 0) return;
  double const seconds = std::chrono::duration<double>(Clock::now() - started_).count();
  double const sample = seconds / double(pending_steps_);
  if (samples_.size() < kSamples)
    samples_.push_back(sample);
  else
    samples_[next_sample_] = sample;
  next_sample_ = (next_sample_ + 1) % kSamples;
  pending_steps_ = 0;
}

double Watchdog::median_step_seconds() const {
  if (samples_.empty()) return estimate_;
  std::array<double, kSamples> sorted{};
  std::copy(samples_.begin(), samples_.end(), sorted.begin());
  auto const middle = sorted.begin() + std::ptrdiff_t(samples_.size() / 2);
  std::nth_element(sorted.begin(), middle, sorted.begin() + std::ptrdiff_t(samples_.size()));
  return *middle;
}

double Watchdog::margin_seconds() const {
  if (fixed_margin_ > 0.0) return fixed_margin_;
  return std::max(kWatchdogFloorSeconds, kWatchdogStepMultiple * median_step_seconds());
}

Watchdog::Clock::time_point Watchdog::deadline() const {
  double const seconds = double(pending_steps_) * median_step_seconds() + margin_seconds();
  return started_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

void Watchdog::wait(std::size_t devices, const std::function<bool(std::size_t)>& idle,
                    const std::function<std::string(std::size_t)>& name, const std::function<void()>& give_up,
                    const std::function<void()>& poll) {
  auto const start = Clock::now();
  // Work enqueued outside any step (none today) gets the margin alone.
  auto const limit = pending() ? deadline()
                               : start + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(margin_seconds()));
  while (true) {
    bool all = true;
    for (std::size_t d = 0; d < devices; ++d) all = idle(d) && all;  // every device, so that any failure shows
    if (all) {
      finished();
      return;
    }
    if (Clock::now() > limit) {
      std::vector<std::string> busy;
      for (std::size_t d = 0; d < devices; ++d)
        if (!idle(d)) busy.push_back(name(d));
      if (!busy.empty()) expire(busy, give_up);
      continue;  // finished just now
    }
    if (poll) poll();
    // Briefly by spinning, so that a step of microseconds is not timed in sleeps; then by sleeping.
    if (Clock::now() - start < std::chrono::milliseconds(1))
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

void Watchdog::expire(const std::vector<std::string>& busy_names, const std::function<void()>& give_up) const {
  std::ostringstream s;
  s.precision(3);
  for (std::size_t k = 0; k < busy_names.size(); ++k)
    s << (k == 0 ? "" : k + 1 == busy_names.size() ? " and " : ", ") << busy_names[k];
  s << (busy_names.size() == 1 ? " has" : " have") << " not finished ";
  if (pending_steps_ == 0)
    s << "the work queued on it";
  else if (pending_steps_ == 1)
    s << "step " << pending_first_;
  else
    s << "steps " << pending_first_ << '-' << pending_first_ + pending_steps_ - 1;
  if (pending_steps_ > 0)
    s << " after " << std::chrono::duration<double>(Clock::now() - started_).count() << " s (bound: " << pending_steps_
      << " step(s) at a median " << median_step_seconds() << " s, plus ";
  else
    s << " (bound: ";
  s << margin_seconds() << " s"
    << (fixed_margin_ > 0.0 ? " as configured)" : ", max(60 s, 100 x the median step); NBODY_WATCHDOG_SECONDS sets it)");
  s << "; the waits on the GPUs were given up, so the last steps' results are not to be trusted";
  if (give_up) give_up();
  throw RuntimeFailure(s.str());
}

bool idle_within(std::size_t devices, const std::function<bool(std::size_t)>& idle,
                 std::chrono::duration<double> grace) noexcept {
  auto const start = std::chrono::steady_clock::now();
  for (;;) {
    bool all = true;
    for (std::size_t d = 0; d < devices; ++d) {
      try {
        all = idle(d) && all;  // every device, so that each failure is seen
      } catch (...) {
      }
    }
    if (all) return true;
    if (std::chrono::steady_clock::now() - start >= grace) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace nbody::multigpu
