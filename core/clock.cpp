// core/clock.cpp - a GPU event's time as the clock gave it.
#include "core/clock.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

#include "core/errors.h"

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

double seconds_from_environment(const char* name, double fallback, const std::string& what) {
  char const* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  double const seconds = std::strtod(v, &end);
  if (end == v || *end != '\0' || !std::isfinite(seconds) || seconds <= 0 || seconds > 1e9)
    throw InputError(std::string(name) + "=" + v + ": must be a number of seconds above 0 and at most 1e9 (" + what +
                     ")");
  return seconds;
}

}  // namespace nbody
