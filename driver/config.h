// driver/config.h - a run described in types: what to simulate, with which physics, on which
// devices. Front ends (the nbody command line, the viewer, tests, a future Python module) fill it
// in; driver/setup.h turns it into bodies, a step program and a simulation configuration.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/enum_names.h"
#include "core/precision.h"
#include "core/setting_names.h"
#include "multigpu/exchange.h"
#include "multigpu/scheduler.h"
#include "multigpu/simulation.h"
#include "sim/engines/engine.h"
#include "sim/io/units.h"
#include "sim/physics/integrator.h"
#include "sim/physics/scenarios.h"

namespace nbody::driver {

// The backend a user asks for: auto uses the GPUs and falls back to the CPU with a notice.
enum class BackendChoice { automatic, cuda, cpu };
inline constexpr std::array<EnumName<BackendChoice>, 3> kBackendChoiceNames{
    {{BackendChoice::automatic, "auto"}, {BackendChoice::cuda, "cuda"}, {BackendChoice::cpu, "cpu"}}};
constexpr const auto& enum_names(BackendChoice) { return kBackendChoiceNames; }

// What to simulate: a seeded scenario, or the bodies of a snapshot file.
struct InitialConditions {
  sim::Scenario scenario = sim::Scenario::plummer;
  std::size_t bodies = 0;    // 0: the scenario's default (16384; 2 for two-body), or the file's count
  std::uint64_t seed = 42;
  double eccentricity = 0.5;  // two-body only
  std::string snapshot;      // a tipsy file to start from instead of the scenario
  std::string checkpoint;    // a checkpoint to continue (--restart): bodies, clock and settings
  // What the snapshot holds that nbody does not keep, which a save over it would lose ("its gas's density, temperature
  // and metals"): set by the setup that read it (make_setup); "" where it holds nothing else, or is not read yet.
  std::string unkept;
};

struct PhysicsChoice {
  sim::Integrator integrator = sim::Integrator::leapfrog;
  double dt = 0.0;           // 0: the integrator's default (hermite4: none may be given; see hermite.dt_max)
  double damping = 0.995;    // euler-damped only
  // 0: the scenario's recommended softening (0.01 for a snapshot), unless given (GivenSettings): hermite4
  // takes a given 0 (no softening, no regularisation).
  double softening = 0.0;
  sim::hermite::HermiteParams hermite{};  // hermite4 only: --eta, --eta-start, --dt-max
};

// The integrator's parameters as the step program takes them (sim::make_step_program).
inline sim::IntegratorParams integrator_params(const PhysicsChoice& p) {
  return {p.integrator, p.dt, p.damping, p.hermite};
}

struct DeviceChoice {
  BackendChoice backend = BackendChoice::automatic;
  int count = 0;                     // 0: every visible GPU (CUDA) or one host device (CPU)
  std::vector<int> gpus;             // explicit CUDA ordinals (instead of count)
  std::vector<double> weights;       // relative slice sizes, one per device; empty: equal
  multigpu::Threading threading = multigpu::Threading::single;
  multigpu::Launch launch = multigpu::Launch::stream;
  multigpu::ExchangeMode exchange = multigpu::ExchangeMode::automatic;
  // Precision, kernel, launch shape, CPU threads in all: passed whole to the simulation and its engines.
  sim::EngineSettings engine;
  const Ranks* ranks = nullptr;      // the processes the run spans (each its own devices); null: world()
};

// The settings a user named explicitly. Continuing a checkpoint restores every other one from it; a
// named one overrides the checkpoint's, with a notice.
struct GivenSettings {
  bool integrator = false, dt = false, damping = false, softening = false, precision = false, units = false;
  bool eta = false, eta_start = false, dt_max = false;  // hermite4's
  bool seed = false;  // a restart refuses one that is not the file's (its bodies were made with that)
};

// How the library's messages name a setting (core/setting_names.h): the command line's options or Python's keywords.
using nbody::SettingNames;

struct RunConfig {
  InitialConditions initial;
  PhysicsChoice physics;
  DeviceChoice devices;
  GivenSettings given;
  sim::Units units;  // what the files call one unit of mass and length (sim::parse_units); the run stays G = 1
  SettingNames names;  // how messages name the settings: the command line's options, or Python's keywords
};

// The softening a run uses: the one asked for, else the scenario's recommended one (0.01 for a
// snapshot, whose model is unknown).
double resolved_softening(const RunConfig& config);

}  // namespace nbody::driver
