// tests/test_hdr.cpp - the HDR pipeline, sprites and trails on a real GL context (EGL pbuffer;
// Mesa's llvmpipe where there is no GPU): dense clusters keep their structure, the background stays
// dark, the measured luminance is linear, trails fade with age (label gl). Set NBODY_HDR_PNG_DIR to
// a folder to get the pictures.
#include <gtest/gtest.h>

#include <GL/glew.h>
#include <glm/glm.hpp>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "render/body_renderer.h"
#include "render/camera.h"
#include "render/colors.h"
#include "render/exposure.h"
#include "render/frame.h"
#include "render/hdr.h"
#include "render/screenshot.h"
#include "render/surface.h"
#include "render/trails.h"
#include "test_support.h"

namespace nbody {
namespace {

constexpr int kWidth = 512, kHeight = 512;
constexpr float kPointSize = 8.0f;   // the HUD's defaults
constexpr float kBrightness = 0.6f;

using Pixels = std::vector<std::uint8_t>;  // RGB, top row first

struct Region {
  int x0, y0, x1, y1;  // [x0, x1) x [y0, y1), pixels from the top left
};
constexpr Region kCentre{3 * kWidth / 8, 3 * kHeight / 8, 5 * kWidth / 8, 5 * kHeight / 8};  // middle 1/16 of the area

const std::uint8_t* at(const Pixels& p, int x, int y) { return &p[(std::size_t(y) * kWidth + std::size_t(x)) * 3]; }
int max_channel(const Pixels& p, int x, int y) {
  auto const* c = at(p, x, y);
  return std::max({c[0], c[1], c[2]});
}

double fraction(const Pixels& p, Region r, bool (*pred)(const std::uint8_t*)) {
  std::size_t hits = 0, all = 0;
  for (int y = r.y0; y < r.y1; ++y)
    for (int x = r.x0; x < r.x1; ++x, ++all) hits += pred(at(p, x, y)) ? 1 : 0;
  return double(hits) / double(all);
}
bool saturated(const std::uint8_t* c) { return c[0] >= 250 || c[1] >= 250 || c[2] >= 250; }
bool background(const std::uint8_t* c) { return c[0] <= 1 && c[1] <= 1 && c[2] >= 4 && c[2] <= 6; }  // (0, 0, 5)

// Mean absolute difference of the brightest channel between horizontal neighbours: the grain of
// individual sprites; a flat white disc has none.
double local_contrast(const Pixels& p, Region r) {
  double sum = 0, n = 0;
  for (int y = r.y0; y < r.y1; ++y)
    for (int x = r.x0; x + 1 < r.x1; ++x, ++n) sum += std::abs(max_channel(p, x + 1, y) - max_channel(p, x, y));
  return sum / n;
}

void maybe_write(const std::string& name, const Pixels& p) {
  if (char const* dir = std::getenv("NBODY_HDR_PNG_DIR"); dir && *dir)
    render::write_png(std::string(dir) + "/" + name, p, kWidth, kHeight);
}

class Hdr : public ::testing::Test {
 protected:
  void SetUp() override {
    try {
      surface_ = render::open_offscreen(kWidth, kHeight, "the HDR tests");
    } catch (const std::exception& e) {
      GTEST_SKIP() << "no EGL context: " << e.what();
    }
    std::printf("%s, %s\n", surface_->describe().c_str(), render::gl_description().c_str());
  }
  std::unique_ptr<render::Surface> surface_;
};

// A dense Plummer cluster, 20,000 bodies coloured by speed, framed and coloured as the viewer did when
// the bounds below were measured: the sphere holding 90% of the bodies fills the view, speeds from 0
// to their 95th percentile span the blue-white-orange map. (The viewer now frames a Plummer sphere
// from 30% farther and colours by viridis over 2%..98% of the speeds: measured so, 29% of the
// centre's pixels have a channel >= 250. This test is about the tone mapping, not those choices.)
render::ColorRange old_speed_range(const sim::BodySet& b) {
  std::vector<float> s;
  for (auto const& v : b.velocity) s.push_back(render::speed_of(float(v.x), float(v.y), float(v.z)));
  std::nth_element(s.begin(), s.begin() + std::ptrdiff_t(s.size() * 95 / 100), s.end());
  return {0.0f, s[s.size() * 95 / 100]};
}

struct Cluster {
  render::BodyRenderer renderer;
  render::OrbitCamera camera;

