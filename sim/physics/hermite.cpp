// sim/physics/hermite.cpp - the Hermite state's checks, the counters and the floor's error message.
#include "sim/physics/hermite.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

namespace nbody::sim::hermite {

void HermiteState::resize(std::size_t n) {
  acceleration.resize(n);
  jerk.resize(n);
  time.resize(n);
  step.resize(n);
}

double HermiteState::block_time() const {
  double block = 0.0;
  for (double t : time) block = std::max(block, t);
  return block;
}

namespace {
bool finite3(const Vec3d& v) { return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z); }
bool power_of_two(double x) {
  int e = 0;
  return x > 0 && std::isfinite(x) && std::frexp(x, &e) == 0.5;
}
}  // namespace

std::int64_t first_below_floor(const HermiteState& state, const HermiteParams& params) {
  for (std::size_t i = 0; i < state.size(); ++i)
    if (below_floor(state.step[i], state.time[i], params)) return std::int64_t(i);
  return -1;
}

std::string state_problem(const HermiteState& s, std::size_t bodies, const std::string& what) {
  std::ostringstream m;
  m.precision(17);
  if (s.acceleration.size() != bodies || s.jerk.size() != bodies || s.time.size() != bodies ||
      s.step.size() != bodies) {
    m << what << ": the Hermite state has " << s.time.size() << " times, " << s.step.size() << " steps, "
      << s.acceleration.size() << " accelerations and " << s.jerk.size() << " jerks for " << bodies << " bodies";
    return m.str();
  }
  if ((!s.position.empty() && s.position.size() != bodies) || (!s.velocity.empty() && s.velocity.size() != bodies)) {
    m << what << ": the Hermite state has " << s.position.size() << " positions and " << s.velocity.size()
      << " velocities for " << bodies << " bodies";
    return m.str();
  }
  if (!std::isfinite(s.epoch) || std::abs(s.epoch) > 1e27) {
    m << what << ": the Hermite epoch " << s.epoch << " is not a finite number";
    return m.str();
  }
  for (std::size_t i = 0; i < bodies; ++i) {
    double const t = s.time[i], dt = s.step[i];
    if (!power_of_two(dt)) {
      m << what << ": body " << i << " has the Hermite step " << dt << "; steps are positive powers of two";
      return m.str();
    }
    if (!(t >= 0) || !std::isfinite(t) || std::fmod(t, dt) != 0.0 || t + dt - t != dt) {
      m << what << ": body " << i << " has the Hermite time " << t << ", not a non-negative multiple of its step "
        << dt;
      return m.str();
    }
    if (!finite3(s.acceleration[i]) || !finite3(s.jerk[i]) || (!s.position.empty() && !finite3(s.position[i])) ||
        (!s.velocity.empty() && !finite3(s.velocity[i]))) {
      m << what << ": body " << i << " has a Hermite position, velocity, acceleration or jerk that is not finite";
      return m.str();
    }
  }
  // The block time is the latest body time (the bodies of the last block step); every body's next time is at or
  // after it. A body due before it is one no run leaves behind (an edited file): it would be predicted past its step.
  double const block = s.block_time();
  auto const latest = std::size_t(std::find(s.time.begin(), s.time.end(), block) - s.time.begin());
  for (std::size_t i = 0; i < bodies; ++i) {
    if (s.time[i] + s.step[i] < block) {
      m << what << ": body " << i << " is due at Hermite time " << s.time[i] + s.step[i] << " (time " << s.time[i]
        << " plus step " << s.step[i] << "), before body " << latest << "'s time " << block
        << "; every body's next time is at or after the latest body time";
      return m.str();
    }
  }
  return {};
}

HermiteCounters& HermiteCounters::operator+=(const HermiteCounters& o) {
  block_steps += o.block_steps;
  force_evaluations += o.force_evaluations;
  interactions += o.interactions;
  for (int k = 0; k < kLevels; ++k) levels[k] += o.levels[k];
  return *this;
}

