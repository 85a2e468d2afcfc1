// sim/physics/integrator.h - integrators as short programs of kick / drift / force stages.
//
// An integrator does not touch memory itself: it says which stages make one step, and every
// backend (CPU, one GPU, many GPUs under either scheduler) runs the same program on its slice.
// Invariant at every step boundary: the accelerations are those of the current positions
// (backends compute them once at start), so both programs below end with a force stage.
#pragma once

#include <string>
#include <vector>

namespace nbody::sim {

enum class StageKind {
  kick,    // v += a * value
  damp,    // v *= value
  drift,   // x += v * value; the new positions of the own slice are published to peers
  forces,  // wait for the peers' new positions, then a = accelerations of the own slice
};

struct Stage {
  StageKind kind;
  double value = 0.0;
};

struct StepProgram {
  std::string integrator;
  double dt = 0.0;
  std::vector<Stage> stages;
};

struct IntegratorParams {
  std::string name = "leapfrog";
  double dt = 0.0;          // 0: the integrator's default (see default_dt)
  double damping = 0.995;   // euler-damped only: velocity factor per step, in (0, 1]
};

const std::vector<std::string>& integrator_names();
double default_dt(const std::string& integrator);

// Kick-drift-kick leapfrog (second order, symplectic):  K(dt/2) D(dt) F K(dt/2).
// euler-damped (the classic demo: v += a dt; v *= damping; x += v dt): K(dt) damp D(dt) F.
// Throws InputError for an unknown name or a non-positive dt / damping out of range.
StepProgram make_step_program(const IntegratorParams& params);

}  // namespace nbody::sim
