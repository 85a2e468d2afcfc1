// render/camera.h - the viewer's orbit camera (GL-free, GLM maths): orbit, pan, zoom, fit.
#pragma once

#include <glm/glm.hpp>

#include <string>
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
  // Frames the bodies as seen from the current direction (look_from) in the current aspect: from
  // the nearest distance at which kFitFraction of them project inside the view, kFitMargin of the way
  // to its edges, looking at the middle of what is shown (near their median; an inclined disk's near
  // rim takes more of the screen than its far rim). Escapers (farther than kEscaperRadii x the radius
  // holding 90% of them from their median) are left out first, so a few of them do not shrink the
  // picture. Under 16 bodies: all of them inside.
  void fit(const std::vector<Real4<double>>& bodies);
  static constexpr double kFitFraction = 0.999;
  static constexpr float kFitMargin = 0.9f;
  static constexpr double kEscaperRadii = 1.5;

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
  // World units (simulation lengths) per pixel at the target's depth, in a view `viewport_height`
  // pixels tall: what a scale bar at the view's centre measures with.
  float world_per_pixel(float viewport_height) const;
  static constexpr float kFovY = 0.7854f;  // 45 degrees

 private:
  glm::vec3 target_{0.0f};
  float distance_ = 4.0f;
  float yaw_ = 0.0f;     // radians about +z
  float pitch_ = 0.5f;   // radians above the x-y plane
  float scale_ = 1.0f;   // fitted radius: sets the near and far planes
  float fitted_distance_ = 4.0f;
  float aspect_ = 1.0f;
};

// The view each scenario's story is best seen from (the collision from the side of its approach,
// the disk inclined, the binary's orbit from above), by the scenario's name at the start of
// `source` ("disk", "collision 65536 bodies"); a file or an unknown name: a general view.
void look_at_scenario(OrbitCamera& camera, const std::string& source);

// The sprite diameter in pixels of a body `depth` from the eye: `point_size` at `reference_depth`,
// in proportion nearer or farther, at least 1 and at most max_sprite_pixels(point_size) - so a body
// that passes close to the camera stays a point of light instead of a blob across the view.
// assets/shaders/bodies.vert computes the same.
float max_sprite_pixels(float point_size);
float sprite_pixels(float point_size, float reference_depth, float depth);

}  // namespace nbody::render
