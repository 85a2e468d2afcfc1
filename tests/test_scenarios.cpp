// tests/test_scenarios.cpp - initial conditions: sizes, frames, seeds, equilibrium.
#include <gtest/gtest.h>

#include "core/errors.h"
#include "sim/physics/diagnostics.h"
#include "test_support.h"

namespace nbody {
namespace {

class Scenarios : public ::testing::TestWithParam<std::string> {};

TEST_P(Scenarios, CentreOfMassAtRestAtOriginAndSeeded) {
  std::size_t const n = GetParam() == "two-body" ? 2 : 1001;
  auto const a = test::scenario(GetParam(), n, 7);
  ASSERT_EQ(a.size(), n);
  EXPECT_NEAR(sim::total_mass(a), 1.0, 1e-12);
  EXPECT_LT(norm(sim::centre_of_mass(a)), 1e-14);
  EXPECT_LT(norm(sim::centre_of_mass_velocity(a)), 1e-14);
  auto const again = test::scenario(GetParam(), n, 7);
  EXPECT_TRUE(test::bitwise_equal(a, again)) << "same seed, different bodies";
  if (GetParam() != "two-body") {
    auto const other = test::scenario(GetParam(), n, 8);
    EXPECT_FALSE(test::bitwise_equal(a, other)) << "the seed changes nothing";
  }
}

INSTANTIATE_TEST_SUITE_P(All, Scenarios, ::testing::ValuesIn(all_names<sim::Scenario>()), [](auto const& param_info) {
  std::string s = param_info.param;
  for (auto& c : s)
    if (c == '-') c = '_';
  return s;
});

TEST(Scenarios, PlummerIsInVirialEquilibriumInHenonUnits) {
  auto const b = test::scenario("plummer", 4096);
  auto const d = sim::measure(b, sim::reference_potential(b, 1e-4));
  // Standard units: E = -1/4, 2K/|W| = 1; sampling noise ~ 1/sqrt(N) ~ 2%.
  EXPECT_NEAR(d.total(), -0.25, 0.02);
  EXPECT_NEAR(2 * d.kinetic / -d.potential, 1.0, 0.08);
}

TEST(Scenarios, TwoBodyStartsAtApocentreOfTheRequestedOrbit) {
  sim::ScenarioParams p{sim::Scenario::two_body, 2, 42, 0.5};
  auto const b = sim::make_scenario(p);
  double const separation = b.pos_mass[0].x - b.pos_mass[1].x;
  EXPECT_DOUBLE_EQ(separation, 1.5);  // a (1 + e)
  // Vis-viva: E = -M m1 m2 / (2 a) with a = 1 and masses 1/2 -> E = -1/8.
  auto const d = sim::measure(b, sim::reference_potential(b, 1e-12));
  EXPECT_NEAR(d.total(), -0.125, 1e-12);
}

TEST(Scenarios, NamesRoundTripAndTheValidOnesAreListed) {
  for (auto const& entry : sim::kScenarioNames) EXPECT_EQ(from_name<sim::Scenario>(entry.name), entry.value);
  EXPECT_FALSE(from_name<sim::Scenario>("plumer").has_value());
  EXPECT_EQ(valid_names<sim::Scenario>(), "plummer, random-sphere, disk, collision, two-body");
}

TEST(Scenarios, BadSizesAndParametersNameTheValue) {
  EXPECT_TRUE(test::rejected_with([] { test::scenario("plummer", 0); }, "--bodies 0: need at least 1 body"));
  EXPECT_TRUE(test::rejected_with([] { test::scenario("two-body", 3); },
                                  "--bodies 3: the two-body scenario has exactly 2 bodies"));
  EXPECT_TRUE(test::rejected_with([] { sim::make_scenario({sim::Scenario::two_body, 2, 1, 1.0}); },
                                  "--eccentricity 1: must be in [0, 1)"));
}

TEST(Scenarios, DiskRotatesAndIsThin) {
  auto const b = test::scenario("disk", 2000);
  double lz = 0, z2 = 0, r2 = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    auto const& p = b.pos_mass[i];
    auto const& v = b.velocity[i];
    lz += p.w * (p.x * v.y - p.y * v.x);
    z2 += p.z * p.z;
    r2 += p.x * p.x + p.y * p.y;
  }
  EXPECT_GT(lz, 0.0);           // counter-clockwise rotation about +z
  EXPECT_LT(z2, 0.01 * r2);     // thickness 0.02 against scale length 0.2
}

}  // namespace
}  // namespace nbody
