// tests/test_driver.cpp - the driver library without the command line: a front end other than
// app/ sets up, benchmarks and validates a run from typed configuration alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <functional>
#include <fstream>
#include <iterator>

#include "core/errors.h"
#include "core/interrupt.h"
#include "driver/benchmark.h"
#include "driver/course.h"
#include "driver/diagnostics_series.h"
#include "driver/run.h"
#include "driver/setup.h"
#include "driver/steering.h"
#include "driver/validation.h"
#include "multigpu/exchange_choice.h"
#include "sim/io/checkpoint.h"
#include "sim/io/tipsy.h"
#include "gpu/devices.h"
#include "sim/physics/reference_forces.h"
#include "test_support.h"

namespace nbody {
namespace {

driver::RunConfig cpu_run(std::size_t bodies) {
  driver::RunConfig run;
  run.initial.bodies = bodies;
  run.devices.backend = driver::BackendChoice::cpu;
  run.devices.engine.cpu_threads = 2;
  return run;
}

TEST(Driver, SetupFollowsTheTypedConfiguration) {
  driver::RunConfig run = cpu_run(0);
  run.initial.scenario = sim::Scenario::disk;
  run.devices.count = 3;
  run.devices.threading = multigpu::Threading::workers;
  run.physics.integrator = sim::Integrator::yoshida4;
  auto const s = driver::make_setup(run);
  EXPECT_EQ(s.bodies.size(), 16384u) << "the scenario's default size";
  EXPECT_EQ(s.config.softening, 0.05) << "the disk model's recommended softening";
  EXPECT_EQ(s.config.devices.size(), 3u);
  EXPECT_EQ(s.config.threading, multigpu::Threading::workers);
  EXPECT_EQ(s.program.integrator, "yoshida4");
  EXPECT_EQ(s.program.drifts(), 3);
  EXPECT_EQ(s.source, "disk (seed 42)");
  // None but the one that 3 worker teams on fewer cores get (CI's 2).
  for (auto const& n : s.notices) EXPECT_NE(n.find("take turns"), std::string::npos) << n;

  run.initial.scenario = sim::Scenario::two_body;
  run.initial.bodies = 0;
  EXPECT_EQ(driver::make_setup(run).bodies.size(), 2u);
}

// The engine settings a front end gives arrive whole in the simulation's configuration and at its
// engines, every one of them other than its default (but the block size and the fp64 r^-3, which the CPU backend refuses:
// BadConfigurationsAreRefusedBeforeAnyWork).
TEST(Driver, ResolvedDevicesKeepEveryEngineSetting) {
  driver::RunConfig run = cpu_run(64);
  sim::EngineSettings& e = run.devices.engine;
  e.precision = Precision::fp64;
  e.kernel = sim::Kernel::reference;
  e.cpu_threads = 3;
  auto const s = driver::make_setup(run);
  sim::EngineSettings const& got = s.config.engine;
  EXPECT_EQ(got.precision, Precision::fp64);
  EXPECT_EQ(got.kernel, sim::Kernel::reference);
  EXPECT_EQ(got.cpu_threads, 3);
  multigpu::Simulation sim(s.bodies, s.program, s.config, s.clock);
  EXPECT_EQ(sim.config().engine.precision, Precision::fp64);
  EXPECT_NE(sim.kernel_name().find("reference"), std::string::npos) << sim.kernel_name();
}

TEST(Driver, BadConfigurationsAreRefusedBeforeAnyWork) {
  driver::RunConfig run = cpu_run(100);
  run.devices.engine.kernel = sim::Kernel::fast;
  EXPECT_TRUE(test::rejected_with([&] { driver::make_setup(run); }, "--kernel fast: the cpu backend has simd, reference"));
  run = cpu_run(100);
  run.devices.count = 3;
  run.devices.weights = {1, 2};
  EXPECT_TRUE(test::rejected_with([&] { driver::make_setup(run); }, "--weights: 2 weights for 3 devices"));
  run = cpu_run(100);
  run.devices.gpus = {0};
  EXPECT_TRUE(test::rejected_with([&] { driver::make_setup(run); }, "--gpus applies to the CUDA backend"));
  run = cpu_run(100);
  run.initial.snapshot = "/nonexistent/galaxy.bin";
  EXPECT_TRUE(test::rejected_with([&] { driver::make_setup(run); }, "/nonexistent/galaxy.bin"));
  // The CUDA backend's settings are refused on host devices, not ignored.
  run = cpu_run(100);
  run.devices.engine.block_size = 128;
  EXPECT_TRUE(test::rejected_with([&] { driver::make_setup(run); },
                                  "--block-size 128 applies to the CUDA backend's naive and tiled kernels"));
  run = cpu_run(100);
  run.devices.exchange = multigpu::ExchangeMode::peer;
  EXPECT_TRUE(test::rejected_with([&] { driver::make_setup(run); }, "--exchange peer applies to the CUDA backend"));
}

// A start at a time where fp64 cannot resolve the run's steps (a tipsy header's 1e18) would keep the clock still while
// the bodies move: every sample by time at every step, every file at the same time. It is refused, for a file, for
// bodies given with their time, for hermite4's longest step, and for a step set later.
TEST(Driver, AStartWhereTheClockCannotAdvanceIsRefused) {
  test::TestDir dir("nbody-driver");
  sim::BodySet bodies = driver::make_setup(cpu_run(32)).bodies;
  bodies.time = 1e18;
  std::string const file = (dir.path() / "late.bin").string();
  sim::write_tipsy(file, bodies, 0.01);
  driver::RunConfig run = cpu_run(0);
  run.initial.snapshot = file;
  EXPECT_TRUE(test::rejected_with([&] { driver::make_setup(run); },
                                  file + ": at time 1e+18, --dt 0.01 is below what fp64 times resolve there (steps of at "
                                         "least 2^-44 of the time, 56843.4), so the clock would not advance"));
  run.physics.integrator = sim::Integrator::hermite4;
  EXPECT_TRUE(test::rejected_with([&] { driver::make_setup(run); }, "--dt-max 0.0625 is below what fp64 times resolve"));
  EXPECT_TRUE(test::rejected_with([&] { driver::setup_from_bodies(cpu_run(0), bodies, "arrays"); },
                                  "arrays: at time 1e+18, --dt 0.01 is below"));
  // Where the run's step is resolved, it runs: 2^-44 of 1e10 is below 0.01.
  bodies.time = 1e10;
  EXPECT_EQ(driver::setup_from_bodies(cpu_run(0), bodies, "arrays").clock.start_time, 1e10);
  // A step set later, where the time has grown: refused as at a start.
  bodies.time = 1.0;
  driver::Setup const start = driver::setup_from_bodies(cpu_run(0), bodies, "arrays");
  multigpu::Simulation simulation(start.bodies, start.program, start.config, start.clock);
  driver::RunConfig finer = start.run;
  finer.physics.dt = 1e-20;
  EXPECT_TRUE(test::rejected_with([&] { driver::with_settings(start, simulation, finer, nullptr); },
                                  "the state at step 0: at time 1, --dt 1e-20 is below"));
}

// A checkpoint of an older nbody records no course: every file of one run gives it one course, whatever its step (the
// files a restart from an earlier one finds past its step are its own).
TEST(Driver, AFileWithoutACourseGivesItsRunsOneCourse) {
  sim::RunRecord early;
  early.integrator = "hermite4";
  early.hermite = sim::hermite::HermiteParams{};
  early.step = 10;
  early.dt_since_step = 10;
  early.dt_since_time = 0.5;
  sim::RunRecord later = early;
  later.step = later.dt_since_step = 40;
  later.dt_since_time = 2.25;
  EXPECT_EQ(driver::course_of(early), driver::course_of(later));
  later.softening = 0.02;
  EXPECT_NE(driver::course_of(early), driver::course_of(later));
  later.course = "0123456789abcdef";  // one recorded is the file's
  EXPECT_EQ(driver::course_of(later), "0123456789abcdef");
}

// Every refusal below the driver (the engines' factory, the scenarios, the simulation, the exchange) names the
// setting in the front end's spelling, as the driver's own do.
TEST(Driver, RefusalsFromEveryLayerNameTheFrontEndsSettings) {
  driver::RunConfig run = cpu_run(100);
  run.names.keywords = true;
  run.devices.engine.kernel = sim::Kernel::fast;
  EXPECT_TRUE(
      test::rejected_with([&] { driver::make_setup(run); }, "kernel='fast': the cpu backend has simd, reference"));
  run = cpu_run(3);
  run.names.keywords = true;
  run.initial.scenario = sim::Scenario::two_body;
  EXPECT_TRUE(test::rejected_with([&] { driver::make_setup(run); }, "n=3: the two-body scenario has exactly 2 bodies"));
  run = cpu_run(100);
  run.names.keywords = true;
  run.devices.engine.block_size = 64;
  EXPECT_TRUE(test::rejected_with([&] { driver::make_setup(run); }, "block_size=64 applies to the CUDA backend"));
  run = cpu_run(100);
  run.names.keywords = true;
  run.devices.exchange = multigpu::ExchangeMode::direct;
  EXPECT_TRUE(test::rejected_with([&] { driver::make_setup(run); }, "exchange='direct' applies to the CUDA backend"));
  for (bool const hermite : {false, true}) {
    run = cpu_run(100);
    run.names.keywords = true;
    run.devices.launch = multigpu::Launch::graph;
    if (hermite) run.physics.integrator = sim::Integrator::hermite4;
    auto const s = driver::make_setup(run);
    EXPECT_TRUE(test::rejected_with([&] { multigpu::Simulation sim(s.bodies, s.program, s.config, s.clock); },
                                    hermite ? "launch='graph': hermite4 runs its block steps itself (on one GPU the "
                                              "engine uses graphs of its own); use launch='stream'"
                                            : "launch='graph': CUDA graphs need the CUDA backend"));
  }
  multigpu::ExchangeConditions apart;  // two GPUs that cannot reach each other
  apart.devices = 2;
  apart.all_pairs_peer = false;
  EXPECT_TRUE(test::rejected_with([&] { multigpu::choose_exchange(multigpu::ExchangeMode::direct, apart, run.names); },
                                  "exchange='direct': needs every pair of GPUs to reach each other's memory (peer "
                                  "access); use exchange='peer' or 'staged'"));
}

// A restart that wrote no row of its own (stopped in its start-up energy pass) leaves the series it continues as it
// was: the earlier run's rows from the restart's step on included, byte for byte. It dropped them, though it took
// no sample.
TEST(Driver, ASeriesContinuedButGivenNoRowIsLeftAsItWas) {
  test::TestDir const dir("nbody-series");
  std::string const path = (dir.path() / "d.csv").string();
  double const e0 = -0.25, dt = 0.01;
  auto sample = [&](std::uint64_t step) {
    driver::DiagnosticsSample s;
    s.step = step;
    s.time = double(step) * dt;
    s.diagnostics.kinetic = 0.25 + 1e-6 * double(step);
    s.diagnostics.potential = -0.5;
    s.initial_energy = e0;
    return s;
  };
  {
    driver::DiagnosticsSeries whole(path);
    for (std::uint64_t k = 0; k <= 12; k += 2) whole.write(sample(k));
    whole.close();
  }
  std::ifstream before_file(path);
  std::string const before{std::istreambuf_iterator<char>(before_file), std::istreambuf_iterator<char>()};
  for (std::uint64_t from : {12u, 4u, 0u}) {  // the run's end checkpoint, an earlier periodic one, its start
    driver::SeriesLineage lineage;
    lineage.step = from;
    lineage.time = double(from) * dt;
    lineage.initial_energy = e0;
    lineage.dt = dt;
    lineage.every = 2;
    driver::DiagnosticsSeries stopped(path, {}, lineage);
    EXPECT_NE(stopped.continuation(), "") << "it continues the series";
    stopped.close();
    std::ifstream after_file(path);
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(after_file), std::istreambuf_iterator<char>()), before)
        << "from step " << from;
    EXPECT_FALSE(std::filesystem::exists(path + ".partial"));
  }
  // A new run's (no lineage) replaces another run's series, as any output is, even with no row of its own: the file
  // at the path it reports is its own.
  {
    std::string const other = (dir.path() / "other.csv").string();
    std::ofstream(other) << "step,old\n1,2\n";
    driver::DiagnosticsSeries fresh(other);
    fresh.close();
    std::ifstream in(other);
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()),
              driver::diagnostics_csv_header() + "\n");
  }
  // Negative control: a row of its own continues the series there (the rows before its step kept).
  driver::SeriesLineage lineage;
  lineage.step = 4;
  lineage.time = 0.04;
  lineage.initial_energy = e0;
  lineage.dt = dt;
  driver::DiagnosticsSeries going_on(path, {}, lineage);
  going_on.write(sample(4));
  going_on.close();
  std::ifstream after_file(path);
  std::string const after{std::istreambuf_iterator<char>(after_file), std::istreambuf_iterator<char>()};
  EXPECT_EQ(std::count(after.begin(), after.end(), '\n'), 4) << after;  // the header, steps 0, 2 and 4
}

