// app/options.cpp - command-line parsing with CLI11. Named values (precision, backend, kernel,
// integrator, ...) are parsed once, by one CLI11 transformer per enum built from its name table.
#include "app/options.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <iostream>
#include <regex>
#include <optional>
#include <sstream>
#include <tuple>
#include <utility>

#include "app/serve_protocol.h"
#include "driver/checkpoints.h"
#include "driver/diagnostics_series.h"
#include "core/bounds.h"
#include "core/errors.h"
#include "core/output_path.h"
#include "core/version.h"
#include "mpi/build_fingerprint.h"
#include "sim/io/units.h"
#include "sim/physics/integrator.h"
#include "sim/physics/scenarios.h"

namespace nbody::app {

namespace {
constexpr long long kMaxSteps = static_cast<long long>(nbody::kMaxSteps);  // the bound a checkpoint's Step has too
constexpr long long kMaxThreads = 1024;             // OpenMP threads: libgomp fails far above a machine's cores
}  // namespace

const std::vector<std::pair<std::string, std::string>> kViewerKeys{
    {"space", "pause/resume"},
    {"n", "single step"},
    {"r", "reset"},
    {"c", "colour by speed, type, device or time-step level"},
    {"f", "fit to view"},
    {"o", "follow the bodies"},
    {"t", "trails"},
    {"+ and -", "double and halve the steps per frame"},
    {"p", "screenshot"},
    {"s", "save a checkpoint"},
    {"h", "HUD full, minimal (legend, time, scale bar) or none"},
    {"F11", "fullscreen"},
    {"Esc or q", "quit"},
    {"left drag", "orbit"},
    {"right/middle drag", "pan"},
    {"wheel", "zoom"}};

std::string viewer_keys_help() {
  std::string text, line = "Viewer keys:";
  for (std::size_t k = 0; k < kViewerKeys.size(); ++k) {
    std::string const item = kViewerKeys[k].first + " " + kViewerKeys[k].second + (k + 1 < kViewerKeys.size() ? ";" : ".");
    if (line.size() + 1 + item.size() > 100) {
      text += line + "\n  ";
      line.clear();
    }
    line += (line.size() > 2 ? " " : "") + item;
  }
  return text + line;
}

namespace {

std::string num(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

// A text as a message shows it: quoted where it is empty or begins or ends with a blank (else "--dt : must be ..."
// and "--seed  1: ..." read as typos), as it is otherwise.
std::string shown(const std::string& text) {
  bool const blank_edge = !text.empty() && (std::isspace(static_cast<unsigned char>(text.front())) ||
                                            std::isspace(static_cast<unsigned char>(text.back())));
  return text.empty() || blank_edge ? "'" + text + "'" : text;
}

// An option that takes one of E's names. The transformer turns the name into the enum's number,
// which CLI11 stores in `value`; anything else is an error listing the valid names.
template <class E>
CLI::Option* add_named(CLI::App& app, const std::string& flag, E& value, const std::string& help) {
  std::string joined;
  for (auto const& n : all_names<E>()) joined += (joined.empty() ? "" : "|") + n;
  CLI::Validator names(
      [](std::string& text) -> std::string {
        auto const v = from_name<E>(text);
        if (!v) return shown(text) + ": valid: " + valid_names<E>();
        text = std::to_string(static_cast<int>(*v));
        return {};
      },
      joined, "name");
  return app.add_option(flag, value, help)->transform(names)->default_str(name_of(value));
}

// Validators that run on the text before CLI11 converts it, so "-1" is refused instead of wrapping
// around in an unsigned option, and "nan" or "1e999" instead of slipping into the physics.
// The whole text as an integer, or nothing: empty, blanks or other characters before or after the digits (as
// parse_real refuses them), out of range.
std::optional<long long> parse_whole(const std::string& text) {
  // stoll would skip blanks before the digits (" 16"), and refuses them after ("16 ").
  if (text.empty() || std::isspace(static_cast<unsigned char>(text.front()))) return std::nullopt;
  std::size_t used = 0;
  try {
    long long const v = std::stoll(text, &used);
    if (used == text.size()) return v;
  } catch (...) {
  }
  return std::nullopt;
}


CLI::Validator whole_number(long long min, long long max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        auto const v = parse_whole(text);
        if (!v || *v < min || *v > max)
          return shown(text) + ": must be a whole number from " + std::to_string(min) + " to " + std::to_string(max);
        return {};
      },
      "", "");
}

// The whole text as a number, or nothing: the one grammar of numbers given as text (core/bounds.h), decimal, so that
// --dt 0x10 is refused as --bodies 0x10 is, not taken for 16.
std::optional<double> parse_real(const std::string& text) { return parse_decimal(text); }

// The whole text a number, its bounds (`range`) checked after parsing by core/bounds.h's rules: without this, the
// empty text converts to 0 and the message names a value nobody gave ("--eta 0").
CLI::Validator a_number(const char* range) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        return parse_real(text) ? std::string{} : shown(text) + ": must be a number in " + range;
      },
      "", "");
}

// A finite number within its bounds. The message states the bounds themselves, written from the
// numbers the check uses, so it cannot drift from the rule: "--dt 1e30: must be a time step in (0, 1e+12]".
CLI::Validator real_number(double min, double max, Ends ends, const std::string& what) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        auto const v = parse_real(text);
        return v && in_interval(*v, min, max, ends) ? std::string{}
                                                    : shown(text) + ": must be " + what + " in " + interval(min, max, ends);
      },
      "", "");
}

// Comma lists, checked element by element so the message names the bad element.
// Every element, empty ones included ("1,,2" and "1,1," have an empty one), so none is dropped unseen.
std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> parts;
  std::size_t begin = 0;
  for (std::size_t comma; (comma = text.find(',', begin)) != std::string::npos; begin = comma + 1)
    parts.push_back(text.substr(begin, comma - begin));
  parts.push_back(text.substr(begin));
  return parts;
}

// The elements of a list option, refusing an empty list or an empty element with one line that says so.
std::vector<std::string> list_items(const std::string& text, const char* option, const char* example) {
  if (text.empty()) throw InputError(std::string(option) + " '': the list is empty; give e.g. " + example);
  // Blanks around an element are the list's layout ("0, 2"), not part of the element.
  std::vector<std::string> parts = split(text);
  for (auto& item : parts) item = trimmed(item, " \t");
  for (auto const& item : parts)
    if (item.empty())
      throw InputError(std::string(option) + " " + text + ": an empty element (two commas, or one at an end); give e.g. " +
                       example);
  return parts;
}

// Relative shares of bodies per device: the partition multiplies N by their running sum, which must
// stay finite (1e308,1e308 would overflow it), so each is bounded like the other real options.
constexpr double kMaxWeight = 1e12;

// A body count, `item` of the option's value `text` as given (the same where it is no list; a list's element is named
// in it, "--bodies 1,000: '000' is not ...").
std::size_t to_count(const std::string& item, const std::string& text, const char* option) {
  auto const v = parse_whole(item);
  if (v && *v > 0 && std::uint64_t(*v) <= kMaxBodies) return std::size_t(*v);
  std::string const range = "a whole number from 1 to " + std::to_string(kMaxBodies);
  if (item == text) throw InputError(std::string(option) + " " + item + ": must be " + range);
  throw InputError(std::string(option) + " " + text + ": '" + item + "' is not a body count (" + range +
                   "; a count is written without separators)");
}

