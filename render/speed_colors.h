// render/speed_colors.h - colour by speed, one definition for the host (colors.cpp) and the GPU
// (cuda_gl_interop.cu), written so both compute the same bits: explicit fused multiply-adds where a
// compiler might otherwise contract or not, and a correctly rounded square root. Then CUDA-GL
// interop and host upload draw the same pixels.
#pragma once

#include <cmath>
#include <cstddef>

#include "core/real4.h"

namespace nbody::render {

struct Color {
  float r, g, b, a;
};

// |v| in fp32 from fp32 components.
NBODY_HOST_DEVICE inline float speed_of(float vx, float vy, float vz) {
  return std::sqrt(std::fma(vz, vz, std::fma(vy, vy, vx * vx)));
}

// Speed colour map for t in [0, 1] (clamped): deep blue (slow) through white to orange (fast),
// piecewise linear: (0.15, 0.3, 1.0) -> (1, 1, 1) at 0.5 -> (1.0, 0.55, 0.1).
NBODY_HOST_DEVICE inline Color speed_color(float t) {
  t = t < 0.0f ? 0.0f : (t > 1.0f ? 1.0f : t);
  if (t < 0.5f) {
    float const u = t * 2.0f;
    return {std::fma(0.85f, u, 0.15f), std::fma(0.7f, u, 0.3f), 1.0f, 1.0f};
  }
  float const u = std::fma(t, 2.0f, -1.0f);
  return {1.0f, std::fma(-0.45f, u, 1.0f), std::fma(-0.9f, u, 1.0f), 1.0f};
}

// Speeds are normalised by the 95th percentile of a fixed sample: every stride-th body, at most
// kSpeedSample of them (all bodies up to that many), so the GPU needs to bring back only the
// sample's speeds.
inline constexpr std::size_t kSpeedSample = 4096;
inline std::size_t speed_sample_stride(std::size_t n) { return n <= kSpeedSample ? 1 : (n + kSpeedSample - 1) / kSpeedSample; }

// The normalising speed from the sample's speeds (reordered): their 95th percentile, or 1 if that
// is 0. Host only.
float speed_scale(float* sample_speeds, std::size_t count);

}  // namespace nbody::render
