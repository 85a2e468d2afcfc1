// sim/physics/integrator.h - integrators as short programs of kick / damp / drift / forces stages,
// and the grammar every such program obeys.
//
// An integrator does not touch memory itself: it says which stages make one step, and every
// backend (CPU, one GPU, many GPUs under either scheduler) runs the same program on its slice.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "core/enum_names.h"
#include "sim/physics/hermite_step.h"

namespace nbody::sim {

enum class StageKind {
  kick,    // v += a * value
  damp,    // v *= value, value in (0, 1]
  drift,   // x += v * value; publishes a new version of the positions (the own slice goes to peers)
  forces,  // acquires every slice of the latest publication, then a = accelerations of those positions
};

// The step contract. A step program is
//
//     step   := update* (drift update* forces update*)+        update := kick | damp
//
// 1. Drift and forces alternate, beginning with a drift and ending with a forces stage. Each drift
//    makes a publication: the engine writes the new positions into its other buffer, the exchange
//    copies the own slice into that buffer on every peer. The forces stage that follows waits for
//    every peer's slice of that publication, swaps buffers and evaluates the accelerations. A
//    second drift before it would read the old positions and overwrite the first; a forces stage
//    with no drift before it would swap to a stale buffer.
// 2. The last drift is followed by a forces stage, so at every step boundary the accelerations
//    belong to the current positions (backends compute them once at the start) and the next
//    step's first kick uses them.
// 3. Kick and drift values are finite times (they may be negative: the middle substep of a
//    fourth-order composition moves backwards); damp factors are in (0, 1].
// Publications are counted from the last upload, not steps: publication p lives in position buffer
// p % 2 on every device, so a program with several drift/forces pairs per step is correct on any
// layout.
struct Stage {
  StageKind kind;
  double value = 0.0;
};

struct StepProgram {
  std::string integrator;
  double dt = 0.0;  // hermite4: dt_max (each body chooses its own step)
  std::vector<Stage> stages;
  // Set for hermite4: block steps with individual time steps (multigpu/hermite_blocks.h), no stages.
  std::optional<hermite::HermiteParams> hermite{};

  // Drift stages per step: publications (and force evaluations) per step.
  int drifts() const;
};

// Throws InputError naming the program, the stage and the rule it breaks.
void validate(const StepProgram& program);

inline constexpr std::array<EnumName<StageKind>, 4> kStageKindNames{{{StageKind::kick, "kick"},
                                                                     {StageKind::damp, "damp"},
                                                                     {StageKind::drift, "drift"},
                                                                     {StageKind::forces, "forces"}}};
constexpr const auto& enum_names(StageKind) { return kStageKindNames; }

enum class Integrator { leapfrog, yoshida4, omelyan4, euler_damped, hermite4 };
inline constexpr std::array<EnumName<Integrator>, 5> kIntegratorNames{{{Integrator::leapfrog, "leapfrog"},
                                                                       {Integrator::yoshida4, "yoshida4"},
                                                                       {Integrator::omelyan4, "omelyan4"},
                                                                       {Integrator::euler_damped, "euler-damped"},
                                                                       {Integrator::hermite4, "hermite4"}}};
constexpr const auto& enum_names(Integrator) { return kIntegratorNames; }

struct IntegratorParams {
  IntegratorParams() = default;
  // {integrator, dt, damping} as before hermite4's settings came, which then keep their defaults.
  IntegratorParams(Integrator integrator_, double dt_ = 0.0, double damping_ = 0.995,
                   const hermite::HermiteParams& hermite_ = {})
      : integrator(integrator_), dt(dt_), damping(damping_), hermite(hermite_) {}
  Integrator integrator = Integrator::leapfrog;
  double dt = 0.0;          // 0: the integrator's default (see default_dt); hermite4: must be 0 (see dt_max)
  double damping = 0.995;   // euler-damped only: velocity factor per step, in (0, 1]
  hermite::HermiteParams hermite;  // hermite4 only: eta, eta_start, dt_max (core/bounds.h)
};

double default_dt(Integrator integrator);

// Why `p` cannot be hermite4's settings (one line naming the option, the value and the range), or "".
std::string hermite_problem(const hermite::HermiteParams& p);

// leapfrog: kick-drift-kick (second order, symplectic):  K(dt/2) D(dt) F K(dt/2).
// yoshida4: three leapfrog substeps of w1 dt, w0 dt, w1 dt with w1 = 1 / (2 - 2^(1/3)),
//   w0 = 1 - 2 w1 (Yoshida 1990, Phys. Lett. A 150, 262; fourth order, symplectic), the kicks
//   between substeps merged: three drifts and three force evaluations per step.
// omelyan4: the optimised four-stage, fourth-order composition of Omelyan, Mryglod & Folk 2002
//   (Comput. Phys. Commun. 146, 188; their PEFRL coefficients xi, lambda, chi), with kicks and drifts
//   exchanged so that it begins and ends with a kick, whose forces the steps share:
//   K(xi) D((1-2 lambda)/2) F K(chi) D(lambda) F K(1-2(chi+xi)) D(lambda) F K(chi) D((1-2 lambda)/2) F K(xi),
//   in units of dt. Four force evaluations a step; at equal evaluations its energy error is 3-8
//   times smaller than REBOUND's order-4 leapfrog and 12-14 times smaller than yoshida4's (Kepler
//   orbits with e = 0.5 and 0.9, a hierarchical triple: tests/test_physics.cpp).
// euler-damped (the classic demo: v += a dt; v *= damping; x += v dt): K(dt) damp D(dt) F.
// hermite4: 4th-order Hermite with individual block steps (Makino & Aarseth 1992; sim/physics/hermite_step.h):
//   no stages; program.hermite holds its settings and program.dt its dt_max. InputError for a given dt or a
//   setting out of its bounds (core/bounds.h).
// The result is validated. Throws InputError for a non-positive dt or a damping out of range.
StepProgram make_step_program(const IntegratorParams& params);

}  // namespace nbody::sim
