// tests/test_progress.cpp - the command line's progress line (app/progress.h): block steps to a time show the time
// reached, not a step count that is only a bound, and the line always ends on the run's last state, also when
// that update came within the quarter second that spaces the redraws. And the times it and the reports show of a GPU
// (core/clock.h's event_milliseconds).
#include <gtest/gtest.h>

#include <string>

#include "app/progress.h"
#include "core/clock.h"

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

// A GPU event's time reads as the event gave it: the float's shortest decimal, not its binary digits (before, a
// report said 0.0101760001853 ms for the event's 0.010176), and the float it came from again.
TEST(Clock, AGpuEventsTimeReadsAsTheEventGaveIt) {
  EXPECT_EQ(event_milliseconds(0.010176f), 0.010176);
  EXPECT_EQ(event_milliseconds(0.136288f), 0.136288);
  for (float const ms : {0.0f, 1e-7f, 0.1f, 3.14159f, 123456.7f})
    EXPECT_EQ(float(event_milliseconds(ms)), ms) << ms;
}

}  // namespace
}  // namespace nbody::app
