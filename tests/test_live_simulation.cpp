// tests/test_live_simulation.cpp - the viewer's simulation: threading and device-count switches
// applied between steps, on its own thread or batch by batch, keep the state bit for bit equal to a
// run that never switched; a change that cannot be made is a message and the run goes on. On the
// CPU (host devices) and on CUDA with two GPUs (skipped with fewer). A CPU step or start-up in
// progress is abandoned at once for a new run or the end, and its torn state never shown.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "app/live_simulation.h"
#include "app/run_config_json.h"
#include "core/errors.h"
#include "driver/checkpoints.h"
#include "driver/setup.h"
#include "gpu/devices.h"
#include "multigpu/simulation.h"
#include "sim/io/checkpoint.h"

namespace nbody {
namespace {

using app::Change;
using app::LiveSimulation;
using multigpu::Threading;

// Positions, masses and velocities equal bit for bit.
void expect_bitwise_positions(const sim::BodySet& a, const sim::BodySet& b) {
  ASSERT_EQ(a.size(), b.size());
  std::size_t differing = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    auto const& p = a.pos_mass[i];
    auto const& q = b.pos_mass[i];
    auto const& v = a.velocity[i];
    auto const& w = b.velocity[i];
    if (p.x != q.x || p.y != q.y || p.z != q.z || p.w != q.w || v.x != w.x || v.y != w.y || v.z != w.z) ++differing;
  }
  EXPECT_EQ(differing, 0u) << "bodies that differ";
}

struct Backend {
  const char* name;
  driver::BackendChoice choice;
  std::size_t bodies;
};
void PrintTo(const Backend& b, std::ostream* os) { *os << b.name; }

class LiveSwitches : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (GetParam().choice == driver::BackendChoice::cuda && gpu::devices().size() < 2)
      GTEST_SKIP() << "needs two CUDA devices (" << gpu::devices().size() << " visible)";
    run_.initial.scenario = sim::Scenario::plummer;
    run_.initial.bodies = GetParam().bodies;
    run_.devices.backend = GetParam().choice;
    run_.devices.count = 1;
  }

  driver::RunConfig with(int devices, Threading threading) const {
    driver::RunConfig r = run_;
    r.devices.count = devices;
    r.devices.threading = threading;
    return r;
  }

  static Change settings(const driver::RunConfig& run) {
    Change c;
    c.kind = Change::Kind::settings;
    c.run = run;
    return c;
  }

  // The state after `steps` steps of a run that never switched.
  sim::BodySet reference(std::uint64_t steps) const {
    driver::Setup const setup = driver::make_setup(run_);
    multigpu::Simulation sim(setup.bodies, setup.program, setup.config, setup.clock);
    sim.advance(steps);
    return sim.state();
  }

  static void expect_bitwise(const sim::BodySet& a, const sim::BodySet& b) {
    expect_bitwise_positions(a, b);  // against the run that never switched
    EXPECT_EQ(a.time, b.time);
  }

  driver::RunConfig run_;
};

// Batch by batch (as a recording does): 1 device, 2 devices with worker threads, 1 again.
TEST_P(LiveSwitches, DeviceCountAndThreadingSwitchesKeepTheStateBitForBit) {
  LiveSimulation live(driver::make_setup(run_), run_, std::nullopt, false);
  live.set_steps_per_update(4);
  live.update();
  live.request(settings(with(2, Threading::workers)));
  live.update();
  EXPECT_EQ(live.stats().devices, 2u);
  live.request(settings(with(2, Threading::single)));
  live.update();
  live.request(settings(with(1, Threading::single)));
  live.update();
  EXPECT_EQ(live.stats().devices, 1u);
  EXPECT_EQ(live.stats().step, 16u);
  for (auto const& m : live.take_messages()) std::printf("message: %s\n", m.c_str());
  expect_bitwise(live.state(), reference(16));
}

// From every device (up to 4) to half of them and back, as on a 4-GPU machine 4 -> 2 -> 4.
TEST_P(LiveSwitches, FromAllDevicesToHalfAndBackKeepsTheStateBitForBit) {
  int const all = GetParam().choice == driver::BackendChoice::cuda ? std::min(4, int(gpu::devices().size())) : 4;
  driver::RunConfig const start = with(all, Threading::single);
  LiveSimulation live(driver::make_setup(start), start, std::nullopt, false);
  live.set_steps_per_update(4);
  live.update();
  EXPECT_EQ(live.stats().devices, std::size_t(all));
  live.request(settings(with(all / 2, Threading::single)));
  live.update();
  EXPECT_EQ(live.stats().devices, std::size_t(all / 2));
  live.request(settings(with(all, Threading::workers)));
  live.update();
  EXPECT_EQ(live.stats().devices, std::size_t(all));
  EXPECT_EQ(live.stats().step, 12u);
  for (auto const& m : live.take_messages()) std::printf("message: %s\n", m.c_str());
  expect_bitwise(live.state(), reference(12));
}

