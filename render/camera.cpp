// render/camera.cpp - orbit camera maths.
#include "render/camera.h"

#include <glm/gtc/matrix_transform.hpp>

#include <algorithm>
#include <cmath>

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
  glm::vec3 const c(float(centre.x), float(centre.y), float(centre.z));
  std::vector<double> r;
  r.reserve(bodies.size());
  for (auto const& p : bodies) r.push_back(std::hypot(p.x - c.x, p.y - c.y, p.z - c.z));
  bool const few = bodies.size() < 16;
  std::size_t const k = few ? r.size() - 1 : std::min(r.size() - 1, r.size() * 9 / 10);
  std::nth_element(r.begin(), r.begin() + std::ptrdiff_t(k), r.end());
  fit(c, float(std::max(r[k], 1e-3)));
}

void OrbitCamera::orbit(float dx, float dy) {
  constexpr float kRadiansPerPixel = 0.005f;
  yaw_ -= dx * kRadiansPerPixel;
  pitch_ = std::clamp(pitch_ + dy * kRadiansPerPixel, -1.55f, 1.55f);  // never over the pole
}

void OrbitCamera::pan(float dx, float dy, float viewport_height) {
  // Move the target in the view plane so the point under the cursor follows it.
  float const units_per_pixel = 2.0f * distance_ * std::tan(0.5f * kFovY) / std::max(viewport_height, 1.0f);
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
