// tests/test_render.cpp - the viewer's GL-free parts: camera maths and colour maps.
#include <gtest/gtest.h>

#include <glm/glm.hpp>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "core/errors.h"
#include "render/annotations.h"
#include "render/camera.h"
#include "render/colors.h"
#include "render/input.h"
#include "sim/physics/scenarios.h"
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

// Every scenario's opening view (its direction, fitted in a 1280 x 800 window, and in a square and
// a tall one) has its bodies on screen: at least kFitFraction of those that are not escapers (as
// OrbitCamera::fit promises) and kShownFraction of all. The disk's ran off the bottom of the window
// when the fit framed the sphere of the 90% radius: its near rim is larger on screen than the
// sphere's edge. Measured with that fit: disk 99.84% (aspect 1.6) and 98.4% (1.0) of its bodies in
// view, collision 97.4% (0.5), plummer 96.0% (1.0).
constexpr double kShownFraction = 0.97;  // measured: plummer 98.3% (its tail reaches 38 scale lengths), the others 100%

float radius90(const std::vector<Real4<double>>& bodies, glm::vec3 centre) {
  std::vector<float> r;
  for (auto const& p : bodies) r.push_back(glm::length(glm::vec3(float(p.x), float(p.y), float(p.z)) - centre));
  if (bodies.size() < 16) return *std::max_element(r.begin(), r.end());
  std::nth_element(r.begin(), r.begin() + std::ptrdiff_t(r.size() * 9 / 10), r.end());
  return r[r.size() * 9 / 10];
}

TEST(Camera, EveryScenarioOpensWithItsBodiesInTheWindow) {
  for (auto const& name : all_names<sim::Scenario>()) {
    auto const scenario = *from_name<sim::Scenario>(name);
    auto const b = test::scenario(name, scenario == sim::Scenario::two_body ? 2 : 8192);
    for (float aspect : {1.6f, 1.0f, 0.5f}) {
      render::OrbitCamera c;
      c.set_aspect(aspect);
      render::look_at_scenario(c, name);
      c.fit(b.pos_mass);
      std::size_t inside = 0, bound = 0, bound_inside = 0;
      float const escape = float(render::OrbitCamera::kEscaperRadii) * radius90(b.pos_mass, c.target());
      for (auto const& p : b.pos_mass) {
        glm::vec3 const q = ndc(c, glm::vec3(float(p.x), float(p.y), float(p.z)), aspect);
        bool const in_view = std::abs(q.x) <= 1 && std::abs(q.y) <= 1 && q.z > -1 && q.z < 1;
        bool const escaper = glm::length(glm::vec3(float(p.x), float(p.y), float(p.z)) - c.target()) > escape;
        inside += in_view ? 1 : 0;
        bound += escaper ? 0 : 1;
        bound_inside += in_view && !escaper ? 1 : 0;
      }
      double const fraction = double(inside) / double(b.size()), bound_fraction = double(bound_inside) / double(bound);
      std::printf("%s, aspect %.1f: %.2f%% of bodies in view (%.2f%% of the non-escapers), distance %.3g\n",
                  name.c_str(), aspect, 100 * fraction, 100 * bound_fraction, c.distance());
      EXPECT_GE(bound_fraction, render::OrbitCamera::kFitFraction) << name << " aspect " << aspect;
      EXPECT_GE(fraction, kShownFraction) << name << " aspect " << aspect;
    }
  }
}

// The scale bar's length is measured at the target: world_per_pixel times the viewport's height is the
// view's height there, and a zoom scales it.
TEST(Camera, WorldPerPixelMatchesTheProjectionAtTheTarget) {
  render::OrbitCamera c;
  c.set_aspect(1.6f);
  c.fit(glm::vec3(1, 2, 3), 2.0f);
  float const per_pixel = c.world_per_pixel(800.0f);
  // A point 100 pixels above the target in the view plane: 100 x per_pixel away, at NDC y = 2 x 100 / 800.
  glm::mat4 const inverse_view = glm::inverse(c.view());
  glm::vec3 const up(inverse_view[1]);
  glm::vec3 const q = ndc(c, c.target() + up * (100.0f * per_pixel), 1.6f);
  EXPECT_NEAR(q.y, 0.25f, 1e-4f);
  c.zoom(5);
  EXPECT_NEAR(c.world_per_pixel(800.0f), per_pixel * std::pow(0.9f, 5.0f), 1e-6f * per_pixel);
}

