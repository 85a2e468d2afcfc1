// render/colors.h - how bodies are coloured (GL-free): by speed, by type and mass, by owning device.
#pragma once

#include <array>
#include <vector>

#include "core/slice.h"
#include "render/color_mode.h"
#include "render/speed_colors.h"
#include "sim/physics/body_set.h"

namespace nbody::render {

using Rgba = std::array<float, 4>;

// One colour per body. Speeds are normalised as speed_colors.h says (the GPU path does the same);
// types: dark matter
// dim violet, stars warm white (lighter stars a little bluer), gas cyan; devices: a distinct hue
// per slice, so the partition is visible.
void compute_colors(ColorMode mode, const sim::BodySet& bodies, const std::vector<Slice>& slices,
                    std::vector<Rgba>& out);

}  // namespace nbody::render