// A unit's refusal names what is wrong with it: a number out of range is not "not a number", and in "0x10Msun" the
// unit is what is wrong. Spaces around a unit are not part of it. The report gives the time and velocity units.
TEST(Driver, UnitsSayWhatIsWrongWithThem) {
  char const* const tail = "; give a positive number and a unit (Msun, Mjup, Mearth, kg, g), e.g. 1e5Msun";
  EXPECT_TRUE(test::rejected_with([&] { sim::parse_units("1e400Msun", "1pc"); },
                                  std::string("--mass-unit '1e400Msun': '1e400' is beyond a double's range, and the "
                                              "scale must lie within 1e-30 .. 1e60 g") + tail));
  // A number in range whose scale is not: the scale is said in the range's own unit (1e40 Msun is 1.99e73 g).
  EXPECT_TRUE(test::rejected_with([&] { sim::parse_units("1e40Msun", "1pc"); },
                                  std::string("--mass-unit '1e40Msun': that is 1.99e+73 g, outside 1e-30 .. 1e60 g") +
                                      tail));
  EXPECT_TRUE(test::rejected_with([&] { sim::parse_units("1Msun", "1e-60pc"); },
                                  "--length-unit '1e-60pc': that is 3.09e-42 cm, outside 1e-30 .. 1e60 cm; give"));
  // strtod's words are numbers that are not finite, not units' names.
  for (char const* word : {"nanMsun", "infMsun", "-InfMsun", "NaN Msun"})
    EXPECT_TRUE(test::rejected_with([&] { sim::parse_units(word, "1pc"); },
                                    std::string("--mass-unit '") + word + "': the number is not finite" + tail));
  EXPECT_TRUE(test::rejected_with([&] { sim::parse_units("0x10Msun", "1pc"); },
                                  std::string("--mass-unit '0x10Msun': unknown unit 'x10Msun'") + tail));
  EXPECT_TRUE(test::rejected_with([&] { sim::parse_units("0Msun", "1pc"); },
                                  std::string("--mass-unit '0Msun': the number must be positive") + tail));
  EXPECT_TRUE(test::rejected_with([&] { sim::parse_units("1e5x", "1pc"); }, "unknown unit 'x'"));
  // Other capitals and other programs' names (pynbody's Msol) are said as the unit meant, of the option's own kind.
  EXPECT_TRUE(test::rejected_with([&] { sim::parse_units("1e3Msol", "1pc"); },
                                  std::string("--mass-unit '1e3Msol': unknown unit 'Msol' (did you mean Msun?)") + tail));
  EXPECT_TRUE(test::rejected_with([&] { sim::parse_units("1e3Msun", "1Kpc"); }, "unknown unit 'Kpc' (did you mean kpc?)"));
  EXPECT_TRUE(test::rejected_with([&] { sim::parse_units("1e3Msun", "1parsec"); }, "unknown unit 'parsec' (did you mean pc?)"));
  EXPECT_TRUE(test::rejected_with([&] { sim::parse_units("1e3Msun", "1Msol"); }, "unknown unit 'Msol'; give"));
  EXPECT_TRUE(test::rejected_with([&] { sim::parse_units("1e3msun", "1pc"); }, "unknown unit 'msun' (did you mean Msun?)"));
  EXPECT_TRUE(test::rejected_with([&] { sim::parse_units("1e3Msun", "1mpc"); }, "unknown unit 'mpc'; give"));
  sim::Units const spaced = sim::parse_units(" 1e3Msun ", "1pc ");
  EXPECT_EQ(spaced.mass, "1e3Msun");
  EXPECT_EQ(spaced.length, "1pc");
  EXPECT_EQ(spaced, sim::parse_units("1e3Msun", "1pc"));
  // 1e3 Msun in 1 pc: sqrt(pc^3 / (G 1e3 Msun)) = 1.4879e13 s, 0.4715 Myr; 2.074 km/s.
  EXPECT_EQ(spaced.derived(), "time unit 471.5 kyr, velocity unit 2.074 km/s");
  EXPECT_EQ(sim::parse_units("1e5Msun", "1pc").derived(), "time unit 47.15 kyr, velocity unit 20.74 km/s");
  // Below a year in days (1 au, 1 Msun: a year over 2 pi), below a day in seconds.
  EXPECT_EQ(sim::parse_units("1Msun", "1au").derived(), "time unit 58.13 d, velocity unit 29.78 km/s");
  EXPECT_EQ(sim::parse_units("1Msun", "1au").physical(10.0 / 58.13), "10 d");
  EXPECT_EQ(sim::parse_units("1Msun", "1au").physical(0.5 / 58.13), "4.32e+04 s");
  EXPECT_EQ(sim::Units{}.derived(), "");
}

