// sim/io/tipsy.h - reading and writing tipsy snapshot files.
#pragma once

#include <array>
#include <string>

#include "core/enum_names.h"

#include "sim/physics/body_set.h"

namespace nbody::sim {

// Standard tipsy is big-endian (XDR) with a float potential `phi` ending each dark and star
// record; the Bonsai variant (e.g. galaxy_20K.bin from NVIDIA's samples) is little-endian and
// stores an integer particle id in that place. Both have a 32-byte header (28 + 4 bytes pad).
enum class TipsyFormat { standard, little_endian };
inline constexpr std::array<EnumName<TipsyFormat>, 2> kTipsyFormatNames{
    {{TipsyFormat::standard, "standard"}, {TipsyFormat::little_endian, "little-endian"}}};
constexpr const auto& enum_names(TipsyFormat) { return kTipsyFormatNames; }

struct TipsyInfo {
  TipsyFormat format = TipsyFormat::standard;
  std::size_t gas = 0, dark = 0, star = 0;
};

// Reads a tipsy file of either form, told apart by the header. Throws InputError naming the
// file and the problem for a missing, truncated, oversized or inconsistent file.
BodySet read_tipsy(const std::string& path, TipsyInfo* info = nullptr);

// Writes bodies grouped as tipsy requires (gas, then dark, then star; stable within a group),
// to `path + ".tmp"` first and renamed into place, so a failure never leaves a partial file.
// `softening` fills the per-particle eps field.
void write_tipsy(const std::string& path, const BodySet& bodies, double softening,
                 TipsyFormat format = TipsyFormat::standard);

}  // namespace nbody::sim
