// sim/physics/scenarios.cpp - initial conditions: uniform sphere, Plummer sphere, disk galaxies, binary.
#include "sim/physics/scenarios.h"

#include <cmath>
#include <random>

#include "core/bounds.h"
#include "core/errors.h"
#include "core/interrupt.h"

namespace nbody::sim {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kDiskCoreRadius = 0.05;  // the central mass's softening assumed by the disk model

// Portable random numbers: std::mt19937_64's sequence is fixed by the standard, but the
// standard distributions are not, so the transforms to uniform and normal variates are ours.
class Random {
 public:
  explicit Random(std::uint64_t seed) : engine_(seed) {}
  double uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }  // [0, 1)
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  double normal() {  // Box-Muller, one variate per call.
    double u1 = uniform();
    while (u1 <= 0.0) u1 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * kPi * uniform());
  }
  Vec3d unit_vector() {  // isotropic direction
    double const z = uniform(-1.0, 1.0);
    double const phi = uniform(0.0, 2.0 * kPi);
    double const s = std::sqrt(1.0 - z * z);
    return {s * std::cos(phi), s * std::sin(phi), z};
  }

 private:
  std::mt19937_64 engine_;
};

// Between bodies: every kScenarioCheckEvery, a signal or a raised cancel ends the generation. Only
// looks, never a draw from the random stream.
class Stop {
 public:
  explicit Stop(const std::atomic<bool>* cancel) : cancel_(cancel) {}
  void at(std::size_t body) const {
    if (body % kScenarioCheckEvery != 0) return;
    throw_if_interrupted();
    if (cancel_ && cancel_->load(std::memory_order_relaxed)) throw GenerationCancelled();
  }

 private:
  const std::atomic<bool>* cancel_;
};

// Uniform density in the unit ball, unit total mass, isotropic Gaussian velocities with virial
// ratio 1/2 against the analytic potential energy of a uniform sphere, W = -3/5 G M^2 / R.
BodySet random_sphere(std::size_t n, Random& rng, const Stop& stop) {
  BodySet b;
  b.reserve(n);
  double const m = 1.0 / static_cast<double>(n);
  double const sigma = std::sqrt(0.6 / 3.0);  // 2K = -W => <v^2> = 0.6, per component 0.2
  for (std::size_t i = 0; i < n; ++i) {
    stop.at(i);
    double const r = std::cbrt(rng.uniform());
    Vec3d const x = r * rng.unit_vector();
    b.append({x.x, x.y, x.z, m}, {sigma * rng.normal(), sigma * rng.normal(), sigma * rng.normal()},
             BodyType::star);
  }
  return b;
}

// Plummer sphere by Aarseth, Henon & Wielen (1974, A&A 37, 183), in Henon's standard units
// (G = M = 1, E = -1/4, virial radius 1): scale length 3 pi / 16.
BodySet plummer(std::size_t n, Random& rng, const Stop& stop) {
  BodySet b;
  b.reserve(n);
  double const m = 1.0 / static_cast<double>(n);
  double const length = 3.0 * kPi / 16.0;
  double const speed = 1.0 / std::sqrt(length);
  for (std::size_t i = 0; i < n; ++i) {
    stop.at(i);
    // The enclosed mass fraction of the body's radius, cut at kPlummerMassCut as NEMO's mkplummer and
    // Starlab do: the sphere's profile, Lagrangian radii and energy are the analytic ones to 0.1%
    // (a cut at 10 scale lengths, as in Aarseth's codes, would remove 1.5% and shrink r_50 by 1.4%).
    double x1 = kPlummerMassCut * rng.uniform();
    while (x1 <= 0.0) x1 = kPlummerMassCut * rng.uniform();
    double const r = 1.0 / std::sqrt(std::pow(x1, -2.0 / 3.0) - 1.0);
    double q = 0.0;  // von Neumann rejection for q = v / v_escape, g(q) = q^2 (1 - q^2)^3.5
    while (true) {
      q = rng.uniform();
      double const g = q * q * std::pow(1.0 - q * q, 3.5);
      if (0.1 * rng.uniform() < g) break;
    }
    double const v = q * std::sqrt(2.0) * std::pow(1.0 + r * r, -0.25);
    Vec3d const x = (r * length) * rng.unit_vector();
    Vec3d const u = (v * speed) * rng.unit_vector();
    b.append({x.x, x.y, x.z, m}, u, BodyType::star);
  }
  return b;
}

