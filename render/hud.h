// render/hud.h - the heads-up display: statistics and live controls (Dear ImGui).
#pragma once

#include <string>
#include <vector>

#include "render/colors.h"

struct GLFWwindow;

namespace nbody::render {

struct HudStats {
  double fps = 0, step_ms = 0, render_ms = 0, interactions_per_s = 0;
  std::size_t bodies = 0;
  std::string backend, kernel, precision, devices, threading, upload;
  double time = 0, energy_error = 0;
  bool energy_known = false;
  std::string help;  // key help, shown at the bottom
};

// Values the user edits in the HUD; the viewer applies them and clears the one-shot flags.
struct HudControls {
  bool paused = false;
  bool step_once = false;     // one-shot
  bool reset = false;         // one-shot: restart the scenario with the settings below
  bool apply = false;         // one-shot: rebuild the simulation from its current state
  int scenario = 0;           // index into the scenario names
  float dt = 0.01f;
  float softening = 0.01f;
  int steps_per_frame = 1;
  float point_size = 8.0f;
  float brightness = 0.6f;
  ColorMode color = ColorMode::speed;
  int threading = 0;          // 0 single, 1 workers
  int devices = 1;
  bool vsync = true;
  bool hidden = false;
};

class Hud {
 public:
  // `window` may be null (offscreen): the HUD then draws but takes no input.
  explicit Hud(GLFWwindow* window);
  ~Hud();
  Hud(const Hud&) = delete;
  Hud& operator=(const Hud&) = delete;

  void draw(const HudStats& stats, HudControls& controls, const std::vector<std::string>& scenarios,
            int max_devices, int width, int height, float frame_seconds);
  bool wants_mouse() const;
  bool wants_keyboard() const;

 private:
  void layout(const HudStats& stats, HudControls& controls, const std::vector<std::string>& scenarios, int max_devices,
              int width, int height, float frame_seconds);
  bool platform_ = false;
  bool first_frame_ = true;
};

}  // namespace nbody::render
