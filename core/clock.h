// core/clock.h - the one clock nbody times itself with (wall time, monotonic).
#pragma once

#include <chrono>

namespace nbody {

using Clock = std::chrono::steady_clock;

// Seconds from `start` to now.
inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// A GPU event's milliseconds (cudaEventElapsedTime gives a float) as the double nearest the float's shortest decimal:
// 0.010176, not 0.0101760001853, the float's own binary digits, which no event resolves.
double event_milliseconds(float ms);

}  // namespace nbody
