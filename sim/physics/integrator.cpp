// sim/physics/integrator.cpp - the step programs of the integrators, and the check of the grammar.
#include "sim/physics/integrator.h"

#include <cmath>
#include <sstream>

#include "core/bounds.h"
#include "core/errors.h"

namespace nbody::sim {

int StepProgram::drifts() const {
  int n = 0;
  for (auto const& s : stages) n += s.kind == StageKind::drift;
  return n;
}

void validate(const StepProgram& program) {
  if (program.hermite) {
    if (!program.stages.empty())
      throw InputError("step program '" + program.integrator + "': block steps have no stages");
    return;
  }
  auto fail = [&](std::size_t index, const std::string& rule) {
    std::ostringstream s;
    s << "step program '" << program.integrator << "'";
    if (index < program.stages.size()) s << ", stage " << index + 1 << " (" << name_of(program.stages[index].kind) << ")";
    s << ": " << rule;
    throw InputError(s.str());
  };
  bool drifted = false;  // a drift waits for its forces stage
  for (std::size_t k = 0; k < program.stages.size(); ++k) {
    Stage const& stage = program.stages[k];
    switch (stage.kind) {
      case StageKind::kick:
      case StageKind::drift:
        if (!std::isfinite(stage.value)) fail(k, "its time is not a finite number");
        if (stage.kind == StageKind::drift) {
          if (drifted) fail(k, "a second drift before the forces stage of the first; drift and forces must alternate");
          drifted = true;
        }
        break;
      case StageKind::damp:
        if (!(stage.value > 0.0 && stage.value <= 1.0)) fail(k, "a damping factor must be in (0, 1]");
        break;
      case StageKind::forces:
        if (!drifted) fail(k, "no drift since the last forces stage; a forces stage must follow a drift");
        drifted = false;
        break;
    }
  }
  if (program.drifts() == 0) fail(program.stages.size(), "no drift stage; a step is at least a drift and a forces stage");
  if (drifted)
    fail(program.stages.size(),
         "the last drift has no forces stage after it; the accelerations at the end of a step must belong to the "
         "current positions");
}

std::string hermite_problem(const hermite::HermiteParams& p) {
  if (auto why = eta_problem(p.eta, "--eta"); !why.empty()) return why;
  if (auto why = eta_problem(p.eta_start, "--eta-start"); !why.empty()) return why;
  return dt_max_problem(p.dt_max);
}

double default_dt(Integrator integrator) {
  if (integrator == Integrator::hermite4) return hermite::HermiteParams{}.dt_max;
  return integrator == Integrator::euler_damped ? 0.016 : 0.01;
}

StepProgram make_step_program(const IntegratorParams& params) {
  if (params.integrator == Integrator::hermite4) {
    if (params.dt != 0.0) {
      std::ostringstream s;
      s << "--dt " << params.dt << ": hermite4 chooses each body's step (a power of two up to --dt-max, from --eta)";
      throw InputError(s.str());
    }
    if (auto const why = hermite_problem(params.hermite); !why.empty()) throw InputError(why);
    StepProgram p{name_of(params.integrator), params.hermite.dt_max, {}};
    p.hermite = params.hermite;
    return p;
  }
  double const dt = params.dt == 0.0 ? default_dt(params.integrator) : params.dt;
  if (auto const why = dt_problem(dt); !why.empty()) {
    std::ostringstream s;
    s << "--dt " << params.dt << ": " << why;
    throw InputError(s.str());
  }
  StepProgram p{name_of(params.integrator), dt, {}};
  using K = StageKind;
  if (params.integrator == Integrator::leapfrog) {
    p.stages = {{K::kick, 0.5 * dt}, {K::drift, dt}, {K::forces}, {K::kick, 0.5 * dt}};
  } else if (params.integrator == Integrator::yoshida4) {
    double const w1 = 1.0 / (2.0 - std::cbrt(2.0)), w0 = 1.0 - 2.0 * w1;
    p.stages = {{K::kick, 0.5 * w1 * dt},        {K::drift, w1 * dt}, {K::forces},
                {K::kick, 0.5 * (w1 + w0) * dt}, {K::drift, w0 * dt}, {K::forces},
                {K::kick, 0.5 * (w0 + w1) * dt}, {K::drift, w1 * dt}, {K::forces},
                {K::kick, 0.5 * w1 * dt}};
  } else if (params.integrator == Integrator::omelyan4) {
    // PEFRL's coefficients (Omelyan, Mryglod & Folk 2002, eq. 20), with kicks and drifts exchanged:
    // the fourth-order conditions are the same either way, and this arrangement measured more
    // accurate here than their velocity version's own coefficients.
    double const xi = 0.1644986515575760, lambda = -0.02094333910398989, chi = 1.235692651138917;
    double const middle = 1.0 - 2.0 * (chi + xi), outer = 0.5 * (1.0 - 2.0 * lambda);
    p.stages = {{K::kick, xi * dt},     {K::drift, outer * dt},  {K::forces}, {K::kick, chi * dt},
                {K::drift, lambda * dt}, {K::forces},             {K::kick, middle * dt}, {K::drift, lambda * dt},
                {K::forces},             {K::kick, chi * dt},      {K::drift, outer * dt}, {K::forces},
                {K::kick, xi * dt}};
  } else {
    if (auto const why = damping_problem(params.damping); !why.empty()) {
      std::ostringstream s;
      s << "--damping " << params.damping << ": " << why;
      throw InputError(s.str());
    }
    p.stages = {{K::kick, dt}, {K::damp, params.damping}, {K::drift, dt}, {K::forces}};
  }
  validate(p);
  return p;
}

}  // namespace nbody::sim