// A rotating disk galaxy: a central mass (30% of `mass`, a softened point) and an exponential
// disk (scale length 0.2, cut at 1.0, thickness 0.02) on circular orbits with 5% dispersion.
// `inclination` tilts the disk about the x axis.
void append_disk(BodySet& b, std::size_t n, double mass, Vec3d centre, Vec3d velocity, double inclination,
                 Random& rng, const Stop& stop) {
  constexpr double kCentralFraction = 0.3;
  constexpr double kScaleLength = 0.2;
  constexpr double kCut = 1.0;
  constexpr double kThickness = 0.02;
  double const m_central = n == 1 ? mass : kCentralFraction * mass;
  b.append({centre.x, centre.y, centre.z, m_central}, velocity, BodyType::dark);
  if (n == 1) return;
  double const m_disk = mass - m_central;
  double const m_star = m_disk / static_cast<double>(n - 1);
  double const c = std::cos(inclination), s = std::sin(inclination);
  auto enclosed = [&](double radius) {  // exponential disk mass inside R, normalised to the cut
    auto cdf = [](double x) { return 1.0 - (1.0 + x) * std::exp(-x); };
    return m_disk * cdf(radius / kScaleLength) / cdf(kCut / kScaleLength);
  };
  for (std::size_t i = 1; i < n; ++i) {
    stop.at(i);
    double radius = 0.0;
    do {  // surface density ~ exp(-R/h) => R ~ Gamma(2, h)
      double u1 = rng.uniform(), u2 = rng.uniform();
      while (u1 * u2 <= 0.0) u1 = rng.uniform(), u2 = rng.uniform();
      radius = -kScaleLength * std::log(u1 * u2);
    } while (radius > kCut);
    double const phi = rng.uniform(0.0, 2.0 * kPi);
    double const z = kThickness * rng.normal();
    double const r2 = radius * radius + kDiskCoreRadius * kDiskCoreRadius;
    double const v_circ =
        std::sqrt(m_central * radius * radius / (r2 * std::sqrt(r2)) + enclosed(radius) / std::max(radius, 1e-3));
    double const dispersion = 0.05 * v_circ;
    Vec3d const p{radius * std::cos(phi), radius * std::sin(phi), z};
    Vec3d const v{-v_circ * std::sin(phi) + dispersion * rng.normal(), v_circ * std::cos(phi) + dispersion * rng.normal(),
                  dispersion * rng.normal()};
    auto tilt = [&](Vec3d a) { return Vec3d{a.x, c * a.y - s * a.z, s * a.y + c * a.z}; };
    Vec3d const pt = centre + tilt(p);
    Vec3d const vt = velocity + tilt(v);
    b.append({pt.x, pt.y, pt.z, m_star}, vt, BodyType::star);
  }
}

// Two disks of half the mass each, 3 units apart with impact parameter 0.6, falling together on
// a bound orbit (70% of the parabolic speed); the second disk is tilted by 60 degrees.
BodySet collision(std::size_t n, Random& rng, const Stop& stop) {
  BodySet b;
  b.reserve(n);
  std::size_t const n1 = n / 2, n2 = n - n1;
  double const separation = 3.0, impact = 0.6;
  double const v_rel = 0.7 * std::sqrt(2.0 * 1.0 / separation);
  if (n1 > 0) append_disk(b, n1, 0.5, {-separation / 2, -impact / 2, 0}, {0.5 * v_rel, 0, 0}, 0.0, rng, stop);
  append_disk(b, n2, 0.5, {separation / 2, impact / 2, 0}, {-0.5 * v_rel, 0, 0}, kPi / 3.0, rng, stop);
  return b;
}

// A Kepler binary with semi-major axis 1 and total mass 1 (masses 0.5 each), starting at
// apocentre in the x-y plane; period 2 pi.
BodySet two_body(double e) {
  BodySet b;
  double const a = 1.0, m = 0.5, total = 1.0;
  double const r_apo = a * (1.0 + e);
  double const v_apo = std::sqrt(total / a * (1.0 - e) / (1.0 + e));  // vis-viva at apocentre
  b.append({r_apo / 2, 0, 0, m}, {0, v_apo / 2, 0}, BodyType::star);
  b.append({-r_apo / 2, 0, 0, m}, {0, -v_apo / 2, 0}, BodyType::star);
  return b;
}

}  // namespace

double recommended_softening(Scenario scenario) {
  return scenario == Scenario::disk || scenario == Scenario::collision ? kDiskCoreRadius : 0.01;
}

std::size_t default_bodies(Scenario scenario) { return scenario == Scenario::two_body ? 2 : 16384; }

void check_scenario(const ScenarioParams& params, const SettingNames& names) {
  if (params.bodies == 0) throw InputError(names.with("--bodies", "0") + ": need at least 1 body");
  if (params.scenario != Scenario::two_body) return;
  if (params.bodies != 2)
    throw InputError(names.with("--bodies", std::to_string(params.bodies)) +
                     ": the two-body scenario has exactly 2 bodies");
  if (!(params.eccentricity >= 0.0 && params.eccentricity < 1.0))
    throw InputError(names.with("--eccentricity", shortest(params.eccentricity)) + ": must be in [0, 1)");
}

BodySet make_scenario(const ScenarioParams& params, const std::atomic<bool>* cancel, const SettingNames& names) {
  check_scenario(params, names);
  Random rng(params.seed);
  Stop const stop(cancel);
  BodySet b;
  switch (params.scenario) {
    case Scenario::plummer:
      b = plummer(params.bodies, rng, stop);
      break;
    case Scenario::random_sphere:
      b = random_sphere(params.bodies, rng, stop);
      break;
    case Scenario::disk:
      b.reserve(params.bodies);
      append_disk(b, params.bodies, 1.0, {0, 0, 0}, {0, 0, 0}, 0.0, rng, stop);
      break;
    case Scenario::collision:
      b = collision(params.bodies, rng, stop);
      break;
    case Scenario::two_body:
      b = two_body(params.eccentricity);
      break;
  }
  move_to_centre_of_mass_frame(b);
  return b;
}

}  // namespace nbody::sim