  explicit Cluster(std::size_t n) {
    sim::BodySet const b = test::scenario("plummer", n);
    std::vector<float> xyzw;
    for (auto const& p : b.pos_mass) xyzw.insert(xyzw.end(), {float(p.x), float(p.y), float(p.z), float(p.w)});
    renderer.upload_positions(xyzw.data(), n);
    std::vector<render::Rgba> colors;
    render::compute_colors(render::ColorMode::speed, b, {Slice{0, n}}, {render::Colormap::classic, old_speed_range(b)}, colors);
    renderer.upload_colors(colors);
    std::vector<double> r;
    for (auto const& p : b.pos_mass) r.push_back(std::hypot(p.x, p.y, p.z));
    std::nth_element(r.begin(), r.begin() + std::ptrdiff_t(r.size() * 9 / 10), r.end());
    camera.fit(glm::vec3(0.0f), float(r[r.size() * 9 / 10]));
  }
  void draw(float brightness = kBrightness) {
    renderer.draw(camera.view(), camera.projection(float(kWidth) / float(kHeight)), kPointSize,
                  camera.fitted_distance(), brightness);
  }
};

// Fractions of the centre's pixels with a channel >= 250, 20,000 bodies at 512 x 512, measured on
// llvmpipe: HDR 0.0055 (exact means, 8-norm white point), plain additive 8-bit 0.980; on an H100
// (NVIDIA EGL) with the earlier log-normal white point: 0.0002 / 0.980.
constexpr double kHdrSaturatedBound = 0.02;
constexpr double kPlainSaturatedAtLeast = 0.5;
// Local contrast (grain of the sprites) in the centre: HDR 3.11 (llvmpipe; 3.03 on the H100 before),
// plain 0.92 / 0.95.
constexpr double kContrastRatio = 2.0;
// Pixels of the whole frame that are exactly the background: measured 0.448 on both.
constexpr double kBackgroundAtLeast = 0.3;

// A PNG that does not fit (a full disk; here a file size limit, where a write fails as on a full disk) is an error
// and replaces nothing: the last good picture stays. stb's own file writer ignored the failed write, and a
// truncated PNG with a valid signature was published.
TEST(Png, APictureThatDoesNotFitIsAnErrorAndReplacesNothing) {
  test::TestDir const dir("nbody-png");
  std::string const path = (dir.path() / "shot.png").string();
  { std::ofstream(path) << "the last good picture"; }
  Pixels noise(std::size_t(320) * 200 * 3);  // incompressible: about 190 kB of PNG
  std::uint32_t x = 12345;
  for (auto& p : noise) p = std::uint8_t((x = x * 1664525u + 1013904223u) >> 24);
  pid_t const pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    signal(SIGXFSZ, SIG_IGN);  // a write past the limit then fails with EFBIG
    rlimit const limit{20000, 20000};
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0) _exit(125);
    try {
      render::write_png(path, noise, 320, 200);
    } catch (const std::exception& e) {
      _exit(std::string(e.what()).find(path + ": cannot write the PNG") == 0 ? 3 : 4);
    }
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 3) << "0: written as if whole; 4: another message";
  std::ifstream kept(path);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(kept), std::istreambuf_iterator<char>()), "the last good picture");
  std::size_t entries = 0;
  for (auto const& e : std::filesystem::directory_iterator(dir.path())) entries += e.is_regular_file();
  EXPECT_EQ(entries, 1u) << "no temporary file left";
  // Negative control: without the limit it is written whole.
  render::write_png(path, noise, 320, 200);
  EXPECT_GT(std::filesystem::file_size(path), 20000u);
}

