// sim/physics/integrator.cpp - the step programs of the integrators.
#include "sim/physics/integrator.h"

#include <cmath>
#include <sstream>

#include "core/errors.h"

namespace nbody::sim {

const std::vector<std::string>& integrator_names() {
  static const std::vector<std::string> names{"leapfrog", "euler-damped"};
  return names;
}

double default_dt(const std::string& integrator) { return integrator == "euler-damped" ? 0.016 : 0.01; }

StepProgram make_step_program(const IntegratorParams& params) {
  double const dt = params.dt == 0.0 ? default_dt(params.name) : params.dt;
  if (!(dt > 0.0) || !std::isfinite(dt)) {
    std::ostringstream s;
    s << "--dt " << params.dt << ": must be a positive number";
    throw InputError(s.str());
  }
  StepProgram p{params.name, dt, {}};
  if (params.name == "leapfrog") {
    p.stages = {{StageKind::kick, 0.5 * dt}, {StageKind::drift, dt}, {StageKind::forces}, {StageKind::kick, 0.5 * dt}};
  } else if (params.name == "euler-damped") {
    if (!(params.damping > 0.0 && params.damping <= 1.0)) {
      std::ostringstream s;
      s << "--damping " << params.damping << ": must be in (0, 1]";
      throw InputError(s.str());
    }
    p.stages = {{StageKind::kick, dt}, {StageKind::damp, params.damping}, {StageKind::drift, dt}, {StageKind::forces}};
  } else {
    std::string valid;
    for (auto const& n : integrator_names()) valid += (valid.empty() ? "" : ", ") + n;
    throw InputError("unknown integrator '" + params.name + "'; valid: " + valid);
  }
  return p;
}

}  // namespace nbody::sim
