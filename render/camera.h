// render/camera.h - the viewer's orbit camera (GL-free, GLM maths): orbit, pan, zoom, fit.
#pragma once

#include <glm/glm.hpp>

#include <vector>

#include "core/real4.h"

namespace nbody::render {

// Where the bodies are, for the camera to look at: their median position, which a few escapers do
// not move; under 16 bodies (a binary) their mean, since a median of two is one of them.
Vec3d centre_of(const std::vector<Real4<double>>& bodies);

class OrbitCamera {
 public:
  // The view's width / height. Fitting frames a sphere within both the vertical and the horizontal
  // field of view, so a tall window does not cut the bodies off at its sides.
  void set_aspect(float aspect) { aspect_ = aspect > 0 ? aspect : 1.0f; }
  float aspect() const { return aspect_; }

  // Frames a sphere: the camera looks at `centre` from far enough that `radius` fills the view.
  void fit(glm::vec3 centre, float radius);
  // Frames the bodies: centred on their median, radius the 90th percentile distance from it, so a
  // few escapers do not shrink the picture (under 16 bodies: their mean and the farthest one).
  void fit(const std::vector<Real4<double>>& bodies);

  // Where the eye is around the target: yaw about +z from +x, pitch above the x-y plane (radians).
  void look_from(float yaw, float pitch);
  // Moves the target (follow mode keeps it on the bodies' centre), keeping the eye's offset.
  void set_target(glm::vec3 target) { target_ = target; }

  void orbit(float dx_pixels, float dy_pixels);                        // left drag
  void pan(float dx_pixels, float dy_pixels, float viewport_height);  // right or middle drag
  void zoom(float wheel_steps);                                        // wheel: > 0 moves closer

  glm::mat4 view() const;
  glm::mat4 projection(float aspect) const;
  glm::vec3 eye() const;
  glm::vec3 target() const { return target_; }
  float distance() const { return distance_; }
  float fitted_distance() const { return fitted_distance_; }  // sprite sizes are relative to this

 private:
  glm::vec3 target_{0.0f};
  float distance_ = 4.0f;
  float yaw_ = 0.0f;     // radians about +z
  float pitch_ = 0.5f;   // radians above the x-y plane
  float scale_ = 1.0f;   // fitted radius: sets the near and far planes
  float fitted_distance_ = 4.0f;
  float aspect_ = 1.0f;
  static constexpr float kFovY = 0.7854f;  // 45 degrees
};

}  // namespace nbody::render