namespace {

// "; its nearest neighbour is body j at distance r", or "" for a body alone.
std::string nearest_text(const BodySet& b, std::size_t body) {
  std::size_t nearest = body;
  double best = std::numeric_limits<double>::infinity();
  auto const& x = b.pos_mass[body];
  for (std::size_t j = 0; j < b.size(); ++j) {
    if (j == body) continue;
    double const dx = b.pos_mass[j].x - x.x, dy = b.pos_mass[j].y - x.y, dz = b.pos_mass[j].z - x.z;
    double const r = std::sqrt(dx * dx + dy * dy + dz * dz);
    if (r < best) best = r, nearest = j;
  }
  if (nearest == body) return {};
  std::ostringstream m;
  m.precision(3);
  m << "; its nearest neighbour is body " << nearest << " at distance " << best;
  return m.str();
}

// "; the forces on it cancel: ...", where the body's acceleration is far below the largest pull of any one other body
// (at this softening), or "". There (a body at a centre of symmetry: a mirror-symmetric cluster's centre, the middle
// of a collinear configuration) the acceleration and its derivatives are rounding, which the step criterion takes for
// changes ever faster, however short the steps; a genuine encounter's acceleration is its partner's pull. The bound,
// 1e-5 of the pull, is above the rounding of fp32 pairs (about 1e-7) and far below any resolved orbit's.
struct Pull {
  double pull = 0.0;        // the largest pull of one other body at the softening
  std::size_t puller;       // that body (the body itself: no other pulls)
  double magnitude = 0.0;   // |a|
};

// The largest pull on `body` of any one other body, and whether its acceleration is far below it (cancels).
Pull strongest_pull(const BodySet& b, std::size_t body, const Vec3d& acceleration, double softening) {
  Pull p{0.0, body, std::sqrt(acceleration.x * acceleration.x + acceleration.y * acceleration.y +
                              acceleration.z * acceleration.z)};
  auto const& x = b.pos_mass[body];
  for (std::size_t j = 0; j < b.size(); ++j) {
    if (j == body) continue;
    double const dx = b.pos_mass[j].x - x.x, dy = b.pos_mass[j].y - x.y, dz = b.pos_mass[j].z - x.z;
    double const r2 = dx * dx + dy * dy + dz * dz, s2 = r2 + softening * softening;
    double const one = s2 > 0.0 ? b.pos_mass[j].w * std::sqrt(r2) / (s2 * std::sqrt(s2)) : 0.0;
    if (one > p.pull) p.pull = one, p.puller = j;
  }
  return p;
}

bool cancels(const Pull& p, std::size_t body) { return p.puller != body && p.magnitude < 1e-5 * p.pull; }

std::string cancelled_text(const BodySet& b, std::size_t body, const Vec3d& acceleration, double softening) {
  Pull const p = strongest_pull(b, body, acceleration, softening);
  if (!cancels(p, body)) return {};
  std::ostringstream m;
  m.precision(3);
  m << "; the forces on it cancel: |a| = " << p.magnitude << " against " << p.pull << " from body " << p.puller
    << " alone (a body at a centre of symmetry, as in a mirror-symmetric or collinear configuration: its acceleration "
       "and the derivatives the step criterion measures are rounding, however short the steps; moved off the centre "
       "by a small fraction of its distances, or with a fixed-step integrator, the run goes on)";
  return m.str();
}

// The potential at `body` of every other body (G = 1, at `softening`), in body order: the host's, for a message.
double potential_at(const BodySet& b, std::size_t body, double softening) {
  double phi = 0.0;
  auto const& x = b.pos_mass[body];
  for (std::size_t j = 0; j < b.size(); ++j) {
    if (j == body) continue;
    double const dx = b.pos_mass[j].x - x.x, dy = b.pos_mass[j].y - x.y, dz = b.pos_mass[j].z - x.z;
    phi -= b.pos_mass[j].w / std::sqrt(dx * dx + dy * dy + dz * dz + softening * softening);
  }
  return phi;
}

}  // namespace

double cancelled_start_criterion(const BodySet& b, std::size_t body, const Vec3d& acceleration, const Vec3d& jerk,
                                 double softening, double eta_start) {
  Pull const p = strongest_pull(b, body, acceleration, softening);
  if (!cancels(p, body)) return 0.0;
  // The jerk is the body's own (every pair's, coincident softened pairs too, weighted by mass): the time in which it
  // changes the acceleration by as much as the strongest single pull. +inf where it is 0 (no limit but dt_max).
  return eta_start * p.pull / std::sqrt(jerk.x * jerk.x + jerk.y * jerk.y + jerk.z * jerk.z);
}

