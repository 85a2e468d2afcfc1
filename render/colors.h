// render/colors.h - how bodies are coloured (GL-free): by speed through a colour map over a fixed
// range, by type and mass, by owning device.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/slice.h"
#include "render/color_mode.h"
#include "render/speed_colors.h"
#include "sim/io/units.h"
#include "sim/physics/body_set.h"

namespace nbody::render {

using Rgba = std::array<float, 4>;

// How speeds become colours: the map, and the range of speeds it spans (simulation units).
struct SpeedColoring {
  Colormap map = Colormap::viridis;
  ColorRange range;
};

// One colour per body. Speeds as speed_colors.h says (the GPU path does the same); types: dark
// matter dim violet, stars warm white (stars of less mass a little bluer), gas cyan; devices: a distinct
// hue per slice, so the partition is visible.
void compute_colors(ColorMode mode, const sim::BodySet& bodies, const std::vector<Slice>& slices,
                    const SpeedColoring& speed, std::vector<Rgba>& out);

// The levels colour by level spans, from level 0 (the map's dark end) to this one (its bright end, which the deeper
// levels share): steps down to 2^-11 of dt max. A 1,024-body Plummer sphere's steps are at levels 0 to 9 (measured
// over 2,000 block steps), most of the map; the deeper steps of close encounters share its brightest colour.
inline constexpr int kLevelColourSpan = 12;

// hermite4's time-step levels (sim::hermite::step_level: level k steps dt_max / 2^k), one colour per
// level through `map`, the same in every frame: level 0 at the map's dark end, kLevelColourSpan - 1 and deeper
// at its bright end, so the bodies in close encounters stand out. Empty `levels` (a run of one shared step, or
// levels not captured): every body the map's middle colour.
void compute_level_colors(const std::vector<std::uint8_t>& levels, std::size_t bodies, Colormap map,
                          std::vector<Rgba>& out);

// The range fit_speed_range chooses for these bodies' speeds (fp32, as the GPU holds them).
ColorRange fit_speed_range(const sim::BodySet& bodies);

// The colours of the type and device modes, with what each means, for the legend.
struct Swatch {
  Rgba color;
  std::string label;
};
// `present`: the body types of the run, a bit each (1 << BodyType); only those are listed (all by default).
std::vector<Swatch> type_swatches(unsigned present = 0b111);
// The bit of each body type found among `types` (sim::BodySet::type).
unsigned types_present(const std::vector<sim::BodyType>& types);
std::vector<Swatch> device_swatches(std::size_t devices);
// The levels present in `levels`, each with its colour (as compute_level_colors gives it), its step
// (dt_max / 2^k; with a physical scale, in a time unit beside it: "dt 0.0625 (2.947 kyr): 207") and how many bodies
// take it; the levels that share the bright end in one line ("dt <= 1.91e-06: 3"); at most 12, the rest said in the
// last label.
std::vector<Swatch> level_swatches(const std::vector<std::uint8_t>& levels, Colormap map, double dt_max,
                                   const sim::Units& units = {});

}  // namespace nbody::render
