// render/camera.h - the viewer's orbit camera (GL-free, GLM maths): orbit, pan, zoom, fit.
#pragma once

#include <glm/glm.hpp>

#include <vector>

#include "core/real4.h"

namespace nbody::render {

class OrbitCamera {
 public:
  // Frames a sphere: the camera looks at `centre` from far enough that `radius` fills the view.
  void fit(glm::vec3 centre, float radius);
  // Frames the bodies: centred on their median, radius the 90th percentile distance from it, so a
  // few escapers do not shrink the picture.
  void fit(const std::vector<Real4<double>>& bodies);

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
  static constexpr float kFovY = 0.7854f;  // 45 degrees
};

}  // namespace nbody::render