// Sprites grow as a body nears the camera, up to a cap: three times the size at the fitted distance,
// at most 32 pixels (the old shader allowed 64 whatever the size), and never below a size chosen above it.
TEST(Camera, SpritesNearTheCameraAreCapped) {
  EXPECT_FLOAT_EQ(render::sprite_pixels(6.0f, 10.0f, 10.0f), 6.0f);
  EXPECT_FLOAT_EQ(render::sprite_pixels(6.0f, 10.0f, 20.0f), 3.0f);
  EXPECT_FLOAT_EQ(render::sprite_pixels(6.0f, 10.0f, 0.5f), 18.0f);   // 120 uncapped
  EXPECT_FLOAT_EQ(render::sprite_pixels(24.0f, 10.0f, 0.5f), 32.0f);  // 480 uncapped
  EXPECT_FLOAT_EQ(render::sprite_pixels(48.0f, 10.0f, 0.5f), 48.0f);  // the user's own size stands
  EXPECT_FLOAT_EQ(render::sprite_pixels(2.0f, 10.0f, 1000.0f), 1.0f);
  for (float size : {0.5f, 2.0f, 5.7f, 24.0f}) EXPECT_LE(render::max_sprite_pixels(size), 32.0f);
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

// Matplotlib's maps as matplotlib 3.6.3 gives them (matplotlib.colormaps[name](k / 255), printed with
// /usr/bin/python3): here the ends and the middle entry, as an anchor; tests/check_colormaps.py
// compares every map at 52 points with the matplotlib installed.
TEST(Colors, MapsAreMatplotlibsAtTheirEntries) {
  struct Sample {
    render::Colormap map;
    float t, r, g, b;
  };
  Sample const samples[] = {{render::Colormap::viridis, 0.0f, 0.267004f, 0.004874f, 0.329415f},
                            {render::Colormap::viridis, 128.0f / 255, 0.127568f, 0.566949f, 0.550556f},
                            {render::Colormap::viridis, 1.0f, 0.993248f, 0.906157f, 0.143936f},
                            {render::Colormap::inferno, 0.0f, 0.001462f, 0.000466f, 0.013866f},
                            {render::Colormap::inferno, 1.0f, 0.988362f, 0.998364f, 0.644924f},
                            {render::Colormap::magma, 1.0f, 0.987053f, 0.991438f, 0.749504f},
                            {render::Colormap::plasma, 0.0f, 0.050383f, 0.029803f, 0.527975f}};
  for (auto const& s : samples) {
    render::Color const c = render::map_color(render::colormap_table(s.map), s.t);
    EXPECT_NEAR(c.r, s.r, 1e-6f) << name_of(s.map) << " at " << s.t;
    EXPECT_NEAR(c.g, s.g, 1e-6f) << name_of(s.map) << " at " << s.t;
    EXPECT_NEAR(c.b, s.b, 1e-6f) << name_of(s.map) << " at " << s.t;
  }
  // Clamped outside [0, 1], NaN to the first colour; lightness rises through the map.
  auto const& viridis = render::colormap_table(render::Colormap::viridis);
  EXPECT_TRUE(same(render::map_color(viridis, -5.0f), render::map_color(viridis, 0.0f)));
  EXPECT_TRUE(same(render::map_color(viridis, 7.0f), render::map_color(viridis, 1.0f)));
  EXPECT_TRUE(same(render::map_color(viridis, std::nanf("")), render::map_color(viridis, 0.0f)));
  auto luma = [&](float t) {
    render::Color const c = render::map_color(viridis, t);
    return 0.2126f * c.r + 0.7152f * c.g + 0.0722f * c.b;
  };
  for (float t = 0.0f; t < 0.99f; t += 0.05f) EXPECT_LT(luma(t), luma(t + 0.05f)) << t;
}

// The range is fixed: a body's colour depends on its own speed and the range, not on the other
// bodies of the frame. Speeds 0..9999: the 2% and 98% quantiles of every third (the sample) are the
// ends of the fitted range; a body at the range's top is at the map's top, and halving the other
// bodies' speeds leaves its colour as it was.
TEST(Colors, SpeedRangeIsFittedOnceAndColoursFollowTheRangeNotTheFrame) {
  sim::BodySet b;
  for (int i = 0; i < 10000; ++i) b.append({0, 0, 0, 1e-4}, {double(i), 0, 0}, sim::BodyType::star);
  EXPECT_EQ(render::speed_sample_stride(b.size()), 3u);
  EXPECT_EQ(render::speed_sample_stride(4096), 1u);
  render::ColorRange const range = render::fit_speed_range(b);
  EXPECT_NEAR(range.min, 3 * 67, 3.5);    // 2% of the 3334 samples, every third speed
  EXPECT_NEAR(range.max, 3 * 3267, 3.5);  // 98%
  render::SpeedColoring const coloring{render::Colormap::inferno, range};
  std::vector<render::Rgba> c;
  render::compute_colors(render::ColorMode::speed, b, {{0, b.size()}}, coloring, c);
  auto const& inferno = render::colormap_table(render::Colormap::inferno);
  render::Color const top = render::map_color(inferno, 1.0f), bottom = render::map_color(inferno, 0.0f);
  std::size_t const at_max = std::size_t(range.max);
  EXPECT_EQ(c[9999], (render::Rgba{top.r, top.g, top.b, top.a})) << "faster bodies are clamped to the top";
  EXPECT_EQ(c[0], (render::Rgba{bottom.r, bottom.g, bottom.b, bottom.a}));
  render::Rgba const before = c[at_max];
  for (std::size_t i = 0; i < b.size(); ++i)
    if (i != at_max) b.velocity[i].x *= 0.5;
  render::compute_colors(render::ColorMode::speed, b, {{0, b.size()}}, coloring, c);
  EXPECT_EQ(c[at_max], before) << "the colour of a speed is the same in every frame";
  // The middle of the range is the middle of the map.
  render::Color const middle = render::map_color(inferno, 0.5f);
  b.velocity[5].x = 0.5 * (double(range.min) + double(range.max));
  render::compute_colors(render::ColorMode::speed, b, {{0, b.size()}}, coloring, c);
  EXPECT_NEAR(c[5][0], middle.r, 2e-3);
  // Degenerate: all bodies as fast (a symmetric binary) -> from 0 to twice that; at rest -> [0, 1].
  float same_speeds[2] = {0.8f, 0.8f};
  EXPECT_EQ(render::fit_speed_range(same_speeds, 2), (render::ColorRange{0.0f, 1.6f}));
  float at_rest[3] = {0, 0, 0};
  EXPECT_EQ(render::fit_speed_range(at_rest, 3), (render::ColorRange{0.0f, 1.0f}));
}

// A disk's bodies orbit at similar speeds: a range fitted to 2%..98% of them spreads them over the
// map (the old per-frame scale from 0 to the 95th percentile put most of them in its top tenth).
TEST(Colors, ADiskSpansTheMap) {
  auto const b = test::scenario("disk", 8192);
  render::ColorRange const range = render::fit_speed_range(b);
  std::size_t low = 0, high = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    float const s = render::speed_of(float(b.velocity[i].x), float(b.velocity[i].y), float(b.velocity[i].z));
    float const t = (s - range.min) / (range.max - range.min);
    low += t < 0.33f ? 1 : 0;
    high += t > 0.67f ? 1 : 0;
  }
  std::printf("disk 8192: range %.3f..%.3f, %.0f%% in the lower third, %.0f%% in the upper third\n", range.min,
              range.max, 100.0 * double(low) / double(b.size()), 100.0 * double(high) / double(b.size()));
  EXPECT_GT(low, b.size() / 10);
  EXPECT_GT(high, b.size() / 10);
}