// "MIN:MAX": two finite numbers, 0 <= MIN < MAX, within 1e12 like the other real options.
std::pair<double, double> parse_color_range(const std::string& text) {
  auto refuse = [&](const std::string& why) {
    throw InputError("--color-range " + (text.empty() ? std::string("''") : text) + ": " + why +
                     "; give MIN:MAX, two numbers with MIN < MAX (speeds in the legend's units), e.g. 0:2.5");
  };
  std::size_t const colon = text.find(':');
  if (colon == std::string::npos) refuse("no ':' between MIN and MAX");
  auto const lo = parse_real(text.substr(0, colon)), hi = parse_real(text.substr(colon + 1));
  if (!lo) refuse("'" + text.substr(0, colon) + "' is not a number");
  if (!hi) refuse("'" + text.substr(colon + 1) + "' is not a number");
  constexpr double kLargest = 1e12;  // speeds: from 0
  if (!in_interval(*lo, 0, kLargest, Ends::closed) || !in_interval(*hi, 0, kLargest, Ends::closed))
    refuse("each must be a speed in " + interval(0, kLargest, Ends::closed));
  if (!(*lo < *hi)) refuse("MIN must be below MAX");
  return {*lo, *hi};
}

// The viewer's settings that --serve takes too (--width and --height: the first frame's size, until a browser says its
// own). None of them does anything in a benchmark.
const char* const kServedOptions[] = {"--screenshot-dir", "--paused",          "--width",    "--height",
                                      "--color",          "--point-size",      "--brightness", "--no-hud",
                                      "--interop",        "--steps-per-frame", "--colormap", "--color-range",
                                      "--hud",            "--trails"};

void require(bool ok, const std::string& message) {
  if (!ok) throw InputError(message);
}

// The modes an option does something in. Giving one where it does nothing is an error: a user
// who writes `--benchmark --save run.bin` expects a file that would never be written.
// `implied_by`: the option that chose the mode where no mode option was given ("" otherwise), which the messages name.
void check_options_apply(const CLI::App& cli, Mode mode, const std::string& implied_by) {
  using M = Mode;
  struct Rule {
    const char* option;
    std::vector<Mode> modes;
    const char* where;
  };
  std::vector<Mode> const viewer{M::viewer, M::automatic};
  // --serve draws as the viewer does, for browsers: the viewer's settings, none of its files.
  std::vector<Mode> const served{M::viewer, M::serve, M::automatic};
  std::vector<Mode> const simulating{M::run, M::benchmark, M::validate, M::viewer, M::serve, M::compare_threading,
                                     M::automatic};
  static std::vector<Rule> const rules{
      {"--save", {M::run}, "--run"},
      {"--save-format", {M::run}, "--run (with --save)"},
      {"--checkpoint", {M::run}, "--run"},
      {"--checkpoint-every", {M::run}, "--run (with --checkpoint)"},
      {"--checkpoint-dt", {M::run}, "--run (with --checkpoint)"},
      {"--t-end", {M::run, M::benchmark}, "--run (and --benchmark with --integrator hermite4)"},
      {"--diagnostics", {M::run}, "--run"},
      {"--diagnostics-every", {M::run}, "--run (with --diagnostics)"},
      {"--diagnostics-dt", {M::run}, "--run (with --diagnostics)"},
      {"--snapshots", {M::run}, "--run"},
      {"--snapshot-every", {M::run}, "--run (with --snapshots)"},
      {"--snapshot-dt", {M::run}, "--run (with --snapshots)"},
      {"--snapshot-precision", {M::run}, "--run (with --snapshots)"},
      {"--mass-unit", {M::run, M::benchmark, M::viewer, M::serve, M::automatic},
       "--run and the viewer (the units their files state), and --benchmark (a --t-end in a time unit)"},
      {"--length-unit", {M::run, M::benchmark, M::viewer, M::serve, M::automatic},
       "--run and the viewer (the units their files state), and --benchmark (a --t-end in a time unit)"},
      {"--csv", {M::compare_threading}, "--compare-threading"},
      {"--tolerance", {M::validate}, "--validate"},
      {"--warmup", {M::benchmark, M::compare_threading}, "--benchmark and --compare-threading"},
      {"--steps", {M::run, M::benchmark, M::validate, M::compare_threading},
       "--run, --benchmark, --validate and --compare-threading (the viewer takes --frames, --steps-per-frame)"},
      {"--json", {M::run, M::benchmark, M::validate, M::devices, M::compare_threading},
       "every mode but the viewer"},
      {"--restart", {M::run, M::benchmark, M::validate, M::viewer, M::serve, M::automatic},
       "modes that simulate one run"},
      {"--load", {M::run, M::benchmark, M::validate, M::viewer, M::serve, M::automatic}, "modes that simulate one run"},
      // --compare-threading runs every threading model and launch mode itself.
      {"--threading", {M::run, M::benchmark, M::validate, M::viewer, M::serve, M::automatic},
       "modes that simulate one run (--compare-threading runs every threading model)"},
      {"--launch", {M::run, M::benchmark, M::validate, M::viewer, M::serve, M::automatic},
       "modes that simulate one run (--compare-threading runs every launch mode)"},
  };
  static const char* const viewer_options[] = {"--offscreen", "--screenshot", "--frames",   "--frames-dir",
                                               "--video",     "--video-fps",  "--video-hud"};
  static const char* const simulation_options[] = {
      "--bodies", "--scenario", "--seed",      "--eccentricity", "--integrator", "--dt",        "--damping",
      "--eta",    "--eta-start", "--dt-max",
      "--softening", "--precision", "--kernel", "--block-size", "--fp64-rsqrt", "--weights", "--threading", "--launch",
      "--exchange"};
  auto mode_flag = [&]() -> std::string {
    switch (mode) {
      case M::run: return implied_by.empty() ? "--run" : "--run (which " + implied_by + " implies)";
      case M::benchmark: return implied_by.empty() ? "--benchmark" : "--benchmark (which " + implied_by + " implies)";
      case M::validate: return "--validate";
      case M::devices: return "--devices";
      case M::compare_threading: return "--compare-threading";
      case M::viewer: return "the viewer";
      case M::serve: return "--serve";
      case M::automatic: return "the default mode";
    }
    return "";
  };
  auto refuse = [&](const char* option, const std::string& where) {
    throw InputError(std::string(option) + " does nothing with " + mode_flag() + "; it belongs to " + where);
  };
  auto applies = [&](const std::vector<Mode>& modes) { return std::find(modes.begin(), modes.end(), mode) != modes.end(); };
  for (auto const& r : rules)
    if (cli.count(r.option) && !applies(r.modes)) refuse(r.option, r.where);
  // --serve is the viewer in a browser: what belongs to the window alone is named so there.
  for (const char* option : viewer_options)
    if (cli.count(option) && !applies(viewer))
      refuse(option, mode == M::serve ? "the desktop viewer (a window, or --offscreen's recordings), not the browser's"
                                      : "the viewer");
  for (const char* option : kServedOptions)
    if (cli.count(option) && !applies(served)) refuse(option, "the viewer and --serve");
  for (const char* option : simulation_options)
    if (cli.count(option) && !applies(simulating)) refuse(option, "modes that simulate");
  // The video's own settings in the viewer: nothing to set without a video.
  for (const char* option : {"--video-fps", "--video-hud"})
    if (cli.count(option) && !cli.count("--video"))
      throw InputError(std::string(option) + " does nothing without --video FILE.mp4");
}

}  // namespace

// A time option's range (core/bounds.h), checked on the number given (a time in a unit: driver::typed_time).
CLI::Validator time_range(const char* option) {
  TimeRange const& r = *nbody::time_range(option);
  return real_number(r.min, r.max, r.ends, r.what);
}

