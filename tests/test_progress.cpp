// tests/test_progress.cpp - the command line's progress line (app/progress.h): block steps to a time show the time
// reached, not a step count that is only a bound, and the line always ends on the run's last state, also when
// that update came within the quarter second that spaces the redraws.
#include <gtest/gtest.h>

#include <string>

#include "app/progress.h"

namespace nbody::app {
namespace {

// The text after the last carriage return: what the terminal shows.
std::string last_drawn(const std::string& err) {
  std::string const line = err.substr(err.rfind('\r') + 1);
  return line.substr(0, line.find('\n'));
}

TEST(Progress, BlockStepsToATimeShowTheTimeReachedAndEndOnTheLastUpdate) {
  testing::internal::CaptureStderr();
  {
    Progress p(1000000000000000ull, true, Progress::TimeSpan{0.0, 3.3});
    p.update(1, 0.000244140625);
    p.update(5123, 3.25);  // within 250 ms of the first: not drawn now
    p.finish();
  }
  std::string const err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(last_drawn(err).rfind("time 3.25/3.3 ( 98%), 5123 block steps", 0), 0u) << err;
  EXPECT_EQ(err.find("1000000000000000"), std::string::npos) << err;
  EXPECT_EQ(err.back(), '\n');
}

TEST(Progress, StepsShowTheirCountAndNothingWhenDisabled) {
  testing::internal::CaptureStderr();
  {
    Progress p(200, true);
    p.update(50, 0.5);
    p.update(120, 1.2);
  }  // the destructor ends the line
  std::string const err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(last_drawn(err).rfind("step 120/200 ( 60%)", 0), 0u) << err;
  testing::internal::CaptureStderr();
  {
    Progress quiet(200, false, Progress::TimeSpan{0.0, 1.0});
    quiet.update(50, 0.5);
    quiet.finish();
  }
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

}  // namespace
}  // namespace nbody::app