// The file readers and the units explain themselves in the front end's spelling (RunConfig::names): the command
// line's options, or Python's keywords and methods.
TEST(Driver, FileAndUnitErrorsNameTheFrontEndsEntryPoints) {
  SettingNames const python{true};
  EXPECT_EQ(python.name("--restart"), "Simulation.restart");
  EXPECT_EQ(python.name("--checkpoint"), "checkpoint");  // run()'s keyword
  EXPECT_EQ(python.entry("--checkpoint"), "Simulation.checkpoint");
  EXPECT_EQ(SettingNames{}.entry("--checkpoint"), "--checkpoint");
  EXPECT_EQ(python.name("--mass-unit and --length-unit"), "mass_unit and length_unit");
  EXPECT_EQ(python.quoted("--mass-unit", "1x"), "mass_unit='1x'");
  EXPECT_EQ(SettingNames{}.quoted("--mass-unit", "1x"), "--mass-unit '1x'");
  EXPECT_TRUE(test::rejected_with([&] { sim::parse_units("1e5Msun", "", python); },
                                  "mass_unit='1e5Msun': give length_unit too"));
  EXPECT_TRUE(test::rejected_with([&] { sim::parse_units("1e5Msun", ""); }, "--mass-unit '1e5Msun': give --length-unit too"));

  test::TestDir const dir("nbody-driver-names");
  std::string const h5 = (dir / "run.h5").string(), text = (dir / "notes.txt").string();
  { std::ofstream(h5, std::ios::binary) << std::string("\x89HDF\r\n\x1a\n", 8) << std::string(64, '\0'); }
  { std::ofstream(text) << "not a checkpoint\n"; }
  driver::RunConfig run = cpu_run(0);
  run.names.keywords = true;
  run.initial.snapshot = h5;
  // HDF5's signature and nothing readable: a damaged file (where HDF5 is built in, the snapshot reader says so), or
  // without HDF5 no tipsy file, named in Python's words either way.
  EXPECT_TRUE(test::rejected_with([&] { driver::make_setup(run); },
                                  sim::checkpoints_built()
                                      ? h5 + ": cannot open the HDF5 file (damaged, or not one HDF5 can read)"
                                      : h5 + ": an HDF5 file in neither nbody's nor GADGET's layout (a Header group "
                                             "with NumPart_Total or NumPart_ThisFile, and PartTypeN groups, N from 0 "
                                             "to 5); Simulation.load "
                                             "reads tipsy files and HDF5 snapshots in the GADGET/SWIFT layout, nbody's "
                                             "and others' (a checkpoint continues with Simulation.restart)"));
  if (!sim::checkpoints_built()) return;
  run.initial.snapshot.clear();
  run.initial.checkpoint = text;
  EXPECT_TRUE(test::rejected_with([&] { driver::make_setup(run); },
                                  text + ": not an HDF5 file; Simulation.restart takes a checkpoint written by "
                                         "Simulation.checkpoint"));
  run.names.keywords = false;
  EXPECT_TRUE(test::rejected_with([&] { driver::make_setup(run); },
                                  text + ": not an HDF5 file; --restart takes a checkpoint written by --checkpoint"));
}

