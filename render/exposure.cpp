// render/exposure.cpp - exponential adaptation of the exposure in log space.
#include "render/exposure.h"

#include <algorithm>
#include <cmath>

namespace nbody::render {

std::array<float, 3> as_drawn(const std::array<float, 3>& srgb, const ToneCurve& tone) {
  std::array<float, 3> out{};
  float const w = tone.white;
  for (int k = 0; k < 3; ++k) {
    float const c = std::clamp(srgb[k], 0.0f, 1.0f);
    float const linear = c < 0.04045f ? c / 12.92f : std::pow((c + 0.055f) / 1.055f, 2.4f);
    float const exposed = linear * tone.brightness * tone.exposure;
    float const mapped = std::min(exposed * (1.0f + exposed / (w * w)) / (1.0f + exposed), 1.0f);
    float const encoded = mapped < 0.0031308f ? mapped * 12.92f : 1.055f * std::pow(mapped, 1.0f / 2.4f) - 0.055f;
    out[k] = std::min(encoded + tone.background[k], 1.0f);
  }
  return out;
}

float AutoExposure::update(float average_luminance, float seconds) {
  if (!(average_luminance > 0.0f) || !std::isfinite(average_luminance)) return exposure();  // empty or broken frame
  double const log_target =
      std::log(std::clamp(double(kKey) / double(average_luminance), double(kMinExposure), double(kMaxExposure)));
  if (!settled_) {
    log_adapted_ = log_target;
    settled_ = true;
    return exposure();
  }
  if (!(seconds > 0.0f)) return exposure();  // no time passed (or NaN): nothing to adapt
  // Fraction of the way covered in `seconds`: 1 - e^(-t/tau), in [0, 1], so log(exposure) moves
  // monotonically toward log(target) and never past it. In double: in float, a step of 1/60 s
  // (3% of the way) rounds to nothing within ~1e-5 of the target, which would then never be reached.
  double const covered = -std::expm1(-double(seconds) / double(kTimeConstant));
  double const next = log_adapted_ + covered * (log_target - log_adapted_);
  log_adapted_ = std::clamp(next, std::min(log_adapted_, log_target), std::max(log_adapted_, log_target));
  return exposure();
}

float AutoExposure::exposure() const { return float(std::exp(log_adapted_)) * manual_; }

void AutoExposure::set_manual_factor(float factor) {
  if (std::isnan(factor)) return;
  manual_ = std::clamp(factor, kMinManual, kMaxManual);
}

}  // namespace nbody::render
