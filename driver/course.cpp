// driver/course.cpp - a run's course (driver/course.h).
#include "driver/course.h"

#include <cstdio>

#include "core/enum_names.h"
#include "core/fnv1a.h"
#include "driver/benchmark.h"
#include "sim/physics/hermite_step.h"

namespace nbody::driver {
namespace {

// A number exactly: its shortest decimal form may read back as the same double from two others.
std::string exact(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%a", v);
  return buf;
}

void hash_bodies(Fnv1a& h, const sim::BodySet& bodies) {
  h.value(std::uint64_t(bodies.size()));
  h.bytes(bodies.pos_mass.data(), bodies.pos_mass.size() * sizeof(bodies.pos_mass[0]));
  h.bytes(bodies.velocity.data(), bodies.velocity.size() * sizeof(bodies.velocity[0]));
  h.value(bodies.time);
}

}  // namespace

std::string course_settings(const sim::StepProgram& program, double softening, Precision precision, double damping,
                            bool first_steps) {
  std::string s = "integrator=" + program.integrator;
  if (program.hermite) {
    sim::hermite::HermiteParams const& p = *program.hermite;
    s += " eta=" + exact(p.eta) + " longest=" + exact(sim::hermite::pow2_at_most(p.dt_max)) +
         " floor=" + exact(p.dt_min);
    if (first_steps) s += " eta_start=" + exact(p.eta_start);
  } else {
    s += " dt=" + exact(program.dt);
  }
  s += " softening=" + exact(softening) + " precision=" + name_of(precision);
  if (program.integrator == name_of(sim::Integrator::euler_damped)) s += " damping=" + exact(damping);
  return s;
}

std::string new_course(const sim::BodySet& bodies, const sim::StepProgram& program, double softening,
                       Precision precision, double damping) {
  Fnv1a h;
  h.text("nbody course");
  hash_bodies(h, bodies);
  h.text(course_settings(program, softening, precision, damping, true));
  return state_hash_text(h.get());
}

std::string branch_course(const std::string& parent, std::uint64_t step, const std::string& settings,
                          const sim::BodySet* bodies) {
  Fnv1a h;
  h.text("nbody branch");
  h.text(parent);
  h.value(step);
  h.text(settings);
  if (bodies) hash_bodies(h, *bodies);
  return state_hash_text(h.get());
}

std::string course_of(const sim::RunRecord& saved) {
  if (!saved.course.empty()) return saved.course;
  Fnv1a h;
  // What stays the same along its run (not the step, nor hermite4's DtSince*, which move with it), so that every
  // checkpoint of one such run gives one course.
  h.text("nbody record");
  h.value(saved.start_time);
  h.text(saved.integrator);
  h.value(saved.dt);
  h.value(saved.softening);
  h.text(name_of(saved.precision));
  h.text(saved.scenario);
  h.value(saved.seed);
  if (saved.hermite) {
    h.value(saved.hermite->eta);
    h.value(saved.hermite->dt_max);
  }
  return state_hash_text(h.get());
}

}  // namespace nbody::driver
