// tests/test_integrator.cpp - step programs: the integrators' programs and the grammar every program
// must obey (sim/physics/integrator.h), with a broken program for each rule.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/errors.h"
#include "sim/physics/integrator.h"
#include "test_support.h"

namespace nbody {
namespace {

using K = sim::StageKind;

sim::StepProgram program(std::vector<sim::Stage> stages) { return {"test", 0.01, std::move(stages)}; }

TEST(StepContract, EveryIntegratorsProgramIsValid) {
  for (auto const& entry : sim::kIntegratorNames) {
    auto const p = sim::make_step_program({entry.value, 0.0, 0.99});
    EXPECT_NO_THROW(sim::validate(p)) << entry.name;
    EXPECT_EQ(p.integrator, entry.name);
  }
  EXPECT_EQ(sim::make_step_program({sim::Integrator::leapfrog, 0.0, 1.0}).drifts(), 1);
  EXPECT_EQ(sim::make_step_program({sim::Integrator::euler_damped, 0.0, 0.9}).drifts(), 1);
  EXPECT_EQ(sim::make_step_program({sim::Integrator::yoshida4, 0.0, 1.0}).drifts(), 3);
  EXPECT_EQ(sim::make_step_program({sim::Integrator::omelyan4, 0.0, 1.0}).drifts(), 4);
}

TEST(StepContract, AcceptsWhatTheGrammarAllows) {
  // explicit Euler (drift, a kick with the old accelerations, forces), and drift-kick-drift with a
  // forces stage after each drift: two publications per step.
  EXPECT_NO_THROW(sim::validate(program({{K::drift, 0.01}, {K::kick, 0.01}, {K::forces}})));
  EXPECT_NO_THROW(sim::validate(
      program({{K::drift, 0.005}, {K::forces}, {K::kick, 0.01}, {K::drift, 0.005}, {K::forces}})));
  EXPECT_NO_THROW(sim::validate(program({{K::damp, 0.5}, {K::drift, -0.01}, {K::forces}, {K::damp, 1.0}})));
}

TEST(StepContract, RejectsEachBrokenRuleByName) {
  // drift-kick-drift without a forces stage between the drifts: the first drift would be lost.
  EXPECT_TRUE(test::rejected_with([] { sim::validate(program({{K::drift, 0.005}, {K::kick, 0.01}, {K::drift, 0.005}, {K::forces}})); },
                            "stage 3 (drift): a second drift before the forces stage of the first"));
  // ... and without a forces stage at the end: the accelerations would belong to old positions.
  EXPECT_TRUE(test::rejected_with([] { sim::validate(program({{K::drift, 0.005}, {K::forces}, {K::kick, 0.01}, {K::drift, 0.005}})); },
                            "the last drift has no forces stage after it"));
  EXPECT_TRUE(test::rejected_with([] { sim::validate(program({{K::kick, 0.01}, {K::forces}, {K::drift, 0.01}, {K::forces}})); },
                            "stage 2 (forces): no drift since the last forces stage"));
  EXPECT_TRUE(test::rejected_with([] { sim::validate(program({{K::kick, 0.01}})); }, "no drift stage"));
  EXPECT_TRUE(test::rejected_with([] { sim::validate(program({})); }, "no drift stage"));
  double const inf = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(test::rejected_with([&] { sim::validate(program({{K::drift, inf}, {K::forces}})); },
                            "stage 1 (drift): its time is not a finite number"));
  EXPECT_TRUE(test::rejected_with([] { sim::validate(program({{K::kick, std::nan("")}, {K::drift, 0.01}, {K::forces}})); },
                            "stage 1 (kick): its time is not a finite number"));
  EXPECT_TRUE(test::rejected_with([] { sim::validate(program({{K::damp, 1.5}, {K::drift, 0.01}, {K::forces}})); },
                            "stage 1 (damp): a damping factor must be in (0, 1]"));
}

TEST(StepContract, FourthOrderSubstepsAddUpToOneStep) {
  double const dt = 0.02;
  for (auto const integrator : {sim::Integrator::yoshida4, sim::Integrator::omelyan4}) {
    auto const p = sim::make_step_program({integrator, dt, 1.0});
    double drift = 0, kick = 0;
    bool backwards = false;
    for (auto const& s : p.stages) {
      if (s.kind == K::drift) drift += s.value, backwards = backwards || s.value < 0;
      if (s.kind == K::kick) kick += s.value;
    }
    EXPECT_NEAR(drift, dt, 1e-15) << p.integrator;
    EXPECT_NEAR(kick, dt, 1e-15) << p.integrator;
    EXPECT_TRUE(backwards) << p.integrator << ": a fourth-order composition has a substep that goes backwards";
  }
}

TEST(Integrator, NamesRoundTrip) {
  for (auto const& entry : sim::kIntegratorNames) EXPECT_EQ(from_name<sim::Integrator>(entry.name), entry.value);
  EXPECT_FALSE(from_name<sim::Integrator>("leapfrg").has_value());
  EXPECT_EQ(valid_names<sim::Integrator>(), "leapfrog, yoshida4, omelyan4, euler-damped, hermite4");
}

TEST(Integrator, RejectsNonPositiveDtAndBadDamping) {
  EXPECT_TRUE(test::rejected_with([] { sim::make_step_program({sim::Integrator::leapfrog, -0.1, 0.995}); }, "--dt -0.1: must be a positive number"));
  EXPECT_TRUE(test::rejected_with([] { sim::make_step_program({sim::Integrator::euler_damped, 0.01, 1.5}); }, "--damping 1.5: must be in (0, 1]"));
  EXPECT_TRUE(test::rejected_with([] { sim::make_step_program({sim::Integrator::euler_damped, 0.01, 0.0}); }, "--damping 0: must be in (0, 1]"));
}

}  // namespace
}  // namespace nbody
