// render/colors.cpp - colour modes, colour maps and the fitted speed range.
#include "render/colors.h"

#include <algorithm>
#include <cmath>

#include "render/annotations.h"

namespace nbody::render {
namespace {

ColormapTable make_table(const float (&rgb)[kColormapEntries][3]) {
  ColormapTable t{};
  for (int k = 0; k < kColormapEntries; ++k)
    for (int c = 0; c < 3; ++c) t.rgb[k][c] = rgb[k][c];
  return t;
}

constexpr Rgba kDark{0.45f, 0.3f, 0.75f, 1.0f}, kGas{0.3f, 0.85f, 0.9f, 1.0f}, kHeavyStar{1.0f, 0.85f, 0.6f, 1.0f};
constexpr Rgba kDevicePalette[] = {{1.0f, 0.45f, 0.3f, 1.0f}, {0.35f, 0.8f, 1.0f, 1.0f}, {0.5f, 1.0f, 0.4f, 1.0f},
                                   {1.0f, 0.85f, 0.3f, 1.0f}, {0.85f, 0.45f, 1.0f, 1.0f}, {0.3f, 1.0f, 0.85f, 1.0f},
                                   {1.0f, 0.4f, 0.7f, 1.0f},  {0.7f, 0.7f, 0.7f, 1.0f}};
constexpr std::size_t kPaletteSize = sizeof(kDevicePalette) / sizeof(kDevicePalette[0]);

}  // namespace

const ColormapTable& colormap_table(Colormap map) {
  static const ColormapTable viridis = make_table(kViridisTable), inferno = make_table(kInfernoTable),
                             magma = make_table(kMagmaTable), plasma = make_table(kPlasmaTable),
                             classic = make_table(kClassicTable);
  switch (map) {
    case Colormap::inferno: return inferno;
    case Colormap::magma: return magma;
    case Colormap::plasma: return plasma;
    case Colormap::classic: return classic;
    case Colormap::viridis: break;
  }
  return viridis;
}

ColorRange fit_speed_range(float* sample_speeds, std::size_t count) {
  if (count == 0) return {};
  auto quantile = [&](double q) {
    std::size_t const k = std::min(count - 1, std::size_t(q * double(count - 1) + 0.5));
    std::nth_element(sample_speeds, sample_speeds + k, sample_speeds + count);
    return sample_speeds[k];
  };
  float const low = quantile(kRangeLow), high = quantile(kRangeHigh);
  if (std::isfinite(low) && std::isfinite(high) && high - low > 1e-6f * high) return {low, high};
  if (std::isfinite(high) && high > 0) return {0.0f, 2.0f * high};
  return {};
}

ColorRange fit_speed_range(const sim::BodySet& b) {
  std::size_t const n = b.size(), stride = speed_sample_stride(n);
  std::vector<float> sample;
  sample.reserve(kSpeedSample);
  for (std::size_t i = 0; i < n; i += stride)
    sample.push_back(speed_of(float(b.velocity[i].x), float(b.velocity[i].y), float(b.velocity[i].z)));
  return fit_speed_range(sample.data(), sample.size());
}

void compute_colors(ColorMode mode, const sim::BodySet& b, const std::vector<Slice>& slices,
                    const SpeedColoring& speed, std::vector<Rgba>& out) {
  std::size_t const n = b.size();
  out.resize(n);
  if (mode == ColorMode::speed) {
    // Velocities as the fp32 GPU engine holds them, so both paths see the same inputs.
    ColormapTable const& map = colormap_table(speed.map);
    SpeedToUnit const unit = speed_to_unit(speed.range);
    for (std::size_t i = 0; i < n; ++i) {
      Color const c = speed_color(map, unit, speed_of(float(b.velocity[i].x), float(b.velocity[i].y), float(b.velocity[i].z)));
      out[i] = {c.r, c.g, c.b, c.a};
    }
  } else if (mode == ColorMode::type) {
    double max_star = 0;
    for (std::size_t i = 0; i < n; ++i)
      if (b.type[i] == sim::BodyType::star) max_star = std::max(max_star, b.pos_mass[i].w);
    for (std::size_t i = 0; i < n; ++i) {
      switch (b.type[i]) {
        case sim::BodyType::dark:
          out[i] = kDark;
          break;
        case sim::BodyType::gas:
          out[i] = kGas;
          break;
        case sim::BodyType::star: {
          float const light = max_star > 0 ? float(1.0 - b.pos_mass[i].w / max_star) : 0.0f;  // 0 = heaviest
          out[i] = {1.0f, 0.85f + 0.1f * light, 0.6f + 0.4f * light, 1.0f};
          break;
        }
      }
    }
  } else if (mode == ColorMode::level) {
    compute_level_colors({}, n, speed.map, out);  // the levels are the frame's, not the bodies': see the viewer
  } else {
    for (std::size_t d = 0; d < slices.size(); ++d)
      for (std::size_t i = slices[d].begin; i < slices[d].end() && i < n; ++i) out[i] = kDevicePalette[d % kPaletteSize];
  }
}

namespace {

// The colour of level k over the fixed span: level 0 (dt max's power of two) at the map's dark end (0.15: the
// darkest tenth or so is hard to see on black), kLevelColourSpan - 1 and deeper at its bright end. Fixed, as the speed
// map's range is, so that a colour means one step in every frame (stretched over the levels present, a level changed
// colour as deeper ones came and went).
Rgba level_color(const ColormapTable& map, int k) {
  float const t = 0.15f + 0.85f * float(std::min(k, kLevelColourSpan - 1)) / float(kLevelColourSpan - 1);
  Color const c = map_color(map, t);
  return {c.r, c.g, c.b, 1.0f};
}

// A run of one shared step (no levels): the map's middle, which no level is said to be.
Rgba shared_step_color(const ColormapTable& map) {
  Color const c = map_color(map, 0.6f);
  return {c.r, c.g, c.b, 1.0f};
}

}  // namespace

void compute_level_colors(const std::vector<std::uint8_t>& levels, std::size_t bodies, Colormap map,
                          std::vector<Rgba>& out) {
  ColormapTable const& table = colormap_table(map);
  out.resize(bodies);
  if (levels.size() != bodies) {
    std::fill(out.begin(), out.end(), shared_step_color(table));
    return;
  }
  for (std::size_t i = 0; i < bodies; ++i) out[i] = level_color(table, levels[i]);
}

std::vector<Swatch> level_swatches(const std::vector<std::uint8_t>& levels, Colormap map, double dt_max,
                                   const sim::Units& units) {
  ColormapTable const& table = colormap_table(map);
  if (levels.empty()) return {{shared_step_color(table), "one shared time step"}};
  std::size_t counts[256] = {};
  for (std::uint8_t l : levels) ++counts[l];
  double top = 1.0;  // the largest power of two at or below dt_max: level 0's step
  while (top > dt_max) top *= 0.5;
  while (top * 2 <= dt_max) top *= 2;
  auto label = [&](int k, const char* relation, std::size_t count) {
    double const dt = std::ldexp(top, -k);
    std::string const physical = units.physical() ? " (" + physical_time_text(dt, units) + ")" : "";
    char text[96];
    std::snprintf(text, sizeof text, "dt%s %.3g%s: %zu", relation, dt, physical.c_str(), count);
    return std::string(text);
  };
  std::vector<Swatch> s;
  std::size_t more = 0;
  int const last = kLevelColourSpan - 1;  // this level and the deeper ones share the map's bright end: one line
  for (int k = 0; k < last; ++k) {
    if (!counts[k]) continue;
    if (s.size() == 12) {
      more += counts[k];
      continue;
    }
    s.push_back({level_color(table, k), label(k, "", counts[k])});
  }
  std::size_t deep = 0;
  bool deeper = false;
  for (int k = last; k < 256; ++k) deep += counts[k], deeper = deeper || (k > last && counts[k]);
  if (deep && s.size() < 12)
    s.push_back({level_color(table, last), label(last, deeper ? " <=" : "", deep)});
  else
    more += deep;
  if (more) s.back().label += " (+" + std::to_string(more) + " shorter)";
  return s;
}

std::vector<Swatch> type_swatches(unsigned present) {
  auto has = [&](sim::BodyType t) { return (present >> unsigned(t)) & 1u; };
  std::vector<Swatch> s;
  if (has(sim::BodyType::star)) s.push_back({kHeavyStar, "stars (less mass: bluer)"});
  if (has(sim::BodyType::dark)) s.push_back({kDark, "dark matter"});
  if (has(sim::BodyType::gas)) s.push_back({kGas, "gas"});
  return s;
}

unsigned types_present(const std::vector<sim::BodyType>& types) {
  unsigned present = 0;
  for (sim::BodyType t : types) present |= 1u << unsigned(t);
  return present;
}

std::vector<Swatch> device_swatches(std::size_t devices) {
  std::vector<Swatch> s;
  for (std::size_t d = 0; d < std::min(devices, kPaletteSize); ++d)
    s.push_back({kDevicePalette[d], "device " + std::to_string(d)});
  if (devices > kPaletteSize) s.back().label += " (colours repeat)";
  return s;
}

}  // namespace nbody::render
