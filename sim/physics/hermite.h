// sim/physics/hermite.h - the host side of the Hermite block-step integrator: the per-body state a run carries
// (and a checkpoint stores), the checks of the settings, and the floor's error.
//
// The algorithm itself (predictor, corrector, steps) is sim/physics/hermite_step.h, shared with the GPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/real4.h"
#include "sim/physics/body_set.h"
#include "sim/physics/hermite_step.h"

namespace nbody::sim::hermite {

// Each body's Hermite state, all N bodies, fp64. `time` and `step` are block times (offsets from `epoch`,
// see hermite_step.h): body i was last corrected at epoch + time[i] and is next at epoch + time[i] + step[i].
// Empty vectors: not started (a scenario, a tipsy file, a leapfrog checkpoint): the run initialises every
// body as at its start (a force pass, the start step).
struct HermiteState {
  double epoch = 0.0;  // the simulation time at block time 0
  // A finish's state (multigpu::HermiteBlocks::finish_at): every body was brought to the epoch by a last step of its
  // own and keeps the step it held, so block time 0 is not a start here: the steps are the criterion's, not the
  // start's (stepped()).
  bool finished = false;
  std::vector<Vec3d> acceleration, jerk;
  std::vector<double> time, step;
  // Each body's position and velocity at its own time, for files (a checkpoint stores them beside the
  // synchronised state; a simulation takes them in its initial BodySet). Empty where not needed.
  std::vector<Vec3d> position, velocity;

  bool started() const { return !time.empty(); }
  // Whether the bodies' steps are the criterion's (a block step was made, or a finish kept them), not the start's.
  bool stepped() const { return started() && (finished || block_time() > 0.0); }
  // The block time the state is at: the latest body time (the bodies of the last block step); 0 before the first
  // block step (and when not started).
  double block_time() const;
  std::size_t size() const { return time.size(); }
  void resize(std::size_t n);
};

// Why `state` cannot continue `bodies` (sizes, non-finite values, a step that is not a positive power of two
// or a time that is not a multiple of it), or "". `what` names where it came from, for the message.
std::string state_problem(const HermiteState& state, std::size_t bodies, const std::string& what);

// The first body of `state` whose step is below the floor under `params` (that of a run that stopped there), or -1.
std::int64_t first_below_floor(const HermiteState& state, const HermiteParams& params);

// The counts a Hermite run reports (--json): over the bodies of one engine, or summed over all of them.
struct HermiteCounters {
  std::uint64_t block_steps = 0;        // block steps done (the single-device fast path counts them itself)
  std::uint64_t force_evaluations = 0;  // corrected bodies, summed over block steps
  std::uint64_t interactions = 0;       // force+jerk pair evaluations: active bodies x j-bodies, summed
  std::uint64_t levels[kLevels] = {};   // force evaluations by the level of the step that ended (step_level)

  HermiteCounters& operator+=(const HermiteCounters& o);
};

// The one-line error of a step below the floor: body `body` (the floor `floor`, at simulation time `time`), its
// nearest neighbour in `positions` and their distance, and the run's `eta`. It names no step: the step a body holds
// there is the last one halved (half the floor), not what the criterion asked for, which may be far shorter.
// Where the forces on the body cancel to rounding (a body at a centre of symmetry: `acceleration` far below the largest
// pull of one other body, at `softening`), the message says that instead: the criterion measures only rounding there.
std::string floor_message(const BodySet& positions, std::size_t body, double floor, double time, double eta,
                          const Vec3d& acceleration, double softening);
// The start criterion of a body whose forces cancel (`acceleration` below 1e-5 of the largest pull of one other body
// at `softening`: a body at a centre of symmetry, as the middle body of the figure-eight orbit at t = 0), where
// |a| / |a1| would measure rounding: eta_start times that largest pull over |a1| (its `jerk`), the time in which the
// jerk changes the acceleration by as much as the strongest single pull; +inf where the jerk is 0. 0 where its
// forces do not cancel. A simulation starts a body with it where the start criterion gives a step below the floor.
// O(N) (one pass over the bodies).
double cancelled_start_criterion(const BodySet& bodies, std::size_t body, const Vec3d& acceleration,
                                 const Vec3d& jerk, double softening, double eta_start);
// The same for a start (no step yet, or every body started again), with the value its start criterion came to
// (hermite::start_criterion, or cancelled_start_criterion where the forces on the body cancel) from its
// `acceleration` and `jerk` (the run's `eta_start`). Softened, that criterion is short deep inside an encounter, where
// the acceleration nearly vanishes though the orbit needs no such step: the message says so, and that a larger
// eta_start starts it.
std::string start_floor_message(const BodySet& positions, std::size_t body, double floor, double time,
                                double eta_start, const Vec3d& acceleration, const Vec3d& jerk, double softening);
// The same for a state continued (a checkpoint, a front end's rebuilt simulation) whose body `body` already holds a
// step below the floor: that of a run that stopped there. Its advice: an earlier state, or other settings (another
// softening, eta, eta_start or dt_max), under which every body starts again.
std::string continued_floor_message(const BodySet& positions, std::size_t body, double dt, double floor, double time);

}  // namespace nbody::sim::hermite