TEST_F(Hdr, DenseClusterKeepsStructureWherePlainAdditiveSaturates) {
  Cluster cluster(20000);
  render::HdrPipeline hdr;
  render::AutoExposure exposure;

  // Frame 1 measures, frame 2 is drawn with the exposure that measurement gives (as the viewer will).
  hdr.begin(kWidth, kHeight);
  cluster.draw();
  hdr.end(1.0f);
  float const luminance = hdr.average_luminance();
  float const e = exposure.update(luminance, 1.0f / 60.0f);
  hdr.begin(kWidth, kHeight);
  cluster.draw();
  EXPECT_FLOAT_EQ(hdr.end(e), e);
  render::check_gl("the HDR frame");
  Pixels const tone_mapped = render::read_pixels(kWidth, kHeight);
  maybe_write("cluster_hdr.png", tone_mapped);

  // The old way: additive straight into the 8-bit default framebuffer.
  render::begin_frame(kWidth, kHeight);
  cluster.draw();
  Pixels const plain = render::read_pixels(kWidth, kHeight);
  maybe_write("cluster_plain.png", plain);

  double const hdr_saturated = fraction(tone_mapped, kCentre, saturated);
  double const plain_saturated = fraction(plain, kCentre, saturated);
  double const hdr_contrast = local_contrast(tone_mapped, kCentre), plain_contrast = local_contrast(plain, kCentre);
  double const hdr_background = fraction(tone_mapped, {0, 0, kWidth, kHeight}, background);
  std::printf("average luminance %.4g (lit %.3f), exposure %.3g; centre saturated: HDR %.4f, plain %.4f; "
              "local contrast HDR %.2f, plain %.2f; background pixels (HDR) %.3f\n",
              double(luminance), double(hdr.lit_fraction()), double(e), hdr_saturated, plain_saturated, hdr_contrast,
              plain_contrast, hdr_background);

  EXPECT_GT(luminance, 0.0f);
  EXPECT_LT(hdr_saturated, kHdrSaturatedBound);        // (a)
  EXPECT_GT(plain_saturated, kPlainSaturatedAtLeast);  // (b) the negative control
  EXPECT_GT(hdr_contrast, kContrastRatio * plain_contrast);  // structure, not a flat disc
  // Not saturated because it is bright and shaded, not because it is dark: the centre is lit
  // (measured: every pixel has a channel >= 128).
  double const centre_lit =
      fraction(tone_mapped, kCentre, [](const std::uint8_t* c) { return std::max({c[0], c[1], c[2]}) >= 128; });
  std::printf("centre pixels with a channel >= 128: %.4f\n", centre_lit);
  EXPECT_GT(centre_lit, 0.9);
  // (c) The sky stays the background colour, exposure or not.
  EXPECT_GT(hdr_background, kBackgroundAtLeast);
  int corner_max = 0;
  for (int y = 0; y < 8; ++y)
    for (int x = 0; x < 8; ++x) corner_max = std::max(corner_max, max_channel(tone_mapped, x, y));
  EXPECT_LE(corner_max, 16) << "the top left corner is sky";
}

TEST_F(Hdr, MeasuredLuminanceIsLinearAndAnEmptyFrameIsBackground) {
  Cluster cluster(2000);
  render::HdrPipeline hdr;
  hdr.begin(kWidth, kHeight);
  hdr.end(1.0f);
  EXPECT_EQ(hdr.average_luminance(), 0.0f) << "nothing lit";
  EXPECT_EQ(hdr.lit_fraction(), 0.0f);
  Pixels const empty = render::read_pixels(kWidth, kHeight);
  EXPECT_EQ(fraction(empty, {0, 0, kWidth, kHeight}, background), 1.0);
  for (float bad : {0.0f, -2.0f}) EXPECT_EQ(hdr.end(bad), 1.0f);

  auto measure = [&](float brightness, int width, int height) {
    hdr.begin(width, height);
    cluster.draw(brightness);
    hdr.end(1.0f);
    return hdr.average_luminance();
  };
  float const l1 = measure(kBrightness, kWidth, kHeight);
  float const l10 = measure(10 * kBrightness, kWidth, kHeight);
  std::printf("luminance at brightness %.2f: %.5g, x10: %.5g (ratio %.4f), lit fraction %.4f\n", double(kBrightness),
              double(l1), double(l10), double(l10 / l1), double(hdr.lit_fraction()));
  EXPECT_GT(l1, 0.0f);
  EXPECT_NEAR(l10 / l1, 10.0f, 0.1f);  // linear radiance in, half floats: measured 10.00
  EXPECT_GT(hdr.lit_fraction(), 0.0f);
  EXPECT_LT(hdr.lit_fraction(), 1.0f);
  // Another size (a resized window) reallocates the targets and measures the same scene alike
  // (here a smaller viewport: the sprites cover a larger share of it, with the same radiance).
  float const small = measure(kBrightness, 200, 120);
  EXPECT_GT(small, 0.0f);
  EXPECT_NEAR(measure(kBrightness, kWidth, kHeight), l1, 1e-3f * l1);
  render::check_gl("the luminance measurements");
}

