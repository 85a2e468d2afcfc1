// app/options.h - the nbody command line: every option, its default, and its validation.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nbody::app {

enum class Mode { automatic, viewer, run, benchmark, validate, devices, compare_threading };

struct Options {
  Mode mode = Mode::automatic;
  // What to simulate.
  std::vector<std::size_t> bodies{16384};  // several only for --compare-threading
  bool bodies_given = false;
  std::string scenario = "plummer";
  std::uint64_t seed = 42;
  double eccentricity = 0.5;
  std::string load;                        // tipsy file to start from
  // How.
  std::string integrator = "leapfrog";
  double dt = 0.0;                         // 0: the integrator's default
  double damping = 0.995;
  double softening = 0.01;                 // resolved by parse_options: sim::recommended_softening
  bool softening_given = false;
  std::string precision = "fp32";
  std::string backend = "auto";
  std::string kernel;                      // "" = backend default
  int block_size = 0;
  std::string fp64_rsqrt = "series";
  int numgpus = 0;                         // 0: all visible GPUs (CUDA) or 1 host device (CPU)
  std::vector<int> gpus;                   // explicit device list
  std::vector<double> weights;
  std::string threading = "single";
  std::string exchange = "auto";
  int threads = 0;                         // CPU threads; 0: all cores
  // How long and what to write.
  std::uint64_t steps = 0;                 // 0: the mode's default
  std::uint64_t warmup = 2;
  std::string save;
  std::string save_format = "standard";
  std::string json;
  std::string csv;
  double tolerance = 0.0;                  // --validate: 0 = precision default
  bool quiet = false;
  // Viewer.
  bool offscreen = false;                  // EGL, no window system
  std::string screenshot;                  // write this PNG after --frames frames, then exit
  std::uint64_t frames = 0;                // 0: run until closed (window) / 1 (offscreen)
  std::string frames_dir;                  // one PNG per frame
  bool paused = false;
  int width = 1280, height = 800;
  std::string color = "speed";
  double point_size = 8.0, brightness = 0.6;
  bool hud = true;
  std::string interop = "auto";            // positions into GL: auto, on (required), off (host upload)
  int steps_per_frame = 1;
};

// The viewer's keys, as --help and the HUD list them.
extern const char* const kViewerKeys;

// Parses argv. Returns the options, or std::nullopt after printing --help/--version (exit 0).
// Throws InputError (one line naming the bad value and what is allowed) for bad input.
std::optional<Options> parse_options(int argc, char** argv);

}  // namespace nbody::app
