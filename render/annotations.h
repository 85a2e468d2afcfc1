// render/annotations.h - what the overlay writes beside the bodies, GL-free so it is tested without a
// window: the colour legend's ticks, the scale bar's round length, the time stamp, each in N-body
// units or, when the run has a physical scale (--mass-unit, --length-unit), in astronomers' units.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sim/io/units.h"

namespace nbody::render {

// Round values (1, 2 or 5 x 10^k apart) inside [min, max], at most max_ticks and at least two where the
// range allows: where a legend puts its ticks. Empty for an empty or invalid range.
std::vector<double> legend_ticks(double min, double max, int max_ticks = 6);

// A tick's text: the decimals the ticks' step needs, the same on every tick ("0.25", "600"), or two
// significant digits in exponent form beyond 1e5 or below 1e-3 ("1.5e+06").
std::string tick_label(double value, double step);

// A quantity as shown: simulation values times `factor` are values in `unit`.
struct DisplayUnit {
  double factor = 1.0;
  std::string unit;  // "km/s", "pc", ...; "" in N-body units
};
// Speeds: km/s with a physical scale, else N-body units.
DisplayUnit speed_unit(const sim::Units& units);
// A length shown as `length` simulation units: N-body units, or the one of Mpc, kpc, pc, au, km in
// which it is at least `at_least` (the largest such), so a bar reads "200 pc" rather than "0.2 kpc".
DisplayUnit length_unit(const sim::Units& units, double length, double at_least = 1.0);

// The scale bar: a round length (1, 2 or 5 x 10^k in its unit) whose bar is at most max_pixels
// long and more than 0.4 of it, at `world_per_pixel` simulation lengths per pixel.
struct ScaleBar {
  double pixels = 0;      // the bar's length on screen
  double length = 0;      // in simulation units
  std::string label;      // "0.5 N-body units", "200 pc"
};
ScaleBar scale_bar(double world_per_pixel, double max_pixels, const sim::Units& units);

// A time (or a span of it) of a run with a physical scale (units.physical()), in the largest of Gyr, Myr, kyr, yr, d,
// h that makes it at least 1, else seconds, four significant digits: "5.658 Myr".
std::string physical_time_text(double time, const sim::Units& units);

// A simulation time in N-body units with the digits that tell it from the time one step later, so that every step
// changes what is shown. Fixed steps of `dt`: to dt's leading decimal place, at least 4 significant digits ("13.4",
// "100.01" where %.4g gave "100"). hermite4's block times (`dt` 0: each body has its own step, down to 2^-40 of
// dt max): 12 significant digits, which hold a block time exactly down to steps of about 1e-11 of it ("13.40625";
// the panel's count of block steps tells steps apart beyond that).
std::string time_text(double time, double dt);

// "t = 12.5 N-body units" (time_text's digits); with a physical scale, the time in the largest of Gyr, Myr, kyr, yr,
// d, h, s that makes it at least 1: "t = 12.5 Myr".
std::string time_label(double time, double dt, const sim::Units& units);

// The HUD panel's lines of the run's state, in N-body units and, with a physical scale, in its units as the
// overlay's time stamp and scale bar read: "t = 1.2 (5.658 Myr)" ("block time = ..." for hermite4, whose `dt` is
// 0: time_text), "|dE/E| = 1.0e-04 at 3.112 Myr" (at t = 0.66 without a scale, with the time line's digits),
// "r10/50/90 = 1.07 1.34 1.67 kpc".
std::string panel_time_line(double time, bool block_steps, double dt, const sim::Units& units);
// The steps made ("step 1340", "block step 1234", "   paused" after): each step, and each 'n', changes it.
std::string panel_step_line(std::uint64_t step, bool block_steps, bool paused);
// The rates: "12.3 steps/s   step 81.2 ms" ("block steps/s"), "N = 4096   2.68e+09 interactions/s". Before a step
// was timed (`step_ms` 0) they are not measured: "-", not a rate of 0, which reads as a run that does not move.
std::string panel_rate_line(double steps_per_s, double step_ms, bool block_steps);
std::string panel_bodies_line(std::size_t bodies, double interactions_per_s, double step_ms);
// The energy error at `time`, which reads as the time line's does (its digits set by `dt`, 0 for hermite4).
std::string panel_energy_line(double error, double time, double dt, const sim::Units& units);
// Before the first measure, which comes with a step: for hermite4, where every body is next at one time (`due`, the
// block time the run's frames go to: a dt max far longer than the steps, 1e6 typed in the panel, puts that far off,
// where "measuring" would read as stuck); else "energy error: after the first step" where the run is paused (at its
// start or at a restart's time: nothing is measured until a step), or "energy error: measuring".
std::string panel_energy_wait_line(bool paused, std::optional<double> due, const sim::Units& units);
std::string panel_radii_line(const std::array<double, 3>& radii, const sim::Units& units);

// A panel line broken to fit `room` (in the units `width` measures text in), never inside a word: a figure (the words
// between two runs of two spaces or more: "step 2.12 ms", "N = 2000") stays on one line where one line holds it, so
// a narrow panel breaks between figures, not between a number and its unit; a figure wider than a line breaks
// between its words; a word wider than a line stands alone. The gaps between the pieces of a line are kept as
// given ("12.3 steps/s   step 81.2 ms" on one line where it fits).
std::vector<std::string> panel_lines(const std::string& text, float room,
                                     const std::function<float(const std::string&)>& width);

}  // namespace nbody::render
