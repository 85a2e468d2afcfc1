// render/annotations.cpp - legend ticks, scale bars and time stamps.
#include "render/annotations.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace nbody::render {
namespace {

// The largest 1, 2 or 5 x 10^k at most x (x > 0).
double round_down(double x) {
  double const decade = std::pow(10.0, std::floor(std::log10(x)));
  for (double m : {5.0, 2.0, 1.0})
    if (m * decade <= x * (1 + 1e-9)) return m * decade;
  return decade;
}

// "%.*g" of a value, with -0 shown as 0.
std::string format(double value, int digits) {
  if (value == 0) value = 0;  // -0 as 0
  char text[32];
  std::snprintf(text, sizeof text, "%.*g", digits, value);
  return text;
}

}  // namespace

std::vector<double> legend_ticks(double min, double max, int max_ticks) {
  std::vector<double> ticks;
  if (!(std::isfinite(min) && std::isfinite(max) && min < max) || max_ticks < 2) return ticks;
  // The smallest round step that gives at most max_ticks ticks.
  double step = round_down((max - min) / double(max_ticks));
  auto count = [&](double s) { return std::floor(max / s + 1e-9) - std::ceil(min / s - 1e-9) + 1; };
  while (count(step) > max_ticks) {  // the next round step: 1 -> 2 -> 5 -> 10
    double const decade = std::pow(10.0, std::floor(std::log10(step) + 1e-9));
    double const m = step / decade;
    step = (m < 1.5 ? 2.0 : m < 3.5 ? 5.0 : 10.0) * decade;
  }
  double const first = std::ceil(min / step - 1e-9);
  for (double k = first; k * step <= max * (1 + 1e-12) + 1e-300 && ticks.size() < std::size_t(max_ticks); k += 1)
    ticks.push_back(std::abs(k * step) < 1e-12 * step ? 0.0 : k * step);
  return ticks;
}

std::string tick_label(double value, double step) {
  double const magnitude = std::max(std::abs(value), std::abs(step));
  if (magnitude >= 1e5 || (magnitude > 0 && magnitude < 1e-3)) return format(value, 2);
  // As many decimals as the step's last significant digit needs, the same on every tick.
  double const spacing = std::abs(step) > 0 ? std::abs(step) : std::max(magnitude, 1.0);
  int const decimals = std::clamp(-int(std::floor(std::log10(spacing) + 1e-9)), 0, 6);
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", decimals, value == 0 ? 0.0 : value);
  return text;
}

DisplayUnit speed_unit(const sim::Units& units) {
  if (!units.physical()) return {1.0, ""};
  return {units.velocity_cm_per_s() / 1e5, "km/s"};
}

DisplayUnit length_unit(const sim::Units& units, double length, double at_least) {
  if (!units.physical()) return {1.0, ""};
  struct Named {
    const char* name;
    double cm;
  };
  static const Named kUnits[] = {{"Mpc", 1e6 * sim::kParsecCm}, {"kpc", 1e3 * sim::kParsecCm}, {"pc", sim::kParsecCm},
                                 {"au", sim::kAstronomicalUnitCm}, {"km", 1e5}};
  double const cm = length * units.length_cm;
  for (auto const& u : kUnits)
    if (cm >= at_least * u.cm * (1 - 1e-9)) return {units.length_cm / u.cm, u.name};
  return {units.length_cm / 1e5, "km"};
}

ScaleBar scale_bar(double world_per_pixel, double max_pixels, const sim::Units& units) {
  ScaleBar bar;
  if (!(world_per_pixel > 0) || !std::isfinite(world_per_pixel) || !(max_pixels > 0)) return bar;
  double const longest = world_per_pixel * max_pixels;  // simulation units
  DisplayUnit const u = length_unit(units, longest);
  double const shown = round_down(longest * u.factor);  // in the display unit
  bar.length = shown / u.factor;
  bar.pixels = bar.length / world_per_pixel;
  bar.label = format(shown, 3) + " " + (u.unit.empty() ? "N-body units" : u.unit);
  return bar;
}

std::string physical_time_text(double time, const sim::Units& units) {
  constexpr double kYear = 365.25 * 86400.0;  // the Julian year (IAU)
  struct Named {
    const char* name;
    double s;
  };
  static const Named kUnits[] = {{"Gyr", 1e9 * kYear}, {"Myr", 1e6 * kYear}, {"kyr", 1e3 * kYear}, {"yr", kYear},
                                 {"d", 86400.0},        {"h", 3600.0}};
  double const seconds = time * units.time_s();
  for (auto const& u : kUnits)
    if (std::abs(seconds) >= u.s) return format(seconds / u.s, 4) + " " + u.name;
  return format(seconds, 4) + " s";
}

std::string time_text(double time, double dt) {
  constexpr int kFewest = 4, kMost = 12;
  if (!(dt > 0) || !std::isfinite(dt) || !std::isfinite(time)) return format(time, kMost);
  // The decimal places of the time's leading digit and of the step's: the digits between them, and one more.
  int const time_place = time != 0 ? int(std::floor(std::log10(std::abs(time)))) : 0;
  int const step_place = int(std::floor(std::log10(dt)));
  return format(time, std::clamp(time_place - step_place + 1, kFewest, kMost));
}

