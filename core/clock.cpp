// core/clock.cpp - a GPU event's time as the clock gave it.
#include "core/clock.h"

#include <charconv>

namespace nbody {

double event_milliseconds(float ms) {
  char text[32];
  // The shortest decimal that reads back as `ms`, read as a double; both in the "C" notation whatever the process's
  // locale (strtod would stop at the point where the locale's decimal is a comma).
  auto const end = std::to_chars(text, text + sizeof text, ms).ptr;
  double value = 0.0;
  std::from_chars(text, end, value);
  return value;
}

}  // namespace nbody
