// core/clock.cpp - a GPU event's time as the clock gave it.
#include "core/clock.h"

#include <charconv>
#include <cstdlib>

namespace nbody {

double event_milliseconds(float ms) {
  char text[32];
  auto const end = std::to_chars(text, text + sizeof text - 1, ms).ptr;  // the shortest that reads back as `ms`
  *end = '\0';
  return std::strtod(text, nullptr);
}

}  // namespace nbody
