// render/color_mode.h - what the viewer colours bodies by, with which colour map, and how much of the
// HUD it shows. A header of its own (no GL, no GLM) so the command line can name them in a build
// without the viewer.
#pragma once

#include <array>

#include "core/enum_names.h"

namespace nbody::render {

// level: hermite4's individual time steps, by level (level k steps dt_max / 2^k); a run of one shared
// step shows one colour.
enum class ColorMode { speed, type, device, level };
inline constexpr std::array<EnumName<ColorMode>, 4> kColorModeNames{{{ColorMode::speed, "speed"},
                                                                    {ColorMode::type, "type"},
                                                                    {ColorMode::device, "device"},
                                                                    {ColorMode::level, "level"}}};
constexpr const auto& enum_names(ColorMode) { return kColorModeNames; }

// The next mode, as the 'c' key cycles them.
constexpr ColorMode next(ColorMode m) {
  return m == ColorMode::speed    ? ColorMode::type
         : m == ColorMode::type   ? ColorMode::device
         : m == ColorMode::device ? ColorMode::level
                                  : ColorMode::speed;
}

// Perceptually uniform maps for a quantity (speed): equal steps of the quantity look like equal steps
// of colour, and lightness rises monotonically, so the picture reads in grey too (matplotlib's maps,
// render/colormap_tables.h). viridis is the default: its darkest end is still visible on the black sky,
// where inferno's and magma's fade into it.
enum class Colormap { viridis, inferno, magma, plasma, classic };
inline constexpr std::array<EnumName<Colormap>, 5> kColormapNames{{{Colormap::viridis, "viridis"},
                                                                   {Colormap::inferno, "inferno"},
                                                                   {Colormap::magma, "magma"},
                                                                   {Colormap::plasma, "plasma"},
                                                                   {Colormap::classic, "classic"}}};
constexpr const auto& enum_names(Colormap) { return kColormapNames; }

// How much the viewer draws over the bodies: full (the HUD's panel, the colour legend, the time and
// the scale bar), minimal (for talks and papers: the legend, the time and the scale bar, no widgets)
// or none (the bodies alone). The 'h' key cycles them.
enum class HudMode { full, minimal, none };
inline constexpr std::array<EnumName<HudMode>, 3> kHudModeNames{
    {{HudMode::full, "full"}, {HudMode::minimal, "minimal"}, {HudMode::none, "none"}}};
constexpr const auto& enum_names(HudMode) { return kHudModeNames; }
constexpr HudMode next(HudMode m) {
  return m == HudMode::full ? HudMode::minimal : m == HudMode::minimal ? HudMode::none : HudMode::full;
}

}  // namespace nbody::render