namespace {

// What forced so short a step, and what resolves it, for this run's eta: a close encounter, which hermite4 does not
// regularise (a softening resolves it); or an eta outside the usual range: far below it, steps that short are asked
// for; far above it, inaccurate steps can bring bodies closer than their orbits do (a smaller eta resolves that).
std::string encounter_advice(double eta) {
  std::ostringstream m;
  m.precision(6);  // the value as given
  if (eta < 0.01)
    m << " (a close encounter, or an accuracy parameter eta far below the usual 0.01 to 0.05 (this run: " << eta
      << "): hermite4 has no regularisation; a larger softening or eta resolves it)";
  else if (eta > 0.05)
    m << " (a close encounter, or an accuracy parameter eta far above the usual 0.01 to 0.05 (this run: " << eta
      << "), whose inaccurate steps can bring bodies closer than their orbits do: hermite4 has no regularisation; a "
         "smaller eta or a larger softening resolves it)";
  else
    m << " (a close encounter: hermite4 has no regularisation; a larger softening resolves it)";
  return m.str();
}

// A time in the floor's errors: to 10 digits, where the numbers around it take 3 (at t = 1001.11, 1e+03 would not
// say where in the run the encounter is).
std::string time_text(double time) {
  char text[32];
  std::snprintf(text, sizeof text, "%.10g", time);
  return text;
}

}  // namespace

std::string floor_message(const BodySet& b, std::size_t body, double floor, double time, double eta,
                          const Vec3d& acceleration, double softening) {
  std::ostringstream m;
  m.precision(3);
  m << "hermite4: at t = " << time_text(time) << " body " << body << " needs a step below the floor " << floor;
  std::string const cancelled = cancelled_text(b, body, acceleration, softening);
  m << (cancelled.empty() ? nearest_text(b, body) + encounter_advice(eta) : cancelled);
  return m.str();
}

std::string continued_floor_message(const BodySet& b, std::size_t body, double dt, double floor, double time) {
  std::ostringstream m;
  m.precision(3);
  m << "hermite4: at t = " << time_text(time) << " body " << body << " holds a step of " << dt << ", below the floor " << floor
    << nearest_text(b, body)
    << " (the state of a run that stopped at the floor: it goes no further with these settings; continue from an "
       "earlier checkpoint, or give another eta, eta_start, dt_max or softening, which starts every body again)";
  return m.str();
}

std::string start_floor_message(const BodySet& b, std::size_t body, double floor, double time, double eta_start,
                                const Vec3d& acceleration, const Vec3d& jerk, double softening) {
  std::ostringstream m;
  m.precision(3);
  // The criterion's own value (the step itself is halved until it is below the floor, whatever that value).
  Pull const p = strongest_pull(b, body, acceleration, softening);
  m << "hermite4: at t = " << time_text(time) << " body " << body << " cannot start: its start step ";
  double wanted = 0.0;
  if (cancels(p, body)) {
    m << "(its forces cancel: |a| = " << p.magnitude << " against " << p.pull << " from body " << p.puller
      << " alone, so eta_start times that pull over |a1|) comes to ";
    wanted = cancelled_start_criterion(b, body, acceleration, jerk, softening, eta_start);
  } else {
    m << "(eta_start times the shorter of |a| / |a1| and sqrt(|phi|) / |a|) comes to ";
    wanted = start_criterion({acceleration.x, acceleration.y, acceleration.z}, {jerk.x, jerk.y, jerk.z},
                             potential_at(b, body, softening), eta_start);
  }
  m << wanted << ", below the floor " << floor << nearest_text(b, body);
  std::ostringstream given;  // the value as given (the message's precision is for the measured values)
  given << eta_start;
  if (!(wanted > 0.0))
    m << " (its acceleration vanishes exactly, as where bodies share one position or at the centre of a symmetric "
         "softened cluster, so no eta_start starts it: move it off that point)";
  else if (softening > 0.0)
    m << " (eta_start is " << given.str()
      << " here; the criterion is also short where the acceleration nearly vanishes, as deep inside a softened "
         "encounter: an eta_start that makes the step at least the floor, up to 100, starts it; the steps after the "
         "first follow eta)";
  else if (eta_start < 1e-3)
    m << " (an eta_start far below the usual 0.01 (this run: " << given.str()
      << "), which a larger one resolves; or a close encounter, which hermite4 does not regularise: a softening "
         "resolves it)";
  else
    m << " (a close encounter, which hermite4 does not regularise: a softening resolves it)";
  return m.str();
}

}  // namespace nbody::sim::hermite
