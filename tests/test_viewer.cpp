// tests/test_viewer.cpp - the viewer as a person sees it: real frames in a window under Xvfb
// and offscreen through EGL, read back from the PNGs nbody writes (label gl).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <stb/stb_image.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "test_support.h"

namespace nbody {
namespace {

namespace fs = std::filesystem;

struct Image {
  int width = 0, height = 0;
  std::vector<unsigned char> rgb;
  bool lit(int x, int y) const {
    auto const* p = &rgb[(std::size_t(y) * std::size_t(width) + std::size_t(x)) * 3];
    return p[0] > 48 || p[1] > 48 || p[2] > 48;
  }
};

Image load(const std::string& path) {
  Image im;
  int channels = 0;
  unsigned char* data = stbi_load(path.c_str(), &im.width, &im.height, &channels, 3);
  if (!data) return im;
  im.rgb.assign(data, data + std::size_t(im.width) * std::size_t(im.height) * 3);
  stbi_image_free(data);
  return im;
}

bool have(const char* program) {
  return std::system((std::string("command -v ") + program + " >/dev/null 2>&1").c_str()) == 0;
}

class Viewer : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::fresh_test_dir("nbody-viewer");
    // Is the viewer built? (--viewer without one says so with exit 2.)
    if (run("--offscreen --bodies 16 --frames 1 --screenshot " + file("probe.png")) == 2 &&
        err().find("built without the viewer") != std::string::npos)
      GTEST_SKIP() << "nbody was built without the viewer";
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string file(const std::string& name) const { return (dir_ / name).string(); }
  std::string err() const { return text_of("err"); }
  std::string out() const { return text_of("out"); }
  std::string text_of(const std::string& name) const {
    std::ifstream f(dir_ / name);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
  }
  // Runs nbody on the CPU backend with `args`, optionally inside `wrapper` (xvfb-run).
  int run(const std::string& args, const std::string& wrapper = "") {
    std::string const cmd = wrapper + " " + NBODY_EXECUTABLE + " --backend cpu " + args + " >" + file("out") + " 2>" +
                            file("err") + " </dev/null";
    int const status = std::system(cmd.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  // Lit pixels: enough of them, centred on the frame, and a good share of them in its middle half
  // (the opening view fills the window: measured 39% for the collision, whose two disks span its
  // width, 60% and more for Plummer spheres).
  void expect_bodies_in_frame(const Image& im, const std::string& what) {
    ASSERT_GT(im.width, 0) << what << ": no image";
    std::size_t lit = 0, central = 0;
    double sum_x = 0, sum_y = 0;
    for (int y = 0; y < im.height; ++y)
      for (int x = 0; x < im.width; ++x)
        if (im.lit(x, y)) {
          ++lit;
          sum_x += x, sum_y += y;
          if (x > im.width / 4 && x < 3 * im.width / 4 && y > im.height / 4 && y < 3 * im.height / 4) ++central;
        }
    double const fraction = double(lit) / (double(im.width) * im.height);
    double const n = double(std::max<std::size_t>(lit, 1));
    std::printf("%s: %.2f%% of pixels lit, %.0f%% of those in the middle, centred at (%.0f, %.0f)\n", what.c_str(),
                100 * fraction, 100.0 * double(central) / n, sum_x / n, sum_y / n);
    EXPECT_GT(fraction, 0.01) << what << ": blank picture";
    EXPECT_LT(fraction, 0.9) << what << ": everything lit";
    EXPECT_GT(central, lit * 3 / 10) << what << ": the bodies are not framed";
    EXPECT_LT(std::abs(sum_x / n - 0.5 * im.width), 0.1 * im.width) << what << ": not centred";
    EXPECT_LT(std::abs(sum_y / n - 0.5 * im.height), 0.1 * im.height) << what << ": not centred";
  }

  static std::size_t differing_pixels(const Image& a, const Image& b) {
    if (a.rgb.size() != b.rgb.size()) return std::size_t(-1);
    std::size_t n = 0;
    for (std::size_t i = 0; i < a.rgb.size(); i += 3)
      if (a.rgb[i] != b.rgb[i] || a.rgb[i + 1] != b.rgb[i + 1] || a.rgb[i + 2] != b.rgb[i + 2]) ++n;
    return n;
  }

  fs::path dir_;
};

constexpr const char* kXvfb = "xvfb-run -a -s '-screen 0 1024x768x24'";

TEST_F(Viewer, WindowUnderXvfbShowsTheBodies) {
  if (!have("xvfb-run")) GTEST_SKIP() << "xvfb-run not installed";
  ASSERT_EQ(run("--viewer --bodies 4096 --no-hud --width 800 --height 600 --screenshot " + file("a.png") +
                    " --frames 30",
                kXvfb),
            0)
      << err();
  EXPECT_NE(err().find("GLFW window"), std::string::npos) << err();
  Image const im = load(file("a.png"));
  EXPECT_EQ(im.width, 800);
  EXPECT_EQ(im.height, 600);
  expect_bodies_in_frame(im, "Xvfb window, Plummer 4096");
}

TEST_F(Viewer, RunningPicturesDifferPausedOnesDoNot) {
  if (!have("xvfb-run")) GTEST_SKIP() << "xvfb-run not installed";
  std::string const common = "--viewer --bodies 4096 --no-hud --width 640 --height 480 --steps-per-frame 5 ";
  ASSERT_EQ(run(common + "--screenshot " + file("r2.png") + " --frames 2", kXvfb), 0) << err();
  ASSERT_EQ(run(common + "--screenshot " + file("r30.png") + " --frames 30", kXvfb), 0) << err();
  ASSERT_EQ(run(common + "--paused --screenshot " + file("p2.png") + " --frames 2", kXvfb), 0) << err();
  ASSERT_EQ(run(common + "--paused --screenshot " + file("p30.png") + " --frames 30", kXvfb), 0) << err();
  std::size_t const moved = differing_pixels(load(file("r2.png")), load(file("r30.png")));
  std::size_t const still = differing_pixels(load(file("p2.png")), load(file("p30.png")));
  std::printf("running: %zu pixels changed; paused: %zu\n", moved, still);
  EXPECT_GT(moved, std::size_t(640 * 480 / 200));
  EXPECT_EQ(still, 0u);
}

// A recording is a function of its command: the same run twice gives the same picture, however long
// each frame took to make (the exposure adapts per frame of the recording, not per second of wall
// time). The runs take different times: the second computes on one thread.
TEST_F(Viewer, TheSameRecordingTwiceIsTheSamePicture) {
  std::string const common = "--offscreen --scenario collision --bodies 4096 --no-hud --width 480 --height 320 "
                             "--frames 40 --screenshot ";
  ASSERT_EQ(run(common + file("a.png"), "env -u DISPLAY"), 0) << err();
  ASSERT_EQ(run(common + file("b.png") + " --threads 1", "env -u DISPLAY"), 0) << err();
  EXPECT_EQ(differing_pixels(load(file("a.png")), load(file("b.png"))), 0u);
}

TEST_F(Viewer, OffscreenThroughEglWithoutAnyDisplay) {
  ASSERT_EQ(run("--offscreen --scenario collision --bodies 8192 --width 640 --height 400 --no-hud --screenshot " +
                    file("o.png") + " --frames 3",
                "env -u DISPLAY -u WAYLAND_DISPLAY"),
            0)
      << err();
  EXPECT_NE(err().find("EGL pbuffer"), std::string::npos) << err();
  expect_bodies_in_frame(load(file("o.png")), "EGL offscreen, collision 8192");
}

// No EGL driver (GLVND told of none): the failure says so in words, the EGL call and its error as detail.
TEST_F(Viewer, OffscreenWithoutAnEglDriverSaysWhatIsMissing) {
  int const code = run("--offscreen --bodies 64 --frames 1 --screenshot " + file("n.png"),
                       "env -u DISPLAY __EGL_VENDOR_LIBRARY_FILENAMES=/nonexistent.json");
  if (code == 0) GTEST_SKIP() << "this EGL is not GLVND's (it found a driver)";
  EXPECT_EQ(code, 1) << err();
  EXPECT_NE(err().find("error: --offscreen: no EGL driver could give a display to render into (egl"), std::string::npos)
      << err();
  EXPECT_NE(err().find(", 0x"), std::string::npos) << err();
  EXPECT_NE(err().find("EGL rendering needs Mesa's EGL"), std::string::npos) << err();
}

TEST_F(Viewer, FramesDirGetsOnePngPerFrame) {
  fs::create_directories(dir_ / "movie");
  ASSERT_EQ(run("--offscreen --bodies 512 --width 320 --height 200 --frames 4 --frames-dir " + file("movie"),
                "env -u DISPLAY"),
            0)
      << err();
  for (int k = 0; k < 4; ++k) EXPECT_TRUE(fs::exists(dir_ / "movie" / ("frame_0000" + std::to_string(k) + ".png")));
  EXPECT_FALSE(fs::exists(dir_ / "movie" / "frame_00004.png"));
}

// The binary takes 4 steps a frame unless the user names a count (hermite4: one span of dt max): --steps-per-frame 1
// is one step a frame too.
TEST_F(Viewer, TheBinarysStepsPerFrameAreTheUsersWhereGiven) {
  std::string const binary = "--offscreen --scenario two-body --width 160 --height 100 --no-hud --frames 10 "
                             "--screenshot " + file("b.png");
  ASSERT_EQ(run(binary, "env -u DISPLAY"), 0) << err();
  EXPECT_NE(err().find("mean of the 40 steps"), std::string::npos) << err();
  for (char const* given : {"1", "2"}) {
    ASSERT_EQ(run(binary + " --steps-per-frame " + given, "env -u DISPLAY"), 0) << err();
    std::string const steps = std::to_string(10 * std::stoi(given));
    EXPECT_NE(err().find("mean of the " + steps + " steps"), std::string::npos) << given << ": " << err();
  }
  // hermite4's binary: one span of dt max a frame (four drew an eccentric orbit's pericentre as a corner), as
  // --steps-per-frame 1 gives, and fewer block steps than 4 spans a frame make.
  auto block_steps = [&](const std::string& args) {
    EXPECT_EQ(run(binary + " --integrator hermite4 --eccentricity 0.9 " + args, "env -u DISPLAY"), 0) << err();
    std::string const e = err();
    std::size_t const at = e.find("mean of the ");
    return at == std::string::npos ? -1 : std::stoi(e.substr(at + 12));
  };
  int const by_default = block_steps(""), one = block_steps("--steps-per-frame 1"),
            four = block_steps("--steps-per-frame 4");
  EXPECT_GT(by_default, 0);
  EXPECT_EQ(by_default, one);
  EXPECT_LT(by_default, four);
}

// The legend shows a colour as the bodies of it show on screen: the exposure, which brightens a frame of four bodies
// several times (once it has adapted, over the frames), brightens the legend's colours alike. Coloured by device, the
// four bodies take device 0's colour: the centre of a body (the brightest pixel; four bodies do not overlap) is the
// colour of the legend's swatch (its most saturated pixel), which was the colour itself, several times darker.
TEST_F(Viewer, TheLegendShowsTheColoursAsTheBodiesShowThem) {
  int const w = 640, h = 400;
  ASSERT_EQ(run("--offscreen --bodies 4 --color device --hud minimal --frames 40 --width 640 --height 400 "
                "--screenshot " + file("l.png"),
                "env -u DISPLAY"),
            0)
      << err();
  Image const im = load(file("l.png"));
  ASSERT_EQ(im.width, w);
  auto at = [&](int x, int y) { return &im.rgb[(std::size_t(y) * std::size_t(w) + std::size_t(x)) * 3]; };
  int best = -1, bx = 0, by = 0;
  for (int y = 60; y < h - 60; ++y)  // clear of the time stamp, the scale bar and the legend
    for (int x = 0; x < w - 200; ++x) {
      auto const* p = at(x, y);
      if (p[0] + p[1] + p[2] > best) best = p[0] + p[1] + p[2], bx = x, by = y;
    }
  int saturation = -1, sx = 0, sy = 0;
  for (int y = h - 120; y < h; ++y)  // the legend's corner (render::overlay_layout)
    for (int x = w - 200; x < w; ++x) {
      auto const* p = at(x, y);
      int const s = std::max({p[0], p[1], p[2]}) - std::min({p[0], p[1], p[2]});
      if (s > saturation) saturation = s, sx = x, sy = y;
    }
  auto const *body = at(bx, by), *swatch = at(sx, sy);
  for (int k = 0; k < 3; ++k)
    EXPECT_NEAR(int(body[k]), int(swatch[k]), 6)
        << "channel " << k << ": a body at (" << bx << ", " << by << ") is (" << int(body[0]) << ", " << int(body[1])
        << ", " << int(body[2]) << "), the legend's swatch at (" << sx << ", " << sy << ") (" << int(swatch[0])
        << ", " << int(swatch[1]) << ", " << int(swatch[2]) << ")";
}

TEST_F(Viewer, HudIsDrawnUnlessHidden) {
  ASSERT_EQ(run("--offscreen --bodies 64 --width 640 --height 400 --screenshot " + file("hud.png"), "env -u DISPLAY"), 0)
      << err();
  ASSERT_EQ(run("--offscreen --bodies 64 --width 640 --height 400 --no-hud --screenshot " + file("bare.png"),
                "env -u DISPLAY"),
            0)
      << err();
  EXPECT_GT(differing_pixels(load(file("hud.png")), load(file("bare.png"))), std::size_t(640 * 400 / 50));
}

// The overlay for talks and papers: in the full HUD the panel, the colour legend, the time and the
// scale bar; with --hud minimal the last three alone; with --hud none nothing. Each part is found as
// the pixels that differ from the --hud none picture of the same paused run, in the corner where
// render/overlay.cpp puts it (overlay_layout, 640 x 400); the colour bar shows viridis' two ends.
TEST_F(Viewer, OverlayShowsLegendTimeAndScaleBarAndMinimalHasNoWidgets) {
  std::string const common = "--offscreen --paused --bodies 256 --width 640 --height 400 --frames 2 --screenshot ";
  ASSERT_EQ(run(common + file("full.png") + " --hud full", "env -u DISPLAY"), 0) << err();
  ASSERT_EQ(run(common + file("minimal.png") + " --hud minimal", "env -u DISPLAY"), 0) << err();
  ASSERT_EQ(run(common + file("none.png") + " --hud none", "env -u DISPLAY"), 0) << err();
  Image const full = load(file("full.png")), minimal = load(file("minimal.png")), none = load(file("none.png"));
  ASSERT_EQ(full.width, 640);
  struct Box {
    const char* name;
    int x0, y0, x1, y1;
  };
  Box const panel{"panel", 0, 0, 280, 150}, time{"time", 410, 0, 640, 44}, legend{"legend", 460, 176, 640, 400},
            bar{"scale bar", 0, 344, 204, 400};
  auto differing = [&](const Image& a, const Box& b) {
    std::size_t n = 0;
    for (int y = b.y0; y < b.y1; ++y)
      for (int x = b.x0; x < b.x1; ++x) {
        std::size_t const i = (std::size_t(y) * std::size_t(a.width) + std::size_t(x)) * 3;
        if (a.rgb[i] != none.rgb[i] || a.rgb[i + 1] != none.rgb[i + 1] || a.rgb[i + 2] != none.rgb[i + 2]) ++n;
      }
    return n;
  };
  for (Box const& b : {panel, time, legend, bar}) {
    std::size_t const in_full = differing(full, b), in_minimal = differing(minimal, b);
    std::printf("%s: %zu pixels drawn in the full HUD, %zu in the minimal one\n", b.name, in_full, in_minimal);
    EXPECT_GT(in_full, 200u) << b.name << " missing from the full HUD";
    if (std::string(b.name) == panel.name)
      EXPECT_EQ(in_minimal, 0u) << "a widget in the minimal HUD";
    else
      EXPECT_GT(in_minimal, 200u) << b.name << " missing from the minimal HUD";
  }
  // The colour bar: viridis' yellow end (253, 231, 37) above its violet end (68, 1, 84), each as the frame's exposure
  // shows it (brighter, the same hue).
  auto first = [&](auto is) {
    for (int y = legend.y0; y < legend.y1; ++y)
      for (int x = legend.x0; x < legend.x1; ++x) {
        auto const* p = &minimal.rgb[(std::size_t(y) * std::size_t(minimal.width) + std::size_t(x)) * 3];
        if (is(int(p[0]), int(p[1]), int(p[2]))) return y;
      }
    return -1;
  };
  int const yellow = first([](int r, int g, int b) { return r > 150 && g > 150 && b < g - 100; });
  int const violet = first([](int r, int g, int b) { return b > g + 40 && r > g + 30 && g < 60; });
  EXPECT_GE(yellow, 0) << "no viridis yellow in the legend";
  EXPECT_GE(violet, 0) << "no viridis violet in the legend";
  EXPECT_LT(yellow, violet) << "fast (yellow) belongs at the top of the bar";
}

// In a small frame the panel keeps clear of the time stamp (at 320 x 200 it covered the stamp's left part): the
// stamp's corner is the same picture with the full HUD as with the minimal one (no panel). The frames are a
// recording's, the same run after run.
TEST_F(Viewer, SmallFramesPanelLeavesTheTimeStampClear) {
  std::string const common = "--offscreen --bodies 512 --width 320 --height 200 --frames 3 --screenshot ";
  ASSERT_EQ(run(common + file("full.png") + " --hud full", "env -u DISPLAY"), 0) << err();
  ASSERT_EQ(run(common + file("minimal.png") + " --hud minimal", "env -u DISPLAY"), 0) << err();
  Image const full = load(file("full.png")), minimal = load(file("minimal.png"));
  ASSERT_EQ(full.width, 320);
  ASSERT_EQ(minimal.width, 320);
  // "t = 0.03 N-body units" in the corner: 21 characters of about 8.6 pixels from x = 308 leftwards, y 10 to 26.
  std::size_t stamp = 0, covered = 0;
  for (int y = 6; y < 30; ++y)
    for (int x = 120; x < 320; ++x) {
      std::size_t const i = (std::size_t(y) * 320 + std::size_t(x)) * 3;
      bool const text = minimal.rgb[i] > 200 && minimal.rgb[i + 1] > 200 && minimal.rgb[i + 2] > 200;
      stamp += text ? 1 : 0;
      bool const same = full.rgb[i] == minimal.rgb[i] && full.rgb[i + 1] == minimal.rgb[i + 1] &&
                        full.rgb[i + 2] == minimal.rgb[i + 2];
      covered += text && !same ? 1 : 0;
    }
  std::printf("time stamp: %zu pixels of its text, %zu of them covered in the full HUD\n", stamp, covered);
  EXPECT_GT(stamp, 50u) << "no time stamp found";  // measured 89
  EXPECT_EQ(covered, 0u) << "the HUD's panel covers the time stamp";
}

// The core of galaxy_20K at the defaults: bright and shaded, not a disc burnt to white. Measured
// (llvmpipe, 640 x 480) in the 80 x 80 pixels around the centre: 3.8% of pixels with a channel
// >= 250 (10.0% with the log-normal white point before), 99.7% with a channel >= 128.
TEST_F(Viewer, GalaxyCoreKeepsItsStructureAtTheDefaults) {
  std::string const galaxy = std::string(NBODY_SHARED_DATA_DIR) + "/galaxy_20K.bin";
  if (!fs::exists(galaxy)) GTEST_SKIP() << galaxy << " not found (it lives in ../shared/data)";
  ASSERT_EQ(run("--offscreen --load " + galaxy + " --no-hud --width 640 --height 480 --screenshot " + file("g.png"),
                "env -u DISPLAY"),
            0)
      << err();
  Image const im = load(file("g.png"));
  ASSERT_EQ(im.width, 640);
  std::size_t saturated = 0, bright = 0, all = 0;
  for (int y = im.height / 2 - 40; y < im.height / 2 + 40; ++y)
    for (int x = im.width / 2 - 40; x < im.width / 2 + 40; ++x, ++all) {
      auto const* p = &im.rgb[(std::size_t(y) * std::size_t(im.width) + std::size_t(x)) * 3];
      int const m = std::max({p[0], p[1], p[2]});
      saturated += m >= 250 ? 1 : 0;
      bright += m >= 128 ? 1 : 0;
    }
  double const saturated_share = double(saturated) / double(all), bright_share = double(bright) / double(all);
  std::printf("galaxy_20K core: %.1f%% saturated, %.1f%% with a channel >= 128\n", 100 * saturated_share,
              100 * bright_share);
  EXPECT_LT(saturated_share, 0.07);
  EXPECT_GT(bright_share, 0.9) << "the core is not saturated because it is dark";
}

// A movie as docs/guide.md makes it: every frame in an H.264 MP4 that ffprobe reads, at the rate asked.
TEST_F(Viewer, VideoHasEveryFrameAtTheRateAsked) {
  if (!have("ffmpeg") || !have("ffprobe")) GTEST_SKIP() << "needs ffmpeg and ffprobe (Debian: ffmpeg)";
  ASSERT_EQ(run("--offscreen --scenario collision --bodies 2048 --width 320 --height 240 --frames 30 --video-fps 24 "
                "--video " + file("c.mp4"),
                "env -u DISPLAY"),
            0)
      << err();
  EXPECT_NE(err().find("viewer: wrote " + file("c.mp4") + " (30 frames)"), std::string::npos) << err();
  std::string const probe = "ffprobe -v error -count_frames -select_streams v:0 -show_entries "
                            "stream=codec_name,width,height,r_frame_rate,nb_read_frames -of csv=p=0 " +
                            file("c.mp4") + " >" + file("probe.txt");
  ASSERT_EQ(std::system(probe.c_str()), 0);
  std::ifstream f(file("probe.txt"));
  std::string line;
  std::getline(f, line);
  EXPECT_EQ(line, "h264,320,240,24/1,30");
}

TEST_F(Viewer, NoDisplayIsAClearErrorAndTheDefaultModeFallsBack) {
  EXPECT_EQ(run("--viewer --bodies 64", "env -u DISPLAY -u WAYLAND_DISPLAY"), 2);
  EXPECT_NE(err().find("--viewer: no display"), std::string::npos) << err();
  EXPECT_EQ(run("--bodies 256", "env -u DISPLAY -u WAYLAND_DISPLAY"), 0) << err();
  EXPECT_NE(err().find("notice: no display"), std::string::npos) << err();
  // A checkpoint with no mode, most often a run to continue: the notice says that the benchmark continues nothing.
  // (Without HDF5 there is no checkpoint to try.)
  if (run("--run --bodies 64 --steps 1 -q --checkpoint " + file("c.h5"), "env -u DISPLAY -u WAYLAND_DISPLAY") == 0) {
    EXPECT_EQ(run("--restart " + file("c.h5") + "", "env -u DISPLAY -u WAYLAND_DISPLAY"), 0)
        << err();
    EXPECT_NE(err().find("which times steps from " + file("c.h5") + "'s state and continues nothing (--run continues "
                         "the run)"),
              std::string::npos)
        << err();
  }
  // What the benchmark refuses is refused there too: an eccentricity the viewer could have used on a switch to
  // two-body does nothing for a Plummer benchmark.
  EXPECT_EQ(run("--bodies 256 --eccentricity 0.9", "env -u DISPLAY -u WAYLAND_DISPLAY"), 2);
  EXPECT_NE(err().find("--eccentricity 0.9: applies to --scenario two-body only (this run's is plummer); no display"),
            std::string::npos)
      << err();
  EXPECT_EQ(err().find("headless benchmark"), std::string::npos) << err();
  // So is what the viewer alone takes: options that do nothing in the mode run are refused, and the benchmark would
  // drop them unseen. With no display, and with a display that cannot be opened.
  EXPECT_EQ(run("--bodies 256 --paused --hud minimal --color level",
                "env -u DISPLAY -u WAYLAND_DISPLAY"),
            2);
  EXPECT_NE(err().find("error: --paused, --color and --hud belong to the viewer and would do nothing in the headless "
                       "benchmark; no display (DISPLAY/WAYLAND_DISPLAY unset), where nbody would run the benchmark "
                       "instead"),
            std::string::npos)
      << err();
  EXPECT_EQ(run("--bodies 256 --trails", "env -u WAYLAND_DISPLAY DISPLAY=:987"), 2);
  EXPECT_NE(err().find("error: --trails belongs to the viewer and would do nothing in the headless benchmark; cannot "
                       "open a window"),
            std::string::npos)
      << err();
  EXPECT_EQ(err().find("nbody benchmark"), std::string::npos) << err();
  // A DISPLAY whose server is gone (left over from another session): the same fallback, saying why.
  EXPECT_EQ(run("--bodies 256", "env -u WAYLAND_DISPLAY DISPLAY=:987"), 0) << err();
  EXPECT_NE(err().find("notice: cannot open a window"), std::string::npos) << err();
  EXPECT_NE(err().find("running the headless benchmark"), std::string::npos) << err();
  // The benchmark's own options make the default mode the benchmark, with a display or without: a window would drop
  // them unseen. What belongs to the viewer is refused beside them, naming the option that chose the benchmark.
  for (const char* display : {"env -u DISPLAY -u WAYLAND_DISPLAY", "env -u WAYLAND_DISPLAY DISPLAY=:987"}) {
    EXPECT_EQ(run("--bodies 256 --steps 2 --warmup 1 --json " + file("b.json"), display), 0) << err();
    // (No notice of a fallback; the benchmark's own, of its timing, may come.)
    EXPECT_EQ(err().find("headless benchmark"), std::string::npos) << display << ": " << err();
    EXPECT_EQ(err().find("cannot open a window"), std::string::npos) << display << ": " << err();
    EXPECT_NE(out().find("nbody benchmark"), std::string::npos) << out();
    EXPECT_TRUE(fs::exists(file("b.json")));
    fs::remove(file("b.json"));
    // A time and a report are a run's or the benchmark's: neither is chosen for the user.
    EXPECT_EQ(run("--bodies 256 --integrator hermite4 --t-end 0.01 --json " + file("b.json"), display), 2) << err();
    EXPECT_NE(err().find("error: --t-end 0.01 and --json choose no mode together: name --run (the run to that time, "
                         "and its report) or --benchmark (hermite4's time to it)"),
              std::string::npos)
        << err();
    EXPECT_FALSE(fs::exists(file("b.json")));
    EXPECT_EQ(run("--bodies 256 --json " + file("b.json") + " --paused", display), 2) << err();
    EXPECT_NE(err().find("error: --paused does nothing with --benchmark (which --json implies); it belongs to the "
                         "viewer and --serve"),
              std::string::npos)
        << err();
  }
  if (have("xvfb-run")) {
    // (Bounded: a window that opened would wait for its user.)
    EXPECT_EQ(run("--bodies 256 --steps 2 --json " + file("x.json"), "timeout 60 " + std::string(kXvfb)), 0) << err();
    EXPECT_NE(out().find("nbody benchmark"), std::string::npos) << out();
    EXPECT_EQ(err().find("viewer:"), std::string::npos) << "the viewer opened: " << err();
    EXPECT_TRUE(fs::exists(file("x.json")));
  }
  // Asked for by name, a window that cannot open is the same case as no display: exit 2, naming the option that
  // asked for it and the way without one.
  EXPECT_EQ(run("--viewer --bodies 64", "env -u WAYLAND_DISPLAY DISPLAY=:987"), 2) << err();
  EXPECT_NE(err().find("error: --viewer: cannot open a window"), std::string::npos) << err();
  EXPECT_NE(err().find("; use --offscreen for EGL rendering, or --benchmark\n"), std::string::npos) << err();
  EXPECT_EQ(run("--frames 2 --bodies 64", "env -u WAYLAND_DISPLAY DISPLAY=:987"), 2) << err();
  EXPECT_NE(err().find("error: --frames 2: cannot open a window"), std::string::npos) << err();
  // With --viewer given, --frames only counts the window's frames: --viewer asked for the window.
  EXPECT_EQ(run("--viewer --frames 2 --bodies 64", "env -u WAYLAND_DISPLAY DISPLAY=:987"), 2) << err();
  EXPECT_NE(err().find("error: --viewer: cannot open a window"), std::string::npos) << err();
  EXPECT_EQ(run("--viewer --frames 2 --bodies 64", "env -u DISPLAY -u WAYLAND_DISPLAY"), 2) << err();
  EXPECT_NE(err().find("error: --viewer: no display"), std::string::npos) << err();
  EXPECT_EQ(run("--bodies 64 --screenshot " + file("s.png"), "env -u DISPLAY -u WAYLAND_DISPLAY"), 2);
  EXPECT_NE(err().find("error: --screenshot " + file("s.png") + ": no display"), std::string::npos) << err();
  // A screenshot path nbody cannot write is refused before the first frame.
  EXPECT_EQ(run("--offscreen --bodies 64 --screenshot " + file("no-such-dir/x.png"), "env -u DISPLAY"), 2);
  EXPECT_NE(err().find("--screenshot " + file("no-such-dir/x.png") + ": the folder"), std::string::npos) << err();
  EXPECT_EQ(err().find("viewer:"), std::string::npos) << "the viewer started: " << err();
  // --frames-dir makes its folder; one it cannot make is refused before the first frame.
  EXPECT_EQ(run("--offscreen --frames 2 --frames-dir " + file("made/here") + " --bodies 64", "env -u DISPLAY"), 0) << err();
  EXPECT_TRUE(fs::exists(file("made/here/frame_00001.png")));
  // A folder that holds an earlier recording's frames is refused (a shorter run would leave the old
  // frames after its own), and they stay as they were.
  auto const before = fs::last_write_time(file("made/here/frame_00001.png"));
  EXPECT_EQ(run("--offscreen --frames 1 --frames-dir " + file("made/here") + " --bodies 32", "env -u DISPLAY"), 2);
  EXPECT_NE(err().find("--frames-dir " + file("made/here") + ": holds frames of an earlier recording"), std::string::npos)
      << err();
  EXPECT_EQ(fs::last_write_time(file("made/here/frame_00001.png")), before);
  std::ofstream(file("plain")) << "x";
  EXPECT_EQ(run("--offscreen --frames-dir " + file("plain/sub") + " --bodies 64", "env -u DISPLAY"), 2);
  EXPECT_NE(err().find("--frames-dir " + file("plain/sub") + ": cannot create the folder"), std::string::npos) << err();
}

}  // namespace
}  // namespace nbody