TEST(Colors, ModesColourByTypeAndByDevice) {
  auto b = test::scenario("collision", 1000);  // dark central masses, stars in the disks
  std::vector<render::Rgba> c;
  render::SpeedColoring const coloring{render::Colormap::viridis, render::fit_speed_range(b)};
  render::compute_colors(render::ColorMode::type, b, {{0, b.size()}}, coloring, c);
  ASSERT_EQ(c.size(), b.size());
  std::size_t dark = 0;
  for (std::size_t i = 0; i < b.size(); ++i)
    if (b.type[i] == sim::BodyType::dark) {
      ++dark;
      EXPECT_GT(c[i][2], c[i][0]);  // violet
    }
  EXPECT_EQ(dark, 2u);
  render::compute_colors(render::ColorMode::device, b, {{0, 400}, {400, 600}}, coloring, c);
  EXPECT_EQ(c[0], c[399]);
  EXPECT_NE(c[399], c[400]);
  render::compute_colors(render::ColorMode::speed, b, {{0, b.size()}}, coloring, c);
  EXPECT_NE(c[1], c[2]);
}

// Colour by hermite4's step level: one colour per level present, the shortest step brightest; the legend
// lists each level's step and count. Without levels (a shared step), one colour and one line.
TEST(Colors, StepLevelsGetOneColourEachShortestBrightest) {
  std::vector<std::uint8_t> const levels{3, 5, 3, 7, 5, 3};
  std::vector<render::Rgba> c;
  render::compute_level_colors(levels, levels.size(), render::Colormap::viridis, c);
  ASSERT_EQ(c.size(), levels.size());
  EXPECT_EQ(c[0], c[2]);
  EXPECT_NE(c[0], c[1]);
  auto luma = [](const render::Rgba& x) { return 0.2126f * x[0] + 0.7152f * x[1] + 0.0722f * x[2]; };
  EXPECT_LT(luma(c[0]), luma(c[1]));
  EXPECT_LT(luma(c[1]), luma(c[3]));
  auto const legend = render::level_swatches(levels, render::Colormap::viridis, 1.0 / 16);
  ASSERT_EQ(legend.size(), 3u);
  EXPECT_EQ(legend[0].label, "dt 0.00781: 3");  // 2^-4 / 2^3
  EXPECT_EQ(legend[2].label, "dt 0.000488: 1");
  EXPECT_EQ(legend[1].color, c[1]);
  render::compute_level_colors({}, 4, render::Colormap::viridis, c);
  EXPECT_EQ(c[0], c[3]);
  EXPECT_EQ(render::level_swatches({}, render::Colormap::viridis, 1.0 / 16).size(), 1u);
  // With a physical scale, each step in a time unit too (the HUD's time is; 1e5 Msun and 1 pc: 0.04715 Myr).
  auto const physical = render::level_swatches(levels, render::Colormap::viridis, 1.0 / 16,
                                               sim::parse_units("1e5Msun", "1pc"));
  EXPECT_EQ(physical[0].label, "dt 0.00781 (368.3 yr): 3");
}

