// core/precision.h - the floating-point precision a simulation runs in.
#pragma once

#include <array>
#include <string>

#include "core/enum_names.h"

namespace nbody {

enum class Precision { fp32, fp64 };

inline constexpr std::array<EnumName<Precision>, 2> kPrecisionNames{{{Precision::fp32, "fp32"}, {Precision::fp64, "fp64"}}};
constexpr const auto& enum_names(Precision) { return kPrecisionNames; }

inline std::string to_string(Precision p) { return name_of(p); }

}  // namespace nbody
