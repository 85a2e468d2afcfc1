// multigpu/watchdog.h - the bound on every host wait for devices: how long the steps enqueued
// should take, and what to do when a device has not finished by then.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace nbody::multigpu {

// Default margin: a wait may last the time its steps should take plus
// max(kWatchdogFloorSeconds, kWatchdogStepMultiple x the median step time seen so far).
inline constexpr double kWatchdogFloorSeconds = 60.0;
inline constexpr double kWatchdogStepMultiple = 100.0;

// The margin a run asked for: `configured` if > 0 (SimulationConfig::watchdog_seconds), else
// NBODY_WATCHDOG_SECONDS from the environment, else 0 (the default rule). InputError for a value
// that is not a positive number of seconds, naming it.
double watchdog_seconds(double configured);

// Steps go out (enqueued) and come back (finished: every device idle); their mean time is one
// sample of the step time. A wait that outlasts deadline() throws RuntimeFailure naming each
// device still busy and the steps it was given, after give_up() (which lets go of the waits on
// the GPUs, so the process can end).
// After a wait gave up: polls idle(d) of devices 0..devices-1 (one whose idle() throws has failed and counts as
// done) for `grace` at most; true once every one is idle. The caller abandons the devices otherwise, so that
// freeing them does not wait for their queued work.
bool idle_within(std::size_t devices, const std::function<bool(std::size_t)>& idle,
                 std::chrono::duration<double> grace) noexcept;

class Watchdog {
 public:
  using Clock = std::chrono::steady_clock;

  // `margin_seconds` > 0 fixes the margin; 0 takes the default rule.
  explicit Watchdog(double margin_seconds = 0.0);

  // Before any step has finished: a generous guess of one step's time (the simulation takes its
  // first force pass, at upload).
  void set_step_estimate(double seconds) { estimate_ = seconds; }
  // Steps [first, first + count) were enqueued (call before enqueuing). The clock starts when
  // nothing was pending.
  void enqueued(std::uint64_t first, std::uint64_t count);
  // Every device is idle: the steps pending since the clock started make one sample.
  void finished();
  bool pending() const { return pending_steps_ > 0; }

  double median_step_seconds() const;  // of the samples so far; the estimate before any
  double margin_seconds() const;       // the fixed margin, or max(60 s, 100 x median step)
  Clock::time_point deadline() const;  // when the pending steps are overdue

  // Polls until every device 0..devices-1 is idle(d), calling poll() between rounds (it may throw,
  // e.g. Interrupted). On expiry: give_up(), then RuntimeFailure naming name(d) of each busy device.
  void wait(std::size_t devices, const std::function<bool(std::size_t)>& idle,
            const std::function<std::string(std::size_t)>& name, const std::function<void()>& give_up,
            const std::function<void()>& poll = {});
  // For a caller that polls on its own: whether the pending steps are overdue, and then what
  // wait() does on expiry, for the devices named in `busy_names`.
  bool overdue() const { return pending() && Clock::now() > deadline(); }
  [[noreturn]] void expire(const std::vector<std::string>& busy_names, const std::function<void()>& give_up) const;

 private:
  static constexpr std::size_t kSamples = 64;  // the latest ones
  double fixed_margin_ = 0.0;
  double estimate_ = 0.0;
  std::vector<double> samples_;  // a ring of kSamples, reserved up front
  std::size_t next_sample_ = 0;
  Clock::time_point started_{};
  std::uint64_t pending_first_ = 0, pending_steps_ = 0;
};

}  // namespace nbody::multigpu
