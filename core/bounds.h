// core/bounds.h - the limits on a run's settings, one definition for every door they come in by:
// the command line, a checkpoint's header, the viewer's fields and (later) Python.
#pragma once

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <iomanip>
#include <limits>
#include <optional>
#include <sstream>
#include <string>

#include "core/precision.h"

namespace nbody {

inline constexpr std::uint64_t kMaxBodies = std::uint64_t{1} << 30;  // 1,073,741,824: indices fit in 32 bits
inline constexpr std::uint64_t kMaxSteps = 1000000000000000ull;      // 1e15: far beyond any run, far below wrapping
inline constexpr double kMaxDt = 1e12;                               // simulation time units
inline constexpr double kMaxSoftening = 1e12;                        // simulation length units
// The largest |mass|, |position| or |velocity| a body may have (simulation units), from any source: fp32 forces
// square coordinate differences, and (2e15)^2 stays far below FLT_MAX (3.4e38) where 1e19 does not.
inline constexpr double kMaxBodyMagnitude = 1e15;
inline constexpr double kMaxTime = 1e27;  // |time| a run can name (--t-end): kMaxSteps steps of kMaxDt
inline constexpr long long kMaxDevices = 256;           // GPUs or host devices per process
inline constexpr long long kMaxStepsPerFrame = 1000000;  // the viewer's steps per frame (--steps-per-frame)
// A benchmark's timed steps (fixed steps: each one timed, its time kept, on a GPU with events of its own).
inline constexpr std::uint64_t kMaxTimedSteps = 1000000;
inline constexpr double kMaxPointSize = 1024;           // the viewer's sprite size in pixels (--point-size)
inline constexpr double kMaxBrightness = 1e6;           // the light each sprite adds (--brightness)

// The fields of a body as the messages name them: its mass, then its position and velocity by axis.
inline constexpr const char* kBodyFields[7] = {"mass",       "position x", "position y", "position z",
                                               "velocity x", "velocity y", "velocity z"};

// Why `value` cannot be a body's `field` (one of kBodyFields, or a tipsy file's "eps"), or "": not finite, negative
// where `non_negative` (a mass, a softening), or beyond kMaxBodyMagnitude: "position x is 1e+19; nbody reads
// magnitudes up to 1e15". One rule for every door bodies come in by (a tipsy file, an HDF5 snapshot or checkpoint,
// Python's arrays), so that what one takes the others take. `bounded` false: no magnitude bound, for the one file
// that is a run's own state rather than bodies to start from (a checkpoint whose checksum holds: a run may carry a
// body past 1e15, and a restart continues it bit for bit).
inline std::string body_value_problem(const char* field, double value, bool non_negative, bool bounded = true) {
  std::ostringstream said;
  said << field << " is ";
  if (std::isnan(value))
    said << "nan";
  else if (std::isinf(value))
    said << (value > 0 ? "inf" : "-inf");
  else
    said << value;
  if (!std::isfinite(value)) return said.str() + "; nbody reads finite values only";
  if (non_negative && value < 0) return said.str() + "; it must be >= 0";
  if (bounded && std::abs(value) > kMaxBodyMagnitude) return said.str() + "; nbody reads magnitudes up to 1e15";
  return {};
}

// How a real setting's bounds read in a message: "(0, 1e+12]" for above 0 and at most 1e12.
enum class Ends { closed, above_min, below_max };

inline std::string interval(double min, double max, Ends ends) {
  auto num = [](double v) {
    std::ostringstream s;
    s << v;
    return s.str();
  };
  return (ends == Ends::above_min ? "(" : "[") + num(min) + ", " + num(max) + (ends == Ends::below_max ? ")" : "]");
}

inline bool in_interval(double v, double min, double max, Ends ends) {
  return std::isfinite(v) && (ends == Ends::above_min ? v > min : v >= min) &&
         (ends == Ends::below_max ? v < max : v <= max);
}

// Why `dt` cannot be a time step, or "": it must be a positive, normal number (a subnormal one has
// lost its precision, and time would advance by a rounding error) of at most kMaxDt.
inline std::string dt_problem(double dt) {
  if (!std::isfinite(dt) || !(dt > 0) || dt > kMaxDt) return "must be a positive number of at most 1e12";
  if (dt < std::numeric_limits<double>::min()) return "too small to advance time (below 2.2e-308)";
  return {};
}

// Why `time` cannot be a time of a run, or "": outside the times a run can name (--t-end), [-kMaxTime, kMaxTime],
// or not a number. The time a run starts at is held to it by every door (a tipsy header, an HDF5 snapshot's
// Header/Time, Python's time=), as "Header/Time 1e+300 is not a time in [-1e27, 1e27]".
inline std::string time_problem(double time) {
  if (!(std::abs(time) <= kMaxTime)) return "not a time in [-1e27, 1e27]";
  return {};
}

// The smallest softening `precision` computes with. A body's pair with itself computes
// 0 x m (eps^2)^(-3/2): in fp32 that is 0 only while eps^-3 is finite (eps above 1.4e-13), else
// 0 x inf = NaN at the first step; the fp64 GPU kernels seed (eps^2)^(-1/2) from the fp32 rsqrt, so
// eps^2 must be a normal float there (eps above 1.1e-19). Twice those, so that masses of a few units
// keep the term finite too: 2.9e-13 (fp32) and 2.2e-19 (fp64).
inline double smallest_softening(Precision precision) {
  if (precision == Precision::fp32) return 2.0 * std::cbrt(1.0 / double(std::numeric_limits<float>::max()));
  return 2.0 * std::sqrt(double(std::numeric_limits<float>::min()));
}

// Why `softening` cannot be used in `precision`, or "".
inline std::string softening_problem(double softening, Precision precision) {
  if (!std::isfinite(softening) || !(softening > 0) || softening > kMaxSoftening)
    return "must be a positive length of at most 1e12";
  if (softening < smallest_softening(precision)) {
    std::ostringstream s;
    s << std::setprecision(2) << "too small for " << name_of(precision)
      << ": a body's pair with itself overflows to NaN below " << smallest_softening(precision);
    return s.str();
  }
  return {};
}

// Why `damping` cannot be euler-damped's factor per step, or "": it must be in (0, 1].
inline std::string damping_problem(double damping) {
  if (!std::isfinite(damping) || !(damping > 0) || damping > 1) return "must be in (0, 1]";
  return {};
}

// hermite4's settings (sim/physics/hermite_step.h). eta and eta_start are accuracy parameters (Aarseth's
// criterion has eta inside the square root): positive, at most kMaxEta (a step of 10 times the local
// dynamical time, so that shared-step runs with a large eta are limited by --dt-max alone). dt_max is a time
// in [kMinDtMax, kMaxDt]: the largest power of two at or below it is the longest step; the floor (2^-40 of a
// time unit, and 2^-44 of the block time) stays far below the smallest.
inline constexpr double kMaxEta = 100.0;
inline constexpr double kMinDtMax = 1e-9;
// A number as a message shows it: the shortest text that reads back as the same double (1.03 as "1.03", a block time
// as all of its binary fraction), so that two values that differ never show alike, and a value refused for lying
// just outside a bound does not show as the bound ("100.0000001", not "100").
inline std::string shortest(double x) {
  char text[32];
  for (int digits = 6; digits <= 17; ++digits) {
    std::snprintf(text, sizeof text, "%.*g", digits, x);
    if (std::strtod(text, nullptr) == x) break;
  }
  return text;
}

// `text` without the `blanks` around it: the layout of a value in a list, a file or an option, not part of it.
inline std::string trimmed(const std::string& text, const char* blanks) {
  std::size_t const first = text.find_first_not_of(blanks);
  if (first == std::string::npos) return {};
  return text.substr(first, text.find_last_not_of(blanks) - first + 1);
}

// A number given as text (an option's value, a units file's dMsolUnit), or nothing: the whole text in one grammar,
// decimal, an optional sign, digits with an optional point, an optional exponent ("16", "+0.01", "1.6e-2", ".5"), or
// inf, infinity or nan in any case (numbers, which every range then refuses by name: "--dt nan: must be ...").
// Not hexadecimal, which strtod reads ("0x10" is 16 to it), nor blanks before or after, nor a value too large for a
// double (1e999) or too small for any but 0 (1e-400): each would be a value nobody gave. A number too small for a
// normal double (5e-324) is one.
inline std::optional<double> parse_decimal(const std::string& text) {
  auto digit = [&](std::size_t i) { return i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); };
  std::size_t i = 0, digits = 0;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
  std::string word = text.substr(i);
  for (char& ch : word) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  if (word == "inf" || word == "infinity" || word == "nan") return std::strtod(text.c_str(), nullptr);
  for (; digit(i); ++i) ++digits;
  if (i < text.size() && text[i] == '.')
    for (++i; digit(i); ++i) ++digits;
  if (digits == 0) return std::nullopt;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    if (!digit(i)) return std::nullopt;
    while (digit(i)) ++i;
  }
  if (i != text.size()) return std::nullopt;
  errno = 0;
  double const v = std::strtod(text.c_str(), nullptr);
  if (errno == ERANGE && (std::isinf(v) || v == 0.0)) return std::nullopt;
  return v;
}