std::string time_label(double time, double dt, const sim::Units& units) {
  if (!units.physical()) return "t = " + time_text(time, dt) + " N-body units";
  return "t = " + physical_time_text(time, units);
}

std::string panel_time_line(double time, bool block_steps, double dt, const sim::Units& units) {
  std::string const physical = units.physical() ? " (" + physical_time_text(time, units) + ")" : "";  // as the stamp
  return (block_steps ? "block time = " : "t = ") + time_text(time, block_steps ? 0.0 : dt) + physical;
}

std::string panel_step_line(std::uint64_t step, bool block_steps, bool paused) {
  return (block_steps ? "block step " : "step ") + std::to_string(step) + (paused ? "   paused" : "");
}

std::string panel_rate_line(double steps_per_s, double step_ms, bool block_steps) {
  char const* const steps = block_steps ? "block steps" : "steps";
  if (!(step_ms > 0)) return std::string("- ") + steps + "/s   step - ms";
  char text[96];
  std::snprintf(text, sizeof text, "%.3g %s/s   step %.3g ms", steps_per_s, steps, step_ms);
  return text;
}

std::string panel_bodies_line(std::size_t bodies, double interactions_per_s, double step_ms) {
  char text[96];
  if (!(step_ms > 0))
    std::snprintf(text, sizeof text, "N = %zu   - interactions/s", bodies);
  else
    std::snprintf(text, sizeof text, "N = %zu   %.3e interactions/s", bodies, interactions_per_s);
  return text;
}

std::string panel_energy_line(double error, double time, double dt, const sim::Units& units) {
  char text[32];
  std::snprintf(text, sizeof text, "|dE/E| = %.1e at ", error);
  return text + (units.physical() ? physical_time_text(time, units) : "t = " + time_text(time, dt));
}

std::string panel_energy_wait_line(bool paused, std::optional<double> due, const sim::Units& units) {
  if (!due) return paused ? "energy error: after the first step" : "energy error: measuring";
  return "energy error: at " + (units.physical() ? physical_time_text(*due, units) : "t = " + time_text(*due, 0.0)) +
         ", every body's next common time";
}

namespace {
// Three significant digits, trailing zeros kept ("2.00", not "2" beside "0.757": a figure that reads as cut short),
// with no bare point ("413", not "413."); 0 as "0".
std::string three_digits(double x) {
  if (x == 0.0) return "0";
  char text[32];
  std::snprintf(text, sizeof text, "%#.3g", x);
  std::string s = text;
  if (auto const point = s.find('.'); point != std::string::npos && (point + 1 == s.size() || s[point + 1] == 'e'))
    s.erase(point, 1);
  return s;
}
}  // namespace

std::string panel_radii_line(const std::array<double, 3>& radii, const sim::Units& units) {
  // The half-mass radius' unit (N-body units without a scale); one length unit's where it has none (0, NaN). A
  // radius below 1 stays in its unit down to 0.1 ("0.78 pc", not "1.59e+05 au"), as the scale bar beside it reads:
  // the bar's round lengths take the smaller unit, where a cluster's radii would read in hundreds of thousands.
  DisplayUnit const length =
      length_unit(units, radii[1] > 0 && std::isfinite(radii[1]) ? radii[1] : 1.0, 0.1);
  if (std::isnan(radii[1])) return "r10/50/90 undefined (no mass)";
  std::string text = "r10/50/90 =";
  for (double r : radii) text += " " + three_digits(length.factor * r);
  return length.unit.empty() ? text : text + " " + length.unit;
}

std::vector<std::string> panel_lines(const std::string& text, float room,
                                     const std::function<float(const std::string&)>& width) {
  std::vector<std::string> lines;
  float x = 0;
  // `piece` after `gap` (its spaces before): on the line being made where it fits, else on a new one.
  auto place = [&](const std::string& gap, const std::string& piece) {
    float const g = width(gap), w = width(piece);
    if (!lines.empty() && x + g + w <= room) {
      lines.back() += gap + piece;
      x += g + w;
    } else {
      lines.push_back(piece);
      x = w;
    }
  };
  for (std::size_t k = 0; k < text.size();) {
    std::size_t const start = text.find_first_not_of(' ', k);
    if (start == std::string::npos) break;
    std::size_t end = text.find("  ", start);  // the figure's end: the next run of two spaces or more
    if (end == std::string::npos) end = text.size();
    while (end > start && text[end - 1] == ' ') --end;
    std::string const gap = text.substr(k, start - k), figure = text.substr(start, end - start);
    if ((!lines.empty() && x + width(gap) + width(figure) <= room) || width(figure) <= room) {
      place(gap, figure);
    } else {  // wider than a line: word by word
      for (std::size_t j = 0, from = 0; j <= figure.size(); ++j) {
        if (j < figure.size() && figure[j] != ' ') continue;
        if (j > from) place(from == 0 ? gap : std::string(" "), figure.substr(from, j - from));
        from = j + 1;
      }
    }
    k = end;
  }
  return lines;
}

}  // namespace nbody::render