TEST(Driver, AskingForCudaWithoutAGpuSaysWhy) {
  std::string why;
  if (!gpu::devices(&why).empty()) GTEST_SKIP() << "a GPU is visible here";
  driver::RunConfig run = cpu_run(100);
  run.devices.backend = driver::BackendChoice::cuda;
  EXPECT_TRUE(test::rejected_with([&] { driver::make_setup(run); }, "--backend cuda: "));
  run.devices.backend = driver::BackendChoice::automatic;
  auto const s = driver::make_setup(run);
  EXPECT_EQ(s.config.backend, sim::Backend::cpu);
  ASSERT_EQ(s.notices.size(), 1u);
  EXPECT_NE(s.notices[0].find("running on the CPU"), std::string::npos) << s.notices[0];
  EXPECT_EQ(s.notices[0].find("host devices"), std::string::npos) << s.notices[0];
  // A GPU count given: taken as host devices, and said to be.
  driver::RunConfig three = run;
  three.devices.count = 3;
  auto const t = driver::make_setup(three);
  EXPECT_EQ(t.config.devices.size(), 3u);
  ASSERT_FALSE(t.notices.empty());
  EXPECT_NE(t.notices[0].find("; running on the CPU, --numgpus 3 as 3 host devices (they share this machine's cores)"),
            std::string::npos)
      << t.notices[0];
  // A CUDA kernel named then says why the CPU runs, not only which kernels it has.
  run.devices.engine.kernel = sim::Kernel::fast;
  EXPECT_TRUE(test::rejected_with([&] { driver::make_setup(run); },
                                  "--kernel fast: a CUDA kernel, and there is no CUDA device here (" + why +
                                      "): the CPU backend runs, with simd, reference"));
}

TEST(Driver, MeasuresABenchmark) {
  auto const s = driver::make_setup(cpu_run(512));
  multigpu::Simulation sim(s.bodies, s.program, s.config);
  auto const m = driver::measure(sim, 1, 3);
  EXPECT_EQ(sim.steps_done(), 4u);
  EXPECT_GT(m.median_ms, 0.0);
  EXPECT_LE(m.min_ms, m.median_ms);
  EXPECT_LE(m.median_ms, m.max_ms);
  EXPECT_NEAR(m.interactions_per_s, 512.0 * 512.0 / (m.median_ms * 1e-3), 1e-6 * m.interactions_per_s);
  EXPECT_NEAR(m.gflops, 20e-9 * m.interactions_per_s, 1e-9 * m.gflops);
  ASSERT_EQ(m.device_median_ms.size(), 1u);
}

// Two devices that take turns waiting for each other: each has a long step wherever the other has
// a short one. A step is what the slower of them needs beyond the previous step, so the steps add
// up to the time both took, and the median is the wall clock's, not the longer device's.
TEST(Driver, AStepLastsUntilTheLastDeviceHasFinishedIt) {
  std::vector<std::vector<double>> const turns{{1, 3, 1, 3, 1, 3}, {3, 1, 3, 1, 3, 1}};
  auto const step = driver::slowest_device_steps(turns, 6);
  EXPECT_EQ(step, (std::vector<double>{3, 1, 3, 1, 3, 1}));
  double total = 0;
  for (double t : step) total += t;
  EXPECT_EQ(total, 12.0);
  // One device: its own steps. A device that recorded fewer steps adds nothing after its last.
  EXPECT_EQ(driver::slowest_device_steps({{2, 5, 1}}, 3), (std::vector<double>{2, 5, 1}));
  EXPECT_EQ(driver::slowest_device_steps({{2, 5, 1}, {4}}, 3), (std::vector<double>{4, 3, 1}));
}

