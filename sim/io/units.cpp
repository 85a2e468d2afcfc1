// sim/io/units.cpp - parsing "1e5Msun" and "2.5kpc", and the time unit that makes G = 1.
#include "sim/io/units.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "core/bounds.h"
#include "core/errors.h"

namespace nbody::sim {

namespace {

struct UnitName {
  const char* name;
  double cgs;
};
constexpr UnitName kMassUnits[] = {
    {"Msun", kSolarMassGrams}, {"Mjup", kJupiterMassGrams}, {"Mearth", kEarthMassGrams}, {"kg", 1e3}, {"g", 1.0}};
constexpr UnitName kLengthUnits[] = {{"Mpc", 1e6 * kParsecCm}, {"kpc", 1e3 * kParsecCm}, {"pc", kParsecCm},
                                     {"au", kAstronomicalUnitCm}, {"km", 1e5}, {"m", 1e2}, {"cm", 1.0}};
// The time units a time may be given in, longest first (a year is the Julian year, as astropy's "yr").
constexpr double kYear = 365.25 * 86400.0;
constexpr std::pair<const char*, double> kTimeUnits[] = {{"Gyr", 1e9 * kYear}, {"Myr", 1e6 * kYear},
                                                         {"kyr", 1e3 * kYear}, {"yr", kYear},
                                                         {"d", 86400.0},       {"s", 1.0}};
// A scale outside these bounds (in g or cm) is a typing error, and its powers would overflow the
// time unit: (1e60)^3 fits a double.
constexpr double kSmallestScale = 1e-30, kLargestScale = 1e60;

// "1e5Msun", "1e5 Msun", "Msun", "2.5kpc": a positive finite number (1 when left out), optional
// spaces, then one of `units` exactly (case matters: Mpc is not mpc).
template <std::size_t N>
double parse_scale(const std::string& text, const std::string& option, const UnitName (&units)[N], const char* allowed,
                   const char* example) {
  auto refuse = [&](const std::string& why) -> double {
    throw InputError(option + ": " + why + "; give a positive number and a unit (" + allowed + "), e.g. " + example);
  };
  // The range in the system's own unit (g, cm): the entry that is 1 in cgs.
  std::string cgs_name;
  for (auto const& u : units)
    if (u.cgs == 1.0) cgs_name = u.name;
  std::string const bounds = "1e-30 .. 1e60 " + cgs_name;
  // strtod's words for the values no scale can be ("nan", "inf"), which the loop below takes for a unit's name.
  auto lower = [](std::string t) {
    for (char& c : t) c = char(std::tolower(static_cast<unsigned char>(c)));
    return t;
  };
  std::string const head = lower(text.substr(text[0] == '+' || text[0] == '-' ? 1 : 0, 3));
  if (head == "nan" || head == "inf") return refuse("the number is not finite");
  std::size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.' || text[i] == 'e' ||
                             text[i] == 'E' || text[i] == '+' || text[i] == '-')) {
    // An 'e' belongs to the number only when a digit or sign follows ("1e5"), not in "1earth".
    if ((text[i] == 'e' || text[i] == 'E') &&
        (i + 1 >= text.size() || !(std::isdigit(static_cast<unsigned char>(text[i + 1])) || text[i + 1] == '+' ||
                                   text[i + 1] == '-')))
      break;
    ++i;
  }
  double number = 1.0;
  if (i > 0) {
    std::string const digits = text.substr(0, i);
    char* end = nullptr;
    errno = 0;
    number = std::strtod(digits.c_str(), &end);
    if (end != digits.c_str() + digits.size()) return refuse("'" + digits + "' is not a number");
    if (errno == ERANGE || !std::isfinite(number))
      return refuse("'" + digits + "' is beyond a double's range, and the scale must lie within " + bounds);
  }
  while (i < text.size() && text[i] == ' ') ++i;
  std::string const name = text.substr(i);
  for (auto const& u : units) {
    if (name != u.name) continue;
    // The unit first: in "0x10Msun" what is wrong is "x10Msun", not the 0 before it.
    if (!(number > 0)) return refuse("the number must be positive");
    double const scale = number * u.cgs;
    if (!std::isfinite(scale))  // (1e308 kpc)
      return refuse("that is beyond a double's range in " + cgs_name + ", and the scale must lie within " + bounds);
    if (!(scale >= kSmallestScale && scale <= kLargestScale)) {
      char value[64];
      std::snprintf(value, sizeof value, "%.3g %s", scale, cgs_name.c_str());
      return refuse(std::string("that is ") + value + ", outside " + bounds);
    }
    return scale;
  }
  if (name.empty()) return refuse("no unit");
  // Other capitals (kPc, msun) or another program's name for one (pynbody's Msol, astropy's solMass): said as the one
  // meant, where it is of this option's kind.
  auto const& folded = lower;
  static constexpr std::pair<const char*, const char*> kOtherNames[] = {
      {"msun", "Msun"},       {"msol", "Msun"},    {"msolar", "Msun"},  {"m_sun", "Msun"},  {"solmass", "Msun"}, {"m_jup", "Mjup"},
      {"jupitermass", "Mjup"}, {"m_earth", "Mearth"}, {"earthmass", "Mearth"}, {"parsec", "pc"},
      {"kiloparsec", "kpc"},  {"megaparsec", "Mpc"}};
  std::string meant;
  for (auto const& u : units) {
    // (Not where the capital is a prefix's: mpc is a milliparsec to astropy, not an Mpc.)
    bool const prefix = (name[0] == 'm' && u.name[0] == 'M') || (name[0] == 'M' && u.name[0] == 'm');
    if (folded(name) == folded(u.name) && !prefix) meant = u.name;
    for (auto const& [other, unit] : kOtherNames)
      if (folded(name) == other && std::string(unit) == u.name) meant = u.name;
  }
  return refuse("unknown unit '" + name + "'" + (meant.empty() ? "" : " (did you mean " + meant + "?)"));
}

}  // namespace

