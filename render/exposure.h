// render/exposure.h - automatic exposure (GL-free): the scene's average luminance, measured on the
// GPU by HdrPipeline, becomes the exposure that maps it to middle grey, adapted smoothly over time.
#pragma once

namespace nbody::render {

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
