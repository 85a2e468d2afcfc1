// driver/steering.cpp - settings and bodies changed between steps; runs from a front end's bodies.
#include "driver/steering.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <utility>

#include "core/bounds.h"
#include "core/errors.h"
#include "core/ranks.h"
#include "driver/checkpoints.h"
#include "driver/course.h"

namespace nbody::driver {
namespace {
std::string number_text(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}
}  // namespace

std::string bodies_problem(const sim::BodySet& b) {
  std::ostringstream s;
  if (b.size() == 0) return "no bodies; give at least 1";
  if (b.size() > kMaxBodies) {
    s << b.size() << " bodies: at most " << kMaxBodies;
    return s.str();
  }
  if (b.velocity.size() != b.size() || b.type.size() != b.size()) return "positions, velocities and types differ in count";
  // The rule every reader of bodies applies (core/bounds.h): beyond kMaxBodyMagnitude an fp32 run's squared
  // differences overflow (and an fp64 run's energy is no number).
  for (std::size_t i = 0; i < b.size(); ++i) {
    auto const& p = b.pos_mass[i];
    auto const& v = b.velocity[i];
    double const values[7] = {p.w, p.x, p.y, p.z, v.x, v.y, v.z};
    for (std::size_t c = 0; c < 7; ++c)
      if (auto const why = body_value_problem(kBodyFields[c], values[c], c == 0); !why.empty())
        return "body " + std::to_string(i) + ": " + why;
  }
  if (auto const why = time_problem(b.time); !why.empty()) return "the time " + shortest(b.time) + " is " + why;
  return {};
}

Setup setup_from_bodies(const RunConfig& requested, sim::BodySet bodies, const std::string& source) {
  if (auto const why = bodies_problem(bodies); !why.empty()) throw InputError(source + ": " + why);
  RunConfig run = requested;
  // 0 named is hermite4's "no softening" (refused for the other integrators); 0 not named is "none chosen".
  if (run.physics.softening == 0 && !run.given.softening) run.physics.softening = 0.01;
  check_integrator_options(run);  // the settings that mean nothing to the integrator, as every other start refuses
  Setup s;
  s.program = sim::make_step_program(integrator_params(run.physics));
  s.config = resolve_devices(run, bodies.size(), &s.notices);
  check_no_shared_positions(bodies, run.physics.softening, source, run.names);
  check_time_resolution(bodies.time, s.program, source, run.names);
  if (std::string const notice = massless_notice(bodies, source); !notice.empty()) s.notices.push_back(notice);
  s.clock = {0, bodies.time};
  s.course = new_course(bodies, s.program, run.physics.softening, run.devices.engine.precision, run.physics.damping);
  s.bodies = std::move(bodies);
  if (std::string const notice = dt_max_notice(run); !notice.empty()) s.notices.push_back(notice);
  if (std::string const notice = eta_notice(run); !notice.empty()) s.notices.push_back(notice);
  s.source = source;
  s.scenario = source;
  s.damping = run.physics.damping;
  s.units = run.units;
  s.run = run;
  return s;
}

Setup with_settings(const Setup& current, multigpu::Simulation& simulation, const RunConfig& run,
                    std::vector<std::string>* notices) {
  Setup s = current;
  s.notices.clear();
  std::vector<std::string> device_notices;
  agree(simulation.ranks(), [&] {
    s.program = sim::make_step_program(integrator_params(run.physics));
    s.config = resolve_devices(run, simulation.bodies(), &device_notices);
  });
  // The device choice's notices (the CPU fallback, GPUs shared between ranks) were said when it was made: again only
  // where this change makes another choice, not at every change of dt.
  if (notices && (s.config.backend != simulation.config().backend || s.config.devices != simulation.config().devices))
    notices->insert(notices->end(), device_notices.begin(), device_notices.end());
  s.damping = run.physics.damping;
  s.bodies = simulation.state();
  agree(simulation.ranks(), [&] {
    check_time_resolution(s.bodies.time, s.program, "the state at step " + std::to_string(simulation.steps_done()),
                          run.names);
  });
  if (s.config.softening != simulation.config().softening)
    agree(simulation.ranks(), [&] {
      check_no_shared_positions(s.bodies, s.config.softening,
                                "the state at step " + std::to_string(simulation.steps_done()), run.names);
    });
  // hermite4 on hermite4: each body goes on from its own time and Hermite state (not current's, a start's), where
  // hermite_state_goes_on says so; from another integrator every body starts as at t = 0. Collective, as this
  // function is.
  bool const softening_changed = s.config.softening != simulation.config().softening;
  sim::hermite::HermiteState state = simulation.block_steps() ? hermite_state_of(simulation) : sim::hermite::HermiteState{};
  bool const goes_on = s.program.hermite && hermite_state_goes_on(state, simulation.config().softening,
                                                                  s.config.softening, simulation.program().hermite,
                                                                  *s.program.hermite);
  // A state that stopped at the floor and starts again under other step settings: said, as a new softening is.
  std::string const floor_notice = s.program.hermite && !goes_on && !softening_changed
                                       ? floor_restart_notice(state, s.bodies.time, "the simulation", *s.program.hermite)
                                       : std::string();
  continue_hermite(s, goes_on ? std::move(state) : sim::hermite::HermiteState{});
  if (s.program.hermite && simulation.block_steps() && softening_changed && notices)
    notices->push_back("hermite4 starts every body again at time " + number_text(s.bodies.time) +
                       ": its accelerations and jerks were of the softening " +
                       number_text(simulation.config().softening));
  if (!floor_notice.empty() && notices) notices->push_back(floor_notice);
  // Another softening is another potential: the energy error is measured from here on.
  if (softening_changed) {
    s.initial_energy.reset();
    if (notices) notices->push_back("the energy error is measured from here: another softening is another potential");
  }
  // A setting of the run's course changed here: the run branches at this step (Setup::course_changed), and stays a
  // branch of the run its checkpoint continued. Only a setting that decides the trajectory counts (course_settings):
  // eta_start where every body goes on from its own step, or a dt_max of the same power of two, changes none.
  std::uint64_t const step = simulation.steps_done();
  std::string const settings =
      course_settings(s.program, s.config.softening, s.config.engine.precision, s.damping, !goes_on);
  std::string const was = course_settings(simulation.program(), simulation.config().softening,
                                          simulation.config().engine.precision, current.damping, !goes_on);
  if (current.branched && current.branched->step == step) {
    // Another change at the step where the course branched is measured from the course it left: back to its
    // settings (where hermite4's bodies go on from their own steps, as there), back to that course.
    Setup::CourseBranch const& b = *current.branched;
    if (settings == b.settings && (!s.program.hermite || goes_on)) {
      s.course = b.parent;
      s.course_changed = b.parent_changed;
      s.course_from = b.parent_from;
      s.branched.reset();
    } else if (settings != was) {
      s.course = branch_course(b.parent, step, settings);
    }
  } else if (settings != was) {
    s.branched = Setup::CourseBranch{current.course, step, was, current.course_changed, current.course_from};
    s.course = branch_course(current.course, step, settings);
    s.course_changed = true;
    s.course_from = step;
  }
  s.clock = simulation.clock();
  if (s.program.dt != simulation.program().dt) s.clock = s.clock.with_new_dt(simulation.program().dt);
  // The files' units (what they call one unit of mass and length; the run stays G = 1): new ones relabel the
  // outputs from here on.
  if (run.given.units && !(run.units == current.units)) {
    if (notices)
      notices->push_back("the files' units are now " + run.units.describe() + " (were " + current.units.describe() +
                         "): the outputs from here on say so");
    s.units = run.units;
  }
  s.run = run;
  return s;
}

}  // namespace nbody::driver