// A level's colour is the same in every frame, whatever other levels the frame has (as a speed's colour is): it was
// stretched over the levels present, so level 3 went from dark to bright as deeper levels came and went. The legend
// gives each level the bodies' colour; the levels that share the bright end are one line.
TEST(Colors, AStepLevelHasOneColourInEveryFrame) {
  std::vector<render::Rgba> a, b, c;
  render::compute_level_colors({3, 5}, 2, render::Colormap::viridis, a);
  render::compute_level_colors({3, 9}, 2, render::Colormap::viridis, b);
  render::compute_level_colors({3}, 1, render::Colormap::viridis, c);
  EXPECT_EQ(a[0], b[0]);
  EXPECT_EQ(a[0], c[0]);
  EXPECT_NE(a[1], b[1]);
  // The span is fixed: the deepest level of the span and beyond share the bright end; level 0 is the dark end.
  std::vector<render::Rgba> d;
  std::vector<std::uint8_t> const deep{0, render::kLevelColourSpan - 1, render::kLevelColourSpan + 4, 40};
  render::compute_level_colors(deep, deep.size(), render::Colormap::viridis, d);
  EXPECT_EQ(d[1], d[2]);
  EXPECT_EQ(d[1], d[3]);
  EXPECT_NE(d[0], d[1]);
  auto const legend = render::level_swatches(deep, render::Colormap::viridis, 1.0 / 16);
  ASSERT_EQ(legend.size(), 2u);
  EXPECT_EQ(legend[0].label, "dt 0.0625: 1");
  EXPECT_EQ(legend[0].color, d[0]);
  EXPECT_EQ(legend[1].label, "dt <= 3.05e-05: 3");  // 2^-4 x 2^-11
  EXPECT_EQ(legend[1].color, d[1]);
  // The same level in another frame's legend: the same colour.
  auto const other = render::level_swatches({3, 9}, render::Colormap::viridis, 1.0 / 16);
  EXPECT_EQ(other[0].color, a[0]);
}