std::optional<PhysicalTime> physical_time(const std::string& text) {
  std::string const t = trimmed(text, " ");
  // A whole number is a plain number ("1e5"), and a unit follows decimal digits (hexadecimal "0x1d" is not 1 day:
  // the setting's own check refuses it as no number).
  {
    char* end = nullptr;
    (void)std::strtod(t.c_str(), &end);
    if (!t.empty() && end == t.c_str() + t.size()) return std::nullopt;
    if (t.find_first_of("xX") != std::string::npos) return std::nullopt;
  }
  for (auto const& [name, seconds] : kTimeUnits) {
    std::string const unit = name;
    if (t.size() <= unit.size() || t.compare(t.size() - unit.size(), unit.size(), unit) != 0) continue;
    std::string const number = trimmed(t.substr(0, t.size() - unit.size()), " ");
    // The number must be the whole rest: "10Myr", not "10 xMyr" nor "Myr"; a letter before the unit ("10 dyr")
    // belongs to another word.
    char* end = nullptr;
    errno = 0;
    double const value = number.empty() ? NAN : std::strtod(number.c_str(), &end);
    if (number.empty() || end != number.c_str() + number.size() || std::isalpha(static_cast<unsigned char>(number.back())))
      return std::nullopt;
    // Too large for a double is no finite time; too small for a normal one is what strtod gives (0, subnormal).
    if ((errno == ERANGE && std::isinf(value)) || !std::isfinite(value)) return PhysicalTime{INFINITY, unit};
    return PhysicalTime{value * seconds, unit};
  }
  return std::nullopt;
}

double in_run_units(const PhysicalTime& time, const Units& units, const std::string& given,
                    const SettingNames& names) {
  if (!units.physical())
    throw InputError(given + ": a time in " + time.unit + " needs the run's units: give " + names.name("--mass-unit") +
                     " and " + names.name("--length-unit") + " (or start from a file that records them); this run is "
                     "in N-body units, where times are plain numbers");
  double const value = time.seconds / units.time_s();
  if (!std::isfinite(value))
    throw InputError(given + ": not a finite time in the run's units (" + units.describe() + ")");
  return value;
}

double Units::time_s() const {
  if (!physical()) return 1.0;  // no scale: the files state 1 for every unit
  return std::sqrt(length_cm * length_cm * length_cm / (kGravitationalConstantCgs * mass_g));
}

std::string Units::describe() const { return physical() ? mass + ", " + length : "N-body (Henon) units"; }

std::string Units::physical(double time) const {
  if (!physical()) return {};
  // In the largest of the units that it is at least one of (years, then days; seconds below a day).
  double const t = time * time_s();
  std::pair<const char*, double> shown{"s", 1.0};
  for (auto const& unit : kTimeUnits)
    if (std::abs(t) >= unit.second) {
      shown = unit;
      break;
    }
  char text[64];
  std::snprintf(text, sizeof text, "%.4g %s", t / shown.second, shown.first);
  return text;
}

std::string Units::time_text(double time) const {
  return physical() ? shortest(time) + " (" + physical(time) + ")" : shortest(time);
}

std::string Units::time_unit() const { return physical() ? "time unit " + physical(1.0) : std::string(); }

std::string Units::derived() const {
  if (!physical()) return {};
  char text[64];
  std::snprintf(text, sizeof text, ", velocity unit %.4g km/s", velocity_cm_per_s() / 1e5);
  return time_unit() + text;
}

Units parse_units(const std::string& mass, const std::string& length, const SettingNames& names) {
  return parse_units(mass, length,
                     UnitSource{names.quoted("--mass-unit", mass), names.quoted("--length-unit", length),
                                names.name("--mass-unit"), names.name("--length-unit")});
}

Units parse_units(const std::string& mass, const std::string& length, const UnitSource& source) {
  if (mass.empty() && length.empty()) return {};
  char const* const both = " too (the time unit sqrt(L^3/(G M)) needs both)";
  if (mass.empty()) throw InputError(source.length_given + ": give " + source.mass_name + both);
  if (length.empty()) throw InputError(source.mass_given + ": give " + source.length_name + both);
  Units u;
  u.mass = trimmed(mass, " ");  // " 1e5Msun" as "1e5Msun": the files record what was meant
  u.length = trimmed(length, " ");
  u.mass_g = parse_scale(u.mass, source.mass_given, kMassUnits, kMassUnitNames, "1e5Msun");
  u.length_cm = parse_scale(u.length, source.length_given, kLengthUnits, kLengthUnitNames, "1pc");
  return u;
}

}  // namespace nbody::sim