TEST(Driver, CountsEveryForceEvaluationOfAStep) {
  driver::RunConfig run = cpu_run(256);
  run.physics.integrator = sim::Integrator::yoshida4;
  auto const s = driver::make_setup(run);
  multigpu::Simulation sim(s.bodies, s.program, s.config);
  auto const m = driver::measure(sim, 0, 2);
  EXPECT_NEAR(m.interactions_per_s, 3 * 256.0 * 256.0 / (m.median_ms * 1e-3), 1e-6 * m.interactions_per_s);
}

driver::RunConfig hermite_run(std::size_t bodies) {
  driver::RunConfig run = cpu_run(bodies);
  run.initial.scenario = sim::Scenario::plummer;
  run.physics.integrator = sim::Integrator::hermite4;
  run.given.integrator = true;
  return run;
}

// hermite4: --steps block steps after the warm-up, timed by the wall clock as one run; the work is what the
// counters of those block steps alone say (a simulation of its own counts them here), the same on any layout.
TEST(Driver, MeasuresHermiteBlockSteps) {
  auto const s = driver::make_setup(hermite_run(512));
  multigpu::Simulation sim(s.bodies, s.program, s.config);
  auto const m = driver::measure(sim, 2, 40);
  ASSERT_TRUE(m.blocks.has_value());
  driver::BlockMeasurement const& b = *m.blocks;
  EXPECT_EQ(sim.steps_done(), 42u);
  EXPECT_EQ(b.block_steps, 40u);

  multigpu::Simulation counted(s.bodies, s.program, s.config);
  counted.advance(2);
  auto const before = counted.hermite_counters();
  double const start = counted.time();
  counted.advance(40);
  auto const after = counted.hermite_counters();
  EXPECT_EQ(b.force_evaluations, after.force_evaluations - before.force_evaluations);
  EXPECT_EQ(b.interactions, after.interactions - before.interactions);
  EXPECT_EQ(b.interactions, b.force_evaluations * 512) << "every active body against all N";
  EXPECT_EQ(b.start_time, start);
  EXPECT_EQ(b.end_time, counted.time());
  std::uint64_t histogram = 0;
  for (auto k : b.step_level_histogram) histogram += k;
  EXPECT_EQ(histogram, b.force_evaluations);
  EXPECT_DOUBLE_EQ(b.mean_active, double(b.force_evaluations) / 40.0);
  ASSERT_GT(b.wall_seconds, 0.0);
  EXPECT_DOUBLE_EQ(b.interactions_per_second, double(b.interactions) / b.wall_seconds);
  EXPECT_DOUBLE_EQ(b.block_steps_per_second, 40.0 / b.wall_seconds);
  EXPECT_DOUBLE_EQ(b.time_per_second, (b.end_time - b.start_time) / b.wall_seconds);
  EXPECT_DOUBLE_EQ(m.wall_mean_ms, 1e3 * b.wall_seconds / 40.0);
  EXPECT_EQ(m.median_ms, 0.0) << "no per-step device time to take a median of";
  EXPECT_TRUE(m.device_median_ms.empty());

  multigpu::SimulationConfig two = s.config;
  two.devices = {0, 0};
  two.threading = multigpu::Threading::workers;
  multigpu::Simulation spread(s.bodies, s.program, two);
  auto const m2 = driver::measure(spread, 2, 40);
  ASSERT_TRUE(m2.blocks.has_value());
  EXPECT_EQ(m2.blocks->state_hash, b.state_hash) << "2 devices end in another state";
  EXPECT_EQ(m2.blocks->interactions, b.interactions);

  auto const j = driver::benchmark_json(m, sim, "plummer", sim::Units{}, 2, 40);
  EXPECT_EQ(j.at("hermite4").at("block_steps").get<std::uint64_t>(), 40u);
  EXPECT_EQ(j.at("hermite4").at("interactions").get<std::uint64_t>(), b.interactions);
  EXPECT_EQ(j.at("interactions_per_second").get<double>(), driver::measured(b.interactions_per_second));
  EXPECT_FALSE(j.contains("median_step_ms"));
  // Other integrators keep their keys, and get no hermite4 object.
  auto const l = driver::make_setup(cpu_run(64));
  multigpu::Simulation leapfrog(l.bodies, l.program, l.config);
  auto const lj = driver::benchmark_json(driver::measure(leapfrog, 0, 1), leapfrog, "plummer", sim::Units{}, 0, 1);
  EXPECT_TRUE(lj.contains("median_step_ms"));
  EXPECT_FALSE(lj.contains("hermite4"));
}

// hermite4's comparison: a row per model and device count, each ending in the first row's state, bit for bit.
TEST(Driver, ComparesHermiteLayoutsBitForBit) {
  driver::RunConfig run = hermite_run(0);
  run.devices.count = 2;
  auto const rows = driver::compare_threading(run, {300}, 1, 20);
  ASSERT_EQ(rows.size(), 2u * 2u);  // models x {1, 2} devices, no graph rows
  EXPECT_EQ(rows[0].speedup, 1.0);
  for (auto const& r : rows) {
    ASSERT_TRUE(r.measurement.blocks.has_value());
    EXPECT_EQ(r.measurement.blocks->block_steps, 20u);
    EXPECT_EQ(r.measurement.blocks->state_hash, rows[0].measurement.blocks->state_hash);
    EXPECT_TRUE(r.agrees);
    EXPECT_GT(r.speedup, 0.0);
  }
}

