// app/options.h - the nbody command line: every option, its default, and its validation.
#pragma once

#include <array>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/enum_names.h"
#include "driver/checkpoints.h"
#include "driver/config.h"
#include "render/color_mode.h"
#include "sim/io/tipsy.h"

namespace nbody::app {

enum class Mode { automatic, viewer, serve, run, benchmark, validate, devices, compare_threading };

// How positions reach the viewer's vertex buffer: CUDA-GL interop where possible (auto), interop
// or an error (on), always through host memory (off).
enum class Interop { automatic, on, off };
inline constexpr std::array<EnumName<Interop>, 3> kInteropNames{
    {{Interop::automatic, "auto"}, {Interop::on, "on"}, {Interop::off, "off"}}};
constexpr const auto& enum_names(Interop) { return kInteropNames; }

struct Options {
  Mode mode = Mode::automatic;
  // Why a mode that cannot switch scenarios would refuse these options ("" when none would): the default mode
  // refuses them where it runs the benchmark in place of the viewer.
  std::string batch_refusal;
  // The viewer's settings given to the default mode ("--paused", "--hud"): refused where it runs the benchmark
  // instead, in which they would do nothing.
  std::vector<std::string> viewer_settings;
  // Where no mode option was given, the option that chose the mode ("--save": --run; "--steps": --benchmark), or "".
  std::string mode_implied_by;
  driver::RunConfig run;                   // what to simulate, with which physics, on which devices
  std::vector<std::size_t> sizes;          // --bodies as given: several only for --compare-threading
  // How long and what to write.
  std::optional<std::uint64_t> steps;      // none: the mode's default; 0 (--run only): the initial state
  std::optional<double> t_end;             // --run: to this time instead of a count of steps
  // What the options' parsing has to say with the run's notices: a time given in a unit, in the run's units.
  std::vector<std::string> notices;
  std::uint64_t warmup = 2;
  std::string save;
  sim::TipsyFormat save_format = sim::TipsyFormat::standard;
  std::string checkpoint;                  // HDF5 checkpoint of the final (or interrupted) state
  std::uint64_t checkpoint_every = 0;      // also a series every K steps; 0: none
  double checkpoint_dt = 0.0;              // or at every multiple of this time; 0: none
  // --checkpoint-every or -dt, --snapshot-every or -dt given (0 too: none, where a restart would take its file's up)
  bool checkpoint_cadence_named = false, snapshot_cadence_named = false, snapshot_precision_named = false;
  std::string diagnostics;                 // diagnostics over time (.csv or .jsonl)
  std::uint64_t diagnostics_every = 0;     // a sample every K steps; 0: driver::kDefaultDiagnosticsEvery
  double diagnostics_dt = 0.0;             // a sample at every multiple of this time instead; 0: by steps
  driver::SnapshotSeries snapshots;        // HDF5 snapshots for analysis: start, end, every K steps
  std::string json;
  std::string csv;
  std::vector<std::string> command_line;   // argv as given, which a --json report records
  double tolerance = 0.0;                  // --validate: 0 = sim::force_error_bound
  bool quiet = false;
  // Viewer.
  bool viewer_named = false;               // --viewer given (not implied by --frames, --screenshot and the like)
  bool offscreen = false;                  // EGL, no window system
  std::string screenshot;                  // write this PNG after --frames frames, then exit
  std::uint64_t frames = 0;                // 0: run until closed (window) / 1 (offscreen)
  std::string frames_dir;                  // one PNG per frame (created if missing)
  std::string screenshot_dir;              // where 'p' screenshots and 's' checkpoints go; "": the default
  std::string video;                       // record the frames into this MP4 (through ffmpeg)
  double video_fps = 30;
  bool video_hud = false;                  // the HUD in the video too
  bool paused = false;
  int width = 1280, height = 800;
  render::ColorMode color = render::ColorMode::speed;
  render::Colormap colormap = render::Colormap::viridis;
  // --color-range MIN:MAX, speeds in the legend's units (km/s with --mass-unit and --length-unit, else
  // N-body units); none: fitted to each run's first frame.
  std::optional<std::pair<double, double>> color_range;
  double point_size = 0.0;                 // 0: chosen from N (larger for few bodies)
  double brightness = 1.0;
  render::HudMode hud = render::HudMode::full;  // --hud; --no-hud is --hud none
  bool trails = false;                     // trails from the start (two-body has them anyway)
  Interop interop = Interop::automatic;
  // None: the scenario's (1, or 4 for the two-body binary, whose trail then spans an orbit); given, it stays.
  std::optional<int> steps_per_frame;
  // --serve [HOST:]PORT: the viewer in a browser (app/serve.cpp); checked when parsed.
  std::string serve;
};

// The viewer's keys and mouse, and what each does: the HUD's Keys section and --help's footer (viewer_keys_help).
extern const std::vector<std::pair<std::string, std::string>> kViewerKeys;
// kViewerKeys as one paragraph, in lines that fit a terminal: "Viewer keys: space pause/resume; n single step; ...".
std::string viewer_keys_help();

// The frames the viewer draws: --frames, else one offscreen or for a --screenshot, else 0 (until the window closes).
inline std::uint64_t viewer_frames(const Options& o) {
  return o.frames ? o.frames : (o.offscreen || !o.screenshot.empty() ? 1 : 0);
}

// The name of frame `frame` in --frames-dir: "frame_00042.png".
inline std::string frame_file_name(std::uint64_t frame) {
  char name[40];
  std::snprintf(name, sizeof name, "frame_%05llu.png", (unsigned long long)frame);
  return name;
}

// Parses argv. Returns the options, or std::nullopt after printing --help/--version (exit 0).
// Throws InputError (one line naming the bad value and what is allowed) for bad input.
std::optional<Options> parse_options(int argc, char** argv);

}  // namespace nbody::app