TEST(Colors, NamesRoundTripAndBadNamesAreRejected) {
  for (auto m : {render::ColorMode::speed, render::ColorMode::type, render::ColorMode::device})
    EXPECT_EQ(from_name<render::ColorMode>(name_of(m)), m);
  for (auto m : {render::ColorMode::speed, render::ColorMode::type, render::ColorMode::device, render::ColorMode::level})
    EXPECT_EQ(from_name<render::ColorMode>(name_of(m)), m);
  EXPECT_EQ(render::next(render::next(render::next(render::next(render::ColorMode::speed)))), render::ColorMode::speed);
  EXPECT_NE(render::next(render::ColorMode::speed), render::ColorMode::speed);
  EXPECT_FALSE(from_name<render::ColorMode>("rainbow").has_value());
  for (auto m : {render::Colormap::viridis, render::Colormap::inferno, render::Colormap::magma, render::Colormap::plasma})
    EXPECT_EQ(from_name<render::Colormap>(name_of(m)), m);
  EXPECT_FALSE(from_name<render::Colormap>("jet").has_value());
  EXPECT_EQ(render::next(render::next(render::next(render::HudMode::full))), render::HudMode::full);
  EXPECT_EQ(render::next(render::HudMode::full), render::HudMode::minimal);
}

// Legend ticks: round values (1, 2, 5 x 10^k apart) inside the range, at most as many as asked.
TEST(Annotations, LegendTicksAreRoundAndInsideTheRange) {
  auto expect_ticks = [](double lo, double hi, std::vector<double> want) {
    auto const got = render::legend_ticks(lo, hi, 5);
    ASSERT_EQ(got.size(), want.size()) << lo << ".." << hi;
    for (std::size_t k = 0; k < want.size(); ++k) EXPECT_NEAR(got[k], want[k], 1e-9 * std::abs(hi)) << lo << ".." << hi;
  };
  expect_ticks(0.0, 1.0, {0.0, 0.5, 1.0});  // step 0.2 would make 6 > 5
  expect_ticks(1.07, 1.73, {1.2, 1.4, 1.6});  // 0.1 would make 7
  expect_ticks(120.0, 980.0, {200.0, 400.0, 600.0, 800.0});
  expect_ticks(-3.0, 3.0, {-2.0, 0.0, 2.0});
  EXPECT_TRUE(render::legend_ticks(2.0, 1.0).empty());
  EXPECT_TRUE(render::legend_ticks(0.0, std::nan("")).empty());
  EXPECT_EQ(render::tick_label(1.2, 0.1), "1.2");
  EXPECT_EQ(render::tick_label(0.0, 0.2), "0.0");
  EXPECT_EQ(render::tick_label(600.0, 200.0), "600");
  EXPECT_EQ(render::tick_label(0.25, 0.05), "0.25");
}

// The scale bar is a round length in the run's units, at most the pixels allowed and more than 0.4 of
// them; it follows the zoom.
TEST(Annotations, ScaleBarIsARoundLengthThatFollowsTheZoom) {
  sim::Units const nbody_units;
  render::ScaleBar const a = render::scale_bar(0.004, 320.0, nbody_units);  // 1.28 units fit: 1
  EXPECT_DOUBLE_EQ(a.length, 1.0);
  EXPECT_NEAR(a.pixels, 250.0, 1e-9);
  EXPECT_EQ(a.label, "1 N-body units");
  render::ScaleBar const b = render::scale_bar(0.004 * 0.6, 320.0, nbody_units);  // zoomed in: 0.768 fit: 0.5
  EXPECT_DOUBLE_EQ(b.length, 0.5);
  EXPECT_NEAR(b.pixels, 0.5 / 0.0024, 1e-9);
  for (double per_pixel : {1e-5, 3.3e-3, 0.07, 1.0, 42.0}) {
    render::ScaleBar const s = render::scale_bar(per_pixel, 320.0, nbody_units);
    EXPECT_LE(s.pixels, 320.0 * (1 + 1e-9));
    EXPECT_GT(s.pixels, 0.4 * 320.0) << per_pixel;
  }
  // 1 length unit = 1 pc: 200 units per bar -> "200 pc"; 2000 -> "2 kpc"; 1e-6 pc -> au.
  sim::Units const pc = sim::parse_units("1e5Msun", "1pc");
  EXPECT_EQ(render::scale_bar(1.0, 320.0, pc).label, "200 pc");
  EXPECT_EQ(render::scale_bar(10.0, 320.0, pc).label, "2 kpc");
  EXPECT_EQ(render::scale_bar(1e-7, 320.0, pc).label, "5 au");
  EXPECT_EQ(render::scale_bar(0.0, 320.0, pc).pixels, 0.0);
}