// A row whose end state differs is caught: hermite4's against its size's first row, fixed steps' against the first
// that made as many steps (a graph row, whose capture made more, against none before it: nothing to say).
TEST(Driver, ComparisonCatchesARowThatDiffers) {
  auto fixed = [](std::uint64_t steps, std::uint64_t hash) {
    driver::ComparisonRow r{};
    r.measurement.steps_made = steps;
    r.measurement.state_hash = hash;
    return r;
  };
  std::vector<driver::ComparisonRow> rows{fixed(99, 0xdead), fixed(10, 1), fixed(12, 2)};  // rows[0]: another size
  driver::ComparisonRow same = fixed(10, 1), differs = fixed(10, 3), graph = fixed(14, 1), later = fixed(12, 5);
  for (auto* r : {&same, &differs, &graph, &later}) driver::compare_with_earlier(rows, 1, *r);
  EXPECT_TRUE(same.compared && same.agrees);
  EXPECT_TRUE(differs.compared);
  EXPECT_FALSE(differs.agrees);
  EXPECT_FALSE(graph.compared);
  EXPECT_TRUE(graph.agrees);
  EXPECT_TRUE(later.compared);  // against the row of 12 steps, not the first
  EXPECT_FALSE(later.agrees);

  auto blocks = [](std::uint64_t hash) {
    driver::ComparisonRow r{};
    r.measurement.blocks = driver::BlockMeasurement{};
    r.measurement.blocks->state_hash = hash;
    return r;
  };
  std::vector<driver::ComparisonRow> block_rows{blocks(7), blocks(8)};
  driver::ComparisonRow first = blocks(9), off = blocks(8), on = blocks(7);
  driver::compare_with_earlier(block_rows, 2, first);  // its size's first row: nothing before it
  EXPECT_FALSE(first.compared);
  driver::compare_with_earlier(block_rows, 0, off);  // against the first row, not the one it happens to equal
  EXPECT_TRUE(off.compared);
  EXPECT_FALSE(off.agrees);
  driver::compare_with_earlier(block_rows, 0, on);
  EXPECT_TRUE(on.compared && on.agrees);
}

TEST(Driver, ValidatesAndCanFail) {
  for (auto precision : {Precision::fp32, Precision::fp64}) {
    driver::RunConfig run = cpu_run(700);
    run.devices.engine.precision = precision;
    auto const s = driver::make_setup(run);
    multigpu::Simulation sim(s.bodies, s.program, s.config);
    auto const r = driver::validate_forces(sim);
    EXPECT_TRUE(r.pass) << name_of(precision) << ": L2 " << r.l2_relative_error;
    EXPECT_EQ(r.samples, 700u);
    EXPECT_EQ(r.tolerance, sim::force_error_bound(precision, 700));
    if (precision == Precision::fp32) {
      EXPECT_GT(r.l2_relative_error, 0.0) << "fp32 identical to the fp64 reference: not what ran";
      // Negative control: fp32 cannot meet the fp64 bound.
      EXPECT_FALSE(driver::validate_forces(sim, 1e-12).pass);
    }
  }
}

// hermite4's bodies are each at their own time: --validate after block steps compares the forces of the synchronised
// state (what state() gives) with the reference's there, on one device and on two.
TEST(Driver, ValidatesHermiteAfterBlockSteps) {
  for (int devices : {1, 2}) {
    driver::RunConfig run = hermite_run(256);
    run.devices.engine.precision = Precision::fp64;
    run.devices.count = devices;
    auto const s = driver::make_setup(run);
    multigpu::Simulation sim(s.bodies, s.program, s.config);
    driver::advance_interruptibly(sim, 5);
    ASSERT_GT(sim.time(), 0.0);
    auto const r = driver::validate_forces(sim);
    EXPECT_TRUE(r.pass) << devices << " device(s): L2 " << r.l2_relative_error;
    EXPECT_LT(r.l2_relative_error, 1e-14) << devices << " device(s)";
  }
}

// hermite4's memory is checked before its bodies are made, as the fixed steps' is: each body's derivatives, times,
// active lists and sums take about 650 bytes on the CPU (the check counts about 910 with a checkpoint's write), where a
// fixed-step body takes about 300 (memory_tests measures both). At a count between the two (1/500 of this machine's
// free memory) a fixed-step run fits and hermite4 is refused, naming the count.
// (Before, hermite4 was checked as a fixed-step run: it passed, and the allocations ran the machine out of memory.)
TEST(Driver, Hermite4sMemoryIsCheckedBeforeItsBodiesAreMade) {
  std::size_t const have = driver::available_host_memory();
  if (have == 0) GTEST_SKIP() << "this machine says nothing of its free memory";
  std::size_t const n = have / 500;
  EXPECT_NO_THROW(driver::resolve_devices(cpu_run(n), n));
  for (int devices : {1, 2}) {
    driver::RunConfig run = hermite_run(n);
    run.devices.count = devices;
    try {
      driver::resolve_devices(run, n);
      ADD_FAILURE() << n << " bodies of hermite4 on " << devices << " host device(s) passed the memory check";
    } catch (const InputError& e) {
      std::string const message = e.what();
      EXPECT_EQ(message.rfind("--bodies " + std::to_string(n) + ": needs ", 0), 0u) << message;
      EXPECT_NE(message.find("MiB of memory on " + std::to_string(devices) + " host device(s)"), std::string::npos)
          << message;
    }
  }
}

TEST(Driver, ComparesThreadingModelsOverDeviceCountsAndSizes) {
  driver::RunConfig run = cpu_run(0);
  run.devices.count = 2;
  std::size_t seen = 0;
  auto const rows = driver::compare_threading(run, {200, 301}, 0, 1, [&](const driver::ComparisonRow&) { ++seen; });
  ASSERT_EQ(rows.size(), 2u * 2u * 2u);  // sizes x models x {1, 2} devices
  EXPECT_EQ(seen, rows.size());
  EXPECT_EQ(rows[0].devices, 1);
  EXPECT_EQ(rows[0].speedup, 1.0);
  EXPECT_EQ(rows[1].devices, 2);
  EXPECT_EQ(rows[2].model, multigpu::Threading::workers);
  EXPECT_EQ(rows[4].bodies, 301u);
}

