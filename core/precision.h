// core/precision.h - the floating-point precision a simulation runs in.
#pragma once

#include <string>

namespace nbody {

enum class Precision { fp32, fp64 };

inline std::string to_string(Precision p) { return p == Precision::fp32 ? "fp32" : "fp64"; }

}  // namespace nbody
