// render/color_mode.h - what the viewer colours bodies by. A header of its own (no GL, no GLM) so
// the command line can name colour modes in a build without the viewer.
#pragma once

#include <array>

#include "core/enum_names.h"

namespace nbody::render {

enum class ColorMode { speed, type, device };
inline constexpr std::array<EnumName<ColorMode>, 3> kColorModeNames{
    {{ColorMode::speed, "speed"}, {ColorMode::type, "type"}, {ColorMode::device, "device"}}};
constexpr const auto& enum_names(ColorMode) { return kColorModeNames; }

// The next mode, as the 'c' key cycles them.
constexpr ColorMode next(ColorMode m) {
  return m == ColorMode::speed ? ColorMode::type : m == ColorMode::type ? ColorMode::device : ColorMode::speed;
}

}  // namespace nbody::render