// The time stamp: N-body units as they are; with a scale, the largest astronomer's unit that is at
// least 1. 1e5 Msun in 1 pc: the time unit is sqrt(pc^3 / (G 1e5 Msun)) = 0.04715 Myr and the speed
// unit sqrt(G 1e5 Msun / pc) = 20.74 km/s (computed apart from nbody with the same constants).
TEST(Annotations, TimeStampInNbodyOrPhysicalUnits) {
  EXPECT_EQ(render::time_label(12.345, 0.01, sim::Units{}), "t = 12.35 N-body units");
  sim::Units const pc = sim::parse_units("1e5Msun", "1pc");
  EXPECT_NEAR(pc.time_s() / (1e6 * 365.25 * 86400), 0.04715, 1e-5);
  EXPECT_EQ(render::time_label(100.0, 0.01, pc), "t = 4.715 Myr");
  EXPECT_EQ(render::time_label(0.01, 0.01, pc), "t = 471.5 yr");
  EXPECT_EQ(render::time_label(0.0, 0.01, pc), "t = 0 s");
  EXPECT_EQ(render::speed_unit(sim::Units{}).unit, "");
  EXPECT_EQ(render::speed_unit(pc).unit, "km/s");
  EXPECT_NEAR(render::speed_unit(pc).factor, 20.74, 0.005);
}

// Colour by type lists the types the run has: a Plummer sphere's stars alone, a galaxy's disk and halo.
TEST(Colors, TypeLegendListsTheTypesPresent) {
  using T = sim::BodyType;
  auto labels = [](const std::vector<render::Swatch>& s) {
    std::vector<std::string> l;
    for (auto const& w : s) l.push_back(w.label);
    return l;
  };
  EXPECT_EQ(labels(render::type_swatches(render::types_present({T::star, T::star}))),
            std::vector<std::string>{"stars (less mass: bluer)"});
  EXPECT_EQ(labels(render::type_swatches(render::types_present({T::dark, T::star}))),
            (std::vector<std::string>{"stars (less mass: bluer)", "dark matter"}));
  EXPECT_EQ(render::type_swatches().size(), 3u);
  EXPECT_TRUE(render::type_swatches(render::types_present({})).empty());
}