// The statistics against the float target read back and measured here, at sizes that are not powers
// of two (odd ones lose a row or a column to plain mipmaps): the log average exactly, and a white
// point at or above the brightest pixel, not far above it.
TEST_F(Hdr, StatisticsMatchTheTargetReadBackAtAnySize) {
  Cluster cluster(20000);
  render::HdrPipeline hdr;
  struct Size {
    int width, height;
  };
  for (Size size : {Size{kWidth, kHeight}, Size{509, 383}, Size{300, 97}, Size{3, 5}}) {
    hdr.begin(size.width, size.height);
    cluster.draw();
    hdr.end(1.0f);
    std::vector<float> rgba(4 * std::size_t(size.width) * std::size_t(size.height));
    glBindTexture(GL_TEXTURE_2D, hdr.color_texture());
    glGetTexImage(GL_TEXTURE_2D, 0, GL_RGBA, GL_FLOAT, rgba.data());
    glBindTexture(GL_TEXTURE_2D, 0);
    render::check_gl("reading the HDR target back");
    double brightest = 0, log_sum = 0;
    std::size_t lit = 0;
    for (std::size_t i = 0; i < rgba.size(); i += 4) {
      double const l = 0.2126 * rgba[i] + 0.7152 * rgba[i + 1] + 0.0722 * rgba[i + 2];
      if (l > render::HdrPipeline::kLitLuminance) log_sum += std::log(l), ++lit;
      brightest = std::max(brightest, l);
    }
    ASSERT_GT(lit, 0u) << size.width << " x " << size.height;
    double const average = std::exp(log_sum / double(lit));
    std::printf("%d x %d: average %.5g (read back %.5g), white %.5g, brightest %.5g\n", size.width, size.height,
                double(hdr.average_luminance()), average, double(hdr.white_luminance()), brightest);
    EXPECT_NEAR(hdr.average_luminance(), average, 2e-3 * average) << size.width << " x " << size.height;
    EXPECT_NEAR(hdr.lit_fraction(), double(lit) / double(rgba.size() / 4), 1e-4);
    EXPECT_GE(hdr.white_luminance(), 0.999 * brightest) << size.width << " x " << size.height;
    EXPECT_LE(hdr.white_luminance(), 3.0 * brightest) << size.width << " x " << size.height;
  }
}

// A frame shown again is the same picture; another exposure changes it.
TEST_F(Hdr, ShownAgainIsTheSamePicture) {
  Cluster cluster(2000);
  render::HdrPipeline hdr;
  hdr.begin(kWidth, kHeight);
  cluster.draw();
  EXPECT_FLOAT_EQ(hdr.end(0.5f), 0.5f);
  Pixels const first = render::read_pixels(kWidth, kHeight);
  render::begin_frame(kWidth, kHeight);  // something else in the window meanwhile
  EXPECT_FLOAT_EQ(hdr.show_again(0.5f), 0.5f);
  EXPECT_EQ(render::read_pixels(kWidth, kHeight), first);
  hdr.show_again(2.0f);
  EXPECT_NE(render::read_pixels(kWidth, kHeight), first) << "the exposure is applied when shown again";
  render::check_gl("showing a frame again");
}

