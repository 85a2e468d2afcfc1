// sim/physics/scenarios.h - seeded initial conditions, chosen by name.
#pragma once

#include <array>
#include <cstdint>

#include "core/enum_names.h"
#include "sim/physics/body_set.h"

namespace nbody::sim {

// plummer: Aarseth, Henon & Wielen 1974, Henon units. random-sphere: a uniform ball in virial
// equilibrium. disk: a rotating disk around a central mass. collision: two such disks. two-body:
// a Kepler binary of the given eccentricity, starting at apocentre.
enum class Scenario { plummer, random_sphere, disk, collision, two_body };
inline constexpr std::array<EnumName<Scenario>, 5> kScenarioNames{{{Scenario::plummer, "plummer"},
                                                                   {Scenario::random_sphere, "random-sphere"},
                                                                   {Scenario::disk, "disk"},
                                                                   {Scenario::collision, "collision"},
                                                                   {Scenario::two_body, "two-body"}}};
constexpr const auto& enum_names(Scenario) { return kScenarioNames; }

// The Plummer sphere's bodies lie inside the radius that holds this fraction of its mass (38.7 scale
// lengths): the far tail is cut, as NEMO's mkplummer and Starlab do.
inline constexpr double kPlummerMassCut = 0.999;

struct ScenarioParams {
  Scenario scenario = Scenario::plummer;
  std::size_t bodies = 16384;
  std::uint64_t seed = 42;     // fixed default: two runs with the same options are identical
  double eccentricity = 0.5;   // two-body only, in [0, 1)
};

// The softening a scenario's model is built for: the disk model's velocity field assumes a 0.05
// core around its central mass (disk, collision); 0.01 for the rest.
double recommended_softening(Scenario scenario);

// Bodies when the user names none: 16384, or 2 for two-body.
std::size_t default_bodies(Scenario scenario);

// Builds the scenario with its centre of mass at rest at the origin. Throws InputError naming the
// bad value for an invalid size or parameter.
BodySet make_scenario(const ScenarioParams& params);

}  // namespace nbody::sim