TEST(Driver, ForceErrorBoundIsOneFunction) {
  EXPECT_EQ(sim::force_error_bound(Precision::fp64, 1 << 20), 1e-12);
  EXPECT_EQ(sim::force_error_bound(Precision::fp32, 1000), 1e-5);
  EXPECT_EQ(sim::force_error_bound(Precision::fp32, 4096), 1e-5);
  EXPECT_DOUBLE_EQ(sim::force_error_bound(Precision::fp32, 65536), 4e-5);
}

// A lower dt max cuts each body's step to the new longest, or, for a body whose time is far behind the block time (a
// state between the times every body shares), to the shortest power of two above that which still ends after the
// block time: every step a multiple of... its time, and every next time after the block time (state_problem's rule).
TEST(Driver, ALowerDtMaxCutsTheStepsThatCanEndAfterTheBlockTime) {
  sim::hermite::HermiteState state;
  state.resize(3);
  state.time = {0.0, 11.0 / 256, 1.0 / 32};   // the block time: 11/256 = 0.04296875
  state.step = {0.25, 1.0 / 256, 1.0 / 32};  // due at 0.25, 0.046875 and 0.0625
  state.position.assign(3, Vec3d{});
  state.velocity.assign(3, Vec3d{});
  auto cut = [&](double dt_max) {
    driver::Setup s;
    s.bodies.resize(3);
    sim::IntegratorParams p;
    p.integrator = sim::Integrator::hermite4;
    p.hermite.dt_max = dt_max;
    s.program = sim::make_step_program(p);
    driver::continue_hermite(s, state);
    EXPECT_EQ(sim::hermite::state_problem(s.hermite, 3, "the cut state"), "") << dt_max;
    return s.hermite.step;
  };
  EXPECT_EQ(cut(0.25), state.step) << "a dt max no step exceeds cuts none";
  EXPECT_EQ(cut(1.0 / 16), (std::vector<double>{1.0 / 16, 1.0 / 256, 1.0 / 32}));
  EXPECT_EQ(cut(1.0 / 32), (std::vector<double>{1.0 / 16, 1.0 / 256, 1.0 / 32}));  // 0 + 1/32 is past: 1/16
  EXPECT_EQ(cut(1.0 / 1024), (std::vector<double>{1.0 / 16, 1.0 / 1024, 1.0 / 64}));
  state.time = {0.5, 0.5, 0.5};  // a time every body shares: every step is cut to the longest
  EXPECT_EQ(cut(1.0 / 64), (std::vector<double>{1.0 / 64, 1.0 / 256, 1.0 / 64}));
}

// A lower dt max taken up between the times every body shares (a restart from a --steps checkpoint) leaves a body far
// into a longer step on it until that step ends. A run to a multiple of the new longest step before then ends with
// every body there, corrected (not that body only predicted there: the block time alone said "every body is at it"),
// and with every step at most the longest, as a restart from that state would have them.
TEST(Driver, ARunToATimeAfterALowerDtMaxEndsWithEveryBodyThere) {
  test::TestDir const dir("nbody-driver-lower-dt-max");
  driver::RunConfig run = hermite_run(256);
  run.physics.hermite.dt_max = 0.25;
  run.given.dt_max = true;
  driver::Setup const start = driver::make_setup(run);
  multigpu::Simulation first(start.bodies, start.program, start.config, start.clock);
  first.advance(37);
  std::string const path = dir.file("blocks.h5");
  driver::write_checkpoint(path, start, first, std::nullopt);

  double const lower = 1.0 / 1024;
  driver::RunConfig restart = hermite_run(0);
  restart.initial.checkpoint = path;
  restart.physics.hermite.dt_max = lower;
  restart.given.dt_max = true;
  driver::Setup const s = driver::make_setup(restart);
  double const block = s.hermite.block_time();
  double const limit = (std::floor(block / lower) + 1.0) * lower;  // the next multiple of the longest step
  double long_end = 0.0;
  for (std::size_t i = 0; i < s.hermite.size(); ++i)
    if (s.hermite.step[i] > lower) long_end = std::max(long_end, s.hermite.time[i] + s.hermite.step[i]);
  ASSERT_GT(long_end, limit) << "no longer step outlasts the next multiple of the longest step (block time " << block
                             << ")";

  multigpu::Simulation sim(s.bodies, s.program, s.config, s.clock, &s.hermite);
  EXPECT_EQ(sim.long_steps_end(), long_end);
  sim.set_time_limit(s.hermite.epoch + limit, true);
  sim.advance(std::uint64_t(1) << 40);
  ASSERT_EQ(sim.time(), s.hermite.epoch + limit);
  sim::BodySet own;
  sim::hermite::HermiteState after;
  sim.hermite_state(own, after);
  for (std::size_t i = 0; i < after.size(); ++i) {
    ASSERT_EQ(after.epoch + after.time[i], s.hermite.epoch + limit)
        << "body " << i << " (step " << s.hermite.step[i] << ") is not at the run's end";
    ASSERT_LE(after.step[i], lower) << "body " << i;
  }
  EXPECT_EQ(sim.long_steps_end(), 0.0);
}