// The ranges as the messages write them (for a value and for a text that is no number alike).
inline constexpr const char* kEtaRange = "(0, 100]";
inline constexpr const char* kDtMaxRange = "[1e-09, 1e12]";

// Why `eta` cannot be --eta (or --eta-start: `option`), or "".
inline std::string eta_problem(double eta, const char* option = "--eta") {
  if (!std::isfinite(eta) || !(eta > 0) || eta > kMaxEta) {
    return std::string(option) + ' ' + shortest(eta) + ": must be in " + kEtaRange;
  }
  return {};
}

// Why `dt_max` cannot be --dt-max, or "".
inline std::string dt_max_problem(double dt_max, const char* option = "--dt-max") {
  if (!std::isfinite(dt_max) || !(dt_max >= kMinDtMax) || dt_max > kMaxDt) {
    return std::string(option) + ' ' + shortest(dt_max) + ": must be in " + kDtMaxRange;
  }
  return {};
}

// A time setting's range, in the run's units: checked on the value given, and on a time given in a unit once it is in
// the run's units (driver::typed_time). --dt-max's is hermite4's rule (dt_max_problem, above), the same interval.
struct TimeRange {
  double min, max;
  Ends ends;
  const char* what;  // "a time step": "must be a time step in (0, 1e+12]"
};
// The range of the time setting `option` (the command line's name: "--dt", "--dt-max", "--t-end", "--checkpoint-dt",
// "--diagnostics-dt", "--snapshot-dt"); nullptr for another.
inline const TimeRange* time_range(const std::string& option) {
  static const TimeRange dt{0, kMaxDt, Ends::above_min, "a time step"},
      dt_max{kMinDtMax, kMaxDt, Ends::closed, "a longest step"}, t_end{-kMaxTime, kMaxTime, Ends::closed, "a time"},
      every{0, kMaxTime, Ends::above_min, "a time"};
  if (option == "--dt") return &dt;
  if (option == "--dt-max") return &dt_max;
  if (option == "--t-end") return &t_end;
  if (option == "--checkpoint-dt" || option == "--diagnostics-dt" || option == "--snapshot-dt") return &every;
  return nullptr;
}

}  // namespace nbody
