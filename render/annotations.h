// render/annotations.h - what the overlay writes beside the bodies, GL-free so it is tested without a
// window: the colour legend's ticks, the scale bar's round length, the time stamp, each in N-body
// units or, when the run has a physical scale (--mass-unit, --length-unit), in astronomers' units.
#pragma once

#include <array>
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

// "t = 12.5 N-body units"; with a physical scale, the time in the largest of Gyr, Myr, kyr, yr,
// d, h, s that makes it at least 1: "t = 12.5 Myr".
std::string time_label(double time, const sim::Units& units);

// The HUD panel's lines of the run's state, in N-body units and, with a physical scale, in its units as the
// overlay's time stamp and scale bar read: "t = 1.2 (5.658 Myr)" ("block time = ..." for hermite4, "   paused"
// after), "|dE/E| = 1.0e-04 at 3.112 Myr" (at t = 0.66 without a scale), "r10/50/90 = 1.07 1.34 1.67 kpc".
std::string panel_time_line(double time, bool block_steps, bool paused, const sim::Units& units);
std::string panel_energy_line(double error, double time, const sim::Units& units);
std::string panel_radii_line(const std::array<double, 3>& radii, const sim::Units& units);

}  // namespace nbody::render
