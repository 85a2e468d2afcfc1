// core/clock.h - the one clock nbody times itself with (wall time, monotonic).
#pragma once

#include <chrono>

namespace nbody {

using Clock = std::chrono::steady_clock;

// Seconds from `start` to now.
inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace nbody
