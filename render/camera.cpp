// render/camera.cpp - orbit camera maths.
#include "render/camera.h"

#include <glm/gtc/matrix_transform.hpp>

#include <algorithm>
#include <cmath>

#include "sim/physics/scenarios.h"

namespace nbody::render {

void OrbitCamera::fit(glm::vec3 centre, float radius) {
  target_ = centre;
  scale_ = std::max(radius, 1e-6f);
  // The narrower of the two half-angles: vertical, or horizontal when the view is taller than wide.
  float const half_vertical = 0.5f * kFovY;
  float const half_horizontal = std::atan(std::tan(half_vertical) * aspect_);
  distance_ = fitted_distance_ = scale_ / std::sin(std::min(half_vertical, half_horizontal)) * 1.1f;
}

void OrbitCamera::look_from(float yaw, float pitch) {
  yaw_ = yaw;
  pitch_ = std::clamp(pitch, -1.55f, 1.55f);
}

Vec3d centre_of(const std::vector<Real4<double>>& bodies) {
  if (bodies.empty()) return {0, 0, 0};
  std::vector<double> xs, ys, zs;
  xs.reserve(bodies.size()), ys.reserve(bodies.size()), zs.reserve(bodies.size());
  for (auto const& p : bodies) {
    xs.push_back(p.x);
    ys.push_back(p.y);
    zs.push_back(p.z);
  }
  if (bodies.size() < 16) {
    auto mean = [](const std::vector<double>& v) {
      double sum = 0;
      for (double x : v) sum += x;
      return sum / double(v.size());
    };
    return {mean(xs), mean(ys), mean(zs)};
  }
  auto median = [](std::vector<double>& v) {
    std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  return {median(xs), median(ys), median(zs)};
}

void OrbitCamera::fit(const std::vector<Real4<double>>& bodies) {
  if (bodies.empty()) return fit(glm::vec3(0.0f), 1.0f);
  Vec3d const centre = centre_of(bodies);
  glm::dvec3 const c(centre.x, centre.y, centre.z);
  std::vector<double> r;
  r.reserve(bodies.size());
  for (auto const& p : bodies) r.push_back(std::hypot(p.x - c.x, p.y - c.y, p.z - c.z));
  bool const few = bodies.size() < 16;
  std::vector<double> sorted = r;  // r stays in body order
  std::size_t const k90 = few ? r.size() - 1 : std::min(r.size() - 1, r.size() * 9 / 10);
  std::nth_element(sorted.begin(), sorted.begin() + std::ptrdiff_t(k90), sorted.end());
  double const r90 = std::max(sorted[k90], 1e-3);
  fit(glm::vec3(c), float(r90));  // the target, the planes' scale, and a distance for a degenerate case

  // The eye at distance D along `back` from the centre sees q = p - c at depth D - q.back; q is inside
  // the view when |q.right| <= (D - q.back) tan(half width) and |q.up| <= (D - q.back) tan(half height),
  // i.e. when D >= need(q). The fitted D is the kFitFraction quantile of the bodies' needs. Then the
  // view is moved sideways to the middle of what it shows (an inclined disk's near rim is larger on
  // screen than its far rim, and would run off the bottom while the top stays empty), and D fitted
  // again: twice, which leaves the picture centred to a few per cent.
  glm::dvec3 const back(std::cos(pitch_) * std::cos(yaw_), std::cos(pitch_) * std::sin(yaw_), std::sin(pitch_));
  glm::dvec3 const right = glm::normalize(glm::cross(-back, glm::dvec3(0, 0, 1)));
  glm::dvec3 const up = glm::cross(right, -back);
  double const tan_y = std::tan(0.5 * double(kFovY)) * double(kFitMargin), tan_x = tan_y * double(aspect_);
  std::vector<std::size_t> bound;  // the bodies that are not escapers
  for (std::size_t i = 0; i < bodies.size(); ++i)
    if (few || r[i] <= kEscaperRadii * r90) bound.push_back(i);
  if (bound.empty()) return;  // no finite distance at all: the sphere's fit stands
  auto quantile = [](std::vector<double>& v, double q) {
    std::size_t const k = std::min(v.size() - 1, std::size_t(q * double(v.size() - 1) + 0.5));
    std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(k), v.end());
    return v[k];
  };
  double const fraction = few ? 1.0 : kFitFraction;
  glm::dvec3 centre_now = c;
  double distance = 0;
  std::vector<double> need(bound.size()), xs(bound.size()), ys(bound.size());
  for (int pass = 0; pass < 3; ++pass) {
    for (std::size_t j = 0; j < bound.size(); ++j) {
      auto const& p = bodies[bound[j]];
      glm::dvec3 const q = glm::dvec3(p.x, p.y, p.z) - centre_now;
      need[j] = std::max(std::abs(glm::dot(q, right)) / tan_x, std::abs(glm::dot(q, up)) / tan_y) + glm::dot(q, back);
    }
    // Never inside the bodies' core: at least 1.5 times the 90% radius away, so the near plane stays in front.
    distance = std::max(quantile(need, fraction), 1.5 * r90);
    if (pass == 2) break;
    // Where the bodies are on screen at that distance, in units of the half view (margin included).
    for (std::size_t j = 0; j < bound.size(); ++j) {
      auto const& p = bodies[bound[j]];
      glm::dvec3 const q = glm::dvec3(p.x, p.y, p.z) - centre_now;
      double const depth = std::max(distance - glm::dot(q, back), 1e-9 * distance);
      xs[j] = glm::dot(q, right) / (depth * tan_x);
      ys[j] = glm::dot(q, up) / (depth * tan_y);
    }
    double const mid_x = 0.5 * (quantile(xs, 1 - fraction) + quantile(xs, fraction));
    double const mid_y = 0.5 * (quantile(ys, 1 - fraction) + quantile(ys, fraction));
    centre_now += right * (mid_x * distance * tan_x) + up * (mid_y * distance * tan_y);
  }
  target_ = glm::vec3(centre_now);
  distance_ = fitted_distance_ = float(distance);
}

float OrbitCamera::world_per_pixel(float viewport_height) const {
  return 2.0f * distance_ * std::tan(0.5f * kFovY) / std::max(viewport_height, 1.0f);
}

void look_at_scenario(OrbitCamera& camera, const std::string& source) {
  constexpr float kPi = 3.14159265358979f;
  auto const scenario = from_name<sim::Scenario>(source.substr(0, source.find(' ')));
  if (!scenario) return camera.look_from(0.0f, 0.5f);
  switch (*scenario) {
    case sim::Scenario::collision:  // the disks approach along x: seen from the side, a little above
      return camera.look_from(-kPi / 2, 0.3f);
    case sim::Scenario::disk:  // inclined, so both its plane and its thickness show
      return camera.look_from(-kPi / 2, 0.6f);
    case sim::Scenario::two_body:  // the orbit's plane, from above
      return camera.look_from(-kPi / 2, 1.35f);
    default:
      return camera.look_from(0.6f, 0.4f);
  }
}

// A body's sprite grows as it nears the camera, up to three times its size at the fitted distance and
// at most 32 pixels (a size the user chose larger stays as chosen): a body passing the camera in a
// cluster of 16,384 (5.7 pixels at the fitted distance) grew to 64 before.
float max_sprite_pixels(float point_size) { return std::max(point_size, std::min(3.0f * point_size, 32.0f)); }

float sprite_pixels(float point_size, float reference_depth, float depth) {
  return std::clamp(point_size * reference_depth / std::max(depth, 1e-6f * reference_depth), 1.0f,
                    std::max(1.0f, max_sprite_pixels(point_size)));
}

void OrbitCamera::orbit(float dx, float dy) {
  constexpr float kRadiansPerPixel = 0.005f;
  yaw_ -= dx * kRadiansPerPixel;
  pitch_ = std::clamp(pitch_ + dy * kRadiansPerPixel, -1.55f, 1.55f);  // never over the pole
}

void OrbitCamera::pan(float dx, float dy, float viewport_height) {
  // Move the target in the view plane so the point under the cursor follows it.
  float const units_per_pixel = world_per_pixel(viewport_height);
  glm::vec3 const forward = glm::normalize(target_ - eye());
  glm::vec3 const right = glm::normalize(glm::cross(forward, glm::vec3(0, 0, 1)));
  glm::vec3 const up = glm::cross(right, forward);
  target_ += (-dx * right + dy * up) * units_per_pixel;
}

void OrbitCamera::zoom(float steps) { distance_ = std::clamp(distance_ * std::pow(0.9f, steps), 1e-4f * scale_, 1e3f * scale_); }

glm::vec3 OrbitCamera::eye() const {
  return target_ + distance_ * glm::vec3(std::cos(pitch_) * std::cos(yaw_), std::cos(pitch_) * std::sin(yaw_),
                                         std::sin(pitch_));
}

glm::mat4 OrbitCamera::view() const { return glm::lookAt(eye(), target_, glm::vec3(0, 0, 1)); }

glm::mat4 OrbitCamera::projection(float aspect) const {
  float const near_plane = std::max(distance_ - 50.0f * scale_, distance_ * 1e-3f);
  return glm::perspective(kFovY, std::max(aspect, 1e-3f), near_plane, distance_ + 50.0f * scale_);
}

}  // namespace nbody::render
