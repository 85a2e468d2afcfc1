// render/overlay.cpp - the colour legend, time stamp and scale bar, drawn with ImGui's draw lists.
#include "render/overlay.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>

namespace nbody::render {
namespace {

ImU32 rgba(float r, float g, float b, float a = 1.0f) { return ImGui::ColorConvertFloat4ToU32(ImVec4(r, g, b, a)); }
// A colour of the bodies as they show on screen under the frame's tone curve (as the colour itself without one).
ImU32 shown(float r, float g, float b, const std::optional<ToneCurve>& tone) {
  if (!tone) return rgba(r, g, b);
  auto const c = as_drawn({r, g, b}, *tone);
  return rgba(c[0], c[1], c[2]);
}
ImU32 shown(const Color& c, const std::optional<ToneCurve>& tone) { return shown(c.r, c.g, c.b, tone); }
ImU32 shown(const Rgba& c, const std::optional<ToneCurve>& tone) { return shown(c[0], c[1], c[2], tone); }

const ImU32 kText = rgba(0.92f, 0.92f, 0.92f), kBackdrop = rgba(0.0f, 0.0f, 0.0f, 0.55f);

// Text with a dark outline, readable over bright bodies too.
void outlined_text(ImDrawList* d, ImFont* font, float size, ImVec2 at, const std::string& text) {
  ImU32 const shadow = rgba(0, 0, 0, 0.85f);
  for (ImVec2 o : {ImVec2(-1, 0), ImVec2(1, 0), ImVec2(0, -1), ImVec2(0, 1)})
    d->AddText(font, size, ImVec2(at.x + o.x, at.y + o.y), shadow, text.c_str());
  d->AddText(font, size, at, kText, text.c_str());
}

ImVec2 text_size(ImFont* font, float size, const std::string& text) {
  return font->CalcTextSizeA(size, 1e6f, 0.0f, text.c_str());
}

}  // namespace

OverlayInfo describe_overlay(ColorMode mode, const SpeedColoring& speed, std::size_t devices, double time, double dt,
                             const sim::Units& units, double world_per_pixel, int width) {
  OverlayInfo o;
  o.mode = mode;
  o.speed = speed;
  o.speed_unit = speed_unit(units);
  if (mode == ColorMode::type) o.swatches = type_swatches();
  if (mode == ColorMode::device) o.swatches = device_swatches(devices);
  o.time = time_label(time, dt, units);
  o.bar = scale_bar(world_per_pixel, 0.25 * double(width), units);
  return o;
}

OverlayLayout overlay_layout(int width, int height) {
  float const w = float(width), h = float(height);
  float const legend_h = std::clamp(0.4f * h, 80.0f, 280.0f);
  return {{w - 230.0f, 4.0f, 226.0f, 40.0f},
          {w - 180.0f, h - 36.0f - legend_h - 28.0f, 176.0f, legend_h + 40.0f},
          {4.0f, h - 56.0f, std::max(0.25f * w, 60.0f) + 40.0f, 52.0f}};
}

std::array<float, 4> overlay_time_rect(const OverlayInfo& info, int width, int height) {
  float const size = std::round(ImGui::GetFontSize() * 1.25f);
  OverlayLayout const l = overlay_layout(width, height);
  ImVec2 const ts = text_size(ImGui::GetFont(), size, info.time);
  // Right-aligned in the top right corner.
  return {l.time[0] + l.time[2] - ts.x - 8.0f, l.time[1] + 6.0f, ts.x, ts.y};
}

void draw_overlay(const OverlayInfo& info, int width, int height) {
  ImDrawList* d = ImGui::GetBackgroundDrawList();
  ImFont* font = ImGui::GetFont();
  float const size = std::round(ImGui::GetFontSize() * 1.25f);
  float const small = ImGui::GetFontSize();
  OverlayLayout const l = overlay_layout(width, height);

  // The time, right-aligned in the top right corner.
  auto const time = overlay_time_rect(info, width, height);
  outlined_text(d, font, size, ImVec2(time[0], time[1]), info.time);

  // The legend in the bottom right: a vertical colour bar with ticks, or the categorical colours.
  float const right = l.legend[0] + l.legend[2], bottom = l.legend[1] + l.legend[3];
  if (info.mode == ColorMode::speed && info.speed.range.valid()) {
    float const bar_w = 18.0f, bar_h = l.legend[3] - 40.0f;
    float const x0 = right - 120.0f, y1 = bottom - 12.0f, y0 = y1 - bar_h;
    std::string const title =
        "speed" + (info.speed_unit.unit.empty() ? std::string(" (N-body units)") : " (" + info.speed_unit.unit + ")");
    ImVec2 const title_size = text_size(font, small, title);
    float const box_left = std::min(x0 - 8.0f, right - title_size.x - 12.0f);
    d->AddRectFilled(ImVec2(box_left, y0 - title_size.y - 14.0f), ImVec2(right, bottom), kBackdrop, 4.0f);
    outlined_text(d, font, small, ImVec2(right - title_size.x - 6.0f, y0 - title_size.y - 8.0f), title);
    ColormapTable const& map = colormap_table(info.speed.map);
    constexpr int kSegments = 64;
    for (int k = 0; k < kSegments; ++k) {  // top = max, bottom = min
      float const t0 = 1.0f - float(k) / kSegments, t1 = 1.0f - float(k + 1) / kSegments;
      ImU32 const top = shown(map_color(map, t0), info.tone), low = shown(map_color(map, t1), info.tone);
      d->AddRectFilledMultiColor(ImVec2(x0, y0 + bar_h * float(k) / kSegments),
                                 ImVec2(x0 + bar_w, y0 + bar_h * float(k + 1) / kSegments), top, top, low, low);
    }
    d->AddRect(ImVec2(x0, y0), ImVec2(x0 + bar_w, y1), kText);
    double const f = info.speed_unit.factor;
    double const lo = double(info.speed.range.min) * f, hi = double(info.speed.range.max) * f;
    auto const ticks = legend_ticks(lo, hi, 5);
    double const step = ticks.size() > 1 ? ticks[1] - ticks[0] : hi - lo;
    for (double v : ticks) {
      float const y = y1 - float((v - lo) / (hi - lo)) * bar_h;
      d->AddLine(ImVec2(x0 + bar_w, y), ImVec2(x0 + bar_w + 6.0f, y), kText, 1.5f);
      std::string const label = tick_label(v, step);
      outlined_text(d, font, small, ImVec2(x0 + bar_w + 10.0f, y - 0.5f * small), label);
    }
  } else if (!info.swatches.empty()) {
    float const line = small + 6.0f;
    float width_needed = 0;
    for (auto const& s : info.swatches) width_needed = std::max(width_needed, text_size(font, small, s.label).x);
    float const box_left = right - width_needed - 40.0f, box_top = bottom - line * float(info.swatches.size()) - 12.0f;
    d->AddRectFilled(ImVec2(box_left, box_top), ImVec2(right, bottom), kBackdrop, 4.0f);
    for (std::size_t k = 0; k < info.swatches.size(); ++k) {
      float const y = box_top + 6.0f + line * float(k);
      d->AddCircleFilled(ImVec2(box_left + 14.0f, y + 0.5f * small), 0.4f * small,
                         shown(info.swatches[k].color, info.tone));
      outlined_text(d, font, small, ImVec2(box_left + 28.0f, y), info.swatches[k].label);
    }
  }

  // The scale bar in the bottom left: its length written above it.
  if (info.bar.pixels > 1) {
    float const x0 = l.bar[0] + 16.0f, y = l.bar[1] + l.bar[3] - 16.0f, x1 = x0 + float(info.bar.pixels);
    ImU32 const shadow = rgba(0, 0, 0, 0.85f);
    d->AddLine(ImVec2(x0, y + 1), ImVec2(x1, y + 1), shadow, 5.0f);
    d->AddLine(ImVec2(x0, y), ImVec2(x1, y), kText, 3.0f);
    d->AddLine(ImVec2(x0, y - 6), ImVec2(x0, y + 6), kText, 2.0f);
    d->AddLine(ImVec2(x1, y - 6), ImVec2(x1, y + 6), kText, 2.0f);
    ImVec2 const bs = text_size(font, size, info.bar.label);
    // Centred over the bar, or from its left end where the text is the wider.
    float const text_x = std::max(x0, 0.5f * (x0 + x1) - 0.5f * bs.x);
    outlined_text(d, font, size, ImVec2(text_x, y - bs.y - 8.0f), info.bar.label);
  }
}

}  // namespace nbody::render
