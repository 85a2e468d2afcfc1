// tests/test_exposure.cpp - automatic exposure (GL-free): convergence, smoothness, clamping, bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "render/exposure.h"

namespace nbody {
namespace {

using render::AutoExposure;
constexpr float kFrame = 1.0f / 60.0f;  // seconds per frame at 60 Hz

// Runs `frames` updates at 60 Hz with a constant luminance; returns the last exposure.
float settle(AutoExposure& a, float luminance, int frames = 600) {
  float e = 0;
  for (int i = 0; i < frames; ++i) e = a.update(luminance, kFrame);
  return e;
}

TEST(AutoExposure, ConvergesToKeyOverLuminance) {
  AutoExposure a;
  a.update(0.05f, kFrame);  // the first measurement is taken at once
  EXPECT_FLOAT_EQ(a.exposure(), AutoExposure::kKey / 0.05f);
  float const e = settle(a, 0.4f);  // 10 s = 20 time constants
  EXPECT_NEAR(e, AutoExposure::kKey / 0.4f, 1e-4f * e);
}

TEST(AutoExposure, AdaptsWithTheTimeConstantMonotonicallyWithoutOvershoot) {
  AutoExposure a;
  a.update(1.0f, kFrame);
  float const from = a.exposure(), to = AutoExposure::kKey / 8.0f;  // the scene turns 8x brighter
  float previous = from;
  float after_tau = 0;
  for (int i = 1; i <= 600; ++i) {
    float const e = a.update(8.0f, kFrame);
    EXPECT_LE(e, previous) << "frame " << i;  // only ever down
    EXPECT_GE(e, to) << "frame " << i;        // never past the target
    previous = e;
    if (i == 30) after_tau = e;  // 0.5 s
  }
  // After one time constant, log(exposure) has covered 1 - 1/e = 63% of the way.
  float const covered = std::log(after_tau / from) / std::log(to / from);
  EXPECT_NEAR(covered, 1.0f - std::exp(-1.0f), 0.01f);
  // The same, upwards, with uneven frame times.
  for (int i = 0; i < 300; ++i) {
    float const e = a.update(0.1f, i % 3 == 0 ? 0.05f : 0.004f);
    EXPECT_GE(e, previous);
    EXPECT_LE(e, AutoExposure::kKey / 0.1f);
    previous = e;
  }
}

TEST(AutoExposure, TenfoldBrighterSceneTenfoldLowerExposure) {
  AutoExposure a;
  float const dim = settle(a, 0.02f);
  float const bright = settle(a, 0.2f);
  EXPECT_NEAR(dim / bright, 10.0f, 1e-3f);
  // Negative control: a frame later, it has not yet got there (smooth, not instant).
  AutoExposure b;
  settle(b, 0.02f);
  EXPECT_LT(dim / b.update(0.2f, kFrame), 2.0f);
}

TEST(AutoExposure, ClampsAtBothEnds) {
  AutoExposure a;
  EXPECT_FLOAT_EQ(settle(a, 1e-9f), AutoExposure::kMaxExposure);  // almost nothing lit
  EXPECT_FLOAT_EQ(settle(a, 1e9f), AutoExposure::kMinExposure);   // blinding: 20 stops down in 20 time constants
  EXPECT_FLOAT_EQ(settle(a, std::numeric_limits<float>::max()), AutoExposure::kMinExposure);
  EXPECT_GE(a.exposure(), AutoExposure::kMinExposure);
  // Inside the range it is not clamped (the clamp is not so tight that the test above is trivial).
  EXPECT_GT(settle(a, 1.0f), AutoExposure::kMinExposure);
  EXPECT_LT(settle(a, 1.0f), AutoExposure::kMaxExposure);
}

TEST(AutoExposure, ZeroNegativeInfiniteAndNanKeepTheExposure) {
  float const nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  AutoExposure fresh;
  EXPECT_FLOAT_EQ(fresh.update(0.0f, kFrame), 1.0f);  // nothing measured yet: exposure 1
  EXPECT_FLOAT_EQ(fresh.update(nan, kFrame), 1.0f);
  AutoExposure a;
  float const e = settle(a, 0.3f);
  for (float bad : {0.0f, -1.0f, nan, inf, -inf}) {
    EXPECT_FLOAT_EQ(a.update(bad, kFrame), e) << bad;
    EXPECT_FLOAT_EQ(a.update(0.3f, nan), e);   // no time: no change, no NaN
    EXPECT_FLOAT_EQ(a.update(0.3f, -1.0f), e);
  }
  EXPECT_TRUE(std::isfinite(a.update(5.0f, inf)));  // an infinite pause: straight to the target
  EXPECT_FLOAT_EQ(a.exposure(), AutoExposure::kKey / 5.0f);
  // And the state is still good: it adapts afterwards.
  EXPECT_NEAR(settle(a, 0.9f), AutoExposure::kKey / 0.9f, 1e-4f);
}

TEST(AutoExposure, ManualFactorMultiplies) {
  AutoExposure a;
  float const automatic = settle(a, 0.25f);
  a.set_manual_factor(4.0f);
  EXPECT_FLOAT_EQ(a.update(0.25f, kFrame), 4.0f * automatic);  // at once, not adapted
  EXPECT_FLOAT_EQ(a.manual_factor(), 4.0f);
  a.set_manual_factor(std::numeric_limits<float>::quiet_NaN());  // ignored
  EXPECT_FLOAT_EQ(a.manual_factor(), 4.0f);
  a.set_manual_factor(1e6f);
  EXPECT_FLOAT_EQ(a.manual_factor(), AutoExposure::kMaxManual);
  a.set_manual_factor(-3.0f);
  EXPECT_FLOAT_EQ(a.manual_factor(), AutoExposure::kMinManual);
  // It multiplies a clamped automatic exposure too, so the slider always does something.
  AutoExposure dark;
  settle(dark, 1e-9f);
  dark.set_manual_factor(2.0f);
  EXPECT_FLOAT_EQ(dark.update(1e-9f, kFrame), 2.0f * AutoExposure::kMaxExposure);
}

TEST(AutoExposure, ResetTakesTheNextMeasurementAtOnce) {
  AutoExposure a;
  settle(a, 0.01f);
  a.reset();
  EXPECT_FLOAT_EQ(a.update(2.0f, kFrame), AutoExposure::kKey / 2.0f);
}

}  // namespace
}  // namespace nbody