// The HUD panel's time, energy error and radii read in the run's units as the overlay does (the panel gave N-body
// figures with no unit beside a corner in Myr and a scale bar in kpc).
TEST(Annotations, PanelLinesInNbodyOrPhysicalUnits) {
  sim::Units const none;
  EXPECT_EQ(render::panel_time_line(1.2, false, 0.01, none), "t = 1.2");
  EXPECT_EQ(render::panel_time_line(0.5, true, 0.0, none), "block time = 0.5");
  EXPECT_EQ(render::panel_energy_line(1e-4, 0.96, 0.01, none), "|dE/E| = 1.0e-04 at t = 0.96");
  // The time with the time line's digits, however long the run: not 1235 for 1234.56, nor 1.235e+04.
  EXPECT_EQ(render::panel_energy_line(1e-4, 1234.56, 0.01, none), "|dE/E| = 1.0e-04 at t = 1234.56");
  EXPECT_EQ(render::panel_energy_line(1e-4, 12345.67, 0.01, none), "|dE/E| = 1.0e-04 at t = 12345.67");
  EXPECT_EQ(render::panel_energy_line(1e-4, 5.6251220703125, 0.0, none),  // as the block time line reads it
            "|dE/E| = 1.0e-04 at t = 5.62512207031");
  EXPECT_EQ(render::panel_radii_line({0.973, 1.24, 1.56}, none), "r10/50/90 = 0.973 1.24 1.56");
  sim::Units const pc = sim::parse_units("1e5Msun", "1pc");  // time unit 0.04715 Myr (above)
  EXPECT_EQ(render::panel_time_line(100.0, false, 0.01, pc), "t = 100 (4.715 Myr)");
  EXPECT_EQ(render::panel_time_line(100.0, true, 0.0, pc), "block time = 100 (4.715 Myr)");
  EXPECT_EQ(render::panel_energy_line(1e-4, 100.0, 0.01, pc), "|dE/E| = 1.0e-04 at 4.715 Myr");
  EXPECT_EQ(render::panel_radii_line({0.5, 2.0, 3000.0}, pc), "r10/50/90 = 0.500 2.00 3.00e+03 pc");
  // A half-mass radius below one unit reads in it (as the scale bar of "2 pc" beside it), not in au.
  EXPECT_EQ(render::panel_radii_line({0.327, 0.795, 2.17}, pc), "r10/50/90 = 0.327 0.795 2.17 pc");
  EXPECT_EQ(render::panel_radii_line({1e-4, 2e-3, 0.01}, pc), "r10/50/90 = 20.6 413 2.06e+03 au");
  // Before the first measure: hermite4 says when it comes (every body next at one time), which a dt max of 1e6
  // puts far off, where "measuring" read as a run stuck.
  // Paused, nothing is measured until a step: at a restart's time too (where "measuring" once stood for ever).
  EXPECT_EQ(render::panel_energy_wait_line(true, std::nullopt, none), "energy error: after the first step");
  EXPECT_EQ(render::panel_energy_wait_line(true, 0.0625, none),
            "energy error: at t = 0.0625, every body's next common time");
  EXPECT_EQ(render::panel_energy_wait_line(false, std::nullopt, none), "energy error: measuring");
  EXPECT_EQ(render::panel_energy_wait_line(false, 1e6, none), "energy error: at t = 1000000, every body's next common time");
  EXPECT_EQ(render::panel_energy_wait_line(false, 100.0, pc), "energy error: at 4.715 Myr, every body's next common time");
  double const none_enclosed = std::nan("");
  EXPECT_EQ(render::panel_radii_line({none_enclosed, none_enclosed, none_enclosed}, pc), "r10/50/90 undefined (no mass)");
  sim::Units const kpc = sim::parse_units("1e10Msun", "1kpc");
  EXPECT_EQ(render::panel_radii_line({0.973, 1.24, 1.56}, kpc), "r10/50/90 = 0.973 1.24 1.56 kpc");
  EXPECT_EQ(render::panel_radii_line({0.309, 0.776, 2.11}, kpc), "r10/50/90 = 0.309 0.776 2.11 kpc");
  EXPECT_EQ(render::panel_radii_line({0, 0, 0}, kpc), "r10/50/90 = 0 0 0 kpc");  // not in km
  // Below a year, in the overlay's units too (days, hours), not seconds: the overlay and the panel read alike.
  double const day = 86400.0 / pc.time_s();
  EXPECT_EQ(render::panel_time_line(58 * day, false, 0.01, pc), "t = 3.368e-06 (58 d)");
  EXPECT_EQ(render::time_label(58 * day, 0.01, pc), "t = 58 d");
}

// Every step changes what the panel and the overlay show: the time with the digits its step needs (hermite4's 'n' at
// block time 13.4 showed "13.4" before and after), and the count of steps below it.
TEST(Annotations, EveryStepChangesTheTimeShown) {
  sim::Units const none;
  // hermite4: block times a step of 2^-20 apart, then 2^-30 apart (where 12 digits still tell them apart).
  double const t = 13.40625;
  EXPECT_EQ(render::panel_time_line(t, true, 0.0, none), "block time = 13.40625");
  EXPECT_NE(render::panel_time_line(t + std::ldexp(1.0, -20), true, 0.0, none),
            render::panel_time_line(t, true, 0.0, none));
  EXPECT_EQ(render::panel_time_line(t + std::ldexp(1.0, -20), true, 0.0, none), "block time = 13.4062509537");
  EXPECT_NE(render::time_label(t + std::ldexp(1.0, -30), 0.0, none), render::time_label(t, 0.0, none));
  EXPECT_EQ(render::time_label(t, 0.0, none), "t = 13.40625 N-body units");
  // Fixed steps: to the step's decimal place, however far the time has gone ("100" for 100.01 before).
  EXPECT_EQ(render::time_text(100.01, 0.01), "100.01");
  EXPECT_EQ(render::time_text(100.0 + 3 * 0.01, 0.01), "100.03");
  EXPECT_EQ(render::time_text(12.345, 0.01), "12.35");  // four digits at the least, as before
  EXPECT_EQ(render::time_text(1234.5, 0.5), "1234.5");
  EXPECT_EQ(render::time_text(0.0, 0.01), "0");
  // The count of steps, which every step changes even where a time's digits could not.
  EXPECT_EQ(render::panel_step_line(1234, true, false), "block step 1234");
  EXPECT_EQ(render::panel_step_line(1235, true, true), "block step 1235   paused");
  EXPECT_EQ(render::panel_step_line(7, false, false), "step 7");
}

