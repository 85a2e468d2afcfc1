// sim/physics/scenarios.h - seeded initial conditions, chosen by name.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <stdexcept>

#include "core/enum_names.h"
#include "core/setting_names.h"
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

// Thrown by make_scenario when `cancel` was raised part-way: the bodies made so far are dropped.
struct GenerationCancelled : std::runtime_error {
  GenerationCancelled() : std::runtime_error("the generation of the bodies was cancelled") {}
};

// Bodies made between two looks at the interrupt flag and `cancel`: a few milliseconds of work
// (2,000,000 bodies take about 1.5 s), so a quit or a new run waits no longer than that.
inline constexpr std::size_t kScenarioCheckEvery = 8192;

// Throws InputError naming the bad value for an invalid size or parameter of the scenario (as `names` name them):
// make_scenario's checks, before any body is made.
void check_scenario(const ScenarioParams& params, const SettingNames& names = {});

// Builds the scenario with its centre of mass at rest at the origin. Throws InputError naming the
// bad value for an invalid size or parameter (check_scenario). Every kScenarioCheckEvery bodies it stops for a
// signal (Interrupted, core/interrupt.h) or a raised `cancel` (GenerationCancelled; null: never).
// The looks consume no random numbers: the bodies are the same, bit for bit, with or without them.
BodySet make_scenario(const ScenarioParams& params, const std::atomic<bool>* cancel = nullptr,
                      const SettingNames& names = {});

}  // namespace nbody::sim
