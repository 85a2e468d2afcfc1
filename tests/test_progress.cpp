// tests/test_progress.cpp - the command line's progress line (app/progress.h): block steps to a time show the time
// reached, not a step count that is only a bound, and the line always ends on the run's last state, also when
// that update came within the quarter second that spaces the redraws. And the times it and the reports show of a GPU
// (core/clock.h's event_milliseconds).
#include <gtest/gtest.h>

#include <unistd.h>

#include <clocale>
#include <cstdlib>

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

// The same in a process whose locale writes a decimal comma (a Python script's locale.setlocale(locale.LC_ALL, "")
// in Germany): strtod stopped at the point, and a GPU's steps took 0 ms. The locale is made for the test, where
// localedef and the locale sources are there.
TEST(Clock, AGpuEventsTimeIsReadAlikeInEveryLocale) {
  std::string const dir = "/tmp/nbody-locale-" + std::to_string(getpid());
  std::string const make = "localedef -i de_DE -f UTF-8 " + dir + "/de_DE.UTF-8 > /dev/null 2>&1";
  if (std::system(("mkdir -p " + dir + " && " + make).c_str()) != 0) GTEST_SKIP() << "localedef could not make de_DE";
  setenv("LOCPATH", dir.c_str(), 1);
  bool const comma = std::setlocale(LC_NUMERIC, "de_DE.UTF-8") != nullptr;
  double const read = event_milliseconds(0.010176f);
  std::setlocale(LC_NUMERIC, "C");
  unsetenv("LOCPATH");
  std::system(("rm -rf " + dir).c_str());
  if (!comma) GTEST_SKIP() << "the locale made was not taken";
  EXPECT_EQ(read, 0.010176);
}

}  // namespace
}  // namespace nbody::app
