// render/speed_colors.h - colour by speed through a colour map over a fixed range, one definition for
// the host (colors.cpp) and the GPU (cuda_gl_interop.cu), written so both compute the same bits:
// explicit fused multiply-adds where a compiler might otherwise contract or not, and a correctly
// rounded square root. Then CUDA-GL interop and host upload draw the same pixels.
#pragma once

#include <cmath>
#include <cstddef>

#include "core/real4.h"
#include "render/color_mode.h"
#include "render/colormap_tables.h"

namespace nbody::render {

struct Color {
  float r, g, b, a;
};

// A colour map's 256 entries by value: small enough (3 KiB) to be a kernel's argument.
struct ColormapTable {
  float rgb[kColormapEntries][3];
};
const ColormapTable& colormap_table(Colormap map);  // host only

// |v| in fp32 from fp32 components.
NBODY_HOST_DEVICE inline float speed_of(float vx, float vy, float vz) {
  return std::sqrt(std::fma(vz, vz, std::fma(vy, vy, vx * vx)));
}

// The map at t in [0, 1] (clamped), linear between its entries: entry k sits at t = k / 255, where
// this is the entry itself, as matplotlib's colormap(k / 255) is.
NBODY_HOST_DEVICE inline Color map_color(const ColormapTable& map, float t) {
  t = t > 0.0f ? (t < 1.0f ? t : 1.0f) : 0.0f;  // NaN to 0 too: its comparisons are false
  float const x = t * float(kColormapEntries - 1);
  int const k = x < float(kColormapEntries - 2) ? int(x) : kColormapEntries - 2;
  float const f = x - float(k);
  float const* a = map.rgb[k];
  float const* b = map.rgb[k + 1];
  return {std::fma(f, b[0] - a[0], a[0]), std::fma(f, b[1] - a[1], a[1]), std::fma(f, b[2] - a[2], a[2]), 1.0f};
}

// A quantity's range shown by the map: min at its first colour, max at its last, clamped outside.
// Held fixed while a run goes on (set from its first frame, by --color-range or in the HUD), so a
// colour means the same speed in every frame.
struct ColorRange {
  float min = 0.0f, max = 1.0f;
  bool valid() const { return std::isfinite(min) && std::isfinite(max) && min < max; }
  bool operator==(const ColorRange& o) const { return min == o.min && max == o.max; }
  bool operator!=(const ColorRange& o) const { return !(*this == o); }
};

// t = speed x scale + offset, with scale and offset from the range on the host, so that the host and
// the GPU evaluate the same fused multiply-add.
struct SpeedToUnit {
  float scale = 1.0f, offset = 0.0f;
};
inline SpeedToUnit speed_to_unit(ColorRange r) {
  float const scale = 1.0f / (r.max - r.min);
  return {scale, -r.min * scale};
}

NBODY_HOST_DEVICE inline Color speed_color(const ColormapTable& map, SpeedToUnit u, float speed) {
  return map_color(map, std::fma(speed, u.scale, u.offset));
}

// A range is fitted from a fixed sample: every stride-th body, at most kSpeedSample of them (all
// bodies up to that many), so the GPU needs to bring back only the sample's speeds.
inline constexpr std::size_t kSpeedSample = 4096;
inline std::size_t speed_sample_stride(std::size_t n) { return n <= kSpeedSample ? 1 : (n + kSpeedSample - 1) / kSpeedSample; }

// The fitted range: from the kRangeLow to the kRangeHigh quantile of the sample's speeds
// (reordered), so that a few escapers or a few bodies at rest do not squeeze everyone else into one
// colour; where those coincide (a symmetric binary, bodies at rest) from 0 to twice their value, or
// [0, 1]. Host only.
inline constexpr double kRangeLow = 0.02, kRangeHigh = 0.98;
ColorRange fit_speed_range(float* sample_speeds, std::size_t count);

}  // namespace nbody::render