// On its own thread, with the switches asked for while it runs: wherever they land, the state at
// the step it pauses on is the unswitched run's.
TEST_P(LiveSwitches, SwitchesWhileRunningOnItsThreadKeepTheStateBitForBit) {
  LiveSimulation live(driver::make_setup(run_), run_, std::nullopt, false);
  live.set_steps_per_update(2);
  live.start();
  auto wait_for_step = [&](std::uint64_t step) {
    auto const end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (live.stats().step < step && std::chrono::steady_clock::now() < end) {
      live.frame_shown();  // as the render loop does: the thread goes on after each frame is taken
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  };
  wait_for_step(4);
  live.request(settings(with(2, Threading::workers)));
  wait_for_step(live.stats().step + 6);
  live.request(settings(with(1, Threading::single)));
  wait_for_step(live.stats().step + 6);
  live.set_paused(true);
  // Paused once two looks a while apart see the same step.
  std::uint64_t step = live.stats().step;
  for (;;) {
    live.frame_shown();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    if (live.stats().step == step) break;
    step = live.stats().step;
  }
  EXPECT_EQ(live.stats().devices, 1u);
  ASSERT_GE(step, 16u);
  expect_bitwise(live.state(), reference(step));
}

// On its thread the simulation moves a batch per frame shown: without a frame taken it waits, so a
// fast simulation runs at steps per frame, not as fast as the CPU can go.
TEST_P(LiveSwitches, OnItsThreadItStepsOneBatchPerFrameShown) {
  LiveSimulation live(driver::make_setup(run_), run_, std::nullopt, false);
  live.set_steps_per_update(3);
  live.start();
  auto settle = [&] {
    std::uint64_t step = live.stats().step;
    for (int k = 0; k < 100; ++k) {  // until two looks 100 ms apart agree (at most 10 s)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      if (live.stats().step == step) return step;
      step = live.stats().step;
    }
    return step;
  };
  // Its start-up (on the thread) first: the first frame exists before it can be shown.
  for (int k = 0; k < 600 && live.stats().generation == 0; ++k) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(settle(), 0u) << "the first frame was never shown";
  live.frame_shown();
  EXPECT_EQ(settle(), 3u);
  live.frame_shown();
  EXPECT_EQ(settle(), 6u);
  live.set_paused(true);
  live.frame_shown();
  EXPECT_EQ(settle(), 6u) << "paused";
}

// A recording's thread (start_recording) works in lockstep: one update for each advance (the first
// makes the bodies, starts and takes a batch), nothing between, and every frame bit for bit the one
// update() on the caller's thread makes, a change asked for between two frames applied alike.
TEST_P(LiveSwitches, TheRecordingThreadMakesTheFramesUpdateMakes) {
  LiveSimulation recording(run_, std::nullopt, false);  // the bodies made on its thread
  LiveSimulation called(run_, std::nullopt, false);
  recording.set_steps_per_update(3);
  called.set_steps_per_update(3);
  recording.start_recording();
  EXPECT_TRUE(recording.wait_advanced(0.0)) << "nothing asked for: nothing to wait for";
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(recording.stats().generation, 0u) << "it started before the first frame was asked for";
  for (std::uint64_t frame = 1; frame <= 4; ++frame) {
    if (frame == 3) {
      recording.request(settings(with(2, Threading::workers)));
      called.request(settings(with(2, Threading::workers)));
    }
    recording.advance();
    bool done = false;
    for (int look = 0; look < 3000 && !done; ++look) done = recording.wait_advanced(0.02);  // 60 s at most
    ASSERT_TRUE(done) << "frame " << frame << " not made in 60 s";
    called.update();
    EXPECT_EQ(recording.stats().step, 3 * frame);
    EXPECT_EQ(called.stats().step, 3 * frame);
    expect_bitwise(recording.state(), called.state());
  }
  EXPECT_EQ(recording.stats().devices, 2u);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(recording.stats().step, 12u) << "it stepped without a frame asked for";
  expect_bitwise(recording.state(), reference(12));
}

// A change that cannot be made (a negative time step) is a message; the run goes on with the
// settings it had.
TEST_P(LiveSwitches, ImpossibleChangeIsAMessageAndTheRunGoesOn) {
  LiveSimulation live(driver::make_setup(run_), run_, std::nullopt, false);
  live.update();
  driver::RunConfig bad = run_;
  bad.physics.dt = -1.0;
  live.request(settings(bad));
  live.update();
  std::string all;
  for (auto const& m : live.take_messages()) all += m + "\n";
  EXPECT_NE(all.find("could not apply the change"), std::string::npos) << all;
  EXPECT_EQ(live.stats().step, 2u) << "the run went on";
  expect_bitwise(live.state(), reference(2));
}

INSTANTIATE_TEST_SUITE_P(Backends, LiveSwitches,
                         ::testing::Values(Backend{"cpu", driver::BackendChoice::cpu, 1024},
                                           Backend{"cuda", driver::BackendChoice::cuda, 16384}),
                         [](const ::testing::TestParamInfo<Backend>& p) { return std::string(p.param.name); });

// A new run, a refused one, and the end, while a CPU step or the start-up is in progress: the work in
// progress is abandoned at once instead of waited for, and what was torn is never shown.
class LiveAbandon : public ::testing::Test {
 protected:
  // Steps of about 1.8 s: fp64 reference arithmetic (the scalar kernel: simd's is several times as fast) on one
  // thread, 1.4e8 pairs/s measured on the 2-core CI machine, at 16,000 bodies (the upload's first forces take as long).
  static driver::RunConfig slow_run() {
    driver::RunConfig r;
    r.initial.scenario = sim::Scenario::plummer;
    r.initial.bodies = 16000;
    r.devices.backend = driver::BackendChoice::cpu;
    r.devices.count = 1;
    r.devices.engine.precision = Precision::fp64;
    r.devices.engine.kernel = sim::Kernel::reference;
    r.devices.engine.cpu_threads = 1;
    return r;
  }
  static driver::RunConfig small_run() {
    driver::RunConfig r = slow_run();
    r.initial.bodies = 256;
    return r;
  }
  static Change reset(const driver::RunConfig& run) {
    Change c;
    c.kind = Change::Kind::reset;
    c.run = run;
    return c;
  }
  static double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  // Waits (at most 60 s) until `done`, as the render loop would: each frame taken.
  template <class F>
  static void wait_until(LiveSimulation& live, F&& done, bool show_frames) {
    auto const end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!done() && std::chrono::steady_clock::now() < end) {
      if (show_frames) live.frame_shown();
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    auto const s = live.stats();
    ASSERT_TRUE(done()) << "waited 60 s: generation " << s.generation << ", step " << s.step << ", N " << s.bodies;
  }
  // The run started and its first step under way (about 0.3 s into its 1.8 s).
  static void start_first_step(LiveSimulation& live) {
    live.start();
    wait_until(live, [&] { return live.stats().generation >= 1; }, false);
    auto const t0 = std::chrono::steady_clock::now();
    wait_until(live, [&] { return seconds_since(t0) > 0.3; }, true);  // the frame taken, as often as it comes
    ASSERT_EQ(live.stats().step, 0u) << "the first step ended already: too fast to test (more bodies)";
  }
};

// How long abandoning the work in progress may take: measured 1-10 ms (a body's N pairs, then the
// thread's turn); the work itself takes 1.8 s, of which 1.5 s remain when it is abandoned.
constexpr double kAbandonSeconds = 0.5;

TEST_F(LiveAbandon, EndingItDuringItsStartUpIsImmediate) {
  driver::Setup setup = driver::make_setup(slow_run());
  auto const t0 = std::chrono::steady_clock::now();
  {
    LiveSimulation live(std::move(setup), slow_run(), std::nullopt, false);
    live.start();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // its first forces under way
  }
  double const seconds = seconds_since(t0);
  std::printf("made, started and ended during its start-up in %.3f s\n", seconds);
  EXPECT_LT(seconds, 0.1 + kAbandonSeconds);
}

// Ended while its thread makes 2,000,000 bodies (0.1 s into 0.7 s of work on an idle CI machine),
// interactive or recording: the generation gives up within a chunk of bodies. Measured 2-3 ms
// (before: the rest of the generation, 0.5-0.6 s, then the first forces abandoned).
constexpr double kGenerationAbandonSeconds = 0.2;

TEST_F(LiveAbandon, EndingItWhileItMakesItsBodiesIsImmediate) {
  driver::RunConfig run = slow_run();
  run.initial.bodies = 2000000;
  for (bool const recording : {false, true}) {
    auto live = std::make_unique<LiveSimulation>(run, std::nullopt, false);
    if (recording) {
      live->start_recording();
      live->advance();
    } else {
      live->start();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_EQ(live->stats().generation, 0u) << "the bodies were made already: too fast to test (more bodies)";
    auto const t0 = std::chrono::steady_clock::now();
    live.reset();
    double const seconds = seconds_since(t0);
    std::printf("%s: ended while making its bodies in %.3f s\n", recording ? "recording" : "interactive", seconds);
    EXPECT_LT(seconds, kGenerationAbandonSeconds);
  }
}

TEST_F(LiveAbandon, EndingItDuringAStepIsImmediate) {
  auto live = std::make_unique<LiveSimulation>(driver::make_setup(slow_run()), slow_run(), std::nullopt, false);
  start_first_step(*live);
  auto const t0 = std::chrono::steady_clock::now();
  live.reset();
  double const seconds = seconds_since(t0);
  std::printf("ended during a step in %.3f s\n", seconds);
  EXPECT_LT(seconds, kAbandonSeconds);
}

// A new run asked for during a step: the step is abandoned, and when the new run cannot be made (a
// negative dt) the old one goes on from its last frame, the torn step unseen; the next new run
// starts clean, bit for bit as a run that never switched.
TEST_F(LiveAbandon, ANewRunAbandonsAStepAndTheTornStateIsNeverShown) {
  driver::Setup const initial = driver::make_setup(slow_run());
  LiveSimulation live(initial, slow_run(), std::nullopt, false);
  start_first_step(live);
  driver::RunConfig bad = small_run();
  bad.physics.dt = -1.0;
  auto const t0 = std::chrono::steady_clock::now();
  live.request(reset(bad));
  std::string all;
  wait_until(live, [&] {
    for (auto const& m : live.take_messages()) all += m + "\n";
    return all.find("could not apply the change") != std::string::npos;
  }, false);
  double const seconds = seconds_since(t0);
  std::printf("refused during a step in %.3f s\n", seconds);
  EXPECT_LT(seconds, kAbandonSeconds) << "the new run waited for the step in progress";
  // The old run again, from its last frame: step 0, the initial bodies.
  wait_until(live, [&] { return live.stats().generation >= 2; }, false);
  EXPECT_EQ(live.stats().step, 0u);
  EXPECT_EQ(live.stats().bodies, initial.bodies.size());
  expect_bitwise_positions(live.state(), initial.bodies);
  // A new run that can be made starts clean.
  live.request(reset(small_run()));
  wait_until(live, [&] { return live.stats().bodies == 256 && live.stats().step >= 4; }, true);
  live.set_paused(true);
  std::uint64_t step = live.stats().step;
  for (;;) {
    live.frame_shown();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (live.stats().step == step) break;
    step = live.stats().step;
  }
  driver::Setup const small = driver::make_setup(small_run());
  multigpu::Simulation reference(small.bodies, small.program, small.config, small.clock);
  reference.advance(step);
  expect_bitwise_positions(live.state(), reference.state());
}

// A Plummer run of `bodies` bodies on one host device, every other setting its default.
driver::RunConfig cpu_plummer(std::size_t bodies) {
  driver::RunConfig run;
  run.initial.scenario = sim::Scenario::plummer;
  run.initial.bodies = bodies;
  run.devices.backend = driver::BackendChoice::cpu;
  run.devices.count = 1;
  return run;
}

// A hermite4 Plummer run of `bodies` bodies on one host device, with `softening` named.
driver::RunConfig hermite_plummer(std::size_t bodies, double softening) {
  driver::RunConfig run = cpu_plummer(bodies);
  run.physics.integrator = sim::Integrator::hermite4;
  run.physics.softening = softening;
  run.given.integrator = run.given.softening = true;
  return run;
}

// hermite4 in the viewer: each frame carries every body's time-step level while the viewer colours by
// them (and none otherwise), and the rate counts the force+jerk pairs the block steps computed.
TEST(LiveHermite, FramesCarryTheStepLevelsWhileAsked) {
  driver::RunConfig const run = hermite_plummer(256, 0.001);
  LiveSimulation live(driver::make_setup(run), run, std::nullopt, false);
  live.set_steps_per_update(50);
  auto levels_of_frame = [&] {
    std::vector<std::uint8_t> got;
    live.with_frame([&](std::uint64_t, const sim::BodySet&, const render::DeviceFrames*,
                        const std::vector<std::uint8_t>& levels) { got = levels; });
    return got;
  };
  live.update();
  EXPECT_TRUE(levels_of_frame().empty()) << "levels downloaded while nobody asked";
  live.want_levels(true);
  live.update();
  std::vector<std::uint8_t> const levels = levels_of_frame();
  ASSERT_EQ(levels.size(), 256u);
  auto const [lo, hi] = std::minmax_element(levels.begin(), levels.end());
  std::printf("levels %d..%d after %llu block steps\n", int(*lo), int(*hi), (unsigned long long)live.stats().step);
  EXPECT_LT(*lo, *hi) << "a Plummer sphere with softening 0.001 has bodies on several step levels";
  EXPECT_TRUE(live.stats().block_steps);
  EXPECT_GT(live.stats().interactions_per_s, 0.0);
  live.want_levels(false);
  live.update();
  EXPECT_TRUE(levels_of_frame().empty());
}

// A simulation of `start` run to `spans` multiples of hermite4's dt max (1/16 here), as a viewer's frames take it.
std::unique_ptr<multigpu::Simulation> hermite_to_span(const driver::Setup& start, int spans) {
  auto sim = std::make_unique<multigpu::Simulation>(start.bodies, start.program, start.config, start.clock);
  sim->set_time_limit(spans / 16.0);
  sim->advance(std::uint64_t(1) << 40);
  EXPECT_TRUE(sim->stopped_at_time_limit());
  EXPECT_EQ(sim->time(), spans / 16.0);
  return sim;
}

// hermite4 in the viewer (and the browser's server): a settings change between frames, and a start from a
// checkpoint, go on from every body's own time and Hermite state, bit for bit with a run that did neither.
TEST(LiveHermite, SettingsChangesAndRestartsContinueBitForBit) {
  driver::RunConfig const run = hermite_plummer(256, 0.001);
  driver::Setup const start = driver::make_setup(run);
  auto const reference = hermite_to_span(start, 3);
  sim::BodySet const want = reference->state();

  auto settings = [&](int devices, multigpu::Threading threading) {
    Change c;
    c.kind = Change::Kind::settings;
    c.run = run;
    c.run.devices.count = devices;
    c.run.devices.threading = threading;
    return c;
  };
  LiveSimulation live(driver::make_setup(run), run, std::nullopt, false);
  live.set_steps_per_update(1);
  live.update();
  live.request(settings(2, multigpu::Threading::workers));
  live.update();
  EXPECT_EQ(live.stats().devices, 2u) << "the change was refused";
  live.request(settings(1, multigpu::Threading::single));
  live.update();
  EXPECT_EQ(live.stats().devices, 1u) << "the change was refused";
  EXPECT_EQ(live.stats().step, reference->steps_done());
  for (auto const& m : live.take_messages()) std::printf("message: %s\n", m.c_str());
  sim::BodySet const switched = live.state();
  expect_bitwise_positions(switched, want);
  EXPECT_EQ(switched.time, want.time);

  // A span, a checkpoint, and the viewer's start from it: 2 more.
  std::string const path = ::testing::TempDir() + "live_hermite.h5";
  auto const first = hermite_to_span(start, 1);
  driver::write_checkpoint(path, start, *first, std::nullopt);
  driver::RunConfig restart = run;
  restart.initial.checkpoint = path;
  LiveSimulation resumed(driver::make_setup(restart), restart, std::nullopt, false);
  resumed.set_steps_per_update(2);
  resumed.update();
  EXPECT_EQ(resumed.stats().step, reference->steps_done());
  sim::BodySet const continued = resumed.state();
  expect_bitwise_positions(continued, want);
  EXPECT_EQ(continued.time, want.time);
  std::remove(path.c_str());
}

// hermite4's frames: each a number of spans of dt max (the steps per update), ending at a multiple of it where every
// body is at that time, corrected there (not predicted to it), whatever block steps the spans took; the frames of a
// recording alike. Steps asked for (n, the Step button) are single block steps, and the next frame goes on to the
// next multiple of dt max from there.
TEST(LiveHermite, EachFrameIsSpansOfDtMaxWithEveryBodyAtItsEnd) {
  driver::RunConfig const run = hermite_plummer(256, 0.001);
  driver::Setup const start = driver::make_setup(run);
  LiveSimulation live(driver::make_setup(run), run, std::nullopt, false);
  live.set_steps_per_update(2);
  for (int frame = 1; frame <= 3; ++frame) {
    live.update();
    auto const reference = hermite_to_span(start, 2 * frame);
    sim::BodySet bodies;
    sim::hermite::HermiteState state;
    reference->hermite_state(bodies, state);
    for (double t : state.time) ASSERT_EQ(t, 2 * frame / 16.0) << "not every body is at the span's end";
    EXPECT_EQ(live.stats().time, 2 * frame / 16.0);
    EXPECT_EQ(live.stats().energy_due, 2 * frame / 16.0) << "the HUD's time of the next energy measure";
    EXPECT_EQ(live.stats().step, reference->steps_done());
    expect_bitwise_positions(live.state(), bodies);  // the bodies at their own times: the frame shows those
    std::printf("frame %d: t = %g after %llu block steps\n", frame, live.stats().time,
                (unsigned long long)live.stats().step);
  }
  EXPECT_GT(live.stats().step, 3u * 2u * 2u) << "block steps shorter than dt max: more than a span's one or two";
  std::uint64_t const before = live.stats().step;
  live.step(3);
  live.update();
  EXPECT_EQ(live.stats().step, before + 3) << "n made no single block steps";
  EXPECT_LT(live.stats().time, 6 / 16.0 + 1 / 16.0);
  live.update();
  EXPECT_EQ(live.stats().time, 8 / 16.0) << "the next frame does not end at the next multiple of dt max but one";

  // A recording's frames are the same spans.
  LiveSimulation recording(driver::make_setup(run), run, std::nullopt, false);
  recording.set_steps_per_update(2);
  recording.start_recording();
  recording.advance();
  bool done = false;
  for (int look = 0; look < 3000 && !done; ++look) done = recording.wait_advanced(0.02);  // 60 s at most
  ASSERT_TRUE(done);
  EXPECT_EQ(recording.stats().time, 2 / 16.0);
}

// hermite4's first energy measure is made at the first span's end, the time the HUD names for it (it waited for a
// second of wall time, and so for a later span's end than the one named).
TEST(LiveHermite, TheFirstEnergyIsMeasuredAtTheFirstSpansEnd) {
  driver::RunConfig const run = hermite_plummer(64, 0.01);
  LiveSimulation live(driver::make_setup(run), run, std::nullopt, true);
  live.set_steps_per_update(1);
  live.set_paused(true);
  live.update();  // the start-up alone, as the viewer's thread makes it (its frame is shown before the first steps)
  live.set_paused(false);
  for (int k = 0; k < 20 && live.stats().time < 1 / 16.0; ++k) live.update();
  ASSERT_EQ(live.stats().time, 1 / 16.0);
  EXPECT_EQ(live.stats().energy_due, 1 / 16.0);
  ASSERT_TRUE(live.stats().energy_error) << "not measured at the time the HUD named";
  EXPECT_EQ(live.stats().energy_time, 1 / 16.0);
}

// hermite4 live, on its thread, with spans far longer than a frame: each frame shown is about a frame's block steps
// on the way (its time short of the span's end, and later than the last), and what the user asks for meanwhile (a
// checkpoint) is done between frames, not once the span ends.
TEST(LiveHermite, ALongSpanGoesOnOverFramesWithTheUsersChangesBetween) {
  driver::RunConfig const run = hermite_plummer(512, 0.001);
  LiveSimulation live(driver::make_setup(run), run, std::nullopt, false);
  live.set_steps_per_update(100000);  // 6,250 time units: never reached here
  live.start();
  auto next_frame = [&](std::uint64_t after) {  // shows the frame there is, and waits (10 s at most) for a newer one
    live.frame_shown();
    for (int k = 0; k < 1000 && live.frame_number() <= after; ++k) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return live.frame_number();
  };
  for (int k = 0; k < 600 && live.stats().generation == 0; ++k) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::uint64_t frame = live.frame_number();
  double time = live.stats().time;
  for (int k = 0; k < 5; ++k) {
    std::uint64_t const newer = next_frame(frame);
    ASSERT_GT(newer, frame) << "no frame in 10 s on the way to the span's end";
    frame = newer;
    EXPECT_GT(live.stats().time, time);
    time = live.stats().time;
  }
  std::string const path = ::testing::TempDir() + "live_hermite_span.h5";
  std::remove(path.c_str());
  Change save;
  save.kind = Change::Kind::save;
  save.path = path;
  std::uint64_t const asked = live.request(save);
  for (int k = 0; k < 20 && live.stats().changes_done < asked; ++k) frame = next_frame(frame);
  EXPECT_GE(live.stats().changes_done, asked) << "the checkpoint waited for the span's end";
  EXPECT_LT(live.stats().time, 100000 / 16.0);
  EXPECT_EQ(live.take_files(), std::vector<std::string>{path}) << "the checkpoint written is offered to front ends";
  std::remove(path.c_str());
  // One span a frame from now: the frames end at multiples of dt max again, most of them (a span of 512 bodies takes
  // about a frame's steps or less), not on the way to the far end asked for before, where one lands on a multiple
  // only by chance (a block step in 70 or so).
  live.set_steps_per_update(1);
  frame = next_frame(next_frame(frame));
  int at_multiples = 0;
  for (int k = 0; k < 10; ++k) {
    frame = next_frame(frame);
    double const spans = 16.0 * live.stats().time;
    at_multiples += spans == std::floor(spans);
  }
  EXPECT_GE(at_multiples, 5) << "the frames still went to the end of 100,000 spans (t = " << live.stats().time << ")";
}

// The Hermite state of a paused viewer, as its save (the s key) writes it: each body's time and step.
sim::hermite::HermiteState saved_hermite_state(LiveSimulation& live, const std::string& name) {
  std::string const path = ::testing::TempDir() + name;
  std::remove(path.c_str());
  Change c;
  c.kind = Change::Kind::save;
  c.path = path;
  live.request(c);
  live.update();
  sim::Checkpoint const file = sim::read_checkpoint(path);
  std::remove(path.c_str());
  return file.hermite;
}

// Asks for another dt max, as the HUD's field does.
void request_dt_max(LiveSimulation& live, double dt_max) {
  Change change;
  change.kind = Change::Kind::settings;
  change.run = live.stats().run;
  change.run.physics.hermite.dt_max = dt_max;
  change.run.given.dt_max = true;
  live.request(change);
}

// dt max lowered between frames (the HUD's dt max, as a restart's --dt-max does): a body on a step longer than the new
// longest one ends it at the next multiple of that, the next frame's end, where it is corrected with every other body,
// not predicted there on its old step.
TEST(LiveHermite, ALowerDtMaxEndsTheLongerStepsAtTheNextFramesEnd) {
  driver::RunConfig run = hermite_plummer(256, 0.001);
  run.physics.hermite.dt_max = 0.25;
  run.given.dt_max = true;
  LiveSimulation live(driver::make_setup(run), run, std::nullopt, false);
  live.set_steps_per_update(2);
  live.update();
  ASSERT_EQ(live.stats().time, 0.5);
  live.set_paused(true);  // the saves below make no frame
  auto save = [&] { return saved_hermite_state(live, "live_hermite_dt_max.h5"); };
  sim::hermite::HermiteState const before = save();
  double const lower = 1.0 / 64;
  ASSERT_GT(*std::max_element(before.step.begin(), before.step.end()), lower) << "no body on a step the change cuts";

  request_dt_max(live, lower);
  live.set_steps_per_update(1);
  for (int frame = 1; frame <= 3; ++frame) {
    live.set_paused(false);
    live.update();
    live.set_paused(true);
    double const end = 0.5 + frame * lower;
    ASSERT_EQ(live.stats().time, end);
    sim::hermite::HermiteState const after = save();
    for (std::size_t i = 0; i < after.size(); ++i) {
      ASSERT_EQ(after.epoch + after.time[i], end) << "body " << i << " (step " << before.step[i] << " before the "
                                                  << "change) is not at frame " << frame << "'s end";
      ASSERT_LE(after.step[i], lower) << "body " << i;
    }
  }
}

// The same change between the times every body shares (after block steps that ended no span: the Step button's): a
// body far into a longer step keeps it until it ends, and the first span ends there, with every body at its end and
// corrected, not at the next multiple of the new longest step with that body predicted.
TEST(LiveHermite, ALowerDtMaxBetweenSpanEndsEndsTheNextSpanWhereTheLongerStepsEnd) {
  driver::RunConfig run = hermite_plummer(256, 0.001);
  run.physics.hermite.dt_max = 0.25;
  run.given.dt_max = true;
  LiveSimulation live(driver::make_setup(run), run, std::nullopt, false);
  live.set_paused(true);
  live.step(37);
  live.update();
  ASSERT_EQ(live.stats().step, 37u);
  auto save = [&] { return saved_hermite_state(live, "live_hermite_dt_max_between.h5"); };
  double const lower = 1.0 / 1024;
  request_dt_max(live, lower);
  live.update();
  sim::hermite::HermiteState const cut = save();
  double const block = cut.block_time();
  double long_end = 0.0;
  for (std::size_t i = 0; i < cut.size(); ++i)
    if (cut.step[i] > lower) long_end = std::max(long_end, cut.time[i] + cut.step[i]);
  ASSERT_GT(long_end, (std::floor(block / lower) + 1.0) * lower)
      << "no longer step outlasts the next multiple of the longest step (block time " << block << ")";

  live.set_steps_per_update(1);
  live.set_paused(false);
  live.update();  // one span, made whole (no thread: no frame budget)
  live.set_paused(true);
  ASSERT_EQ(live.stats().time, cut.epoch + long_end);
  sim::hermite::HermiteState const after = save();
  for (std::size_t i = 0; i < after.size(); ++i) {
    ASSERT_EQ(after.epoch + after.time[i], cut.epoch + long_end)
        << "body " << i << " (step " << cut.step[i] << " after the change) is not at the span's end";
    ASSERT_LE(after.step[i], lower) << "body " << i;
  }
}

// Softening 0 (hermite4's alone; elsewhere 0 means "the scenario's"): the viewer started on such a checkpoint with
// nothing named keeps it through a settings change made from what runs (as the HUD makes them), and looking up the
// devices on the command line's own settings before the file is read (the viewer does, for CUDA-GL interop) is no
// error.
TEST(LiveHermite, ARestartWithoutSofteningKeepsItThroughSettingsChanges) {
  driver::RunConfig run = hermite_plummer(128, 0.0);
  run.devices.engine.precision = Precision::fp64;
  run.given.precision = true;
  driver::Setup const start = driver::make_setup(run);
  multigpu::Simulation reference(start.bodies, start.program, start.config, start.clock);
  reference.advance(12);
  sim::BodySet const want = reference.state();
  multigpu::Simulation first(start.bodies, start.program, start.config, start.clock);
  first.advance(4);
  std::string const path = ::testing::TempDir() + "live_unsoftened.h5";
  driver::write_checkpoint(path, start, first, std::nullopt);

  driver::RunConfig restart;  // --restart FILE --backend cpu, nothing else named
  restart.devices.backend = driver::BackendChoice::cpu;
  restart.initial.checkpoint = path;
  EXPECT_NO_THROW(driver::resolve_devices(restart, 1, nullptr));
  LiveSimulation live(driver::make_setup(restart), restart, std::nullopt, false);
  live.step(4);  // block steps, as n makes them
  live.update();
  EXPECT_EQ(live.stats().softening, 0.0);
  Change change;
  change.kind = Change::Kind::settings;
  change.run = live.stats().run;
  change.run.devices.count = 2;
  live.request(change);
  live.step(4);
  live.update();
  EXPECT_EQ(live.stats().devices, 2u) << "the change was refused";
  EXPECT_EQ(live.stats().softening, 0.0);
  EXPECT_EQ(live.stats().step, 12u);
  for (auto const& m : live.take_messages()) std::printf("message: %s\n", m.c_str());
  sim::BodySet const got = live.state();
  expect_bitwise_positions(got, want);
  EXPECT_EQ(got.time, want.time);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace nbody

namespace nbody::app {
namespace {

// What the viewer's rank 0 sends the other ranks: every field of a RunConfig comes back as it went.
// A notice of the setup (here: a --dt-max that is no power of two) is said once: a reset that makes the same setup
// again does not repeat it to the log and the HUD.
TEST(LiveNotices, ASetupNoticeIsSaidOnceAcrossResets) {
  driver::RunConfig run = cpu_plummer(64);
  run.physics.integrator = sim::Integrator::hermite4;
  run.physics.hermite.dt_max = 0.1;
  run.given.dt_max = true;
  LiveSimulation live(run, std::nullopt, false);
  live.update();  // the start-up
  for (int k = 0; k < 2; ++k) {
    Change c;
    c.kind = Change::Kind::reset;
    c.run = run;
    live.request(c);
    live.update();
  }
  std::string all;
  std::size_t said = 0;
  for (auto const& m : live.take_messages()) {
    all += m + "\n";
    said += m.find("the longest step is 0.0625") != std::string::npos ? 1 : 0;
  }
  EXPECT_EQ(said, 1u) << all;
  EXPECT_EQ(live.stats().generation, 3u) << all;
}

// The steps timed since the simulation was made, for the viewer's summary: every step counted, a reset starts again.
TEST(LiveNotices, TimedStepsAreCountedSinceTheRunWasMade) {
  driver::RunConfig run = cpu_plummer(64);
  LiveSimulation live(driver::make_setup(run), run, std::nullopt, false);
  for (int k = 0; k < 4; ++k) live.update();
  auto s = live.stats();
  EXPECT_GT(s.step, 0u);
  EXPECT_EQ(s.timed_steps, s.step);
  EXPECT_GT(s.timed_ms, 0.0);
  Change c;
  c.kind = Change::Kind::reset;
  c.run = run;
  live.request(c);
  live.update();
  live.update();
  s = live.stats();
  EXPECT_EQ(s.generation, 2u);
  EXPECT_GT(s.step, 0u);
  EXPECT_EQ(s.timed_steps, s.step) << "a reset counts from its own start";
}

// A change of settings goes on with the same run: the viewer's energy error is measured from the run's baseline, as a
// script's is (a new dt, another device count change nothing of the energy), and what was measured last stands till
// the next measure, where it went back to "measuring" and then showed only the error since the change. The speed
// colours keep their range (continued). Another softening is another potential: its error is measured from there.
TEST(LiveSettings, AChangeOfSettingsKeepsTheEnergyBaselineUnlessTheSofteningChanges) {
  driver::RunConfig run = cpu_plummer(128);
  run.physics.dt = 0.05;
  LiveSimulation live(driver::make_setup(run), run, std::nullopt, true);
  auto const measured = [&] {  // updates until the energy is measured (on its cadence: a second or more apart)
    double const before = live.stats().energy_time;
    auto const deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!(live.stats().energy_error && live.stats().energy_time > before) &&
           std::chrono::steady_clock::now() < deadline)
      live.update();
    return live.stats();
  };
  auto const first = measured();
  ASSERT_TRUE(first.energy_error && first.initial_energy);
  EXPECT_FALSE(first.continued);
  auto const change = [&](const driver::RunConfig& r) {
    Change c;
    c.kind = Change::Kind::settings;
    c.run = r;
    live.request(c);
    live.update();
    return live.stats();
  };
  driver::RunConfig next = run;
  next.physics.dt = 0.025;
  next.devices.count = 2;
  auto const changed = change(next);
  ASSERT_EQ(changed.generation, first.generation + 1);
  EXPECT_TRUE(changed.continued);
  EXPECT_EQ(changed.initial_energy, first.initial_energy);
  ASSERT_TRUE(changed.energy_error) << "what was measured stands till the next measure";
  auto const later = measured();
  EXPECT_EQ(later.initial_energy, first.initial_energy);
  EXPECT_GT(later.energy_time, changed.energy_time);
  next.physics.softening = 0.2;
  auto const softer = change(next);
  ASSERT_TRUE(softer.initial_energy);
  EXPECT_NE(*softer.initial_energy, *first.initial_energy) << "another potential, another baseline";
  EXPECT_FALSE(softer.energy_error) << "an error of the old potential is not shown for the new";
}

TEST(RunConfigJson, EveryFieldSurvivesTheTrip) {
  driver::RunConfig r;
  r.initial = {sim::Scenario::collision, 1234, 7, 0.25, "in.bin", "run.h5", ""};
  r.physics = {sim::Integrator::yoshida4, 0.003, 0.9, 0.02};
  r.devices.backend = driver::BackendChoice::cpu;
  r.devices.count = 3;
  r.devices.gpus = {0, 2};
  r.devices.weights = {1, 2.5};
  r.devices.threading = multigpu::Threading::workers;
  r.devices.launch = multigpu::Launch::graph;
  r.devices.exchange = multigpu::ExchangeMode::staged;
  r.devices.engine.cpu_threads = 5;
  r.devices.engine.precision = Precision::fp64;
  r.devices.engine.kernel = sim::Kernel::tiled;
  r.devices.engine.block_size = 128;
  r.devices.engine.fp64_rsqrt = sim::Fp64Rsqrt::precise;
  r.given = {true, false, true, false, true};
  auto const j = to_json(r);
  driver::RunConfig const b = run_config_from_json(nlohmann::json::parse(j.dump()));
  EXPECT_EQ(to_json(b), j);
  EXPECT_EQ(b.initial.checkpoint, "run.h5");
  EXPECT_EQ(b.physics.dt, 0.003);
  EXPECT_EQ(b.devices.weights, r.devices.weights);
  ASSERT_TRUE(b.devices.engine.kernel);
  EXPECT_EQ(*b.devices.engine.kernel, sim::Kernel::tiled);
  EXPECT_TRUE(b.given.precision);
  driver::RunConfig none;  // no kernel named: none comes back
  EXPECT_FALSE(run_config_from_json(to_json(none)).devices.engine.kernel);
  auto broken = j;
  broken["devices"]["threading"] = "many";
  EXPECT_THROW(run_config_from_json(broken), RuntimeFailure);
}

}  // namespace
}  // namespace nbody::app