// One body moving right along a pixel row, in normalised device coordinates (identity matrices).
TEST_F(Hdr, TrailsFadeWithAgeAndForgetFramesOlderThanTheRing) {
  constexpr int kLength = 8, kFrames = 12;
  constexpr float kTrailBrightness = 0.5f;
  float const row_y = (float(kHeight / 2) + 0.5f) / float(kHeight) * 2.0f - 1.0f;  // a pixel row's centre
  auto x_of = [](int frame) { return -0.9f + 0.15f * float(frame); };
  auto column = [](float x) { return int((x + 1.0f) * 0.5f * float(kWidth)); };
  int const top_row = kHeight - 1 - kHeight / 2;  // that row counted from the top
  auto brightest_near_row = [&](const Pixels& p, int x) {
    int m = 0;
    for (int y = top_row - 3; y <= top_row + 3; ++y) m = std::max(m, max_channel(p, x, y));
    return m;
  };

  render::BodyRenderer body;
  render::TrailRenderer trails(kLength);
  body.upload_colors({{1.0f, 0.55f, 0.2f, 1.0f}});  // orange
  for (int f = 0; f < kFrames; ++f) {
    float const p[4] = {x_of(f), row_y, 0.0f, 1.0f};
    body.upload_positions(p, 1);
    trails.record(body.position_buffer(), 1);
  }
  EXPECT_EQ(trails.recorded(), kLength);
  EXPECT_EQ(trails.bytes(), std::size_t(kLength) * 16);

  render::HdrPipeline hdr;
  glm::mat4 const identity(1.0f);
  hdr.begin(kWidth, kHeight);
  trails.draw(identity, identity, body.color_buffer(), kTrailBrightness);
  hdr.end(1.0f);
  render::check_gl("drawing trails");
  Pixels const picture = render::read_pixels(kWidth, kHeight);
  maybe_write("trails.png", picture);

  // Segment `age` joins frames kFrames-1-age and kFrames-2-age; its middle is lit, and each one is
  // dimmer than the newer one before it.
  std::vector<int> along;
  for (int age = 0; age + 1 < kLength; ++age) {
    float const mid = 0.5f * (x_of(kFrames - 1 - age) + x_of(kFrames - 2 - age));
    along.push_back(brightest_near_row(picture, column(mid)));
  }
  std::printf("trail brightness, newest segment first:");
  for (int v : along) std::printf(" %d", v);
  std::printf("\n");
  EXPECT_GT(along.back(), 24) << "the oldest segment is faint, but lit";
  for (std::size_t i = 1; i < along.size(); ++i) EXPECT_LT(along[i], along[i - 1]) << "segment " << i;
  // The trail is the body's colour: orange, red above blue.
  auto const* newest = at(picture, column(0.5f * (x_of(kFrames - 1) + x_of(kFrames - 2))), top_row);
  EXPECT_GT(int(newest[0]), int(newest[2]) + 40);
  // Frames 0..3 fell out of the ring: their stretch of the path is sky.
  int forgotten = 0;
  for (int x = column(x_of(0)); x < column(x_of(kFrames - kLength)) - 2; ++x)
    forgotten = std::max(forgotten, brightest_near_row(picture, x));
  EXPECT_LE(forgotten, 6);
  // Negative control: the newest stretch, drawn, is far from sky; after clear() it is sky.
  trails.clear();
  hdr.begin(kWidth, kHeight);
  trails.draw(identity, identity, body.color_buffer(), kTrailBrightness);
  hdr.end(1.0f);
  EXPECT_LE(brightest_near_row(render::read_pixels(kWidth, kHeight), column(x_of(kFrames - 1)) - 3), 6);
  EXPECT_THROW(render::TrailRenderer(1), InputError);
}

}  // namespace
// On a software renderer trails draw at most kSoftwareSegments lines a frame, spanning the same
// frames: a slot every `stride` frames, the newest slot following the body in between, so a trail
// still starts at its body. (At 4,096 bodies llvmpipe spent 0.18 s of a core a frame on 256 slots
// of lines even in a 320 x 200 window, 0.29 s at 1280 x 800: the cost is mostly per line.)
TEST_F(Hdr, TrailsOnASoftwareRendererKeepTheirSpanWithFewerSlots) {
  render::TrailPlan const cpu = render::plan_trails(4096, true), gpu = render::plan_trails(4096, false);
  EXPECT_EQ(cpu.length, 17);
  EXPECT_EQ(cpu.stride, 16);
  EXPECT_LE(std::size_t(cpu.length - 1) * 4096, render::kSoftwareSegments);
  EXPECT_EQ(gpu.length, 256);
  EXPECT_EQ(gpu.stride, 1);
  EXPECT_EQ(render::plan_trails(2, true).length, 256);  // a binary keeps every frame
  EXPECT_EQ(render::plan_trails(2, true).stride, 1);
  EXPECT_EQ(render::plan_trails(std::size_t(1) << 20, true).length, 2);

  // One body along a row, stride 3: frames 0, 3, 6 start slots, and frames 1-2, 4-5 and 7 are recorded
  // over the slot started before them: the slots end up at frames 2, 5 and 7.
  float const row_y = (float(kHeight / 2) + 0.5f) / float(kHeight) * 2.0f - 1.0f;
  auto x_of = [](int frame) { return -0.9f + 0.1f * float(frame); };
  render::BodyRenderer body;
  render::TrailRenderer trails(8, 3);
  body.upload_colors({{1.0f, 1.0f, 1.0f, 1.0f}});
  std::vector<int> recorded;
  for (int f = 0; f < 8; ++f) {
    float const p[4] = {x_of(f), row_y, 0.0f, 1.0f};
    body.upload_positions(p, 1);
    trails.record(body.position_buffer(), 1);
    recorded.push_back(trails.recorded());
  }
  EXPECT_EQ(recorded, (std::vector<int>{1, 1, 1, 2, 2, 2, 3, 3}));
  render::HdrPipeline hdr;
  glm::mat4 const identity(1.0f);
  hdr.begin(kWidth, kHeight);
  trails.draw(identity, identity, body.color_buffer(), 0.5f);
  hdr.end(1.0f);
  Pixels const picture = render::read_pixels(kWidth, kHeight);
  int const top_row = kHeight - 1 - kHeight / 2;
  auto lit = [&](float x) {
    int const column = int((x + 1.0f) * 0.5f * float(kWidth));
    int m = 0;
    for (int y = top_row - 3; y <= top_row + 3; ++y) m = std::max(m, max_channel(picture, column, y));
    return m;
  };
  EXPECT_GT(lit(0.5f * (x_of(7) + x_of(3))), 24) << "the trail reaches the body's latest position";
  EXPECT_GT(lit(0.5f * (x_of(2) + x_of(5))), 24);
  EXPECT_LE(lit(x_of(1)), 6) << "frames 0 and 1 were recorded over";
  EXPECT_LE(lit(x_of(7) + 0.05f), 6) << "nothing beyond the body";
}

