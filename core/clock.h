// core/clock.h - the one clock nbody times itself with (wall time, monotonic).
#pragma once

#include <chrono>
#include <string>

namespace nbody {

using Clock = std::chrono::steady_clock;

// Seconds from `start` to now.
inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// A GPU event's milliseconds (cudaEventElapsedTime gives a float) as the double nearest the float's shortest decimal:
// 0.010176, not 0.0101760001853, the float's own binary digits, which no event resolves.
double event_milliseconds(float ms);

// A bound in seconds from the environment variable `name` (NBODY_RANK_TIMEOUT, NBODY_WATCHDOG_SECONDS), or `fallback`
// where it is unset or empty. InputError "NAME=VALUE: must be a number of seconds above 0 and at most 1e9 (`what`)"
// for any other value: a bound past 1e9 s (31 years) is no bound, and would overflow a clock's time point.
double seconds_from_environment(const char* name, double fallback, const std::string& what);

}  // namespace nbody
