// render/exposure.cpp - exponential adaptation of the exposure in log space.
#include "render/exposure.h"

#include <algorithm>
#include <cmath>

namespace nbody::render {

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