// A body just in front of the eye is a sprite of max_sprite_pixels, not a blob: drawn with point
// size 8 at reference depth 1 from 0.01 away (800 pixels uncapped; the shader's old limit was 64),
// its lit row is at most 24 pixels wide; at the reference depth it is 8.
TEST_F(Hdr, SpritesNearTheEyeAreCapped) {
  render::BodyRenderer body;
  body.upload_colors({{1.0f, 1.0f, 1.0f, 1.0f}});
  auto lit_width = [&](float depth) {
    float const p[4] = {0.0f, 0.0f, -depth, 1.0f};  // identity view: the eye looks down -z
    body.upload_positions(p, 1);
    render::begin_frame(kWidth, kHeight);
    body.draw(glm::mat4(1.0f), glm::mat4(1.0f), 8.0f, 1.0f, 4.0f);
    Pixels const picture = render::read_pixels(kWidth, kHeight);
    int width = 0;
    for (int x = 0; x < kWidth; ++x) width += max_channel(picture, x, kHeight / 2) > 24 ? 1 : 0;
    return width;
  };
  int const near = lit_width(0.01f), reference = lit_width(1.0f);
  std::printf("sprite widths: %d pixels from 0.01 away, %d at the reference depth\n", near, reference);
  EXPECT_LE(near, int(render::max_sprite_pixels(8.0f)));
  EXPECT_GT(near, 2 * reference) << "nearer is still larger";
  EXPECT_LE(reference, 8);
}

}  // namespace nbody