namespace {
// The first argument CLI11 did not expect, said as nbody says bad input: an option it does not have, with the nearest
// one's name where a typo would explain it ("--step" for --steps), or a value no option took. `fallback`: CLI11's
// own words, where none is found.
std::string unexpected_arguments(const CLI::App& cli, int argc, char** argv, const std::string& fallback) {
  std::vector<std::string> names;
  auto collect = [&](const CLI::App& app) {
    for (const CLI::Option* option : app.get_options())
      for (auto const& name : option->get_lnames()) names.push_back("--" + name);
  };
  collect(cli);
  for (const CLI::App* group : cli.get_subcommands([](const CLI::App*) { return true; })) collect(*group);
  auto distance = [](const std::string& a, const std::string& b) {  // Levenshtein
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
      std::size_t diagonal = row[0];
      row[0] = i;
      for (std::size_t j = 1; j <= b.size(); ++j) {
        std::size_t const up = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
        diagonal = up;
      }
    }
    return row[b.size()];
  };
  auto known = [&](const std::string& name) {  // "--bodies" or its short form, "-n"
    if (cli.get_option_no_throw(name)) return true;
    for (const CLI::App* group : cli.get_subcommands([](const CLI::App*) { return true; }))
      if (group->get_option_no_throw(name)) return true;
    return false;
  };
  for (int k = 1; k < argc; ++k) {
    std::string const arg = argv[k];
    if (arg == "--") break;  // what follows is values, not options
    if (arg.size() < 2 || arg[0] != '-' || (arg[1] != '-' && std::isdigit(static_cast<unsigned char>(arg[1]))))
      continue;  // a value (a negative number too)
    std::string const name = arg.substr(0, arg.find('='));
    if (arg[1] != '-') {
      if (known(name.substr(0, 2))) continue;  // a short option, its value perhaps attached
      return name + ": no such option (see --help)";
    }
    if (std::find(names.begin(), names.end(), name) != names.end()) continue;
    std::string nearest;
    std::size_t best = 3;  // at most two edits away
    for (auto const& n : names)
      if (std::size_t const d = distance(name, n); d < best) best = d, nearest = n;
    return name + ": no such option" + (nearest.empty() ? "" : "; did you mean " + nearest + "?") + " (see --help)";
  }
  // A value: the first that follows no option that takes one.
  // The option `arg` names by itself (no value attached: "--bodies", "-n"), or null.
  auto option_named = [&](const std::string& arg) -> const CLI::Option* {
    if (arg.size() < 2 || arg[0] != '-' || arg.find('=') != std::string::npos || (arg[1] != '-' && arg.size() != 2))
      return nullptr;
    const CLI::Option* option = cli.get_option_no_throw(arg);
    for (const CLI::App* group : cli.get_subcommands([](const CLI::App*) { return true; }))
      if (!option) option = group->get_option_no_throw(arg);
    return option;
  };
  auto takes_value = [&](const std::string& arg) {
    const CLI::Option* option = option_named(arg);
    return option && option->get_items_expected_min() > 0;
  };
  for (int k = 1; k < argc; ++k) {
    std::string const arg = argv[k];
    if (arg.empty() || (arg[0] == '-' && arg.size() > 1 && !std::isdigit(static_cast<unsigned char>(arg[1]))) ||
        (k > 1 && takes_value(argv[k - 1])))
      continue;
    std::string const before = k > 1 ? std::string(argv[k - 1]) : "";
    return "'" + arg + "': not expected" + (option_named(before) ? " after " + before + ", which takes no value" : "") +
           " (a value follows its option's name, as in --bodies 4096; see --help)";
  }
  return fallback + " (see --help)";
}
}  // namespace

