// render/hud.h - the heads-up display: a compact panel of statistics in the corner, the controls in
// collapsed sections below it (Dear ImGui).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "render/colors.h"
#include "render/overlay.h"

struct GLFWwindow;

namespace nbody::render {

struct HudStats {
  double fps = 0;                  // over the last second
  double steps_per_s = 0, step_ms = 0, render_ms = 0, interactions_per_s = 0;  // step_ms 0: none timed yet
  std::size_t bodies = 0;
  std::string source;              // the scenario, or the file's name
  std::string description;         // backend, devices, kernel, precision, threading
  std::string upload;              // how positions reach GL
  double time = 0;
  double dt = 0;                   // the fixed step, which the time's digits resolve (hermite4: 0)
  std::uint64_t step = 0;          // steps since the run began
  bool block_steps = false;        // hermite4: `time` is the block time, a step a block step
  std::optional<double> energy_error;  // with the time it was measured at
  double energy_time = 0;
  std::optional<double> energy_due;  // hermite4, before the first measure: the time it will be made at
  std::optional<double> virial_ratio;         // measured with the energy, with
  std::array<double, 3> lagrangian_radii{};   // the radii holding 10, 50 and 90% of the mass
  bool energy_tracked = true;
  bool paused = false;
  float exposure = 1;              // the tone mapper's, last frame
  std::vector<std::string> messages;  // recent notices and errors, newest last
  std::vector<std::pair<std::string, std::string>> keys;  // the keys and mouse, and what each does
  std::optional<OverlayInfo> overlay;  // the legend, time and scale bar (HudMode full and minimal)
  sim::Units units;                // the run's: with a physical scale, the panel's times and radii in it too
};

// Values the user edits in the HUD; the viewer applies them and clears the one-shot flags.
struct HudControls {
  bool paused = false;
  int steps_asked = 0;        // one-shot: steps to make now (the Step button, n)
  bool reset = false;         // one-shot: start the scenario again with the settings below
  bool apply = false;         // one-shot: the current state with the settings below
  bool save = false;          // one-shot: a checkpoint of the current state
  bool screenshot = false;    // one-shot
  int scenario = 0;           // index into the scenario names
  std::int64_t bodies = 16384;  // N for the next reset: 64 bits, so a long number typed stays itself
  // In doubles, as the command line takes them: a value typed is the value run.
  double dt = 0.01;
  double softening = 0.01;
  bool softening_edited = false;  // one-shot: the user set the softening (kept across scenarios)
  double damping = 0.995;
  bool damping_applies = false;  // euler-damped only
  // hermite4: each body chooses its own step, so `dt` is the longest one, --dt-max ("dt max" in the panel).
  bool block_steps = false;
  int precision = 0;          // 0 fp32, 1 fp64
  int steps_per_update = 1;
  float point_size = 8.0f;
  float brightness = 1.0f;
  bool auto_exposure = true;
  float exposure = 1.0f;      // a factor on the automatic exposure, or the exposure itself
  ColorMode color = ColorMode::speed;
  Colormap colormap = Colormap::viridis;
  ColorRange color_range;      // speeds the map spans, simulation units (the HUD shows the legend's units)
  bool color_range_fixed = false;  // set by --color-range or an edit here: kept for the next runs too
  bool fit_color_range = false;    // one-shot: the range from the speeds shown now
  int threading = 0;          // 0 single, 1 workers
  int devices = 1;
  bool vsync = true;
  HudMode hud = HudMode::full;  // the panel and the overlay, the overlay alone, or nothing
  bool follow = false;        // the camera keeps the bodies' centre in view
  bool trails = false;
  // One-shot: why a value typed was refused (outside what the command line accepts, core/bounds.h);
  // the field keeps the value it had.
  std::string refused;
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
  GLFWwindow* window_ = nullptr;  // the window whose input the HUD takes, if any
  bool platform_ = false;
  bool first_frame_ = true;
  bool trace_ = false;
  std::map<std::string, double> before_edit_;  // label -> the field's value when its edit began  // NBODY_TRACE_UI set: each widget's place is logged once (for tests that click it)
  std::map<std::string, std::array<int, 4>> traced_;  // label -> x, y, width, height last reported
  std::map<std::string, int> traced_values_;           // label -> a check box's state last reported
  std::map<std::string, std::string> traced_texts_;    // label -> a line's text last reported
};

}  // namespace nbody::render
