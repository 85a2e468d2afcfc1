// sim/physics/scenarios.h - seeded initial conditions, chosen by name.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/physics/body_set.h"

namespace nbody::sim {

struct ScenarioParams {
  std::string name = "plummer";
  std::size_t bodies = 16384;
  std::uint64_t seed = 42;     // fixed default: two runs with the same options are identical
  double eccentricity = 0.5;   // two-body only, in [0, 1)
};

// Names accepted by make_scenario, in the order --help lists them.
const std::vector<std::string>& scenario_names();

// The softening a scenario's model is built for: the disk model's velocity field assumes a 0.05
// core around its central mass (disk, collision); 0.01 for the rest.
double recommended_softening(const std::string& scenario);

// Builds the named scenario with its centre of mass at rest at the origin. Throws InputError
// naming the bad value for an unknown name or an invalid size/parameter.
BodySet make_scenario(const ScenarioParams& params);

}  // namespace nbody::sim