// steps_to_time stops at the first step whose clock time is at or past t_end to rounding (driver::reach_of: four units
// in the last place), never one later: with times that decimal dt cannot hit exactly, and after a change of dt (the
// clock counts from it). 30 steps of 0.03 reach 0.9, though 30 x 0.03 is 0.8999999999999999: not 31, a whole dt late.
TEST(Driver, StepsToATimeStopAtTheFirstStepAtOrPastIt) {
  for (double dt : {0.01, 0.1, 1.0 / 3.0, 0.003, 0.03, 0.009}) {
    multigpu::RunClock const clock(0, 0.0);
    for (double t_end : {0.0, 0.05, 0.1, 0.3, 0.33, 0.9, 1.0, 2.7, 10.0, 27.0}) {
      std::uint64_t const k = driver::steps_to_time(clock, dt, t_end);
      auto time_after = [&](std::uint64_t n) { return multigpu::RunClock(n, 0.0).time(dt); };
      EXPECT_GE(time_after(k), driver::reach_of(t_end)) << dt << " " << t_end;
      if (k > 0) {
        EXPECT_LT(time_after(k - 1), driver::reach_of(t_end)) << dt << " " << t_end;
        EXPECT_LT(time_after(k - 1), t_end) << dt << " " << t_end;
      }
    }
  }
  EXPECT_EQ(driver::steps_to_time(multigpu::RunClock(0, 0.0), 0.03, 0.9), 30u);
  EXPECT_EQ(driver::steps_to_time(multigpu::RunClock(0, 0.0), 0.03, 0.33), 11u);
  EXPECT_EQ(driver::steps_to_time(multigpu::RunClock(0, 0.0), 0.009, 27.0), 3000u);
  EXPECT_EQ(driver::steps_to_time(multigpu::RunClock(0, 0.0), 0.1, 0.3), 3u);  // 0.30000000000000004: past it
  // 40 steps of 0.01, then dt 0.02 from time 0.4: to time 1 is 30 steps more.
  multigpu::RunClock const changed = multigpu::RunClock(40, 0.0).with_new_dt(0.01);
  EXPECT_EQ(driver::steps_to_time(changed, 0.02, 1.0), 30u);
  EXPECT_EQ(driver::steps_to_time(changed, 0.02, 0.1), 0u);  // already past
  EXPECT_TRUE(test::rejected_with([&] { driver::steps_to_time(changed, 0.02, 1e30); }, "--t-end 1e+30: more than"));
}

// A signal that arrives while the run is at a sample's step (its O(N^2) pass stops at a signal on
// the CPU) ends the run as one between steps does: the outputs are written, and the result says so.
TEST(Driver, ASignalAtASampleStillWritesTheRunsOutputs) {
  struct InterruptAfterAChunk : driver::RunObserver {
    void progress(std::uint64_t, std::uint64_t, double) override { request_interrupt(SIGINT); }
  } observer;
  test::TestDir const dir("nbody-driver-run");
  driver::Setup setup = driver::make_setup(cpu_run(256));
  multigpu::Simulation sim(setup.bodies, setup.program, setup.config, setup.clock);
  driver::RunOutputs o;
  o.diagnostics = (dir / "d.csv").string();
  o.diagnostics_every = 1;
  if (sim::checkpoints_built()) o.checkpoint = (dir / "stop.h5").string();
  driver::RunResult r;
  try {
    r = driver::run(setup, sim, o, 1000, observer);
  } catch (const Interrupted& e) {
    ADD_FAILURE() << "the run ended without its outputs: " << e.what();
  }
  clear_interrupt();
  EXPECT_EQ(r.stopped_by, SIGINT);
  EXPECT_GE(r.steps, 1u);
  EXPECT_LT(r.steps, 1000u);
  EXPECT_TRUE(std::filesystem::exists(o.diagnostics));
  if (!o.checkpoint.empty()) {
    EXPECT_TRUE(std::filesystem::exists(o.checkpoint));
  }
}

// A signal that arrives in the chunk that ends at a step where a sample, a snapshot and a periodic checkpoint are all
// due stops the run at the sample's start: the snapshot and the checkpoint of that step are written first, as the
// run never stopped writes them (a restart from there writes neither again). And a signal that arrives during the
// last chunk stops nothing the run had left to do: its end snapshot is written.
TEST(Driver, ASignalWritesTheFilesDueAtItsStepAndARunThatMadeEveryStepItsEnd) {
  if (!sim::checkpoints_built()) GTEST_SKIP() << "built without HDF5";
  struct InterruptAt : driver::RunObserver {
    std::function<bool(std::uint64_t)> when;
    void progress(std::uint64_t done, std::uint64_t, double) override {
      if (when(done)) request_interrupt(SIGINT);
    }
  } observer;
  test::TestDir const dir("nbody-driver-stop");
  auto names = [&](const std::string& folder) {
    std::vector<std::string> found;
    for (auto const& e : std::filesystem::directory_iterator(dir / folder)) found.push_back(e.path().filename().string());
    std::sort(found.begin(), found.end());
    return found;
  };
  for (bool const at_end : {false, true}) {
    std::string const folder = at_end ? "end" : "sample";
    std::filesystem::create_directories(dir / folder);
    observer.when = [&](std::uint64_t done) { return at_end ? done == 20 : done >= 10 && done % 5 == 0; };
    driver::Setup setup = driver::make_setup(cpu_run(256));
    multigpu::Simulation sim(setup.bodies, setup.program, setup.config, setup.clock);
    driver::RunOutputs o;
    o.diagnostics = (dir / folder / "d.csv").string();
    o.diagnostics_every = 5;
    o.checkpoint = (dir / folder / "c.h5").string();
    o.checkpoint_every = 5;
    o.snapshots.base = (dir / folder / "s").string();
    o.snapshots.every = 5;
    driver::RunResult r;
    try {
      r = driver::run(setup, sim, o, 20, observer);
    } catch (const Interrupted& e) {
      ADD_FAILURE() << "the run ended without its outputs: " << e.what();
    }
    clear_interrupt();
    EXPECT_EQ(r.stopped_by, SIGINT) << folder;
    auto named = [](const char* prefix, std::uint64_t step, const char* ending) {
      char text[32];
      std::snprintf(text, sizeof text, "%s_%08llu%s", prefix, static_cast<unsigned long long>(step), ending);
      return std::string(text);
    };
    if (at_end) {
      EXPECT_EQ(r.steps, 20u);
    }
    EXPECT_GE(r.steps, 10u) << folder;
    std::vector<std::string> want{"c.h5"};
    for (std::uint64_t step = 0; step <= r.steps; step += 5) {
      want.push_back(named("s", step, ".hdf5"));
      if (step > 0) want.push_back(named("c", step, ".h5"));
    }
    std::sort(want.begin(), want.end());
    std::vector<std::string> got = names(folder);
    got.erase(std::remove_if(got.begin(), got.end(), [](const std::string& n) { return n[0] == '.' || n[0] == 'd'; }),
              got.end());  // (the lock files, and the diagnostics series: another test's)
    EXPECT_EQ(got, want) << folder << ": stopped after " << r.steps << " steps";
  }
}

}  // namespace
}  // namespace nbody