std::optional<Options> parse_options(int argc, char** argv) {
  Options o;
  o.command_line.assign(argv, argv + argc);
  driver::InitialConditions& ic = o.run.initial;
  driver::PhysicsChoice& physics = o.run.physics;
  driver::DeviceChoice& dev = o.run.devices;
  CLI::App cli{"nbody: gravitational N-body simulation on CPUs and one or more CUDA GPUs.\n"
               "With no mode option: the viewer where a display exists, else a headless benchmark; --save, "
               "--checkpoint, --snapshots and --diagnostics choose --run, and --steps, --warmup and --json the benchmark.",
               "nbody"};
  // The version, and the build a number came from: the commit, compiler, flags and CPU and CUDA targets.
  cli.set_version_flag("--version", std::string("nbody ") + kVersion + "\nbuild: " + mpi::build_description());
  cli.get_formatter()->column_width(34);
  // A time option may be given in a physical unit ("--t-end 10Myr"): kept as given, its value in the run's units taken
  // once they are known (after parsing: the ones named, or the file's the run restarts or loads); a placeholder until
  // then, which the option's own check passes.
  std::map<std::string, std::string> physical_times;
  auto physical_time = [&physical_times](const char* option) {
    return CLI::Validator(
        [&physical_times, option](std::string& text) -> std::string {
          if (sim::physical_time(text)) {
            physical_times[option] = text;
            text = "1";
          } else if (!text.empty() && std::isalpha(static_cast<unsigned char>(text.back())) && !parse_real(text)) {
            return text + ": not a number, nor a number and a time unit (" + sim::kTimeUnitNames +
                   "; case matters), e.g. 10Myr";
          }
          return {};
        },
        "", "");
  };

  auto* modes = cli.add_option_group("Modes", "what to do (at most one)");
  bool viewer = false, run = false, benchmark = false, validate = false, devices = false, compare = false;
  modes->add_flag("--viewer", viewer, "open the interactive viewer");
  modes->add_option("--serve", o.serve,
                    "the viewer in a web browser: serve it at [HOST:]PORT (a port alone: this machine only, reach it "
                    "through ssh -L; another host needs the token printed at start; port 0: any free port)");
  modes->add_flag("--run", run, "simulate --steps headless, print diagnostics (implied by --save, --checkpoint, --snapshots, --diagnostics)");
  modes->add_flag("--benchmark", benchmark,
                  "headless: warm-up, timed steps, median step time, interactions/s (implied by --steps, --warmup, "
                  "--json where no output chooses --run)");
  modes->add_flag("--validate", validate, "compare the chosen kernel's forces with the fp64 CPU reference");
  modes->add_flag("--devices", devices, "list CUDA devices and their peer-access matrix");
  modes->add_flag("--compare-threading", compare, "benchmark both threading models on 1..--numgpus GPUs");
  modes->require_option(0, 1);

  std::string bodies_text = "16384";
  cli.add_option("--bodies,-n", bodies_text, "number of bodies (a comma list for --compare-threading; two-body: 2)")
      ->capture_default_str();
  add_named(cli, "--scenario", ic.scenario, "initial conditions (seeded with --seed)");
  cli.add_option("--seed", ic.seed, "random seed of the scenario")
      ->check(whole_number(0, std::numeric_limits<long long>::max()))
      ->capture_default_str();
  cli.add_option("--eccentricity", ic.eccentricity, "two-body orbit eccentricity, in [0, 1)")
      ->check(real_number(0, 1, Ends::below_max, "a number"))
      ->capture_default_str();
  cli.add_option("--load", ic.snapshot,
                 "start from a tipsy snapshot (standard or little-endian), an nbody HDF5 snapshot (--snapshots) or "
                 "another program's in the GADGET/SWIFT layout instead of a scenario: a new run at its time");
  cli.add_option("--restart", ic.checkpoint,
                 "continue a run from a --checkpoint file: bodies, step, time and every setting (an option given "
                 "here overrides the file's, with a notice)");
  add_named(cli, "--integrator", physics.integrator,
            "time integrator: leapfrog (2nd order), omelyan4 (4th order, 4 force evaluations per step, the most "
            "accurate at equal cost), yoshida4 (4th order, 3 force evaluations per step), "
            "euler-damped (the classic demo), hermite4 (4th-order Hermite with individual block time steps, for "
            "collisional dynamics: one step is one block step)");
  cli.add_option("--dt", physics.dt, "time step (default 0.01; 0.016 for euler-damped; or in a time unit: 1kyr)")
      ->transform(physical_time("--dt"))
      ->check(time_range("--dt"));
  // hermite4's settings: checked after parsing by core/bounds.h's rules (one definition for every door).
  cli.add_option("--eta", physics.hermite.eta,
                 "hermite4: Aarseth's accuracy parameter, inside the square root: dt = sqrt(eta (|a||a2| + |a1|^2) / "
                 "(|a1||a3| + |a2|^2)), in (0, 100]")
      ->check(a_number(kEtaRange))
      ->capture_default_str();
  cli.add_option("--eta-start", physics.hermite.eta_start,
                 "hermite4: the start step, eta_start x the shorter of |a| / |jerk| and sqrt(|potential|) / |a|, in (0, 100]")
      ->check(a_number(kEtaRange))
      ->capture_default_str();
  cli.add_option("--dt-max", physics.hermite.dt_max,
                 "hermite4: the longest step (steps are powers of two at or below it), in [1e-09, 1e12]; or in a time "
                 "unit: 10kyr")
      ->transform(physical_time("--dt-max"))
      ->check(a_number(kDtMaxRange))
      ->capture_default_str();
  cli.add_option("--damping", physics.damping, "euler-damped velocity factor per step, in (0, 1]")
      ->check(real_number(0, 1, Ends::above_min, "a factor"))
      ->capture_default_str();
  cli.add_option("--softening", physics.softening,
                 "Plummer softening length, > 0 (default " + num(sim::recommended_softening(sim::Scenario::plummer)) +
                     "; " + num(sim::recommended_softening(sim::Scenario::disk)) +
                     " for disk and collision, the core their disk model assumes around its central mass; 0 for "
                     "two-body with hermite4); hermite4 also takes 0 (no softening; close encounters are not "
                     "regularised)")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            auto const v = parse_real(text);
            if (v && (*v == 0.0 || in_interval(*v, 0, kMaxSoftening, Ends::above_min))) return {};
            // A length with a unit ("0.001pc"): the run's lengths are numbers in its length unit.
            bool const unit = !v && !text.empty() && std::isalpha(static_cast<unsigned char>(text.back())) &&
                              parse_real(text.substr(0, text.find_first_of("abcdfghijklmnopqrstuvwxyzABCDFGHIJKLMNOPQRSTUVWXYZ")));
            return shown(text) + ": must be a length in " + interval(0, kMaxSoftening, Ends::above_min) +
                   " (0 too with --integrator hermite4)" +
                   (unit ? ", a number in the run's length unit (--length-unit; a length takes no unit of its own)" : "");
          },
          "", ""));
  add_named(cli, "--precision", dev.engine.precision, "floating-point precision");
  add_named(cli, "--backend", dev.backend, "auto (CUDA if a GPU is visible, else CPU), cuda or cpu");
  sim::Kernel kernel = sim::Kernel::fast;
  add_named(cli, "--kernel", kernel, "force kernel: fast, tiled, naive (GPU); simd, reference (CPU)")
      ->default_str("fast on a GPU, simd on the CPU");
  cli.add_option("--block-size", dev.engine.block_size,
                 "threads per block for the naive and tiled GPU kernels (default 256)")
      ->check(whole_number(1, 1024));
  add_named(cli, "--fp64-rsqrt", dev.engine.fp64_rsqrt,
            "fp64 GPU r^-3 from the fp32 rsqrt: series (fastest), newton (one Newton step), or precise "
            "(double rsqrt)");
  cli.add_option("--numgpus", dev.count, "devices to use (GPUs; with --backend cpu, host devices); default all GPUs")
      ->check(whole_number(1, kMaxDevices));
  std::string gpus_text, weights_text;
  cli.add_option("--gpus", gpus_text, "explicit GPU list, e.g. 0,2");
  cli.add_option("--weights", weights_text, "relative share of bodies per device, e.g. 1,1,2");
  add_named(cli, "--threading", dev.threading, "multi-device scheduler: single (one host thread) or workers");
  add_named(cli, "--launch", dev.launch,
            "GPU steps: stream (kernel by kernel) or graph (blocks of 16 steps captured once as a CUDA graph and "
            "replayed; needs --threading single)");
  add_named(cli, "--exchange", dev.exchange,
            "slice exchange between GPUs: auto, peer (copies), staged (through host memory) or direct (the drift kernel stores into peers)");
  cli.add_option("--threads", dev.engine.cpu_threads, "CPU threads (default: all cores)")
      ->check(whole_number(1, kMaxThreads));
  std::uint64_t steps = 0;
  cli.add_option("--steps", steps,
                 "steps to run (default: 1000 for --run, 10 timed for --benchmark, hermite4 1000 block steps; --run "
                 "--steps 0 writes the initial state; --validate compares the forces after them, default 0)")
      ->check(whole_number(0, kMaxSteps));
  double t_end = 0.0;
  cli.add_option("--t-end", t_end,
                 "--run: to this simulation time (the first step at or past it; hermite4: every block step up to "
                 "it, then every body brought to it, so the run ends at it exactly) instead of --steps; a restart "
                 "goes on from the time it reached. --benchmark with hermite4: "
                 "times the block steps from the warm-up's end to this time. A time in a unit (10Myr; units: " +
                     std::string(sim::kTimeUnitNames) + ") with the run's --mass-unit and --length-unit, or its file's")
      ->transform(physical_time("--t-end"))
      ->check(time_range("--t-end"));
  cli.add_option("--warmup", o.warmup, "untimed steps before a benchmark")
      ->check(whole_number(0, kMaxSteps))
      ->capture_default_str();
  cli.add_option("--save", o.save,
                 "write the final state (written whole or not at all): an HDF5 snapshot in fp64 where FILE ends in "
                 ".h5 or .hdf5 (units, families), else a tipsy file (its units, if any, in FILE.param)");
  cli.add_option("--checkpoint", o.checkpoint,
                 "write the final state as an HDF5 checkpoint (also on Ctrl-C); --restart continues it bit for bit");
  cli.add_option("--checkpoint-every", o.checkpoint_every,
                 "also write a checkpoint every K steps, named FILE_00000100.h5 after the step (0: none; with "
                 "--restart and neither this nor --checkpoint-dt: as the checkpoint's run did)")
      ->check(whole_number(0, kMaxSteps));
  cli.add_option("--checkpoint-dt", o.checkpoint_dt,
                 "also write a checkpoint at every multiple of this simulation time instead, at the first step or "
                 "block time at or past each, named after its step; or in a time unit: 1Myr")
      ->transform(physical_time("--checkpoint-dt"))
      ->check(time_range("--checkpoint-dt"));
  cli.add_option("--diagnostics", o.diagnostics,
                 "write diagnostics over time to FILE: .csv, or .jsonl (or .json) for JSON lines (energies, energy error, "
                 "momentum, angular momentum, centre of mass, virial ratio, Lagrangian radii)");
  cli.add_option("--diagnostics-every", o.diagnostics_every,
                 "a diagnostics sample every K steps, and at the start and the end (default 100, or with --restart "
                 "the cadence its checkpoint records; each is an O(N^2) pass, as a force evaluation is: on the CPU "
                 "the time of several fp32 steps)")
      ->check(whole_number(1, kMaxSteps));
  cli.add_option("--diagnostics-dt", o.diagnostics_dt,
                 "a diagnostics sample at every multiple of this simulation time instead, at the first step or block "
                 "time at or past each (hermite4: every body at it where the multiple is one of --dt-max's power of "
                 "two); or in a time unit: 1Myr")
      ->transform(physical_time("--diagnostics-dt"))
      ->check(time_range("--diagnostics-dt"));
  cli.add_option("--snapshots", o.snapshots.base,
                 "write HDF5 snapshots for analysis (yt, pynbody): the start, the end and every --snapshot-every "
                 "steps, named BASE_00000100.hdf5 after the step (BASE's folder is created); a run stopped by a "
                 "signal leaves its state to --checkpoint instead, and its restart goes on with the series");
  cli.add_option("--snapshot-every", o.snapshots.every,
                 "also a snapshot every K steps (with --snapshots; 0: none; with --restart and neither this nor "
                 "--snapshot-dt: as the checkpoint's run did)")
      ->check(whole_number(0, kMaxSteps));
  cli.add_option("--snapshot-dt", o.snapshots.dt,
                 "also a snapshot at every multiple of this simulation time instead, at the first step or block time "
                 "at or past each (as --diagnostics-dt); or in a time unit: 1Myr")
      ->transform(physical_time("--snapshot-dt"))
      ->check(time_range("--snapshot-dt"));
  add_named(cli, "--snapshot-precision", o.snapshots.precision,
            "snapshot values: fp32 (light; the default but with hermite4) or fp64 (every bit of the run; hermite4's "
            "default, whose close pairs fp32 around the box's centre cannot hold apart); a restart that goes on with "
            "a series keeps its files' precision");
  std::string mass_unit, length_unit;
  cli.add_option("--mass-unit", mass_unit,
                 std::string("the mass of one simulation unit, for the files (e.g. 1e5Msun; units: ") +
                     sim::kMassUnitNames + "); default: N-body units, no physical scale");
  cli.add_option("--length-unit", length_unit,
                 std::string("the length of one simulation unit, for the files (e.g. 1pc; units: ") +
                     sim::kLengthUnitNames + "); the time unit is sqrt(L^3/(G M))");
  add_named(cli, "--save-format", o.save_format, "snapshot byte order: standard (big-endian) or little-endian");
  cli.add_option("--json", o.json, "also write the results as JSON to this file");
  cli.add_option("--csv", o.csv, "--compare-threading: also write the table as CSV");
  cli.add_option("--tolerance", o.tolerance,
                 "--validate: relative L2 error allowed (default 1e-12 fp64; fp32 1e-5 up to 4096 bodies, x "
                 "sqrt(N/4096) beyond)")
      ->check(real_number(0, 1, Ends::above_min, "a relative error"));
  cli.add_flag("--quiet,-q", o.quiet,
               "print only errors, warnings and the mode's results (no progress, run summary or notices; --json "
               "keeps the summary and notices)");

  auto* view = cli.add_option_group("Viewer", "the interactive viewer and its headless uses");
  view->add_flag("--offscreen", o.offscreen, "render without a window through EGL (GPU servers); implies --viewer");
  view->add_option("--screenshot", o.screenshot, "write a PNG after --frames frames, then exit");
  view->add_option("--frames", o.frames, "frames to run before exiting (with --screenshot: default 1)")
      ->check(whole_number(1, kMaxSteps));
  view->add_option("--frames-dir", o.frames_dir, "write every frame as DIR/frame_00000.png (DIR is created)");
  view->add_option("--screenshot-dir", o.screenshot_dir,
                   "where the 'p' key's screenshots and the 's' key's checkpoints go (default: $XDG_PICTURES_DIR, "
                   "~/Pictures, else the current folder); with --serve, on the server, and the pages download them");
  view->add_option("--video", o.video, "record the frames into an MP4 file through ffmpeg (written whole at the end)");
  view->add_option("--video-fps", o.video_fps, "frames per second of --video")
      ->check(real_number(0, 1000, Ends::above_min, "a number of frames per second"))
      ->capture_default_str();
  view->add_flag("--video-hud", o.video_hud, "show the HUD in --video too");
  view->add_flag("--paused", o.paused, "start paused");
  view->add_option("--width", o.width, "window or image width in pixels")
      ->check(whole_number(16, 16384))
      ->capture_default_str();
  view->add_option("--height", o.height, "window or image height in pixels")
      ->check(whole_number(16, 16384))
      ->capture_default_str();
  add_named(*view, "--color", o.color, "colour by: speed, type (and mass), device, level (hermite4's time-step levels)");
  add_named(*view, "--colormap", o.colormap, "the colour map for speeds and levels: viridis, inferno, magma, plasma (perceptual), classic (the "
                 "earlier blue-white-orange ramp)");
  std::string color_range;
  view->add_option("--color-range", color_range,
                   "MIN:MAX, the speeds the colour map spans, in the legend's units (km/s with --mass-unit and "
                   "--length-unit, else N-body units); default: fitted to the first frame (2% to 98% of the speeds), "
                   "then held");
  view->add_option("--point-size", o.point_size,
                   "sprite size in pixels at the initial viewing distance (default: from N, 24 for a few bodies, 2 "
                   "for a million)")
      ->check(real_number(0, kMaxPointSize, Ends::above_min, "a number of pixels"));
  view->add_option("--brightness", o.brightness, "sprite brightness (light each body adds)")
      ->check(real_number(0, kMaxBrightness, Ends::above_min, "a brightness"))
      ->capture_default_str();
  bool no_hud = false;
  view->add_flag("--no-hud", no_hud, "hide the heads-up display and the overlay (--hud none)");
  add_named(*view, "--hud", o.hud,
            "full (the panel, the colour legend, the time and a scale bar), minimal (for talks and papers: the "
            "legend, the time and the scale bar, no widgets) or none");
  view->add_flag("--trails", o.trails, "trails behind the bodies from the start (the 't' key toggles them)");
  add_named(*view, "--interop", o.interop, "positions into GL: auto, on (CUDA-GL interop or fail), off (host upload)");
  view->add_option("--steps-per-frame", o.steps_per_frame,
                   "simulation steps per frame (hermite4: spans of dt max's power of two, which end with every body at "
                   "one time); default 1, 4 for the two-body scenario with fixed steps")
      ->check(whole_number(1, kMaxStepsPerFrame));
  cli.footer(viewer_keys_help());

  try {
    cli.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    std::cout << cli.help();
    return std::nullopt;
  } catch (const CLI::CallForVersion&) {
    std::cout << cli.version() << '\n';
    return std::nullopt;
  } catch (const CLI::ValidationError& e) {
    // CLI11 says "--precision: fp16: valid: ..."; nbody's messages read "--precision fp16: valid: ...".
    throw InputError(std::regex_replace(e.what(), std::regex("^(--[a-z0-9-]+): "), "$1 ") + " (see --help)");
  } catch (const CLI::ExtrasError& e) {
    throw InputError(unexpected_arguments(cli, argc, argv, e.what()));
  } catch (const CLI::ParseError& e) {
    // Two modes: CLI11 lists every mode option ("Requires at most 1 options be given from [...]"); the user needs
    // the ones given.
    std::vector<std::string> given;
    for (const CLI::Option* mode : modes->get_options())
      if (mode->count()) given.push_back(mode->get_name());
    if (given.size() > 1) {
      throw InputError(spoken_list(given) + (given.size() == 2 ? " both" : "") + " given; these are modes, and only one mode may be "
                       "given");
    }
    // CLI11 says "--bodies: At Most 1 required but received 2" for an option given twice.
    std::smatch m;
    std::string const what = e.what();
    if (std::regex_match(what, m, std::regex("^(--[a-z0-9-]+): At Most 1 required but received ([0-9]+)$")))
      throw InputError(m[1].str() + " given " + m[2].str() + " times; give it once");
    // "--serve: 1 required TEXT missing": what the value is, from the option's help (to its first "; " outside
    // brackets: "in (0, 1]" whole), and an enumeration's values.
    if (std::regex_match(what, m, std::regex("^(--[a-z0-9-]+): 1 required (\\S+) missing$"))) {
      const CLI::Option* option = cli.get_option_no_throw(m[1].str());
      for (const CLI::App* group : {static_cast<const CLI::App*>(modes), static_cast<const CLI::App*>(view)})
        if (!option) option = group->get_option_no_throw(m[1].str());
      std::string const help = option ? option->get_description() : "";
      std::size_t end = 0;
      for (int depth = 0; end < help.size() && !(depth == 0 && help[end] == ';'); ++end)
        depth += (help[end] == '(' || help[end] == '[') - (help[end] == ')' || help[end] == ']');
      std::string meaning = help.substr(0, end);
      std::string const type = m[2].str();
      if (type.rfind("ENUM:", 0) == 0) meaning += (meaning.empty() ? "one of " : ", one of ") + type.substr(5);
      throw InputError(m[1].str() + " needs a value" + (meaning.empty() ? "" : ": " + meaning) + " (see --help)");
    }
    throw InputError(what + " (see --help)");
  }
  // A flag given twice, as an option with a value is: a job script that names one twice was likely edited in haste.
  for (const CLI::App* group : {static_cast<const CLI::App*>(&cli), static_cast<const CLI::App*>(modes),
                                static_cast<const CLI::App*>(view)})
    for (const CLI::Option* option : group->get_options())
      if (option->get_items_expected_max() == 0 && option->count() > 1)
        throw InputError(option->get_name() + " given " + std::to_string(option->count()) + " times; give it once");

  // A unit given empty is refused as itself, not taken for one not given (which blamed the other unit's option).
  for (auto const& [option, value, example] : {std::tuple{"--mass-unit", &mass_unit, "1e5Msun"},
                                               std::tuple{"--length-unit", &length_unit, "1pc"}})
    if (cli.count(option) && trimmed(*value, " ").empty())
      throw InputError(std::string(option) + " '" + *value + "': the unit is empty; give e.g. " + example);
  // An option's value as the user typed it (a time in a unit is held as a placeholder until it is converted).
  auto given_text = [&](const char* option) {
    auto const unit = physical_times.find(option);
    return unit != physical_times.end() ? unit->second : cli.get_option(option)->as<std::string>();
  };
  // The times given in a unit, in the run's units: the command line's units, or the file's the run starts from.
  if (!physical_times.empty()) {
    o.run.units = sim::parse_units(mass_unit, length_unit);
    o.run.given.units = o.run.units.physical();
    sim::Units const units = driver::units_of_start(o.run);
    std::map<std::string, double*> const targets{{"--dt", &physics.dt},
                                                 {"--dt-max", &physics.hermite.dt_max},
                                                 {"--t-end", &t_end},
                                                 {"--checkpoint-dt", &o.checkpoint_dt},
                                                 {"--diagnostics-dt", &o.diagnostics_dt},
                                                 {"--snapshot-dt", &o.snapshots.dt}};
    for (auto const& [option, text] : physical_times) {
      // The option's own range, checked on the value (the placeholder passed it): named as given, and as the value.
      double const value = driver::typed_time(option, text, units, o.run.names);
      *targets.at(option) = value;
      char number[32];
      std::snprintf(number, sizeof number, "%.6g", value);
      o.notices.push_back(option + " " + text + " is " + number + " in the run's units (" + units.describe() + "; " +
                          units.time_unit() + ")");
      o.run.names.typed[option] = text;
    }
  }

  if (viewer) o.mode = Mode::viewer;
  o.viewer_named = viewer;
  if (cli.count("--serve")) {
    o.mode = Mode::serve;
    serve::parse_listen_address(o.serve);  // a bad host or port: one line naming it, before any work
  }
  if (run) o.mode = Mode::run;
  if (benchmark) o.mode = Mode::benchmark;
  if (validate) o.mode = Mode::validate;
  if (devices) o.mode = Mode::devices;
  if (compare) o.mode = Mode::compare_threading;
  // A file option given empty names no file: said as such, before an empty name is taken for one not given (the mode
  // it would have chosen, then "--save does nothing with the default mode").
  for (const char* option : {"--save", "--checkpoint", "--snapshots", "--diagnostics", "--json", "--csv", "--screenshot",
                             "--frames-dir", "--video"})
    if (cli.count(option) && cli.get_option(option)->as<std::string>().empty())
      throw InputError(std::string(option) + " '': " + path_name_problem("", std::string(option) == "--frames-dir"));
  std::string& implied_by = o.mode_implied_by;
  if (o.mode == Mode::automatic &&
      (!o.save.empty() || !o.checkpoint.empty() || !o.snapshots.base.empty() || !o.diagnostics.empty())) {
    o.mode = Mode::run;
    implied_by = !o.save.empty()              ? "--save"
                 : !o.checkpoint.empty()      ? "--checkpoint"
                 : !o.snapshots.base.empty() ? "--snapshots"
                                              : "--diagnostics";
  }
  bool const viewer_output =
      o.offscreen || !o.screenshot.empty() || !o.frames_dir.empty() || !o.video.empty() || cli.count("--frames");
  if (viewer_output && o.mode == Mode::automatic) o.mode = Mode::viewer;
  // The benchmark's own options make the default mode the benchmark, which it runs where there is no display: with
  // one, the viewer would open and drop them unseen, so a script would do one thing on a server and another on a desk.
  // A report of a run to a time or of the benchmark's time to it: neither is the default mode, so neither is taken.
  if (o.mode == Mode::automatic && cli.count("--t-end") && cli.count("--json") && !cli.count("--warmup"))
    throw InputError("--t-end " + given_text("--t-end") + " and --json choose no mode together: name --run (the run " +
                     "to that time, and its report) or --benchmark (hermite4's time to it)");
  if (o.mode == Mode::automatic)
    for (const char* option : {"--steps", "--warmup", "--json"})
      if (cli.count(option)) {
        o.mode = Mode::benchmark;
        implied_by = option;
        break;
      }
  check_options_apply(cli, o.mode, implied_by);
  // The default mode may run the benchmark instead of the viewer (no display): these would do nothing there.
  if (o.mode == Mode::automatic)
    for (const char* option : kServedOptions)
      if (cli.count(option)) o.viewer_settings.push_back(option);
  // Offscreen, a frame nobody sees: a user asks for a picture, a movie or (with --frames) the
  // renderer's timing, which the summary line reports.
  if (o.offscreen && !cli.count("--screenshot") && !cli.count("--frames-dir") && !cli.count("--video") &&
      !cli.count("--frames"))
    throw InputError("--offscreen draws without a window and would show nothing: name what to write (--screenshot "
                     "FILE.png, --frames-dir DIR or --video FILE.mp4), or --frames N to time the renderer");
  if (cli.count("--steps")) {
    if (steps == 0 && o.mode != Mode::run && o.mode != Mode::validate)
      throw InputError("--steps 0: only --run (to write the initial state with --checkpoint, --snapshots or --save) "
                       "and --validate (its default) take no steps");
    o.steps = steps;
  }
  if (cli.count("--t-end")) {
    auto t_end_given = [&] { return given_text("--t-end"); };
    if (cli.count("--steps"))
      throw InputError("--t-end " + t_end_given() + " and --steps " +
                       std::to_string(steps) + " both given; give one of them");
    // A benchmark from a scenario starts at time 0: a time at or before it can never be timed, and
    // would be refused only after the start-up (minutes at large N). A file's time is known once read.
    if (o.mode == Mode::benchmark && t_end <= 0.0 && ic.snapshot.empty() && ic.checkpoint.empty())
      throw InputError("--t-end " + t_end_given() + ": the benchmark starts at time 0; give a later time");
    // A run from a scenario starts at time 0 and goes forward: a time before it is a mistake, not a run of no
    // steps (time 0 itself is one, as --steps 0: the initial state written).
    if (t_end < 0.0 && ic.snapshot.empty() && ic.checkpoint.empty())
      throw InputError("--t-end " + t_end_given() + ": the run starts at time 0 and goes forward; give a later time");
    o.t_end = t_end;
  }
  if (cli.count("--kernel")) dev.engine.kernel = kernel;
  if (no_hud) {
    if (cli.count("--hud") && o.hud != render::HudMode::none)
      throw InputError("--no-hud and --hud " + name_of(o.hud) + " both given; give one of them");
    o.hud = render::HudMode::none;
  }
  // CUDA-GL interop shares an fp32 CUDA run's positions with GL: insisted on beside a run that has none, it is bad
  // input, not a failure of the machine.
  if (o.interop == Interop::on && dev.backend == driver::BackendChoice::cpu)
    throw InputError("--interop on: CUDA-GL interop needs a CUDA run, not --backend cpu; leave --interop out (auto)");
  if (o.interop == Interop::on && dev.engine.precision == Precision::fp64)
    throw InputError("--interop on: CUDA-GL interop shares fp32 positions, not --precision fp64; leave --interop out "
                     "(auto)");
  if (o.interop == Interop::on && physics.integrator == sim::Integrator::hermite4)
    throw InputError("--interop on: CUDA-GL interop shares fp32 positions, and hermite4 keeps them in fp64; leave "
                     "--interop out (auto)");
  // Offscreen, no key (h) brings a HUD back.
  if (o.offscreen && o.video_hud && o.hud == render::HudMode::none)
    throw InputError(std::string("--video-hud does nothing with --offscreen and ") +
                     (no_hud ? "--no-hud" : "--hud none") + ": there is no HUD to show");
  if (o.offscreen && cli.count("--screenshot-dir"))
    throw InputError("--screenshot-dir does nothing with --offscreen: it is where the viewer's keys write, and an "
                     "offscreen recording has none (--screenshot FILE.png writes its picture)");
  if (cli.count("--color-range")) o.color_range = parse_color_range(color_range);

  // A path option given as "" would run without its input or skip its output unseen.
  std::pair<const char*, const std::string*> const paths[] = {
      {"--load", &ic.snapshot},      {"--restart", &ic.checkpoint}, {"--save", &o.save},
      {"--checkpoint", &o.checkpoint}, {"--json", &o.json},         {"--csv", &o.csv},
      {"--screenshot", &o.screenshot}, {"--video", &o.video},       {"--frames-dir", &o.frames_dir},
      {"--screenshot-dir", &o.screenshot_dir}, {"--snapshots", &o.snapshots.base}, {"--diagnostics", &o.diagnostics}};
  // "-" is not standard input or output here (core/output_path.h, as Python refuses it too).
  for (auto const& [option, path] : paths) {
    if (!cli.count(option)) continue;
    bool const folder = std::string(option).find("-dir") != std::string::npos;
    if (auto const problem = path_name_problem(*path, folder); !problem.empty())
      throw InputError(std::string(option) + " " + shown(*path) + ": " + problem);
  }
  if (!o.json.empty()) driver::refuse_param_name(o.json, "--json " + o.json, "a JSON report", "run.json");
  if (!o.csv.empty()) driver::refuse_param_name(o.csv, "--csv " + o.csv, "a CSV table", "table.csv");
  // The movie is H.264 in an MP4 container and the picture a PNG, whatever the name says: a name that says
  // otherwise would make a file its viewers misread.
  auto extension_of = [](const std::string& path) {
    std::string extension = std::filesystem::path(path).extension().string();
    for (char& ch : extension) ch = char(std::tolower(static_cast<unsigned char>(ch)));
    return extension;
  };
  if (!o.video.empty() && extension_of(o.video) != ".mp4")
    throw InputError("--video " + o.video + ": the movie is H.264 in an MP4 file; name it FILE.mp4");
  if (!o.screenshot.empty() && extension_of(o.screenshot) != ".png")
    throw InputError("--screenshot " + o.screenshot + ": the picture is a PNG file; name it FILE.png");

  if (cli.count("--bodies")) {
    // "1,000": a thousands separator, not a list of 1 and 0 bodies (a list is --compare-threading's alone). Told
    // apart from a list of sizes ("256,512") by a group after the first that begins with 0, which no size does.
    bool const separated = o.mode != Mode::compare_threading &&
                           std::regex_match(bodies_text, std::regex("[0-9]{1,3}(,[0-9]{3})*,0[0-9]{2}(,[0-9]{3})*"));
    if (separated) {
      std::string plain = bodies_text;
      plain.erase(std::remove(plain.begin(), plain.end(), ','), plain.end());
      throw InputError("--bodies " + bodies_text + ": a count is written without separators (--bodies " + plain +
                       "); a list of sizes with commas is only for --compare-threading");
    }
    for (auto const& item : list_items(bodies_text, "--bodies", "4096 or 1024,4096"))
      o.sizes.push_back(to_count(item, bodies_text, "--bodies"));
    if (o.sizes.size() > 1 && o.mode != Mode::compare_threading)
      throw InputError("--bodies " + bodies_text + ": a list of sizes is only for --compare-threading");
    // One size twice would be measured twice and summarised once.
    for (auto n = o.sizes.begin(); n != o.sizes.end(); ++n)
      if (std::find(o.sizes.begin(), n, *n) != n)
        throw InputError("--bodies " + bodies_text + ": " + std::to_string(*n) + " is given twice; give each size once");
    ic.bodies = o.sizes.front();
  }
  if (cli.count("--gpus")) {
    for (auto const& item : list_items(gpus_text, "--gpus", "0,2")) {
      auto const v = parse_whole(item);
      if (!v || *v < 0 || *v > std::numeric_limits<int>::max())
        throw InputError("--gpus " + gpus_text + ": '" + item + "' is not a GPU number");
      dev.gpus.push_back(int(*v));
    }
  }
  if (cli.count("--weights")) {
    for (auto const& item : list_items(weights_text, "--weights", "1,1,2")) {
      auto const v = parse_real(item);
      if (!v || !(*v > 0))
        throw InputError("--weights " + weights_text + ": '" + item + "' is not a positive number");
      if (!in_interval(*v, 0, kMaxWeight, Ends::above_min))
        throw InputError("--weights " + weights_text + ": '" + item + "' is too large; each weight is a relative share in " +
                         interval(0, kMaxWeight, Ends::above_min));
      dev.weights.push_back(*v);
    }
  }

  require(dev.gpus.empty() || cli.count("--numgpus") == 0 || int(dev.gpus.size()) == dev.count,
          "--numgpus " + std::to_string(dev.count) + " and --gpus " + gpus_text + " disagree; give one of them");
  // A series' option as given ("--diagnostics-dt 0.1"); each needs its file, and by time excludes by steps.
  auto as_given = [&](const char* option) { return std::string(option) + " " + given_text(option); };
  auto needs = [&](const char* option, bool missing, const char* file, const char* why) {
    if (cli.count(option) && missing) throw InputError(as_given(option) + ": give " + file + " too (" + why + ")");
  };
  auto one_of = [&](const char* by_time, const char* by_steps, const char* what) {
    if (cli.count(by_time) && cli.count(by_steps))
      throw InputError(as_given(by_time) + " and " + as_given(by_steps) + " both given; give one of them (" + what +
                       " by time or by steps)");
  };
  needs("--checkpoint-dt", o.checkpoint.empty(), "--checkpoint FILE", "the series is named after it");
  one_of("--checkpoint-dt", "--checkpoint-every", "checkpoints");
  needs("--checkpoint-every", o.checkpoint.empty(), "--checkpoint FILE", "the series is named after it");
  needs("--diagnostics-every", o.diagnostics.empty(), "--diagnostics FILE", "where the samples go");
  if (cli.count("--save-format") && o.save.empty())  // (its value, as parsed, is the enum's number)
    throw InputError("--save-format " + name_of(o.save_format) + ": give --save FILE too (the tipsy file it orders)");
  if (!o.save.empty())
    driver::check_save(o.save, "--save " + o.save, cli.count("--save-format") ? "--save-format " + name_of(o.save_format) : "");
  if (!o.checkpoint.empty()) driver::check_checkpoint_name(o.checkpoint, "--checkpoint " + o.checkpoint);
  if (!o.snapshots.base.empty()) driver::check_snapshots_name(o.snapshots.base, "--snapshots " + o.snapshots.base);
  needs("--diagnostics-dt", o.diagnostics.empty(), "--diagnostics FILE", "where the samples go");
  one_of("--diagnostics-dt", "--diagnostics-every", "samples");
  if (!o.diagnostics.empty()) driver::series_format(o.diagnostics);
  for (const char* option : {"--snapshot-every", "--snapshot-dt", "--snapshot-precision"})
    if (cli.count(option) && o.snapshots.base.empty())
      throw InputError(std::string(option) + ": give --snapshots BASE too (the series is named after it)");
  one_of("--snapshot-dt", "--snapshot-every", "snapshots");
  o.checkpoint_cadence_named = cli.count("--checkpoint-every") + cli.count("--checkpoint-dt") > 0;
  o.snapshot_cadence_named = cli.count("--snapshot-every") + cli.count("--snapshot-dt") > 0;
  o.snapshot_precision_named = cli.count("--snapshot-precision") > 0;
  o.run.units = sim::parse_units(mass_unit, length_unit);
  o.run.given = {cli.count("--integrator") > 0, cli.count("--dt") > 0,        cli.count("--damping") > 0,
                 cli.count("--softening") > 0,  cli.count("--precision") > 0, o.run.units.physical(),
                 cli.count("--eta") > 0,        cli.count("--eta-start") > 0, cli.count("--dt-max") > 0};
  // (A restart with no --integrator takes the file's: checked once it is read, driver::make_setup.)
  if (o.run.given.softening && physics.softening == 0.0 && physics.integrator != sim::Integrator::hermite4 &&
      (ic.checkpoint.empty() || o.run.given.integrator))
    throw InputError("--softening 0: must be a length in " + interval(0, kMaxSoftening, Ends::above_min) +
                     "; 0 (no softening) only with --integrator hermite4");
  if (o.run.given.eta)
    if (auto const why = eta_problem(physics.hermite.eta, "--eta"); !why.empty()) throw InputError(why);
  if (o.run.given.eta_start)
    if (auto const why = eta_problem(physics.hermite.eta_start, "--eta-start"); !why.empty()) throw InputError(why);
  if (o.run.given.dt_max)
    if (auto const why = dt_max_problem(physics.hermite.dt_max); !why.empty()) throw InputError(why);
  if (!ic.checkpoint.empty() && cli.count("--scenario"))
    throw InputError("--restart and --scenario both given; the checkpoint holds the bodies");
  if (!ic.snapshot.empty() && cli.count("--scenario"))
    throw InputError("--load and --scenario both given; the snapshot replaces the scenario");
  // The eccentricity is the two-body scenario's alone (the viewer and the server may switch to it later).
  // The default mode keeps the refusal for where it runs the benchmark instead (no display).
  bool const switches_scenario = o.mode == Mode::viewer || o.mode == Mode::serve || o.mode == Mode::automatic;
  if (cli.count("--eccentricity") && ic.checkpoint.empty() && ic.snapshot.empty() &&
      ic.scenario != sim::Scenario::two_body) {
    o.batch_refusal = "--eccentricity " + cli.get_option("--eccentricity")->as<std::string>() +
                      ": applies to --scenario two-body only (this run's is " + name_of(ic.scenario) + ")";
    if (!switches_scenario) throw InputError(o.batch_refusal);
  }
  // two-body places its two bodies (from --eccentricity): a seed draws nothing there (the viewer and the server may
  // switch to a scenario that draws).
  if (cli.count("--seed") && ic.checkpoint.empty() && ic.snapshot.empty() && ic.scenario == sim::Scenario::two_body &&
      !switches_scenario)
    throw InputError("--seed " + std::to_string(ic.seed) + " does nothing with --scenario two-body: its two bodies " +
                     "are placed, not drawn; leave --seed out");
  // The scenario's own settings make bodies that a file replaces. (A checkpoint records its seed: a --seed equal to
  // it is a check, as --bodies is; driver::make_setup refuses another.)
  o.run.given.seed = cli.count("--seed") > 0;
  for (const char* option : {"--seed", "--eccentricity"}) {
    if (!cli.count(option)) continue;
    if (!ic.checkpoint.empty() && std::string(option) != "--seed")
      throw InputError(std::string(option) + " does nothing with --restart; the checkpoint holds the bodies");
    if (!ic.snapshot.empty())
      throw InputError(std::string(option) + " does nothing with --load; the snapshot holds the bodies");
  }
  // The file a run starts from, missing or a folder: said with its option before any work, once the options agree
  // (the readers, which Python shares, name the file alone). Both given is driver::make_setup's to refuse.
  if (!ic.checkpoint.empty() && !ic.snapshot.empty()) return o;
  for (auto const& [option, path, what] :
       {std::tuple<const char*, const std::string*, const char*>{"--load", &ic.snapshot,
                                                                  "a snapshot file (tipsy, HDF5 or GADGET)"},
        {"--restart", &ic.checkpoint, "a checkpoint written by --checkpoint"}}) {
    if (path->empty()) continue;
    std::error_code ec;
    auto const type = std::filesystem::status(*path, ec).type();
    if (type == std::filesystem::file_type::not_found)
      throw InputError(std::string(option) + " " + shown(*path) + ": no such file");
    if (type == std::filesystem::file_type::directory)
      throw InputError(std::string(option) + " " + shown(*path) + ": is a folder; name " + what);
  }
  return o;
}

}  // namespace nbody::app
