// render/exposure.h - automatic exposure (GL-free): the scene's average luminance, measured on the
// GPU by HdrPipeline, becomes the exposure that maps it to middle grey, adapted smoothly over time.
#pragma once

#include <array>

namespace nbody::render {

// How a frame's light became its pixels (HdrPipeline::tone): a body's sprite adds `brightness` x its colour
// (decoded from sRGB to linear radiance) at its centre; the frame is multiplied by `exposure`, put through Reinhard's
// extended curve with the exposed white point `white`, encoded as sRGB, and `background` added (display values).
struct ToneCurve {
  float brightness = 1.0f;
  float exposure = 1.0f;
  float white = 4.0f;
  std::array<float, 3> background = {0.0f, 0.0f, 0.0f};
};

// The display (sRGB) colour at the centre of a lone body of display colour `srgb` under `tone`, as
// assets/shaders/bodies.* and tonemap.frag compute it: what a legend shows, so that the colours on screen read as it
// says (the exposure brightens a dark colour of the map; crowded bodies add up, brighter than any one).
std::array<float, 3> as_drawn(const std::array<float, 3>& srgb, const ToneCurve& tone);

class AutoExposure {
 public:
  // Middle grey: the exposure maps the scene's log-average luminance to this value, as a camera's
  // meter does (Reinhard et al. 2002, "Photographic tone reproduction", key a = 0.18).
  static constexpr float kKey = 0.18f;
  // Time constant of the adaptation, seconds: a scenario that collapses or explodes changes its
  // brightness over seconds, and ~0.5 s follows that without making single frames flicker (the eye
  // itself adapts in fractions of a second to minutes; games use 0.3-1 s).
  static constexpr float kTimeConstant = 0.5f;
  // The automatic exposure stays within 2^-10 .. 2^10 (±10 stops about 1): enough for brightness
  // settings from ~0.001 to ~100 (HUD), while an almost empty frame (one escaper left on screen)
  // cannot drive it to absurd values.
  static constexpr float kMinExposure = 1.0f / 1024.0f;
  static constexpr float kMaxExposure = 1024.0f;
  // The manual factor (HUD slider) stays within ±6 stops.
  static constexpr float kMinManual = 1.0f / 64.0f;
  static constexpr float kMaxManual = 64.0f;

  // average_luminance: of the last frame (HdrPipeline::average_luminance), linear radiance units;
  // seconds: since the last update. Returns the exposure to use: kKey / luminance, clamped to
  // [kMinExposure, kMaxExposure], approached exponentially with kTimeConstant (in log space, so a
  // step up and a step down of the same ratio take the same time, and it never overshoots), times
  // the manual factor. The first usable measurement (after construction or reset) is taken at once.
  // A luminance that is 0, negative, infinite or NaN (an empty frame) keeps the current exposure;
  // so do negative or NaN seconds.
  float update(float average_luminance, float seconds);

  // The HUD's factor on top of the automatic exposure; values outside [kMinManual, kMaxManual] are
  // clamped, NaN is ignored.
  void set_manual_factor(float factor);
  float manual_factor() const { return manual_; }

  float exposure() const;  // what update() last returned
  // The next usable measurement is taken at once (a new scene, a jump of the camera).
  void reset() { settled_ = false; }

 private:
  double log_adapted_ = 0.0;  // log of the automatic part, within log [kMinExposure, kMaxExposure]
  float manual_ = 1.0f;
  bool settled_ = false;  // false until a usable measurement arrived
};

}  // namespace nbody::render
