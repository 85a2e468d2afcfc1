// tests/engine_support.h - building one engine's configuration in the engine tests.
#pragma once

#include "sim/engines/engine.h"
#include "sim/physics/body_set.h"

namespace nbody::test {

// An engine configuration for b's bodies computing `slice` (all bodies if empty).
inline sim::EngineConfig engine_config(const sim::BodySet& b, Precision precision, sim::Kernel kernel,
                                       double softening, Slice slice = {0, 0}) {
  sim::EngineConfig c;
  c.bodies = b.size();
  c.slice = slice.count ? slice : Slice{0, b.size()};
  c.softening = softening;
  c.engine.precision = precision;
  c.engine.kernel = kernel;
  return c;
}

}  // namespace nbody::test
