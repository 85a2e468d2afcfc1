// tests/test_integrator.cpp - step programs: the integrators' programs and the grammar every program
// must obey (sim/physics/integrator.h), with a broken program for each rule.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/errors.h"
#include "sim/physics/integrator.h"

namespace nbody {
namespace {

using K = sim::StageKind;

// The message of the InputError `f` throws, or a failure saying it threw nothing.
template <class F>
::testing::AssertionResult rejected_with(F&& f, const std::string& words) {
  try {
    f();
  } catch (const InputError& e) {
    if (std::string(e.what()).find(words) != std::string::npos) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "message '" << e.what() << "' lacks '" << words << "'";
  }
  return ::testing::AssertionFailure() << "accepted; expected an error with '" << words << "'";
}

sim::StepProgram program(std::vector<sim::Stage> stages) { return {"test", 0.01, std::move(stages)}; }

TEST(StepContract, EveryIntegratorsProgramIsValid) {
  for (auto const& name : sim::integrator_names()) {
    auto const p = sim::make_step_program({name, 0.0, 0.99});
    EXPECT_NO_THROW(sim::validate(p)) << name;
  }
  EXPECT_EQ(sim::make_step_program({"leapfrog", 0.0, 1.0}).drifts(), 1);
  EXPECT_EQ(sim::make_step_program({"euler-damped", 0.0, 0.9}).drifts(), 1);
  EXPECT_EQ(sim::make_step_program({"yoshida4", 0.0, 1.0}).drifts(), 3);
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
  EXPECT_TRUE(rejected_with([] { sim::validate(program({{K::drift, 0.005}, {K::kick, 0.01}, {K::drift, 0.005}, {K::forces}})); },
                            "stage 3 (drift): a second drift before the forces stage of the first"));
  // ... and without a forces stage at the end: the accelerations would belong to old positions.
  EXPECT_TRUE(rejected_with([] { sim::validate(program({{K::drift, 0.005}, {K::forces}, {K::kick, 0.01}, {K::drift, 0.005}})); },
                            "the last drift has no forces stage after it"));
  EXPECT_TRUE(rejected_with([] { sim::validate(program({{K::kick, 0.01}, {K::forces}, {K::drift, 0.01}, {K::forces}})); },
                            "stage 2 (forces): no drift since the last forces stage"));
  EXPECT_TRUE(rejected_with([] { sim::validate(program({{K::kick, 0.01}})); }, "no drift stage"));
  EXPECT_TRUE(rejected_with([] { sim::validate(program({})); }, "no drift stage"));
  double const inf = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(rejected_with([&] { sim::validate(program({{K::drift, inf}, {K::forces}})); },
                            "stage 1 (drift): its time is not a finite number"));
  EXPECT_TRUE(rejected_with([] { sim::validate(program({{K::kick, std::nan("")}, {K::drift, 0.01}, {K::forces}})); },
                            "stage 1 (kick): its time is not a finite number"));
  EXPECT_TRUE(rejected_with([] { sim::validate(program({{K::damp, 1.5}, {K::drift, 0.01}, {K::forces}})); },
                            "stage 1 (damp): a damping factor must be in (0, 1]"));
}

TEST(StepContract, YoshidaSubstepsAddUpToOneStep) {
  double const dt = 0.02;
  auto const p = sim::make_step_program({"yoshida4", dt, 1.0});
  double drift = 0, kick = 0;
  bool backwards = false;
  for (auto const& s : p.stages) {
    if (s.kind == K::drift) drift += s.value, backwards = backwards || s.value < 0;
    if (s.kind == K::kick) kick += s.value;
  }
  EXPECT_NEAR(drift, dt, 1e-15);
  EXPECT_NEAR(kick, dt, 1e-15);
  EXPECT_TRUE(backwards) << "the middle substep of the fourth-order composition goes backwards";
}

TEST(Integrator, UnknownNameListsTheValidOnes) {
  EXPECT_TRUE(rejected_with([] { sim::make_step_program({"leapfrg", 0.0, 0.995}); },
                            "unknown integrator 'leapfrg'; valid: leapfrog, yoshida4, euler-damped"));
}

TEST(Integrator, RejectsNonPositiveDtAndBadDamping) {
  EXPECT_TRUE(rejected_with([] { sim::make_step_program({"leapfrog", -0.1, 0.995}); }, "--dt -0.1: must be a positive number"));
  EXPECT_TRUE(rejected_with([] { sim::make_step_program({"euler-damped", 0.01, 1.5}); }, "--damping 1.5: must be in (0, 1]"));
  EXPECT_TRUE(rejected_with([] { sim::make_step_program({"euler-damped", 0.01, 0.0}); }, "--damping 0: must be in (0, 1]"));
}

}  // namespace
}  // namespace nbody
