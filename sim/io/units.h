// sim/io/units.h - the physical scale of a run's G = 1 units, as files state it: N-body (Hénon)
// units with no scale, or a mass and a length unit from which the time and velocity units follow.
#pragma once

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "core/setting_names.h"

namespace nbody::sim {

// Constants in cgs. G: CODATA 2018. The solar, Jovian and terrestrial masses are the IAU 2015
// nominal mass parameters (GM, Resolution B3) divided by that G; the astronomical unit is the IAU
// 2012 definition and the parsec 648000/pi au (IAU 2015 B2).
inline constexpr double kGravitationalConstantCgs = 6.67430e-8;  // cm^3 g^-1 s^-2
inline constexpr double kSolarMassGrams = 1.3271244e26 / kGravitationalConstantCgs;
inline constexpr double kJupiterMassGrams = 1.2668653e23 / kGravitationalConstantCgs;
inline constexpr double kEarthMassGrams = 3.986004e20 / kGravitationalConstantCgs;
inline constexpr double kAstronomicalUnitCm = 1.495978707e13;
inline constexpr double kParsecCm = kAstronomicalUnitCm * 648000.0 / 3.14159265358979323846;

// The scale of a run's units. The run itself is always in G = 1 units; this only says what one
// unit of mass and length are, so that files can tell analysis tools (SWIFT's unit attributes).
struct Units {
  std::string mass;    // as given, e.g. "1e5Msun"; empty: N-body units
  std::string length;  // as given, e.g. "1pc"; empty: N-body units
  double mass_g = 1.0;     // grams in one mass unit (1 in N-body units: no scale)
  double length_cm = 1.0;  // centimetres in one length unit (1 in N-body units)

  bool physical() const { return !mass.empty(); }
  // sqrt(L^3 / (G M)) in seconds: the time unit that makes G = 1 (1 in N-body units).
  double time_s() const;
  // L / T in cm/s (1 in N-body units).
  double velocity_cm_per_s() const { return length_cm / time_s(); }
  // "N-body (Henon) units" or "1e5Msun, 1pc".
  std::string describe() const;
  // What follows from the two, for a run's report: "time unit 0.4715 Myr, velocity unit 2.074 km/s" (empty in N-body
  // units). A year is the Julian year.
  std::string derived() const;
  // Its first part: "time unit 0.4715 Myr" (empty in N-body units).
  std::string time_unit() const;
  // A time in these units as a physical one, in the largest of the years and days it is at least one of (seconds
  // below a day): "4.999 Myr" for 10.6 in 1e3Msun, 1pc, "10 d" (empty in N-body units).
  std::string physical(double time) const;
  // A time as a message gives it: its shortest exact form, and in physical units that time too ("4.2419345357841385
  // (2 Myr)"; "4.25" in N-body units).
  std::string time_text(double time) const;

  bool operator==(const Units& o) const { return mass == o.mass && length == o.length; }
  // The same scale, in whatever words (1e5Msun and 100000Msun, 1pc and 0.001kpc): what the files' readers take.
  // Within `tolerance`, relative: 1e-3 takes another program's constants (GADGET's 1.989e43 g for 1e10 Msun, the IAU's
  // 1.98841e43) for the same scale.
  bool same_scale(const Units& o, double tolerance = 1e-12) const {
    auto near = [&](double a, double b) { return std::abs(a - b) <= tolerance * std::max(std::abs(a), std::abs(b)); };
    return physical() == o.physical() && near(mass_g, o.mass_g) && near(length_cm, o.length_cm);
  }
  bool operator!=(const Units& o) const { return !(*this == o); }
};

// The units named by a mass and a length ("1e5Msun", "1pc"): both, or neither (N-body units).
// Throws InputError naming the setting (as `names` spells it) and the value, and what is allowed: a
// positive number (optional, 1 when left out) followed by a unit of the list below, the whole scale
// within 1e-30 .. 1e60 in cgs.
Units parse_units(const std::string& mass, const std::string& length, const SettingNames& names = {});

// Where a mass and a length unit were read from, as parse_units's messages name them: a file's fields rather than
// options the user did not give.
struct UnitSource {
  std::string mass_given, length_given;  // each with its value: "Header/MassUnit 'banana'", "dMsolUnit 1e308"
  std::string mass_name, length_name;    // without it, for "give ... too": "Header/LengthUnit"
};
// parse_units, its messages naming `source`: "Header/MassUnit 'banana': give Header/LengthUnit too (...)".
Units parse_units(const std::string& mass, const std::string& length, const UnitSource& source);

// The units the options accept, for messages and --help.
inline constexpr const char* kMassUnitNames = "Msun, Mjup, Mearth, kg, g";
inline constexpr const char* kLengthUnitNames = "Mpc, kpc, pc, au, km, m, cm";
inline constexpr const char* kTimeUnitNames = "Gyr, Myr, kyr, yr, d, s";

// A time given in a physical unit: "10Myr", "2.5 kyr", "1e6yr" (a year is the Julian year, as astropy's yr).
struct PhysicalTime {
  double seconds = 0.0;
  std::string unit;  // "Myr"
};
// The text as a time in a physical unit, where it is a number followed by one of kTimeUnitNames (spaces allowed
// around them); nullopt for anything else (a plain number is a time in the run's own units; other text is for the
// setting's own check to refuse).
std::optional<PhysicalTime> physical_time(const std::string& text);
// A physical time in the run's units (seconds / units.time_s()). Throws InputError where the run has no physical
// units (N-body units: the setting, as given, and where the units come from), or where the result is not finite.
double in_run_units(const PhysicalTime& time, const Units& units, const std::string& given,
                    const SettingNames& names = {});

}  // namespace nbody::sim
