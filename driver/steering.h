// driver/steering.h - a running simulation changed between two steps, the same way for every front
// end (the viewer's live simulation, Python): its settings (dt, softening, integrator, devices,
// threading) or its bodies, with the state and the clock kept bit for bit; and a run that starts
// from bodies a front end made itself.
#pragma once

#include <string>
#include <vector>

#include "driver/config.h"
#include "driver/setup.h"
#include "multigpu/simulation.h"
#include "sim/physics/body_set.h"

namespace nbody::driver {

// Why `bodies` cannot start a run, or "": no bodies or more than kMaxBodies, a mass, position or velocity the
// readers of bodies refuse (core/bounds.h: body_value_problem; the first bad body and field are named).
std::string bodies_problem(const sim::BodySet& bodies);

// A run from `bodies` at step 0 of their time, with `run`'s physics and devices (the softening,
// when none is named, 0.01 as for a snapshot, whose model is unknown). `source` says where the
// bodies came from; checkpoints record it as the initial conditions. Throws InputError for bad
// bodies (bodies_problem) or settings.
Setup setup_from_bodies(const RunConfig& run, sim::BodySet bodies, const std::string& source);

// The setup that continues `simulation` with `run`'s physics and devices: its current state and
// clock (a new dt goes on from the time reached), a new step program and device configuration, the
// origin (`current`'s source, scenario, seed) kept. Nothing is changed when it throws (InputError for
// settings that cannot be used). With several ranks every rank calls it, and a refusal is every
// rank's (agree()). Notices go to `notices` when given.
Setup with_settings(const Setup& current, multigpu::Simulation& simulation, const RunConfig& run,
                    std::vector<std::string>* notices = nullptr);

}  // namespace nbody::driver
