// sim/io/tipsy.h - reading and writing tipsy snapshot files.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "core/bounds.h"
#include "core/enum_names.h"
#include "core/setting_names.h"

#include "sim/io/units.h"
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
  // The Plummer softening the file gives, simulation units: set when every particle carries the
  // same eps (as write_tipsy writes it; 0 is no softening, as hermite4's unsoftened runs write it),
  // empty when they differ. A gas particle's eps is its hsmooth field, as pkdgrav and gasoline read it.
  std::optional<double> softening;
  // The least and the greatest eps the particles carry (0 and 0 for a file of no particles).
  double eps_min = 0.0, eps_max = 0.0;
  // Whether a gas particle's density, temperature or metals, or a star's metals or formation time, is not 0: fields
  // of the file that nbody, which integrates gravity alone, does not keep (write_tipsy writes them as 0).
  bool gas_fields = false, star_fields = false;
};

// The most bodies read_tipsy accepts (2^30): more is refused from the header, before any memory
// is allocated for them.
inline constexpr std::int64_t kTipsyMaxBodies = std::int64_t{1} << 30;
// The largest |mass|, |position|, |velocity| or eps read_tipsy accepts (core/bounds.h: body_value_problem, which every
// reader of bodies applies).
inline constexpr double kTipsyMaxMagnitude = kMaxBodyMagnitude;

// Reads a tipsy file of either form, told apart by the header's ndim (3 in one byte order only).
// Refused, with an InputError of one line naming the file: a path that is not a regular file
// (checked with stat before it is opened: a FIFO, a device or a directory is never read); a
// header with ndim != 3, counts below 0, above kTipsyMaxBodies or not adding up, or a time outside
// [-1e27, 1e27] (core/bounds.h: time_problem); a file whose
// size (from stat, before any particle is read) differs from what the header describes; a
// particle whose mass, position, velocity or eps is not finite, beyond kTipsyMaxMagnitude, or a
// negative mass or eps (body_value_problem; the message names the body index and the field). A failure of the
// machine (an I/O error, no memory for the bodies) is a RuntimeFailure naming the file.
// Fields nbody does not use (rho, temp, metals, tform, phi or id) are not checked. `names`: how the
// advice names the entry points (an HDF5 file given here is continued with --restart).
BodySet read_tipsy(const std::string& path, TipsyInfo* info = nullptr, const SettingNames& names = {});
// The number of bodies the header of the tipsy file `path` declares, refused as read_tipsy refuses the file before it
// reads a body (not a regular file, a bad header, a size that differs from the header's): a check before the work.
std::size_t read_tipsy_bodies(const std::string& path, const SettingNames& names = {});

// Writes bodies grouped as tipsy requires (gas, then dark, then star; stable within a group),
// to `path + ".tmp"` first and renamed into place, so a failure never leaves a partial file.
// `softening` fills the per-particle eps field.
void write_tipsy(const std::string& path, const BodySet& bodies, double softening,
                 TipsyFormat format = TipsyFormat::standard);

// Where write_tipsy changes the bodies' order (they are not grouped gas, dark matter, stars already), a notice that
// says so for `path`; else "".
std::string tipsy_order_notice(const BodySet& bodies, const std::string& path);

// Tipsy has no field for units. Its readers take them from a gasoline parameter file in the file's folder (pynbody
// takes the first "*.param" it finds there or in the folder above, yt refuses a folder of two): dMsolUnit solar
// masses and dKpcUnit kpc, G = 1, as nbody's units are. nbody states a tipsy file's units in PATH + ".param".
std::string tipsy_param_path(const std::string& tipsy_path);
// The first parameter file ("*.param", a regular file) of the folder of `param_path` other than it: what pynbody may
// take for the units of a tipsy file there, and yt refuses two of. "" where there is none (or the folder cannot be
// read: its readers will not read it either). `above`: in the folder above it instead (where pynbody looks when the
// file's own folder holds none).
std::string other_param_file(const std::string& param_path, bool above = false);
// Where pynbody looks for the units of a tipsy file whose own parameter file (`param_path`) is missing: another
// parameter file of its folder (`above` false), else one of the folder above (`above` true, which pynbody reads and
// yt does not). nullopt where neither folder holds one.
struct OtherParamFile {
  std::string path;
  bool above = false;
};
std::optional<OtherParamFile> nearest_other_param_file(const std::string& param_path);
// Whether the file at `param_path` is one write_tipsy_param wrote (its first line says so); false for a file that is
// not there, cannot be read, or is anyone else's.
bool is_nbody_tipsy_param(const std::string& param_path);
// Writes the parameter file that states `units` (physical) for the tipsy file `tipsy_path`, whole or not at all.
void write_tipsy_param(const std::string& param_path, const std::string& tipsy_path, const Units& units);
// The units stated for the tipsy file `tipsy_path` in the file beside it (tipsy_param_path), or nullopt where there is
// none or it states none. Its dMsolUnit and dKpcUnit, which the readers take, are the units: in nbody's file in the
// words they were given in where those name the same; in another program's (gasoline's, ChaNGa's) as it gives them.
// Throws InputError naming the file where it is nbody's but states no units one can read (damaged or edited), or
// where another program's gives one of the two alone, a value no unit has, or bComove on.
std::optional<Units> read_tipsy_param(const std::string& tipsy_path);

}  // namespace nbody::sim
