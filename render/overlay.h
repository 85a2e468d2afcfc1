// render/overlay.h - what a picture for a talk or a paper needs beside the bodies: the colour legend
// (a colour bar with ticks, the quantity's name and units; or the type or device colours), the
// simulation time and a scale bar. Drawn with Dear ImGui's draw lists inside the HUD's frame, so it
// is in the window, in screenshots, in videos recorded with the HUD and in every frame the viewer
// produces; `--hud minimal` shows it without the HUD's panel. Layout only here: the numbers come from
// render/annotations.h and render/camera.h (GL-free, tested).
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "render/annotations.h"
#include "render/colors.h"
#include "render/exposure.h"

namespace nbody::render {

struct OverlayInfo {
  ColorMode mode = ColorMode::speed;
  SpeedColoring speed;          // the map and its range (simulation units), for the colour bar
  DisplayUnit speed_unit;       // how the bar's ticks read
  std::vector<Swatch> swatches; // type and device modes: each colour and its meaning
  std::string time;             // "t = 12.5 Myr"
  ScaleBar bar;
  // The frame's tone curve: the colour bar and swatches are drawn as a lone body of each colour shows under it
  // (render::as_drawn). None: as the colours themselves.
  std::optional<ToneCurve> tone;
};

// What to draw for this frame: colour legend for `mode`, the time stamp (`dt`: the fixed step, 0 for hermite4's block
// steps; time_label), and a scale bar at the view's centre (`world_per_pixel` simulation lengths per pixel there, at
// most a quarter of `width` long).
OverlayInfo describe_overlay(ColorMode mode, const SpeedColoring& speed, std::size_t devices, double time, double dt,
                             const sim::Units& units, double world_per_pixel, int width);

// Where each part goes in a width x height view, in pixels (x, y, w, h): the time stamp in the top
// right corner, the legend in the bottom right, the scale bar in the bottom left - clear of the HUD's
// panel in the top left and of the bodies in the middle.
struct OverlayLayout {
  float time[4], legend[4], bar[4];
};
OverlayLayout overlay_layout(int width, int height);

// Where the time stamp's text lies (x, y, w, h) as draw_overlay places it, with the current ImGui font (between
// ImGui::NewFrame and ImGui::Render): the HUD's panel keeps clear of it.
std::array<float, 4> overlay_time_rect(const OverlayInfo& info, int width, int height);

// Adds the overlay to the current ImGui frame's background draw list (between ImGui::NewFrame and
// ImGui::Render).
void draw_overlay(const OverlayInfo& info, int width, int height);

}  // namespace nbody::render