// Rates before any step was timed are not measured yet: "-", not 0 (which reads as a run that does not move).
TEST(Annotations, RatesNotYetMeasuredAreADash) {
  EXPECT_EQ(render::panel_rate_line(0.0, 0.0, false), "- steps/s   step - ms");
  EXPECT_EQ(render::panel_rate_line(0.0, 0.0, true), "- block steps/s   step - ms");
  EXPECT_EQ(render::panel_bodies_line(1024, 0.0, 0.0), "N = 1024   - interactions/s");
  EXPECT_EQ(render::panel_rate_line(12.34, 81.04, false), "12.3 steps/s   step 81 ms");
  EXPECT_EQ(render::panel_bodies_line(1024, 2.684e9, 81.04), "N = 1024   2.684e+09 interactions/s");
  // Paused after steps: the run goes at 0 steps/s, and its last step's time stands.
  EXPECT_EQ(render::panel_rate_line(0.0, 0.5, false), "0 steps/s   step 0.5 ms");
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

// Every press counts, also several of a key in one frame (a quick typist, a held key, a slow frame): ten n's are ten
// steps, three c's three colourings; a toggle pressed twice is where it was.
TEST(Input, EveryPressInAFrameCounts) {
  render::Input in;
  in.keys = "nnnnnnnnnncccchhh  tt";
  auto const c = render::route(in, false, false);
  EXPECT_EQ(c.steps, 10);
  EXPECT_EQ(c.next_color, 4);
  EXPECT_EQ(c.next_hud, 3);
  EXPECT_FALSE(c.toggle_pause);
  EXPECT_FALSE(c.toggle_trails);
  in.keys = "++=-";  // three doublings and a halving: twice the steps
  EXPECT_EQ(render::route(in, false, false).step_rate, 2);
  EXPECT_EQ(render::route(in, true, false).step_rate, 0) << "the keys are the HUD's while it edits a field";
}

TEST(Input, KeysMapToCommandsAndMouseMovesTheCameraUnlessOverTheHud) {
  render::Input in;
  in.keys = "nrcfpshot ";
  in.orbit_dx = 5;
  in.pan_dy = -3;
  in.scroll = 2;
  auto const c = render::route(in, false, false);
  EXPECT_TRUE(c.steps == 1 && c.reset && c.next_color == 1 && c.fit && c.screenshot && c.save && c.next_hud == 1 &&
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

// The panel's lines in a narrow panel, in a monospace font of one unit a character: a figure ("step 2.12 ms") is not
// split from its unit where a line holds it; a sentence breaks between words; a word wider than the panel stands
// alone. Before, "step 2.12" ended a line and "ms" began the next.
TEST(Annotations, PanelLinesBreakBetweenFiguresNotInsideThem) {
  auto const chars = [](const std::string& t) { return float(t.size()); };
  using Lines = std::vector<std::string>;
  EXPECT_EQ(render::panel_lines("97.2 steps/s   step 2.12 ms", 24.0f, chars), (Lines{"97.2 steps/s", "step 2.12 ms"}));
  EXPECT_EQ(render::panel_lines("97.2 steps/s   step 2.12 ms", 27.0f, chars), (Lines{"97.2 steps/s   step 2.12 ms"}));
  EXPECT_EQ(render::panel_lines("N = 2000   1.890e+09 interactions/s", 30.0f, chars),
            (Lines{"N = 2000", "1.890e+09 interactions/s"}));
  EXPECT_EQ(render::panel_lines("started plummer (seed 42), 2,000 bodies, softening 0.01", 27.0f, chars),
            (Lines{"started plummer (seed 42),", "2,000 bodies, softening", "0.01"}));
  EXPECT_EQ(render::panel_lines("saved averyveryverylongname.h5 now", 10.0f, chars),
            (Lines{"saved", "averyveryverylongname.h5", "now"}));
  EXPECT_EQ(render::panel_lines("", 10.0f, chars), Lines{});
  EXPECT_EQ(render::panel_lines("   ", 10.0f, chars), Lines{});
}

}  // namespace
}  // namespace nbody
