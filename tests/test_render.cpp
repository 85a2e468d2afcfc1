// tests/test_render.cpp - the viewer's GL-free parts: camera maths and colour maps.
#include <gtest/gtest.h>

#include <glm/glm.hpp>

#include "core/errors.h"
#include "render/camera.h"
#include "render/colors.h"
#include "render/input.h"
#include "test_support.h"

namespace nbody {
namespace {

// Normalised device coordinates of a world point.
glm::vec3 ndc(const render::OrbitCamera& c, glm::vec3 p, float aspect = 1.6f) {
  glm::vec4 const clip = c.projection(aspect) * c.view() * glm::vec4(p, 1.0f);
  return glm::vec3(clip) / clip.w;
}

TEST(Camera, FitFramesTheBodies) {
  auto const b = test::scenario("plummer", 2000);
  render::OrbitCamera c;
  c.fit(b.pos_mass);
  std::size_t inside = 0;
  for (auto const& p : b.pos_mass) {
    glm::vec3 const q = ndc(c, glm::vec3(float(p.x), float(p.y), float(p.z)));
    if (std::abs(q.x) <= 1 && std::abs(q.y) <= 1 && q.z > -1 && q.z < 1) ++inside;
  }
  EXPECT_GT(inside, b.size() * 85 / 100) << "most bodies on screen";
  glm::vec3 const centre = ndc(c, c.target());
  EXPECT_NEAR(centre.x, 0.0f, 1e-4f);
  EXPECT_NEAR(centre.y, 0.0f, 1e-4f);
  // Negative control: a far-away cluster is not framed by this camera.
  glm::vec3 const far = ndc(c, glm::vec3(100, 0, 0));
  EXPECT_FALSE(std::abs(far.x) <= 1 && std::abs(far.y) <= 1 && far.z > -1 && far.z < 1);
}

// A sphere fitted in a tall, narrow view (aspect 0.4) stays inside its sides too: fitting only the
// vertical field of view (45 degrees) would put the sphere's edge at x = +-2.3 in NDC.
TEST(Camera, FitUsesTheNarrowerFieldOfView) {
  for (float aspect : {0.4f, 1.0f, 2.5f}) {
    render::OrbitCamera c;
    c.set_aspect(aspect);
    c.look_from(0.0f, 0.0f);  // eye on +x: the sphere's y and z extents are its screen extents
    c.fit(glm::vec3(0.0f), 1.0f);
    glm::vec3 const side = ndc(c, glm::vec3(0, 1, 0), aspect), top = ndc(c, glm::vec3(0, 0, 1), aspect);
    EXPECT_LT(std::abs(side.x), 1.0f) << "aspect " << aspect;
    EXPECT_LT(std::abs(top.y), 1.0f) << "aspect " << aspect;
    // ... and fills the narrower direction: not framed from needlessly far away.
    EXPECT_GT(std::max(std::abs(side.x), std::abs(top.y)), 0.8f) << "aspect " << aspect;
  }
}

TEST(Camera, FitIgnoresAFewEscapers) {
  auto b = test::scenario("plummer", 1000);
  for (int k = 0; k < 20; ++k) b.pos_mass[std::size_t(k)].x = 1e4;  // 2% far away
  render::OrbitCamera c;
  c.fit(b.pos_mass);
  EXPECT_LT(c.distance(), 20.0f);
}

// The centre the camera fits on and follow mode follows: a binary's is between its two bodies (a
// median of two would be one of them); many bodies' ignores a few escapers.
TEST(Camera, CentreOfABinaryIsBetweenItsBodiesAndEscapersDoNotMoveAClusters) {
  std::vector<Real4<double>> binary{{-1.0, 2.0, 0.0, 1.0}, {3.0, 2.0, 4.0, 1.0}};
  Vec3d const c = render::centre_of(binary);
  EXPECT_EQ(c.x, 1.0);
  EXPECT_EQ(c.y, 2.0);
  EXPECT_EQ(c.z, 2.0);
  auto b = test::scenario("plummer", 1001);
  Vec3d const before = render::centre_of(b.pos_mass);
  for (int k = 0; k < 20; ++k) b.pos_mass[std::size_t(k)].x = 1e4;  // 2% far away
  Vec3d const after = render::centre_of(b.pos_mass);
  EXPECT_LT(std::abs(after.x - before.x), 0.1);
  EXPECT_LT(std::abs(before.x), 0.2);
}

TEST(Camera, OrbitKeepsDistancePanMovesTargetZoomScales) {
  render::OrbitCamera c;
  c.fit(glm::vec3(1, 2, 3), 2.0f);
  float const d = c.distance();
  glm::vec3 const eye = c.eye();
  c.orbit(100, 40);
  EXPECT_NEAR(glm::length(c.eye() - c.target()), d, 1e-4f * d);
  EXPECT_GT(glm::length(c.eye() - eye), 0.1f);
  glm::vec3 const target = c.target();
  c.pan(50, 0, 800);
  EXPECT_GT(glm::length(c.target() - target), 0.0f);
  EXPECT_NEAR(glm::length(c.eye() - c.target()), d, 1e-3f * d);
  c.zoom(3);
  EXPECT_NEAR(c.distance(), d * 0.729f, 1e-3f * d);
  c.zoom(-3);
  EXPECT_NEAR(c.distance(), d, 1e-3f * d);
  for (int k = 0; k < 100; ++k) c.orbit(0, 1000);  // pitch is clamped short of the pole
  EXPECT_TRUE(std::isfinite(c.view()[0][0]));
}

bool same(render::Color a, render::Color b) { return a.r == b.r && a.g == b.g && a.b == b.b && a.a == b.a; }

TEST(Colors, SpeedMapRunsBlueToWhiteToOrange) {
  auto const slow = render::speed_color(0.0f), mid = render::speed_color(0.5f), fast = render::speed_color(1.0f);
  EXPECT_GT(slow.b, slow.r);
  EXPECT_FLOAT_EQ(mid.r, 1.0f);
  EXPECT_FLOAT_EQ(mid.g, 1.0f);
  EXPECT_FLOAT_EQ(mid.b, 1.0f);
  EXPECT_GT(fast.r, fast.b);
  EXPECT_TRUE(same(render::speed_color(-5.0f), slow));  // clamped
  EXPECT_TRUE(same(render::speed_color(7.0f), fast));
}

// 10,000 bodies with speeds 0, 1, ..., 9999: the sample is every third body (3334 of them), whose
// 95th percentile is 3 x 3167 = 9501; a body that fast is at the top of the map, one half as fast
// in its middle.
TEST(Colors, SpeedIsNormalisedByThe95thPercentileOfAFixedSample) {
  sim::BodySet b;
  for (int i = 0; i < 10000; ++i) b.append({0, 0, 0, 1e-4}, {double(i), 0, 0}, sim::BodyType::star);
  EXPECT_EQ(render::speed_sample_stride(b.size()), 3u);
  EXPECT_EQ(render::speed_sample_stride(4096), 1u);
  std::vector<render::Rgba> c;
  render::compute_colors(render::ColorMode::speed, b, {{0, b.size()}}, c);
  auto const top = render::speed_color(1.0f), middle = render::speed_color(0.5f);
  EXPECT_EQ(c[9501], (render::Rgba{top.r, top.g, top.b, top.a}));
  EXPECT_EQ(c[9999], c[9501]) << "faster bodies are clamped to the top";
  EXPECT_NE(c[9500], c[9501]);
  EXPECT_NEAR(c[4750][2], middle.b, 1e-3);
}

TEST(Colors, ModesColourByTypeAndByDevice) {
  auto b = test::scenario("collision", 1000);  // dark central masses, stars in the disks
  std::vector<render::Rgba> c;
  render::compute_colors(render::ColorMode::type, b, {{0, b.size()}}, c);
  ASSERT_EQ(c.size(), b.size());
  std::size_t dark = 0;
  for (std::size_t i = 0; i < b.size(); ++i)
    if (b.type[i] == sim::BodyType::dark) {
      ++dark;
      EXPECT_GT(c[i][2], c[i][0]);  // violet
    }
  EXPECT_EQ(dark, 2u);
  render::compute_colors(render::ColorMode::device, b, {{0, 400}, {400, 600}}, c);
  EXPECT_EQ(c[0], c[399]);
  EXPECT_NE(c[399], c[400]);
  render::compute_colors(render::ColorMode::speed, b, {{0, b.size()}}, c);
  EXPECT_NE(c[1], c[2]);
}

TEST(Colors, NamesRoundTripAndBadNamesAreRejected) {
  for (auto m : {render::ColorMode::speed, render::ColorMode::type, render::ColorMode::device})
    EXPECT_EQ(from_name<render::ColorMode>(name_of(m)), m);
  EXPECT_EQ(render::next(render::next(render::next(render::ColorMode::speed))), render::ColorMode::speed);
  EXPECT_NE(render::next(render::ColorMode::speed), render::ColorMode::speed);
  EXPECT_FALSE(from_name<render::ColorMode>("rainbow").has_value());
}

// Keys go to the HUD first: Esc cancelling an edit in a HUD field, or 'q' typed into it, must not
// quit the viewer; the same keys quit when the HUD does not want the keyboard.
TEST(Input, KeysGoToTheHudFirst) {
  render::Input in;
  in.escape = true;
  in.keys = "q";
  EXPECT_FALSE(render::route(in, true, false).quit);
  EXPECT_TRUE(render::route(in, false, false).quit);
  in = render::Input{};
  in.escape = true;
  EXPECT_TRUE(render::route(in, false, false).quit);
  in.toggle_fullscreen = true;
  EXPECT_TRUE(render::route(in, true, true).toggle_fullscreen) << "F11 is the window's, never the HUD's";
}

TEST(Input, KeysMapToCommandsAndMouseMovesTheCameraUnlessOverTheHud) {
  render::Input in;
  in.keys = "nrcfpshot ";
  in.orbit_dx = 5;
  in.pan_dy = -3;
  in.scroll = 2;
  auto const c = render::route(in, false, false);
  EXPECT_TRUE(c.step && c.reset && c.next_color && c.fit && c.screenshot && c.save && c.toggle_hud &&
              c.toggle_follow && c.toggle_trails && c.toggle_pause);
  EXPECT_FALSE(c.quit);
  EXPECT_EQ(c.orbit_dx, 5);
  EXPECT_EQ(c.pan_dy, -3);
  EXPECT_EQ(c.zoom, 2);
  auto const over_hud = render::route(in, false, true);
  EXPECT_EQ(over_hud.orbit_dx, 0);
  EXPECT_EQ(over_hud.zoom, 0);
  in.keys = "  ";  // pressed twice between two frames: paused and resumed
  EXPECT_FALSE(render::route(in, false, false).toggle_pause);
}

}  // namespace
}  // namespace nbody
