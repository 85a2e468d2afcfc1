// tests/test_cli.cpp - the nbody executable as a user meets it: bad input, outputs, Ctrl-C.
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "app/progress.h"
#include "sim/io/checkpoint.h"
#include "sim/io/tipsy.h"
#include "test_support.h"

namespace nbody {
namespace {

namespace fs = std::filesystem;

struct Result {
  int code;
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Waits at most `limit` for the child `pid` to end, with its status in `status`; false if it had not, and it is then
// killed (a test that fails is not left waiting, nor leaves a process behind).
bool ended_within(pid_t pid, std::chrono::seconds limit, int& status) {
  auto const deadline = std::chrono::steady_clock::now() + limit;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::fresh_test_dir("nbody-cli");
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs nbody with `args` (forced onto the CPU so the test means the same everywhere).
  Result nbody(const std::string& args, bool cpu = true) {
    std::string const cmd = std::string(NBODY_EXECUTABLE) + (cpu ? " --backend cpu " : " ") + args + " >" +
                            (dir_ / "out").string() + " 2>" + (dir_ / "err").string() + " </dev/null";
    int const status = std::system(cmd.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(dir_ / "out"), slurp(dir_ / "err")};
  }
  std::string file(const std::string& name) const { return (dir_ / name).string(); }

  void expect_input_error(const std::string& args, const std::string& message, bool cpu = true) {
    Result const r = nbody(args, cpu);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.err;
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << args << ": " << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line: " << r.err;
  }

  fs::path dir_;
};

TEST_F(Cli, BadCountsAreRejected) {
  expect_input_error("--bodies 0", "--bodies 0: must be a whole number from 1");
  expect_input_error("--bodies abc", "--bodies abc: must be a whole number");
  expect_input_error("--bodies 12x", "--bodies 12x");
  expect_input_error("--bodies 100 --bodies 200", "--bodies given 2 times; give it once");
  expect_input_error("--run --run", "--run given 2 times; give it once");  // a flag as an option with a value
  expect_input_error("-q --run --quiet", "--quiet given 2 times; give it once");
  // An option whose value is missing says what the value is, from its help (a mode's and the viewer's options too),
  // cut at no bracket ("in (0, 1]" whole), with an enumeration's values.
  expect_input_error("--serve", "--serve needs a value: the viewer in a web browser: serve it at [HOST:]PORT (a port");
  expect_input_error("--run --dt", "--dt needs a value: time step (default 0.01; 0.016 for euler-damped; or in a time "
                                   "unit: 1kyr) (see --help)");
  expect_input_error("--damping", "--damping needs a value: euler-damped velocity factor per step, in (0, 1] (see");
  expect_input_error("--precision", "--precision needs a value: floating-point precision, one of fp32|fp64 (see");
  expect_input_error("--bodies=-5", "--bodies -5: must be a whole number");
  expect_input_error("--bodies 100,200 --benchmark", "only for --compare-threading");
  expect_input_error("--steps 0 --benchmark", "--steps 0: only --run (to write the initial state");
  expect_input_error("--steps abc --run", "--steps");
  expect_input_error("--numgpus 0", "--numgpus 0: must be a whole number from 1 to 256");
  expect_input_error("--threads 0", "--threads 0: must be a whole number from 1 to 1024");
  // A misspelt option is named, with the one meant; a value no option takes is named as a value.
  expect_input_error("--run --step 10", "--step: no such option; did you mean --steps? (see --help)");
  expect_input_error("--run --xyzzy", "--xyzzy: no such option (see --help)");
  expect_input_error("--run 10", "'10': not expected after --run, which takes no value");
  expect_input_error("--run --steps 10 20", "'20': not expected (a value follows its option's name");
  expect_input_error("--run -n 100 --steps 1 extra", "'extra': not expected (a value follows its option's name");
  expect_input_error("--run -x", "-x: no such option (see --help)");
}

// Two modes at once: the ones given are named, not the whole list of modes.
// Every option that takes a value, given without it: one line that says what the value is, its brackets closed.
TEST_F(Cli, EveryOptionWithoutItsValueSaysWhatItIs) {
  std::string const help = nbody("--help").out;
  std::regex const takes_value(R"(^ +(?:-\w,)?(--[a-z0-9-]+) (?:TEXT|FLOAT|INT|UINT|ENUM))");
  int options = 0;
  std::istringstream lines(help);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (!std::regex_search(line, m, takes_value)) continue;
    std::string const option = m[1].str();
    Result const r = nbody(option);
    EXPECT_EQ(r.code, 2) << option << ": " << r.err;
    EXPECT_EQ(r.err.rfind("error: " + option + " needs a value: ", 0), 0u) << r.err;
    int depth = 0, lowest = 0;
    for (char c : r.err) {
      depth += (c == '(' || c == '[') - (c == ')' || c == ']');
      lowest = std::min(lowest, depth);
    }
    EXPECT_TRUE(depth == 0 && lowest == 0) << "brackets: " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    ++options;
  }
  EXPECT_GT(options, 40);
}

TEST_F(Cli, TwoModesAreRefusedNamingThem) {
  expect_input_error("--serve 0 --run --bodies 16", "error: --serve and --run both given; these are modes, and only "
                                                    "one mode may be given\n");
  expect_input_error("--run --benchmark --devices", "error: --run, --benchmark and --devices given; these are modes");
}

// --offscreen shows nothing on a screen: it needs something to write, or --frames to time the renderer.
TEST_F(Cli, OffscreenWithNothingToWriteIsRefused) {
  expect_input_error("--offscreen --bodies 64", "--offscreen draws without a window and would show nothing");
}

TEST_F(Cli, BadNamesListTheValidOnes) {
  expect_input_error("--scenario nope --run", "--scenario nope: valid: plummer, random-sphere, disk, collision, two-body");
  expect_input_error("--integrator leapfrg --run", "--integrator leapfrg: valid: leapfrog, yoshida4, omelyan4, euler-damped, hermite4");
  expect_input_error("--precision fp16 --run", "--precision fp16: valid: fp32, fp64");
  expect_input_error("--backend tpu --run", "--backend tpu: valid: auto, cuda, cpu", false);
  expect_input_error("--threading fancy --run --bodies 10", "--threading fancy: valid: single, workers");
  expect_input_error("--exchange carrier-pigeon --run --bodies 10", "--exchange carrier-pigeon: valid: auto, peer, staged, direct");
  expect_input_error("--kernel fastest --run --bodies 10", "--kernel fastest: valid: fast, tiled, naive, simd, reference");
  expect_input_error("--kernel tiled --run --bodies 10", "--kernel tiled: the cpu backend has simd, reference");
  expect_input_error("--backend cpu --block-size 128 --run --bodies 10",
                     "--block-size 128 applies to the CUDA backend's naive and tiled kernels; the CPU backend has no "
                     "thread blocks", false);
  expect_input_error("--backend cpu --exchange peer --run --bodies 10",
                     "--exchange peer applies to the CUDA backend (how GPUs pass positions); host devices share the "
                     "host's memory", false);
  expect_input_error("--fp64-rsqrt exact --run --bodies 10", "--fp64-rsqrt exact: valid: series, newton, precise");
  expect_input_error("--backend cpu --fp64-rsqrt newton --precision fp64 --run --bodies 10",
                     "--fp64-rsqrt newton applies to the CUDA backend's fp64 kernels; the CPU backend takes r^-3 its "
                     "own way", false);
  expect_input_error("--integrator hermite4 --fp64-rsqrt precise --run --bodies 10",
                     "--fp64-rsqrt precise: hermite4's fp64 pair has its own r^-1; leave --fp64-rsqrt out");
  expect_input_error("--integrator hermite4 --block-size 128 --run --bodies 10",
                     "--block-size 128: hermite4 has its own force+jerk kernels and launch shapes; leave --block-size "
                     "out");
  expect_input_error("--save-format middle-endian --run", "--save-format middle-endian: valid: standard, little-endian");
  expect_input_error("--color rainbow --viewer", "--color rainbow: valid: speed, type, device");
  expect_input_error("--interop maybe --viewer", "--interop maybe: valid: auto, on, off");
}

// The viewer's presentation options: a colour map by name, a colour range as MIN:MAX, a HUD mode;
// each bad value in one line naming it, before any window opens (--offscreen would otherwise draw).
TEST_F(Cli, BadColourMapsRangesAndHudModesAreRefused) {
  expect_input_error("--colormap jet --viewer", "--colormap jet: valid: viridis, inferno, magma, plasma, classic");
  expect_input_error("--hud some --viewer", "--hud some: valid: full, minimal, none");
  expect_input_error("--hud full --no-hud --viewer", "--no-hud and --hud full both given");
  expect_input_error("--color-range 2 --viewer", "--color-range 2: no ':' between MIN and MAX");
  expect_input_error("--color-range 2:1 --viewer", "--color-range 2:1: MIN must be below MAX");
  expect_input_error("--color-range 1:1 --viewer", "--color-range 1:1: MIN must be below MAX");
  expect_input_error("--color-range -1:2 --viewer", "--color-range -1:2: each must be a speed in [0, 1e+12]");
  expect_input_error("--color-range a:1 --viewer", "--color-range a:1: 'a' is not a number");
  expect_input_error("--color-range 0:nan --viewer", "--color-range 0:nan: each must be a speed in [0, 1e+12]");
  expect_input_error("--color-range nan:1 --viewer", "--color-range nan:1: each must be a speed in [0, 1e+12]");
  expect_input_error("--color-range 0:1e999 --viewer", "--color-range 0:1e999: '1e999' is not a number");
  expect_input_error("--color-range : --viewer", "--color-range :: '' is not a number");
  expect_input_error("--colormap magma --run", "--colormap does nothing with --run; it belongs to the viewer");
  expect_input_error("--trails --benchmark", "--trails does nothing with --benchmark; it belongs to the viewer");
  expect_input_error("--video-fps 60 --viewer", "--video-fps does nothing without --video FILE.mp4");
  expect_input_error("--video-hud --offscreen --frames 2", "--video-hud does nothing without --video FILE.mp4");
  // --interop on beside a run that cannot share its positions with GL: bad input, said before anything starts.
  // (Not forced onto the CPU: --backend cpu is what the first one is refused for.)
  expect_input_error("--viewer --backend cpu --interop on",
                     "--interop on: CUDA-GL interop needs a CUDA run, not --backend cpu; leave --interop out (auto)",
                     false);
  expect_input_error("--serve 0 --precision fp64 --interop on",
                     "--interop on: CUDA-GL interop shares fp32 positions, not --precision fp64", false);
  expect_input_error("--offscreen --integrator hermite4 --interop on --screenshot " + file("h.png"),
                     "--interop on: CUDA-GL interop shares fp32 positions, and hermite4 keeps them in fp64", false);
  // Offscreen, no key brings a HUD back or presses for a picture.
  expect_input_error("--offscreen --no-hud --video-hud --video " + file("y.mp4"),
                     "--video-hud does nothing with --offscreen and --no-hud: there is no HUD to show");
  expect_input_error("--offscreen --hud none --video-hud --video " + file("y.mp4"),
                     "--video-hud does nothing with --offscreen and --hud none");
  expect_input_error("--offscreen --screenshot-dir " + dir_.string() + " --screenshot " + file("a.png"),
                     "--screenshot-dir does nothing with --offscreen: it is where the viewer's keys write");
  EXPECT_FALSE(fs::exists(file("y.mp4")) || fs::exists(file("a.png")));
}

TEST_F(Cli, BadPhysicsValuesAreRejected) {
  expect_input_error("--softening 0 --run", "--softening 0: must be a length in (0, 1e+12]");
  expect_input_error("--dt -1 --run", "--dt -1: must be a time step in (0, 1e+12]");
  expect_input_error("--integrator euler-damped --damping 2 --run", "--damping 2: must be a factor in (0, 1]");
  expect_input_error("--scenario two-body --bodies 5 --run", "two-body scenario has exactly 2 bodies");
  expect_input_error("--scenario two-body --eccentricity 1.2 --run", "--eccentricity 1.2: must be a number in [0, 1)");
  // Options that would do nothing.
  expect_input_error("--damping 0.5 --run", "--damping 0.5: leapfrog does not damp velocities");
  expect_input_error("--save-format little-endian --run", "--save-format little-endian: give --save FILE too");
}

TEST_F(Cli, BadFilesAndDevicesAreRejected) {
  expect_input_error("--load " + file("missing.bin") + " --run", "--load " + file("missing.bin") + ": no such file");
  std::ofstream(file("junk.bin")) << "definitely not a snapshot, but long enough for a header";
  expect_input_error("--load " + file("junk.bin") + " --run", "junk.bin: not a tipsy file");
  expect_input_error("--load " + file("junk.bin") + " --scenario disk --run", "--load and --scenario both given");
  expect_input_error("--gpus 0 --run", "--gpus applies to the CUDA backend");
  expect_input_error("--numgpus 3 --weights 1,2 --run --bodies 10", "--weights: 2 weights for 3 devices");
  expect_input_error("--weights 1,x --run", "--weights 1,x: 'x' is not a positive number");
  // Every host device holds all positions: 64 x 2^30 bodies is more memory than any machine has.
  expect_input_error("--bodies 1073741824 --numgpus 64 --run", "MiB of memory on 64 host device(s)");
  expect_input_error("--viewer --benchmark", "");  // two modes
}

// More threads than cores take turns on them, many times slower: said so. One a core is not.
TEST_F(Cli, MoreThreadsThanCoresAreSaid) {
  cpu_set_t usable;
  ASSERT_EQ(::sched_getaffinity(0, sizeof usable, &usable), 0);
  int const cores = CPU_COUNT(&usable);  // as OpenMP counts them
  Result const crowded = nbody("--backend cpu --run --bodies 16 --steps 1 --threads " + std::to_string(cores + 1), false);
  EXPECT_EQ(crowded.code, 0) << crowded.err;
  EXPECT_NE(crowded.err.find("notice: --threads " + std::to_string(cores + 1) + ": " + std::to_string(cores + 1) +
                             " threads on the " + std::to_string(cores) + (cores == 1 ? " core" : " cores")),
            std::string::npos)
      << crowded.err;
  Result const one_a_core = nbody("--backend cpu --run --bodies 16 --steps 1 --threads " + std::to_string(cores), false);
  EXPECT_EQ(one_a_core.err.find("take turns"), std::string::npos) << one_a_core.err;
  // Worker threads give each host device a team of at least one: more devices than cores crowd them too, and the
  // threads given are shared among the devices, not multiplied.
  std::string const devices = std::to_string(cores + 1);
  Result const workers = nbody("--backend cpu --run --bodies 16 --steps 1 --threading workers --numgpus " + devices, false);
  EXPECT_NE(workers.err.find("notice: " + devices + " host devices on worker threads: " + devices + " threads on the " +
                             std::to_string(cores)),
            std::string::npos)
      << workers.err;
  EXPECT_NE(workers.err.find("give at most " + std::to_string(cores) + " host devices, or --threading single"),
            std::string::npos)
      << workers.err;
  Result const shared = nbody("--backend cpu --run --bodies 16 --steps 1 --threading workers --numgpus 2 --threads " +
                                  std::to_string(std::max(2, cores) + 1),
                              false);
  if (cores >= 2) {
    EXPECT_EQ(shared.err.find("take turns"), std::string::npos) << shared.err;
  }
}

TEST_F(Cli, CudaBackendWithoutGpuSaysSo) {
  Result const r = nbody("--devices", false);
  EXPECT_EQ(r.code, 0);
  if (r.out.find("no CUDA devices") == std::string::npos) GTEST_SKIP() << "a GPU is visible here";
  // A machine with the toolkit but no GPU says there is no device; a build without CUDA says so.
  expect_input_error("--backend cuda --run --bodies 10", "--backend cuda: ", false);
  Result const why = nbody("--backend cuda --run --bodies 10", false);
  EXPECT_TRUE(why.err.find("no usable CUDA device") != std::string::npos ||
              why.err.find("this nbody was built without CUDA") != std::string::npos)
      << why.err;
  Result const fallback = nbody("--run --bodies 16 --steps 1", false);
  EXPECT_EQ(fallback.code, 0) << fallback.err;
  EXPECT_NE(fallback.err.find("notice: no CUDA device"), std::string::npos) << fallback.err;
  // --interop on, which needs the run on a GPU: refused before a window or an address.
  for (std::string const& mode : {"--offscreen --screenshot " + file("i.png"), std::string("--serve 0")}) {
    if (nbody(mode + " --interop on --bodies 64", false).err.find("this nbody was built without") != std::string::npos)
      continue;  // no viewer in this build: refused for that first
    expect_input_error(mode + " --interop on --bodies 64",
                       "--interop on: CUDA-GL interop needs a CUDA GPU, and this run is on the CPU: ", false);
  }
}

// --fp64-rsqrt chooses the CUDA fp64 kernels' r^-1: on an fp32 run it does nothing now, and is said (the viewer and
// Python may switch to fp64 later, so it is not refused).
TEST_F(Cli, Fp64RsqrtOnAnFp32GpuRunIsSaid) {
  Result const r = nbody("--devices", false);
  if (r.out.find("no CUDA devices") != std::string::npos) GTEST_SKIP() << "no GPU here";
  Result const fp32 = nbody("--backend cuda --fp64-rsqrt precise --run --bodies 64 --steps 1", false);
  EXPECT_EQ(fp32.code, 0) << fp32.err;
  EXPECT_NE(fp32.err.find("notice: --fp64-rsqrt precise acts on the fp64 kernels only: this run is fp32 "
                          "(--precision fp64 uses it)"),
            std::string::npos)
      << fp32.err;
  Result const fp64 = nbody("--backend cuda --fp64-rsqrt precise --precision fp64 --run --bodies 64 --steps 1", false);
  EXPECT_EQ(fp64.code, 0) << fp64.err;
  EXPECT_EQ(fp64.err.find("--fp64-rsqrt"), std::string::npos) << fp64.err;
}

// A path nbody cannot write is refused before the run, not after it.
TEST_F(Cli, BadOutputPathIsRefusedBeforeTheRun) {
  std::string const target = file("no-such-dir/out.bin");
  Result const r = nbody("--run --bodies 10 --steps 1000000 --save " + target);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--save " + target + ": the folder " + file("no-such-dir") + " does not exist"), std::string::npos)
      << r.err;
  EXPECT_EQ(r.out, "") << "the run started";
}

// The viewer's keys write into --screenshot-dir: a folder that is missing is refused at the start.
TEST_F(Cli, MissingScreenshotFolderIsRefusedAtTheStart) {
  Result const r = nbody("--viewer --bodies 10 --screenshot-dir " + file("no-such-dir"));
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--screenshot-dir " + file("no-such-dir") + ": the folder " + file("no-such-dir") +
                       " does not exist"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("viewer:"), std::string::npos) << "the viewer started: " << r.err;
}

// A picture named as one of the frames --frames-dir writes would replace that frame, or be replaced by it: refused at
// the start, however the folder is spelt; a name no frame of the recording takes is fine.
TEST_F(Cli, AScreenshotAmongTheRecordedFramesIsRefused) {
  fs::create_directories(file("frames"));
  for (std::string const& shot : {file("frames") + "/frame_00000.png", file("frames") + "/../frames/frame_00002.png"}) {
    Result const r = nbody("--offscreen --bodies 64 --frames 3 --frames-dir " + file("frames") + "/ --screenshot " + shot);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("error: --frames-dir and --screenshot both name "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("; give each output its own file\n"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  EXPECT_TRUE(fs::is_empty(file("frames"))) << "nothing was written";
  // Names of frames the recording does not reach are not in the way: past --frames 3, or past the one frame of an
  // offscreen picture without --frames.
  for (std::string const& args : {"--frames 3 --screenshot " + file("frames") + "/frame_00003.png",
                                  "--screenshot " + file("frames") + "/frame_00004.png"}) {
    Result const r = nbody("--offscreen --bodies 64 -q --frames-dir " + file("frames") + " " + args);
    EXPECT_EQ(r.err.find("both name"), std::string::npos) << args << ": " << r.err;
  }
  // Nor a picture named as the folder itself, which the viewer would make before the picture found it a folder,
  // however either is spelt.
  for (std::string const& folder : {file("x.png"), dir_.string() + "/./x.png"}) {
    Result const same = nbody("--offscreen --bodies 64 --screenshot " + file("x.png") + " --frames-dir " + folder);
    EXPECT_EQ(same.code, 2) << same.err;
    EXPECT_NE(same.err.find("error: --frames-dir and --screenshot both name "), std::string::npos) << same.err;
    EXPECT_FALSE(fs::exists(file("x.png"))) << "no folder made";
  }
}

// A picture of one frame says what it measured: the step, and that the render (the first frame sets up) was not timed.
TEST_F(Cli, AOneFramePictureSaysItsRenderWasNotTimed) {
  Result const r = nbody("--offscreen --bodies 64 --screenshot " + file("one.png"));
  if (r.code != 0 && (r.err.find("EGL") != std::string::npos || r.err.find("without the viewer") != std::string::npos))
    GTEST_SKIP() << "no offscreen viewer here: " << r.err;
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("viewer: N = 64, 1 frame: step "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("render not timed (the first frame sets up; --frames 2 or more times it)"), std::string::npos)
      << r.err;
}

// --save FILE.h5 writes a snapshot: where FILE.h5 holds a checkpoint, the restartable state there goes, and that is
// a warning at the start (a snapshot there is replaced without a word).
// A run's own files named alike under two of its locks (a --checkpoint or --save named with a date, run_20261205.h5,
// beside its --snapshots run or its periodic checkpoints: a name of the form of the series' files) are all the run's to
// write: none is refused at its end, by a stop or not.
TEST_F(Cli, ARunWritesItsOwnFilesNamedAsFilesOfItsSeries) {
  if (!sim::checkpoints_built()) GTEST_SKIP() << "built without HDF5";
  for (std::string const& outputs : {"--snapshots " + file("run") + " --snapshot-every 10 --checkpoint " +
                                        file("run_20261205.h5"),
                                    "--snapshots " + file("sim") + " --snapshot-every 10 --save " + file("sim_20261205.h5"),
                                    "--checkpoint " + file("ck.h5") + " --checkpoint-every 10 --save " +
                                        file("ck_20261205.h5")}) {
    Result const r = nbody("--run -q --bodies 128 --steps 20 " + outputs);
    EXPECT_EQ(r.code, 0) << outputs << ": " << r.err;
  }
  EXPECT_EQ(sim::read_checkpoint(file("run_20261205.h5")).run.step, 20u);
  EXPECT_EQ(sim::read_snapshot(file("sim_20261205.h5")).step, 20u);
  EXPECT_EQ(sim::read_snapshot(file("ck_20261205.h5")).step, 20u);
}

TEST_F(Cli, ASnapshotSavedOverACheckpointIsSaid) {
  if (!sim::checkpoints_built()) GTEST_SKIP() << "built without HDF5";
  ASSERT_EQ(nbody("--run -q --bodies 64 --steps 3 --checkpoint " + file("s.h5")).code, 0);
  Result const over = nbody("--run --bodies 64 --steps 1 --save " + file("s.h5"));
  ASSERT_EQ(over.code, 0) << over.err;
  EXPECT_NE(over.err.find("warning: --save " + file("s.h5") + " holds a checkpoint (step 3): this run replaces it with "
                          "a snapshot when it ends (one stopped before, by a signal or a failure, keeps it), which "
                          "--load reads and --restart does not; --checkpoint writes a checkpoint\n"),
            std::string::npos)
      << over.err;
  Result const again = nbody("--run --bodies 64 --steps 1 --save " + file("s.h5"));
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(again.err.find("holds a checkpoint"), std::string::npos) << again.err;
}

// --save over a snapshot of another run (a file of a --snapshots series, say), or over the loaded file where its name
// is a series' file of its step, replaces a state a reader of the folder takes for that run's: a warning at the start.
// Before, not a word. The same run's own snapshot again, or a loaded file not named after a step, goes on quietly.
TEST_F(Cli, ASnapshotSavedOverAnotherRunsSnapshotIsSaid) {
  if (!sim::checkpoints_built()) GTEST_SKIP() << "built without HDF5";
  ASSERT_EQ(nbody("--run -q --bodies 64 --steps 20 --snapshots " + file("s/s") + " --snapshot-every 10").code, 0);
  Result const other = nbody("--run --bodies 64 --seed 3 --steps 5 --save " + file("s/s_00000010.hdf5"));
  ASSERT_EQ(other.code, 0) << other.err;
  EXPECT_NE(other.err.find("warning: --save " + file("s/s_00000010.hdf5") + " holds a snapshot (step 10, time 0.1, "
                           "named as a series' file of that step): this run replaces it with its end when it ends (one "
                           "stopped before, by a signal or a failure, keeps it); name another file to keep it\n"),
            std::string::npos)
      << other.err;
  // Another run's end (other bodies), not named after a step, alike.
  ASSERT_EQ(nbody("--run -q --bodies 32 --steps 3 --save " + file("end.h5")).code, 0);
  Result const bodies = nbody("--run --bodies 64 --steps 3 --save " + file("end.h5"));
  EXPECT_NE(bodies.err.find("holds a snapshot (step 3, time 0.03, of another run)"), std::string::npos) << bodies.err;
  Result const loaded = nbody("--run --load " + file("s/s_00000020.hdf5") + " --steps 5 --save " +
                              file("s/s_00000020.hdf5"));
  ASSERT_EQ(loaded.code, 0) << loaded.err;
  EXPECT_NE(loaded.err.find("holds a snapshot (step 20, time 0.2, the file this run loaded, named as a series' file "
                            "of that step)"),
            std::string::npos)
      << loaded.err;
  ASSERT_EQ(nbody("--run -q --bodies 64 --steps 3 --save " + file("x.h5")).code, 0);
  Result const again = nbody("--run --bodies 64 --steps 3 --save " + file("x.h5"));
  Result const in_place = nbody("--run --load " + file("x.h5") + " --steps 2 --save " + file("x.h5"));
  for (Result const* r : {&again, &in_place}) {
    ASSERT_EQ(r->code, 0) << r->err;
    EXPECT_EQ(r->err.find("holds a snapshot"), std::string::npos) << r->err;
  }
}

TEST_F(Cli, RunSavesASnapshotThatRestarts) {
  Result const r = nbody("--run --bodies 64 --steps 5 --save " + file("a.bin") + " --json " + file("a.json"));
  ASSERT_EQ(r.code, 0) << r.err;
  auto const b = sim::read_tipsy(file("a.bin"));
  EXPECT_EQ(b.size(), 64u);
  EXPECT_DOUBLE_EQ(b.time, 0.05);
  auto const j = nlohmann::json::parse(slurp(file("a.json")));
  EXPECT_EQ(j["steps"], 5);
  EXPECT_LT(j["end"]["relative_energy_error"].get<double>(), 1e-3);
  // The summary's structure quantities: angular momentum, virial ratio and Lagrangian radii.
  EXPECT_EQ(j["end"]["angular_momentum"].size(), 3u);
  EXPECT_NEAR(j["start"]["virial_ratio"].get<double>(), 1.0, 0.3);  // a 64-body Plummer sphere
  auto const& radii = j["end"]["lagrangian_radii"];
  EXPECT_LT(radii["r10"].get<double>(), radii["r50"].get<double>());
  EXPECT_LT(radii["r50"].get<double>(), radii["r90"].get<double>());
  Result const again = nbody("--load " + file("a.bin") + " --steps 5 --save " + file("b.bin"));
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_DOUBLE_EQ(sim::read_tipsy(file("b.bin")).time, 0.1);
  // A new run from a file goes forward from the file's time: a time before it is refused, naming both.
  expect_input_error("--run --load " + file("b.bin") + " --t-end 0.05 --save " + file("c.bin") + " -q",
                     "--t-end 0.05: before the time 0.1 that " + file("b.bin") + " starts the run at");
  EXPECT_FALSE(std::filesystem::exists(file("c.bin")));
}

// --t-end runs to a time: the first step at or past it, by the clock's own arithmetic; a restart goes
// on from the time it reached; a time already passed makes no steps.
TEST_F(Cli, TEndRunsToTheFirstStepAtOrPastIt) {
  Result const r = nbody("--run --bodies 64 --t-end 0.055 -q --json " + file("a.json") + " --checkpoint " + file("a.h5"));
  ASSERT_EQ(r.code, 0) << r.err;
  auto const a = nlohmann::json::parse(slurp(file("a.json")));
  EXPECT_EQ(a["steps"], 6);
  EXPECT_DOUBLE_EQ(a["time"].get<double>(), 0.06);
  if (sim::checkpoints_built()) {
    Result const more = nbody("--run --restart " + file("a.h5") + " --t-end 0.1 -q --json " + file("b.json"));
    ASSERT_EQ(more.code, 0) << more.err;
    auto const b = nlohmann::json::parse(slurp(file("b.json")));
    EXPECT_EQ(b["steps"], 4);
    EXPECT_EQ(b["step"], 10);
    EXPECT_GE(b["time"].get<double>(), 0.1);
    // Both times as they read back exactly, not to six digits.
    Result const past = nbody("--run --restart " + file("a.h5") + " --t-end 0.0123456789 --json " + file("c.json"));
    ASSERT_EQ(past.code, 0) << past.err;
    EXPECT_NE(past.err.find("--t-end 0.0123456789: the run is already at time 0.06;"), std::string::npos) << past.err;
    EXPECT_EQ(nlohmann::json::parse(slurp(file("c.json")))["steps"], 0);
  }
  expect_input_error("--run --t-end 1 --steps 5", "--t-end 1 and --steps 5 both given");
  // A new run from a scenario starts at time 0: a time before it is a mistake (time 0 writes the initial state).
  expect_input_error("--run --t-end -1", "--t-end -1: the run starts at time 0 and goes forward; give a later time");
  expect_input_error("--run --t-end nan", "--t-end nan: must be a time in");
  expect_input_error("--run --t-end 1e25", "--t-end 1e+25: more than 1e+15 steps of dt 0.01 away");
  expect_input_error("--run --integrator hermite4 --bodies 64 --t-end 1e26",
                     "--t-end 1e+26: more than 1e+15 block steps of at most 0.0625 away");
  expect_input_error("--benchmark --t-end 1", "--t-end");
  // --compare-threading runs every threading model and launch mode: choosing one does nothing.
  expect_input_error("--compare-threading --numgpus 2 --bodies 256 --threading workers",
                     "--threading does nothing with --compare-threading; it belongs to modes that simulate one run");
  expect_input_error("--compare-threading --integrator hermite4 --numgpus 2 --bodies 256 --launch graph",
                     "--launch does nothing with --compare-threading");
  // hermite4's benchmark from a scenario starts at time 0: refused before the start-up, not after it.
  expect_input_error("--benchmark --integrator hermite4 --bodies 262144 --t-end 0",
                     "--t-end 0: the benchmark starts at time 0; give a later time");
  expect_input_error("--benchmark --integrator hermite4 --bodies 262144 --t-end -1",
                     "--t-end -1: the benchmark starts at time 0; give a later time");
}

// The diagnostics series: a row at the start, every K steps and at the end; its last row is the
// summary's end, to the bit; CSV and JSON lines say the same; two-body angular momentum holds to
// rounding all along.
// The steps of a CSV series' rows, each followed by a space: "0 100 150 ".
std::string steps_of(const std::string& text) {
  std::istringstream in(text);
  std::string line, steps;
  std::getline(in, line);  // the header
  while (std::getline(in, line)) steps += line.substr(0, line.find(',')) + " ";
  return steps;
}

std::vector<std::vector<double>> csv_rows(const std::string& text, std::string* header) {
  std::istringstream in(text);
  std::string line;
  std::getline(in, *header);
  std::vector<std::vector<double>> rows;
  while (std::getline(in, line)) {
    std::vector<double> row;
    std::istringstream cells(line);
    std::string cell;
    while (std::getline(cells, cell, ',')) row.push_back(std::strtod(cell.c_str(), nullptr));
    rows.push_back(row);
  }
  return rows;
}

TEST_F(Cli, DiagnosticsSeriesSamplesTheRunAndEndsOnItsSummary) {
  Result const r = nbody("--run --bodies 256 --precision fp64 --steps 250 --diagnostics-every 100 --diagnostics " +
                         file("d.csv") + " --json " + file("d.json"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("diagnostics " + file("d.csv") + " (4 samples by this run)"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(file("d.csv.partial")));
  std::string header;
  auto const rows = csv_rows(slurp(file("d.csv")), &header);
  EXPECT_EQ(header.rfind("step,time,wall_seconds,kinetic,potential,total,relative_energy_error,", 0), 0u) << header;
  ASSERT_EQ(rows.size(), 4u);
  std::vector<double> steps;
  for (auto const& row : rows) steps.push_back(row[0]);
  EXPECT_EQ(steps, (std::vector<double>{0, 100, 200, 250}));
  auto const j = nlohmann::json::parse(slurp(file("d.json")));
  EXPECT_EQ(j["diagnostics_samples"], 4);
  EXPECT_TRUE(j["diagnostics_failure"].is_null());
  EXPECT_TRUE(j["checkpoint"].is_null());  // none given
  auto const& end = j["end"];
  auto const& last = rows.back();
  EXPECT_EQ(last[1], j["time"].get<double>());
  EXPECT_EQ(last[3], end["kinetic"].get<double>());
  EXPECT_EQ(last[4], end["potential"].get<double>());
  EXPECT_EQ(last[5], end["total"].get<double>());
  EXPECT_EQ(last[6], end["relative_energy_error"].get<double>());
  EXPECT_EQ(last[16], end["virial_ratio"].get<double>());
  EXPECT_EQ(last[18], end["lagrangian_radii"]["r50"].get<double>());
  EXPECT_EQ(rows.front()[5], j["start"]["total"].get<double>());
  EXPECT_EQ(rows.front()[6], 0.0);

  // The same run as JSON lines: the same numbers.
  Result const again = nbody("--run --bodies 256 --precision fp64 --steps 250 --diagnostics-every 100 -q "
                             "--diagnostics " + file("d.jsonl"));
  ASSERT_EQ(again.code, 0) << again.err;
  std::istringstream lines(slurp(file("d.jsonl")));
  std::string line;
  std::size_t k = 0;
  while (std::getline(lines, line)) {
    ASSERT_LT(k, rows.size());
    auto const row = nlohmann::json::parse(line);
    EXPECT_EQ(row["step"].get<double>(), rows[k][0]);
    EXPECT_EQ(row["total"].get<double>(), rows[k][5]);
    EXPECT_EQ(row["angular_momentum"][2].get<double>(), rows[k][12]);
    EXPECT_EQ(row["lagrangian_radii"]["r90"].get<double>(), rows[k][19]);
    ++k;
  }
  EXPECT_EQ(k, rows.size());
}

TEST_F(Cli, DiagnosticsSeriesKeepsTwoBodyAngularMomentum) {
  Result const r = nbody("--run --scenario two-body --eccentricity 0.9 --precision fp64 --dt 0.001 --steps 20000 "
                         "--diagnostics-every 500 -q --diagnostics " + file("k.csv"));
  ASSERT_EQ(r.code, 0) << r.err;
  std::string header;
  auto const rows = csv_rows(slurp(file("k.csv")), &header);
  ASSERT_EQ(rows.size(), 41u);
  double const lz0 = rows.front()[12];
  double worst = 0, energy = 0;
  for (auto const& row : rows) {
    worst = std::max(worst, std::abs(row[12] / lz0 - 1.0));
    energy = std::max(energy, row[6]);
  }
  std::printf("two-body e = 0.9, 20000 steps: |dLz/Lz| <= %.2e, energy error <= %.2e\n", worst, energy);
  EXPECT_LT(worst, 1e-13);  // leapfrog conserves it exactly but for rounding
  EXPECT_GT(energy, 1e-8);  // while the energy oscillates: the column is not a constant
}

TEST_F(Cli, DiagnosticsSeriesBadInputIsRefusedBeforeTheRun) {
  expect_input_error("--run --diagnostics " + file("d.txt"), "--diagnostics " + file("d.txt") + ": unknown format '.txt'");
  expect_input_error("--run --diagnostics-every 10", "--diagnostics-every 10: give --diagnostics FILE too");
  expect_input_error("--run --diagnostics-every 0 --diagnostics " + file("d.csv"), "--diagnostics-every 0");
  expect_input_error("--benchmark --diagnostics " + file("d.csv"), "--diagnostics");
  expect_input_error("--run --diagnostics " + file("nope/d.csv"), "the folder");
  fs::create_directories(file("series"));
  expect_input_error("--run --diagnostics " + file("nope") + "/", "--diagnostics " + file("nope") + "/: ends in '/'");
  expect_input_error("--run --diagnostics " + file("series"),
                     "--diagnostics " + file("series") + ": is a directory; name a .csv or .jsonl file");
  expect_input_error("--run --snapshots " + file("series") + "/",
                     "--snapshots " + file("series") + "/: ends in '/': name the series' files, e.g. --snapshots " +
                         file("series") + "/snap (" + file("series") + "/snap_00000000.hdf5, ...)");
  // An existing folder named as the series' base: its files would stand beside it, not in it.
  expect_input_error("--run --snapshots " + file("series"),
                     "--snapshots " + file("series") + ": is a folder: name the series' files, e.g. --snapshots " +
                         file("series") + "/snap (" + file("series") + "/snap_00000000.hdf5, ...)");
  EXPECT_TRUE(fs::is_empty(file("series")));
  EXPECT_FALSE(fs::exists(file("series_00000000.hdf5")));
  expect_input_error("--run --diagnostics " + file("d.csv") + " --json " + file("d.csv"), "both name");
  // A series a run left unfinished is not overwritten.
  std::ofstream(file("e.csv.partial")) << "step,time\n0,0\n";
  expect_input_error("--run --steps 3 --diagnostics " + file("e.csv"), "e.csv.partial exists");
  EXPECT_EQ(slurp(file("e.csv.partial")), "step,time\n0,0\n");
}

// A series of snapshots gets a folder of its own, made as --frames-dir's is; a folder that cannot be made is
// refused before the run, by its name.
TEST_F(Cli, SnapshotsMakeTheirFolder) {
  if (!sim::checkpoints_built()) GTEST_SKIP() << "built without HDF5";
  Result const r = nbody("--run --bodies 64 --steps 2 -q --snapshots " + file("runs/a/snap"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(fs::exists(file("runs/a/snap_00000000.hdf5")));
  EXPECT_TRUE(fs::exists(file("runs/a/snap_00000002.hdf5")));
  std::ofstream(file("plain")) << "a file\n";
  expect_input_error("--run --bodies 64 --steps 2 --snapshots " + file("plain/runs/snap"),
                     "--snapshots " + file("plain/runs/snap") + ": cannot create the folder " + file("plain/runs") +
                         " (Not a directory)");
  EXPECT_EQ(slurp(file("plain")), "a file\n");
  // A run refused for another output (a restart's diagnostics series past its end) makes no folder.
  ASSERT_EQ(nbody("--run -q --bodies 64 --steps 4 --diagnostics " + file("d.csv") + " --checkpoint " + file("c.h5") +
                  " --checkpoint-every 2")
                .code,
            0);
  expect_input_error("--run --restart " + file("c_00000002.h5") + " --steps 1 --diagnostics " + file("d.csv") +
                         " --snapshots " + file("new/snap"),
                     "holds rows to step 4");
  EXPECT_FALSE(fs::exists(file("new")));
}

// Snapshots by time: at the first step at or past every multiple of --snapshot-dt, named after their steps; with
// hermite4 at a multiple of the longest step every body is at it. Refused without --snapshots, beside
// --snapshot-every, and for a time that is not one.
TEST_F(Cli, SnapshotsByTime) {
  if (!sim::checkpoints_built()) GTEST_SKIP() << "built without HDF5";
  Result const r = nbody("--run --bodies 64 --dt 0.01 --steps 60 -q --snapshot-dt 0.25 --snapshots " + file("s"));
  ASSERT_EQ(r.code, 0) << r.err;
  std::vector<std::string> names;
  for (auto const& e : fs::directory_iterator(dir_))
    if (e.path().filename().string().rfind("s_", 0) == 0) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"s_00000000.hdf5", "s_00000025.hdf5", "s_00000050.hdf5",
                                             "s_00000060.hdf5"}));
  Result const h = nbody("--run --integrator hermite4 --bodies 64 --t-end 0.5 --snapshot-dt 0.125 --json " +
                         file("h.json") + " --snapshots " + file("h/s"));
  ASSERT_EQ(h.code, 0) << h.err;
  EXPECT_EQ(h.err.find("notice"), std::string::npos) << h.err;  // 0.125 is a multiple of 1/16: no prediction
  EXPECT_EQ(nlohmann::json::parse(slurp(file("h.json")))["snapshots_written"], 5);
  // 0.1 is no multiple of the longest step: a notice says the bodies are predicted to the block times after them.
  Result const odd = nbody("--run --integrator hermite4 --bodies 64 --t-end 0.25 --snapshot-dt 0.1 --snapshots " +
                           file("odd/s"));
  ASSERT_EQ(odd.code, 0) << odd.err;
  EXPECT_NE(odd.err.find("notice: --snapshot-dt 0.1: not a multiple of the longest step 0.0625: each snapshot is at "
                         "the first block time at or past its multiple"),
            std::string::npos)
      << odd.err;
  // Samples and snapshots by time together: each at the first block time at or past its own multiples.
  Result const both = nbody("--run --integrator hermite4 --bodies 64 --t-end 0.5 -q --diagnostics-dt 0.1 --diagnostics " +
                            file("both.csv") + " --snapshot-dt 0.25 --snapshots " + file("both/s") + " --json " +
                            file("both.json"));
  ASSERT_EQ(both.code, 0) << both.err;
  EXPECT_EQ(nlohmann::json::parse(slurp(file("both.json")))["snapshots_written"], 3);  // 0, 0.25, 0.5
  std::string header;
  auto const rows = csv_rows(slurp(file("both.csv")), &header);
  ASSERT_EQ(rows.size(), 6u);  // the start, then past 0.1, 0.2, 0.3, 0.4, and 0.5
  for (std::size_t k = 1; k < rows.size(); ++k) {
    EXPECT_GE(rows[k][1], 0.1 * double(k) - 1e-12) << "row " << k;
    EXPECT_LT(rows[k][1], 0.1 * double(k) + 0.0625) << "row " << k;  // within the longest step
  }
  expect_input_error("--run --snapshot-dt 0.1", "--snapshot-dt: give --snapshots BASE too");
  expect_input_error("--run --snapshots " + file("x") + " --snapshot-dt 0.1 --snapshot-every 5",
                     "--snapshot-dt 0.1 and --snapshot-every 5 both given; give one of them");
  expect_input_error("--run --snapshots " + file("x") + " --snapshot-dt 0", "--snapshot-dt 0: must be a time in (0, ");
}

// Checkpoints by time: each at the first block time at or past a multiple of --checkpoint-dt, named after its step,
// and each continues the run bit for bit (a hermite4 checkpoint holds every body's own state).
TEST_F(Cli, CheckpointsByTime) {
  if (!sim::checkpoints_built()) GTEST_SKIP() << "built without HDF5";
  std::string const run = "--run --integrator hermite4 --precision fp64 --bodies 64 -q ";
  Result const r = nbody(run + "--t-end 0.5 --checkpoint " + file("c.h5") + " --checkpoint-dt 0.1 --json " +
                         file("r.json"));
  ASSERT_EQ(r.code, 0) << r.err;
  std::vector<std::pair<double, std::string>> series;  // (time, name)
  for (auto const& e : fs::directory_iterator(dir_)) {
    std::string const name = e.path().filename().string();
    if (name.rfind("c_", 0) == 0) series.emplace_back(sim::read_checkpoint(e.path().string()).bodies.time, name);
  }
  std::sort(series.begin(), series.end());
  ASSERT_EQ(series.size(), 5u);  // past 0.1, 0.2, 0.3, 0.4 and 0.5
  for (std::size_t k = 0; k < series.size(); ++k) {
    EXPECT_GE(series[k].first, 0.1 * double(k + 1) - 1e-12) << series[k].second;
    EXPECT_LT(series[k].first, 0.1 * double(k + 1) + 0.0625) << series[k].second;  // within the longest step
  }
  EXPECT_EQ(nlohmann::json::parse(slurp(file("r.json")))["checkpoints_written"], 5);  // the periodic ones
  EXPECT_EQ(nlohmann::json::parse(slurp(file("r.json")))["checkpoint"], file("c.h5"));  // and the final one
  // The one past 0.2, continued to the end: the run's end state.
  Result const more = nbody("--run -q --restart " + file(series[1].second) + " --t-end 0.5 --checkpoint " +
                            file("more.h5"));
  ASSERT_EQ(more.code, 0) << more.err;
  EXPECT_TRUE(test::bitwise_equal(sim::read_checkpoint(file("more.h5")).bodies,
                                  sim::read_checkpoint(file("c.h5")).bodies));
  expect_input_error("--run --checkpoint-dt 0.1", "--checkpoint-dt 0.1: give --checkpoint FILE too");
  expect_input_error("--run --checkpoint " + file("x.h5") + " --checkpoint-dt 0.1 --checkpoint-every 5",
                     "--checkpoint-dt 0.1 and --checkpoint-every 5 both given; give one of them");
  expect_input_error("--run --checkpoint " + file("x.h5") + " --checkpoint-dt -1",
                     "--checkpoint-dt -1: must be a time in (0, ");
}

// A run stopped off its series' grid and continued from its checkpoint writes the series that a run that never
// stopped writes: the restart's start, off the grid, is no row of it (the end row of the first run gives way to the
// rows after it). Fixed steps by steps, and hermite4's block steps by time.
TEST_F(Cli, ARestartsSeriesIsTheOneOfARunThatNeverStopped) {
  if (!sim::checkpoints_built()) GTEST_SKIP() << "built without HDF5";
  // The rows without their wall-clock column (the third).
  auto rows = [&](const std::string& name) {
    std::istringstream in(slurp(dir_ / name));
    std::string line, out;
    while (std::getline(in, line)) {
      auto const a = line.find(','), b = line.find(',', a + 1), c = line.find(',', b + 1);
      out += line.substr(0, b) + line.substr(c) + "\n";
    }
    return out;
  };
  std::string const fixed = "--run --bodies 256 -q --diagnostics-every 100 --diagnostics ";
  ASSERT_EQ(nbody(fixed + file("a.csv") + " --steps 300").code, 0) << slurp(dir_ / "err");
  ASSERT_EQ(nbody(fixed + file("b.csv") + " --steps 150 --checkpoint " + file("b.h5")).code, 0) << slurp(dir_ / "err");
  ASSERT_EQ(nbody("--run --restart " + file("b.h5") + " --steps 150 -q --diagnostics-every 100 --diagnostics " +
                  file("b.csv") + " --checkpoint " + file("b2.h5"))
                .code,
            0)
      << slurp(dir_ / "err");
  EXPECT_EQ(rows("b.csv"), rows("a.csv"));
  std::string const blocks = "--run --integrator hermite4 --bodies 256 -q --diagnostics-dt 0.25 --diagnostics ";
  ASSERT_EQ(nbody(blocks + file("ha.csv") + " --t-end 1").code, 0) << slurp(dir_ / "err");
  // Stopped at 0.625: off the series' grid, on the block times (a stop off them brings every body to it, and the
  // orbits from there differ from a run's that never stopped, within the integration's accuracy).
  ASSERT_EQ(nbody(blocks + file("hb.csv") + " --t-end 0.625 --checkpoint " + file("hb.h5")).code, 0)
      << slurp(dir_ / "err");
  ASSERT_EQ(nbody("--run --restart " + file("hb.h5") + " --t-end 1 -q --diagnostics-dt 0.25 --diagnostics " +
                  file("hb.csv") + " --checkpoint " + file("hb2.h5"))
                .code,
            0)
      << slurp(dir_ / "err");
  EXPECT_EQ(rows("hb.csv"), rows("ha.csv"));

  // By time with fixed steps: a sample is at the first step at or past each multiple, here step 4 (time 0.12); the
  // restart from there keeps that row.
  std::string const by_time = "--run --bodies 256 -q --dt 0.03 --diagnostics-dt 0.1 --diagnostics ";
  ASSERT_EQ(nbody(by_time + file("ta.csv") + " --steps 10").code, 0) << slurp(dir_ / "err");
  ASSERT_EQ(nbody(by_time + file("tb.csv") + " --steps 4 --checkpoint " + file("tb.h5")).code, 0) << slurp(dir_ / "err");
  ASSERT_EQ(nbody("--run --restart " + file("tb.h5") + " --steps 6 -q --diagnostics-dt 0.1 --diagnostics " +
                  file("tb.csv"))
                .code,
            0)
      << slurp(dir_ / "err");
  EXPECT_EQ(rows("tb.csv"), rows("ta.csv"));

  // hermite4 restarted from a checkpoint of the series at the samples' times (--checkpoint-dt as --diagnostics-dt):
  // the row at its block time is the restart's start.
  std::string const blocks_dt = "--run --integrator hermite4 --bodies 256 -q --diagnostics-dt 0.1 --diagnostics ";
  ASSERT_EQ(nbody(blocks_dt + file("pa.csv") + " --t-end 0.5").code, 0) << slurp(dir_ / "err");
  ASSERT_EQ(nbody(blocks_dt + file("pb.csv") + " --t-end 0.25 --checkpoint " + file("p.h5") + " --checkpoint-dt 0.1")
                .code,
            0)
      << slurp(dir_ / "err");
  std::vector<std::string> periodic;
  for (auto const& entry : fs::directory_iterator(dir_))
    if (entry.path().filename().string().rfind("p_", 0) == 0) periodic.push_back(entry.path().string());
  std::sort(periodic.begin(), periodic.end());
  ASSERT_EQ(periodic.size(), 2u);  // at the first block times past 0.1 and 0.2
  ASSERT_EQ(nbody("--run --restart " + periodic.back() + " --t-end 0.5 -q --diagnostics-dt 0.1 --diagnostics " +
                  file("pb.csv"))
                .code,
            0)
      << slurp(dir_ / "err");
  EXPECT_EQ(rows("pb.csv"), rows("pa.csv"));
}

// A restart that names no end goes on to the end of the run it continues (the checkpoint records it), with a
// notice; its end state is the one of the run that never stopped. A run that reached its end takes the default.
TEST_F(Cli, ARestartThatNamesNoEndGoesOnToItsRunsEnd) {
  if (!sim::checkpoints_built()) GTEST_SKIP() << "built without HDF5";
  struct Case {
    const char* integrator;
    std::string end, series, from;
  };
  for (Case const& c : {Case{"leapfrog", "--steps 30", "--checkpoint-every 10", "c_00000010.h5"},
                        Case{"leapfrog", "--t-end 0.3", "--checkpoint-dt 0.1", "c_00000010.h5"},
                        Case{"hermite4", "--steps 30", "--checkpoint-every 10", "c_00000010.h5"},
                        Case{"hermite4", "--t-end 0.0625", "--checkpoint-dt 0.03125", ""}}) {
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    std::string const what = std::string(c.integrator) + " " + c.end;
    Result const whole = nbody("--run --bodies 64 -q --integrator " + std::string(c.integrator) + " " + c.end + " " +
                               c.series + " --checkpoint " + file("c.h5") + " --json " + file("whole.json"));
    ASSERT_EQ(whole.code, 0) << what << ": " << whole.err;
    std::string from = c.from;
    if (from.empty()) {  // hermite4's by time: named by block step; the first of the series
      std::vector<std::string> series;
      for (auto const& e : std::filesystem::directory_iterator(dir_))
        if (e.path().filename().string().rfind("c_", 0) == 0) series.push_back(e.path().filename().string());
      ASSERT_GE(series.size(), 2u) << what;
      from = *std::min_element(series.begin(), series.end());
    }
    Result const rest = nbody("--run --restart " + file(from) + " --json " + file("rest.json"));
    ASSERT_EQ(rest.code, 0) << what << ": " << rest.err;
    EXPECT_NE(rest.err.find(from + "'s run was going to"), std::string::npos) << what << ": " << rest.err;
    auto const a = nlohmann::json::parse(slurp(file("whole.json")));
    auto const b = nlohmann::json::parse(slurp(file("rest.json")));
    EXPECT_EQ(b["step"], a["step"]) << what;
    EXPECT_EQ(b["time"], a["time"]) << what;
    EXPECT_EQ(b["end"]["total"], a["end"]["total"]) << what;  // the same end state, bit for bit
    // A run of no steps keeps the end of the file it continues: the restart of its checkpoint still goes on to it.
    Result const look = nbody("--run --restart " + file(from) + " --steps 0 -q --checkpoint " + file("look.h5"));
    ASSERT_EQ(look.code, 0) << what << ": " << look.err;
    Result const after_look = nbody("--run --restart " + file("look.h5") + " --json " + file("after_look.json"));
    ASSERT_EQ(after_look.code, 0) << what << ": " << after_look.err;
    EXPECT_EQ(nlohmann::json::parse(slurp(file("after_look.json")))["end"]["total"], a["end"]["total"]) << what;
    // The final checkpoint's run reached its end: a restart of it makes no steps, so a job resubmitted until done
    // stops.
    Result const again = nbody("--run --restart " + file("c.h5") + " --json " + file("again.json"));
    ASSERT_EQ(again.code, 0) << what << ": " << again.err;
    EXPECT_NE(again.err.find("c.h5's run reached its end"), std::string::npos) << what << ": " << again.err;
    EXPECT_EQ(nlohmann::json::parse(slurp(file("again.json")))["steps"], 0) << what;
  }
  // hermite4 to a time that is no block time ends at it, every body brought there: that run reached its end too.
  Result const short_of = nbody("--run --bodies 64 -q --integrator hermite4 --t-end 0.1 --checkpoint " + file("e.h5"));
  ASSERT_EQ(short_of.code, 0) << short_of.err;
  Result const after = nbody("--run --restart " + file("e.h5") + " --json " + file("after.json"));
  ASSERT_EQ(after.code, 0) << after.err;
  EXPECT_NE(after.err.find("e.h5's run reached its end, time 0.1: no steps"), std::string::npos) << after.err;
  EXPECT_EQ(nlohmann::json::parse(slurp(file("after.json")))["steps"], 0);
  // Steps of another kind (block steps against steps of dt) are not taken up, and the notice says so.
  Result const blocks = nbody("--run --bodies 64 -q --integrator hermite4 --steps 30 --checkpoint-every 10 "
                              "--checkpoint " + file("b.h5"));
  ASSERT_EQ(blocks.code, 0) << blocks.err;
  Result const switched = nbody("--run --restart " + file("b_00000010.h5") + " --integrator leapfrog --json " +
                                file("switched.json"));
  ASSERT_EQ(switched.code, 0) << switched.err;
  EXPECT_NE(switched.err.find("b_00000010.h5's run was going to block step 30, which leapfrog does not count in "
                              "steps of dt: it is not taken up: this run makes the default 1000 steps (--steps or "
                              "--t-end sets another end)"),
            std::string::npos)
      << switched.err;
  EXPECT_EQ(nlohmann::json::parse(slurp(file("switched.json")))["steps"], 1000);
}

// A checkpoint's restart reports the energies of the run that wrote it: hermite4 in fp32 keeps masses that are not
// fp32 values (1/500) as the fp32 values its pair and its checkpoint hold.
// The energy warning weighs a chain of restarts whole, as the run straight through: a piece whose own change is small
// still says that the run has not resolved its orbits (before, each piece was weighed from its own start). A restart
// that changes a setting (the advice taken) is weighed on its own: AnUnresolvedRunWarnsAboutItsEnergy.
TEST_F(Cli, ARestartsEnergyWarningIsTheWholeRuns) {
  if (!sim::checkpoints_built()) GTEST_SKIP() << "built without HDF5";
  // (The change itself depends on the build's arithmetic, a sanitizer's included; the piece is the straight run's
  // last hundred steps to the bit in any one build.)
  std::string const run = "--run --bodies 256 --dt 0.04 --softening 0.02";
  Result const straight = nbody(run + " --steps 400");
  std::string const said = "warning: the energy changed by ";
  std::size_t const at = straight.err.find(said);
  ASSERT_NE(at, std::string::npos) << straight.err;
  std::string const change = straight.err.substr(at + said.size(), straight.err.find(' ', at + said.size()) - at - said.size());
  EXPECT_NE(straight.err.find(said + change + " of its start (more than 0.01)"), std::string::npos) << straight.err;
  ASSERT_EQ(nbody(run + " -q --steps 300 --checkpoint " + file("c.h5")).code, 0);
  Result const piece = nbody("--run --restart " + file("c.h5") + " --steps 100");
  EXPECT_EQ(piece.code, 0) << piece.err;
  EXPECT_NE(piece.err.find(said + change + " of its run's start, before its restarts (more than 0.01): the steps did "
                           "not resolve the closest orbits"),
            std::string::npos)
      << piece.err;
}

TEST_F(Cli, ARestartReportsTheEnergiesOfItsRun) {
  if (!sim::checkpoints_built()) GTEST_SKIP() << "built without HDF5";
  for (const char* integrator : {"hermite4", "leapfrog"}) {
    for (const char* precision : {"fp32", "fp64"}) {
      std::string const what = std::string(integrator) + " " + precision;
      Result const run = nbody("--run --bodies 500 --steps 10 -q --integrator " + std::string(integrator) +
                               " --precision " + precision + " --checkpoint " + file("e.h5") + " --json " +
                               file("run.json"));
      ASSERT_EQ(run.code, 0) << what << ": " << run.err;
      Result const look = nbody("--run --restart " + file("e.h5") + " --steps 0 -q --json " + file("look.json"));
      ASSERT_EQ(look.code, 0) << what << ": " << look.err;
      auto const a = nlohmann::json::parse(slurp(file("run.json")));
      auto const b = nlohmann::json::parse(slurp(file("look.json")));
      for (const char* key : {"kinetic", "potential", "total"})
        EXPECT_EQ(b["start"][key], a["end"][key]) << what << " " << key;
    }
  }
}

// A restart stopped before a row of its own leaves its run's series as it was: the earlier run's last row, at the
// restart's step, stays. A restart of that stopped restart, stopped at once too, adds no row at its start (the run
// it continues wrote none there: a run that never stopped has none).
TEST_F(Cli, ARestartStoppedBeforeItsFirstRowKeepsTheSeries) {
  if (!sim::checkpoints_built()) GTEST_SKIP() << "built without HDF5";
  Result const first = nbody("--run --bodies 1024 --steps 150 -q --diagnostics-every 1000000 --diagnostics " +
                             file("d.csv") + " --checkpoint " + file("c.h5"));
  ASSERT_EQ(first.code, 0) << first.err;
  std::string const rows = slurp(dir_ / "d.csv");  // steps 0 and 150
  // A restart from `from`, interrupted after its start's line, its state saved in `to`.
  auto stopped_restart = [&](const std::string& from, const std::string& to) {
    fs::remove(dir_ / "out");
    pid_t const pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
      std::string const out = file("out"), err = file("err"), series = file("d.csv");
      if (!freopen(out.c_str(), "w", stdout) || !freopen(err.c_str(), "w", stderr)) _exit(126);
      execl(NBODY_EXECUTABLE, NBODY_EXECUTABLE, "--backend", "cpu", "--run", "--restart", from.c_str(), "--steps",
            "100000000", "--diagnostics-every", "1000000", "--diagnostics", series.c_str(), "--checkpoint", to.c_str(),
            static_cast<char*>(nullptr));
      _exit(127);
    }
    // The start's line is printed before the first step (its diagnostics measured).
    auto const deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (slurp(dir_ / "out").find("start") == std::string::npos && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    kill(pid, SIGINT);
    int status = 0;
    if (!ended_within(pid, std::chrono::seconds(60), status) || !WIFEXITED(status)) return -1;
    return WEXITSTATUS(status);
  };
  EXPECT_EQ(stopped_restart(file("c.h5"), file("c2.h5")), 130) << slurp(dir_ / "err");
  EXPECT_EQ(steps_of(slurp(dir_ / "d.csv")), steps_of(rows)) << slurp(dir_ / "err");
  EXPECT_EQ(steps_of(rows), "0 150 ");
  std::uint64_t const stopped_at = sim::read_checkpoint(file("c2.h5")).run.step;
  ASSERT_GT(stopped_at, 150u) << "the restart made no step before its stop";
  EXPECT_EQ(stopped_restart(file("c2.h5"), file("c3.h5")), 130) << slurp(dir_ / "err");
  EXPECT_EQ(steps_of(slurp(dir_ / "d.csv")), "0 150 ") << slurp(dir_ / "err");
}

// A run that died left its series' rows in the partial file; a restart from an earlier checkpoint than its last row
// (the latest one damaged, say) computes those rows again. Until it reaches as far, they stay as they are: a restart
// killed or stopped on the way loses none of them.
TEST_F(Cli, ARestartFromAnEarlierCheckpointKeepsTheRowsItHasNotReached) {
  if (!sim::checkpoints_built()) GTEST_SKIP() << "built without HDF5";
  Result const first = nbody("--run -q --bodies 1024 --steps 2000 --diagnostics-every 100 --diagnostics " +
                             file("w.csv") + " --checkpoint " + file("c.h5") + " --checkpoint-every 100");
  ASSERT_EQ(first.code, 0) << first.err;
  std::string const died = slurp(dir_ / "w.csv");  // rows 0, 100, ..., 2000: as a run killed after its last row
  // A restart from step 100, sent `signal` once it has written its checkpoint at step 200 (its rows to there taken).
  auto restart = [&](int signal) {
    fs::remove(dir_ / "r_00000200.h5");
    pid_t const pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
      std::string const out = file("out"), err = file("err"), series = file("k.csv"), from = file("c_00000100.h5"),
                        to = file("r.h5");
      if (!freopen(out.c_str(), "w", stdout) || !freopen(err.c_str(), "w", stderr)) _exit(126);
      execl(NBODY_EXECUTABLE, NBODY_EXECUTABLE, "--backend", "cpu", "--run", "--restart", from.c_str(), "--diagnostics",
            series.c_str(), "--checkpoint", to.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    auto const deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!fs::exists(dir_ / "r_00000200.h5") && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    kill(pid, signal);
    int status = 0;
    if (!ended_within(pid, std::chrono::seconds(60), status)) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  };
  std::string header;
  auto without_wall = [&](const std::string& text) {
    auto rows = csv_rows(text, &header);
    for (auto& row : rows) row.erase(row.begin() + 2);
    return rows;
  };
  std::ofstream(file("k.csv.partial")) << died;
  EXPECT_EQ(restart(SIGKILL), 128 + SIGKILL);
  EXPECT_EQ(slurp(dir_ / "k.csv.partial"), died) << "killed at step 200 or so, the restart took no row of them";
  // Stopped, it leaves them too (its own rows are the same rows), and says so.
  EXPECT_EQ(restart(SIGINT), 130) << slurp(dir_ / "err");
  std::string const err = slurp(dir_ / "err");
  EXPECT_NE(err.find("notice: --diagnostics " + file("k.csv") + ": continues " + file("k.csv.partial") + ": its 1 row "
                     "before step 100 kept; its 20 rows from step 100 to step 2000 (this run's course, computed again) "
                     "stay until this run's rows reach step 2000, then are replaced by them"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find(file("k.csv.partial") + " is kept as it was: it reaches step 2000, past this stopped run's last row"),
            std::string::npos)
      << err;
  EXPECT_EQ(slurp(dir_ / "k.csv.partial"), died);
  EXPECT_FALSE(fs::exists(dir_ / "k.csv"));
  // A restart from where it stopped (its checkpoint's digest is of those rows), killed, leaves them as they were; run
  // to the end, its rows replace them: the series of the run that never stopped.
  std::uint64_t const stopped_at = sim::read_checkpoint(file("r.h5")).run.step;
  pid_t const pid = fork();
  if (pid == 0) {
    std::string const from = file("r.h5"), series = file("k.csv"), err_file = file("err");
    if (!freopen(err_file.c_str(), "w", stderr)) _exit(126);
    std::string const periodic = file("p.h5");
    execl(NBODY_EXECUTABLE, NBODY_EXECUTABLE, "--backend", "cpu", "--run", "-q", "--restart", from.c_str(),
          "--diagnostics", series.c_str(), "--checkpoint", periodic.c_str(), "--checkpoint-every", "100",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  // Killed in the middle of its run: once its first periodic checkpoint is out (a fixed wait was past a fast
  // machine's whole run).
  auto const periodic_written = [&] {
    for (auto const& entry : fs::directory_iterator(dir_))
      if (entry.path().filename().string().rfind("p_", 0) == 0) return true;
    return false;
  };
  auto const deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!periodic_written() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  EXPECT_EQ(slurp(dir_ / "k.csv.partial"), died) << "restarted from step " << stopped_at;
  Result const whole = nbody("--run -q --restart " + file("r.h5") + " --diagnostics " + file("k.csv"));
  ASSERT_EQ(whole.code, 0) << whole.err;
  EXPECT_FALSE(fs::exists(dir_ / "k.csv.partial"));
  EXPECT_EQ(without_wall(slurp(dir_ / "k.csv")), without_wall(died));
  // Ended before the rows it had not reached (its own --steps) at one of them, its rows replace them up to its end,
  // and theirs past it stay after its own (rows of its course: cut off, a restart from the dead run's later checkpoint
  // would find them missing), said. Ended between two of them, its rows replace them, as a run's end does: its end row
  // among theirs would make the file one the dead run's later checkpoints do not know.
  std::ofstream(file("e.csv.partial")) << died;
  Result const short_run =
      nbody("--run --restart " + file("c_00000100.h5") + " --steps 100 --diagnostics " + file("e.csv"));
  ASSERT_EQ(short_run.code, 0) << short_run.err;
  EXPECT_FALSE(fs::exists(dir_ / "e.csv.partial"));
  std::string past_end;
  for (int step = 300; step <= 2000; step += 100) past_end += std::to_string(step) + " ";
  EXPECT_EQ(steps_of(slurp(dir_ / "e.csv")), "0 100 200 " + past_end);
  EXPECT_NE(short_run.err.find("--diagnostics " + file("e.csv") + ": the 18 rows of " + file("e.csv.partial") +
                               " past this run's end (step 200, to step 2000) stay after its own"),
            std::string::npos)
      << short_run.err;
  std::ofstream(file("g.csv.partial")) << died;
  Result const between =
      nbody("--run --restart " + file("c_00000100.h5") + " --steps 150 --diagnostics " + file("g.csv"));
  ASSERT_EQ(between.code, 0) << between.err;
  EXPECT_EQ(steps_of(slurp(dir_ / "g.csv")), "0 100 200 250 ");
  EXPECT_EQ(between.err.find("stay after its own"), std::string::npos) << between.err;
  // Rows at another cadence than the series' are not the ones the restart computes again: replaced from its first row.
  std::ofstream(file("a.csv.partial")) << died;
  Result const other_cadence = nbody("--run --restart " + file("c_00000100.h5") + " --steps 150 --diagnostics-every 50 "
                                     "--diagnostics " + file("a.csv"));
  ASSERT_EQ(other_cadence.code, 0) << other_cadence.err;
  EXPECT_NE(other_cadence.err.find(": its 1 row before step 100 kept, 20 rows from step 100 on replaced"),
            std::string::npos)
      << other_cadence.err;
  // A restart that changes a setting branches at its step: the rows past it are another branch's, replaced from its
  // first row on, not held until this run's reach step 2000.
  std::ofstream(file("b.csv.partial")) << died;
  Result const branch = nbody("--run --restart " + file("c_00000100.h5") + " --steps 150 --dt 0.005 --diagnostics " +
                              file("b.csv"));
  ASSERT_EQ(branch.code, 0) << branch.err;
  EXPECT_NE(branch.err.find(": its 1 row before step 100 kept, 20 rows from step 100 on replaced"), std::string::npos)
      << branch.err;
  EXPECT_FALSE(fs::exists(dir_ / "b.csv.partial"));
  EXPECT_EQ(steps_of(slurp(dir_ / "b.csv")), "0 100 200 250 ");
}

// A branch from a periodic checkpoint that names the finished run's diagnostics series replaces the rows past its step,
// which are of the course it leaves: no restart computes them again. The whole earlier series is kept under a name of
// its own. Before, the rows were replaced with a notice alone (hidden by -q). A restart of the first course then, over
// the branch's rows, keeps those too: no row records its course.
TEST_F(Cli, ABranchKeepsTheDiagnosticsRowsOfTheCourseItLeaves) {
  if (!sim::checkpoints_built()) GTEST_SKIP() << "built without HDF5";
  ASSERT_EQ(nbody("--run -q --bodies 128 --steps 30 --diagnostics " + file("d.csv") + " --diagnostics-every 5 "
                  "--checkpoint " + file("c.h5") + " --checkpoint-every 10").code,
            0);
  std::string const first_course = slurp(file("d.csv"));
  Result const branch = nbody("--run --restart " + file("c_00000010.h5") + " --dt 0.005 --steps 20 --diagnostics " +
                              file("d.csv") + " --checkpoint " + file("b.h5"));
  ASSERT_EQ(branch.code, 0) << branch.err;
  EXPECT_NE(branch.err.find(": its 2 rows before step 10 kept, 5 rows from step 10 on replaced; they are of another "
                            "course (this run changes a setting), so the earlier series is kept as " +
                            file("d.earlier-1.csv")),
            std::string::npos)
      << branch.err;
  EXPECT_EQ(slurp(file("d.earlier-1.csv")), first_course);
  std::string const branch_rows = slurp(file("d.csv"));
  EXPECT_NE(branch_rows, first_course);
  Result const back = nbody("--run -q --restart " + file("c_00000010.h5") + " --steps 20 --diagnostics " +
                            file("d.csv") + " --checkpoint " + file("c.h5"));
  ASSERT_EQ(back.code, 0) << back.err;
  EXPECT_EQ(slurp(file("d.earlier-2.csv")), branch_rows);
}

// A restart of an earlier checkpoint that would end before what its run already wrote (a segment run again, a slip in
// --t-end) would put its earlier state in place of the run's later one: the --checkpoint file, the finished
// diagnostics series past its end. Refused, nothing changed; another file, or an end at least as far, goes on.
// A dead run's rows past the end of a restart from an earlier checkpoint stay, so that a restart from the dead run's
// last checkpoint then goes on with a series that lacks no row.
TEST_F(Cli, ARestartThatEndsBeforeADeadRunsRowsCutsNoneOff) {
  if (!sim::checkpoints_built()) GTEST_SKIP() << "built without HDF5";
  ASSERT_EQ(nbody("--run -q --bodies 64 --steps 9 --checkpoint-every 3 --checkpoint " + file("c.h5") +
                  " --diagnostics-every 1 --diagnostics " + file("d.csv"))
                .code,
            0);
  std::string const straight = slurp(dir_ / "d.csv");
  fs::rename(dir_ / "d.csv", dir_ / "d.csv.partial");  // as a run killed after step 9 leaves it
  Result const early = nbody("--run -q --restart " + file("c_00000006.h5") + " --steps 1 --diagnostics " +
                             file("d.csv"));
  ASSERT_EQ(early.code, 0) << early.err;
  auto without_wall = [](const std::string& text) {
    std::string header;
    auto rows = csv_rows(text, &header);
    for (auto& row : rows) row.erase(row.begin() + 2);
    return rows;
  };
  EXPECT_EQ(without_wall(slurp(dir_ / "d.csv")), without_wall(straight));
  Result const later = nbody("--run -q --restart " + file("c_00000009.h5") + " --steps 2 --diagnostics " +
                             file("d.csv"));
  EXPECT_EQ(later.code, 0) << later.err;
  EXPECT_EQ(later.err.find("cut short"), std::string::npos) << later.err;
  std::string const series = slurp(dir_ / "d.csv");
  for (int step = 0; step <= 11; ++step)
    EXPECT_NE(series.find("\n" + std::to_string(step) + ","), std::string::npos) << "row " << step << ":\n" << series;
  // Every other step, and a restart that ends between two of the dead run's rows: those are cut off, as a run's end
  // does, and the restart from the dead run's last checkpoint keeps the rows before (not the whole file replaced as
  // another run's, which an end row among the dead run's would have made it).
  ASSERT_EQ(nbody("--run -q --bodies 32 --steps 9 --checkpoint-every 3 --checkpoint " + file("e.h5") +
                  " --diagnostics-every 2 --diagnostics " + file("e.csv"))
                .code,
            0);
  fs::rename(dir_ / "e.csv", dir_ / "e.csv.partial");
  ASSERT_EQ(nbody("--run -q --restart " + file("e_00000003.h5") + " --steps 2 --diagnostics " + file("e.csv")).code,
            0);
  Result const last = nbody("--run --restart " + file("e_00000009.h5") + " --steps 2 --diagnostics " + file("e.csv"));
  EXPECT_EQ(last.code, 0) << last.err;
  EXPECT_EQ(last.err.find("is not this run's series"), std::string::npos) << last.err;
  std::string const kept = slurp(dir_ / "e.csv");
  for (int step : {0, 2, 4, 11})
    EXPECT_NE(kept.find("\n" + std::to_string(step) + ","), std::string::npos) << "row " << step << ":\n" << kept;
}

TEST_F(Cli, ARestartThatEndsBeforeWhatItsRunWroteReplacesNone) {
  if (!sim::checkpoints_built()) GTEST_SKIP() << "built without HDF5";
  std::string const blocks = "--run -q --integrator hermite4 --bodies 128 --checkpoint-dt 1 --checkpoint ";
  ASSERT_EQ(nbody(blocks + file("c.h5") + " --t-end 4 --diagnostics-dt 0.5 --diagnostics " + file("d.csv")).code, 0)
      << slurp(dir_ / "err");
  std::string const series = slurp(dir_ / "d.csv"), ended = slurp(dir_ / "c.h5");
  std::vector<std::string> periodic;
  for (auto const& entry : fs::directory_iterator(dir_))
    if (entry.path().filename().string().rfind("c_", 0) == 0) periodic.push_back(entry.path().string());
  std::sort(periodic.begin(), periodic.end());
  ASSERT_FALSE(periodic.empty());
  std::string const first = periodic.front();  // at time 1
  expect_input_error("--run -q --restart " + first + " --t-end 2 --diagnostics " + file("d.csv") + " --checkpoint " +
                         file("c.h5"),
                     "--checkpoint " + file("c.h5") + " holds step ");
  Result const refused = nbody("--run -q --restart " + first + " --t-end 2 --diagnostics " + file("d.csv"));
  EXPECT_EQ(refused.code, 2);
  EXPECT_NE(refused.err.find("--diagnostics " + file("d.csv") + " holds rows to step "), std::string::npos)
      << refused.err;
  EXPECT_NE(refused.err.find(", time 4, past this run's end at time 2, which would cut them off; name another file, or "
                             "run at least as far"),
            std::string::npos)
      << refused.err;
  EXPECT_EQ(slurp(dir_ / "d.csv"), series);
  EXPECT_EQ(slurp(dir_ / "c.h5"), ended);
  // As far as the run went: its own files, written again.
  Result const again = nbody("--run -q --restart " + first + " --t-end 4 --diagnostics " + file("d.csv") +
                             " --checkpoint " + file("c.h5"));
  EXPECT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(slurp(dir_ / "c.h5"), ended);
  // To other files: the segment again.
  Result const segment = nbody("--run -q --restart " + first + " --t-end 2 --diagnostics " + file("e.csv") +
                               " --checkpoint " + file("e.h5"));
  EXPECT_EQ(segment.code, 0) << segment.err;
  // Fixed steps end at the first step at or past the time: a restart to the same time reaches the same step, and is
  // no earlier end (as a job resubmitted after its node died, from its last periodic checkpoint).
  std::string const fixed = "--run -q --bodies 64 --checkpoint-every 5 --diagnostics-every 5 --checkpoint " +
                            file("f.h5") + " --diagnostics " + file("f.csv");
  ASSERT_EQ(nbody(fixed + " --t-end 0.105").code, 0) << slurp(dir_ / "err");  // ends at step 11, time 0.11
  EXPECT_EQ(nbody("--restart " + file("f_00000005.h5") + " " + fixed + " --t-end 0.105").code, 0) << slurp(dir_ / "err");
  EXPECT_EQ(nbody("--restart " + file("f_00000005.h5") + " " + fixed).code, 0) << slurp(dir_ / "err");  // its end
  expect_input_error("--restart " + file("f_00000005.h5") + " " + fixed + " --t-end 0.095",
                     "--checkpoint " + file("f.h5") + " holds step 11 of this run, time 0.11, past this run's end at "
                     "step 10, which would replace it with an earlier state");
  // And the final state saved as an HDF5 snapshot.
  ASSERT_EQ(nbody("--run -q --bodies 64 --steps 10 --checkpoint-every 5 --checkpoint " + file("g.h5") + " --save " +
                  file("end.h5")).code,
            0);
  std::string const saved = slurp(dir_ / "end.h5");
  expect_input_error("--run -q --restart " + file("g_00000005.h5") + " --steps 2 --save " + file("end.h5"),
                     "--save " + file("end.h5") + " holds step 10 of this run, time 0.1, past this run's end at step 7, "
                     "which would replace it with an earlier state; name another file, or run at least as far");
  EXPECT_EQ(slurp(dir_ / "end.h5"), saved);
}

// A restart that relabels its run's units (--mass-unit, --length-unit) would go on with a snapshot series whose files
// so far state the others: one series in two units, whose times and masses jump at its step. Refused; keeping the
// units, or another series, goes on.
TEST_F(Cli, ASnapshotSeriesIsInOneChoiceOfUnits) {
  if (!sim::checkpoints_built()) GTEST_SKIP() << "built without HDF5";
  ASSERT_EQ(nbody("--run -q --bodies 64 --steps 20 --mass-unit 1e3Msun --length-unit 1pc --snapshots " + file("s/s") +
                  " --snapshot-every 10 --checkpoint " + file("c.h5"))
                .code,
            0);
  expect_input_error("--run -q --restart " + file("c.h5") + " --steps 10 --mass-unit 1e4Msun --length-unit 1pc " +
                         "--snapshots " + file("s/s"),
                     "--snapshots " + file("s/s") + ": " + file("s/s_00000020.hdf5") + ", its file at step 20, "
                     "states 1e3Msun, 1pc, and this run's are 1e4Msun, 1pc: one series in two units; name another "
                     "series, or keep the units");
  EXPECT_FALSE(fs::exists(file("s/s_00000030.hdf5")));
  // Other units than the file's relabel the whole run: a warning, which --quiet does not hide (a notice before).
  Result const relabelled = nbody("--run -q --restart " + file("c.h5") + " --steps 10 --mass-unit 1e4Msun "
                                  "--length-unit 1pc --snapshots " + file("t/s"));
  EXPECT_EQ(relabelled.code, 0) << relabelled.err;
  EXPECT_NE(relabelled.err.find("warning: --mass-unit and --length-unit 1e4Msun, 1pc override " + file("c.h5") +
                                "'s 1e3Msun, 1pc: the same numbers in other units, so the run's time reached, its "
                                "series' times and every length and mass read anew in them (time unit 149.1 kyr, "
                                "velocity unit 6.558 km/s)\n"),
            std::string::npos)
      << relabelled.err;
  Result const kept = nbody("--run -q --restart " + file("c.h5") + " --steps 10 --snapshots " + file("s/s"));
  EXPECT_EQ(kept.code, 0);
  EXPECT_EQ(kept.err.find("warning"), std::string::npos) << kept.err;
  // The same scale in other words relabels nothing: no warning, and the series goes on (its readers take the scale).
  Result const same = nbody("--run -q --restart " + file("c.h5") + " --steps 10 --mass-unit 1000Msun --length-unit "
                            "0.001kpc --snapshots " + file("s/s"));
  EXPECT_EQ(same.code, 0) << same.err;
  EXPECT_EQ(same.err.find("warning"), std::string::npos) << same.err;
  EXPECT_TRUE(fs::exists(file("s/s_00000030.hdf5")));
}

// A restart that writes periodic checkpoints and snapshots but names no cadence for them writes them as the run it
// continues did: its checkpoint records how. The files of the two series are those of the run that never stopped.
// A cadence in time taken up from the checkpoint is said in the run's physical unit too, as it was most likely given.
TEST_F(Cli, ACadenceTakenUpIsSaidInTheRunsUnit) {
  if (!sim::checkpoints_built()) GTEST_SKIP() << "built without HDF5";
  ASSERT_EQ(nbody("--run -q --bodies 64 --dt 0.01 --steps 20 --mass-unit 1e4Msun --length-unit 1pc --snapshot-dt 25kyr "
                  "--snapshots " + file("s/s") + " --checkpoint " + file("c.h5"))
                .code,
            0);
  Result const more = nbody("--run --restart " + file("c.h5") + " --steps 20 --snapshots " + file("s/s") +
                            " --checkpoint " + file("c.h5"));
  ASSERT_EQ(more.code, 0) << more.err;
  EXPECT_NE(more.err.find("'s snapshots are at every multiple of time 0.1676771852300863 (25 kyr): so are this run's"),
            std::string::npos)
      << more.err;
}

TEST_F(Cli, ARestartWritesItsCheckpointsAndSnapshotsAsItsRunDid) {
  if (!sim::checkpoints_built()) GTEST_SKIP() << "built without HDF5";
  for (std::string const integrator : {"leapfrog", "hermite4"}) {
    bool const blocks = integrator == "hermite4";
    std::string const cadences = blocks ? "--checkpoint-dt 0.0625 --snapshot-dt 0.125"
                                        : "--checkpoint-every 6 --snapshot-every 8";
    std::string const run = "--run --bodies 96 --precision fp64 -q --integrator " + integrator + " ";
    std::string const whole = blocks ? "--t-end 0.375" : "--steps 40";
    std::string const half = blocks ? "--t-end 0.1875" : "--steps 20";
    std::string const rest = blocks ? "--t-end 0.375" : "--steps 20";
    auto files = [&](const std::string& folder) {
      std::vector<std::string> names;
      for (auto const& e : fs::directory_iterator(dir_ / folder)) names.push_back(e.path().filename().string());
      std::sort(names.begin(), names.end());
      return names;
    };
    for (std::string const folder : {"w", "p"}) {
      fs::remove_all(dir_ / folder);
      fs::create_directories(dir_ / folder);
    }
    ASSERT_EQ(nbody(run + whole + " " + cadences + " --checkpoint " + file("w/c.h5") + " --snapshots " + file("w/s"))
                  .code,
              0)
        << integrator;
    ASSERT_EQ(nbody(run + half + " " + cadences + " --checkpoint " + file("p/c.h5") + " --snapshots " + file("p/s"))
                  .code,
              0)
        << integrator;
    Result const more = nbody("--run --restart " + file("p/c.h5") + " " + rest + " --checkpoint " + file("p/c.h5") +
                              " --snapshots " + file("p/s"));
    ASSERT_EQ(more.code, 0) << integrator << ": " << more.err;
    std::string const checkpoints = blocks ? "at every multiple of time 0.0625" : "every 6 steps";
    std::string const snapshots = blocks ? "at every multiple of time 0.125" : "every 8 steps";
    EXPECT_NE(more.err.find(file("p/c.h5") + "'s periodic checkpoints are " + checkpoints + ": so are this run's "
                            "(--checkpoint-every or --checkpoint-dt sets another)"),
              std::string::npos)
        << integrator << ": " << more.err;
    EXPECT_NE(more.err.find(file("p/c.h5") + "'s snapshots are " + snapshots + ": so are this run's "
                            "(--snapshot-every or --snapshot-dt sets another)"),
              std::string::npos)
        << integrator << ": " << more.err;
    // The same files, but for the half's end: a run that ended where it was asked to writes its end (a stopped one
    // leaves it to its checkpoint: Signals.AChainOfStoppedRunsWritesTheSnapshotsOfOneRun).
    std::vector<std::string> got = files("p"), want = files("w");
    EXPECT_GT(want.size(), 6u) << integrator;
    std::vector<std::string> extra;
    std::set_difference(got.begin(), got.end(), want.begin(), want.end(), std::back_inserter(extra));
    std::vector<std::string> missing;
    std::set_difference(want.begin(), want.end(), got.begin(), got.end(), std::back_inserter(missing));
    EXPECT_TRUE(missing.empty()) << integrator << ": " << testing::PrintToString(missing);
    EXPECT_EQ(extra.size(), 1u) << integrator << ": " << testing::PrintToString(extra);  // the half's end snapshot
    EXPECT_TRUE(extra.empty() || extra[0].rfind("s_", 0) == 0) << integrator << ": " << testing::PrintToString(extra);
    // Each periodic checkpoint is the uninterrupted run's, bit for bit.
    for (auto const& name : want) {
      if (name.rfind("c_", 0) != 0) continue;
      EXPECT_TRUE(test::bitwise_equal(sim::read_checkpoint(file("p/" + name)).bodies,
                                      sim::read_checkpoint(file("w/" + name)).bodies))
          << integrator << " " << name;
    }
    // The job script's line once more, after its end: no step to make, and no cadence to say.
    Result const again = nbody("--run --restart " + file("p/c.h5") + " --checkpoint " + file("p/c.h5") +
                               " --snapshots " + file("p/s"));
    ASSERT_EQ(again.code, 0) << integrator << ": " << again.err;
    EXPECT_EQ(again.err.find("so are this run's"), std::string::npos) << integrator << ": " << again.err;
  }
  // 0 names none between the start and the end, where the file's would be taken up.
  fs::remove_all(dir_ / "z");
  fs::create_directories(dir_ / "z");
  Result const none = nbody("--run --restart " + file("p/c.h5") + " --t-end 0.5 --checkpoint " + file("z/c.h5") +
                            " --checkpoint-every 0 --snapshots " + file("z/s") + " --snapshot-every 0");
  ASSERT_EQ(none.code, 0) << none.err;
  EXPECT_EQ(none.err.find(" are at every multiple"), std::string::npos) << none.err;
  std::vector<std::string> z;
  for (auto const& e : fs::directory_iterator(dir_ / "z")) z.push_back(e.path().filename().string());
  EXPECT_EQ(z.size(), 3u) << testing::PrintToString(z);  // c.h5 and the snapshots at the start and the end
  // A cadence taken up is named as such where the series is refused.
  ASSERT_EQ(nbody("--run --bodies 32 -q --steps 0 --checkpoint " + file("zero.h5") + " --checkpoint-every 5").code, 0);
  fs::create_directories(dir_ / "taken_00000005.h5");
  expect_input_error("--run --restart " + file("zero.h5") + " --steps 20 --checkpoint " + file("taken.h5"),
                     "--checkpoint-every 5 (taken up from " + file("zero.h5") + ") writes " +
                         file("taken_00000005.h5") + ": is a directory");
}

// A restart of an fp64 snapshot series that names no precision writes the rest of it in fp64: in the default (fp32
// for fixed steps) it would replace an earlier start's fp64 files from its step on with fp32 ones, unsaid. The
// precision is the latest readable file's of the run's course (not a damaged one's at the restart's step); a restart
// that makes no step, whose end snapshot is the file at its step, keeps it too. One that names another precision
// writes it, and says the series' is not its own.
TEST_F(Cli, ARestartKeepsItsSnapshotSeriesPrecision) {
  if (!sim::checkpoints_built()) GTEST_SKIP() << "built without HDF5";
  ASSERT_EQ(nbody("--run --bodies 64 -q --steps 20 --snapshots " + file("s") + " --snapshot-every 5 " +
                  "--snapshot-precision fp64 --checkpoint " + file("c.h5") + " --checkpoint-every 10")
                .code,
            0);
  auto const precision_at = [&](int step) {
    char name[32];
    std::snprintf(name, sizeof name, "s_%08d.hdf5", step);
    return sim::read_snapshot(file(name)).precision;
  };
  { std::ofstream(file("s_00000010.hdf5"), std::ios::trunc) << "damaged"; }
  Result const restart =
      nbody("--run --restart " + file("c_00000010.h5") + " --snapshots " + file("s") + " --checkpoint " + file("c.h5"));
  ASSERT_EQ(restart.code, 0) << restart.err;
  EXPECT_NE(restart.err.find("notice: " + file("s_00000005.hdf5") + ", the series' file at step 5, is fp64: so are " +
                             "this run's snapshots (--snapshot-precision sets another)"),
            std::string::npos)
      << restart.err;
  // (The damaged file at the restart's step is written again, as its start: ADamagedSnapshotAtARestartsStepIsWrittenAgain.)
  for (int step : {0, 5, 10, 15, 20}) EXPECT_EQ(precision_at(step), Precision::fp64) << "step " << step;
  // A restart that makes no step writes its end there, in the series' precision.
  Result const none = nbody("--run --restart " + file("c_00000010.h5") + " --steps 0 --snapshots " + file("s"));
  ASSERT_EQ(none.code, 0) << none.err;
  EXPECT_EQ(precision_at(10), Precision::fp64) << none.err;
  Result const named = nbody("--run --restart " + file("c_00000010.h5") + " --snapshots " + file("s") +
                             " --snapshot-precision fp32 --checkpoint " + file("c.h5"));
  ASSERT_EQ(named.code, 0) << named.err;
  EXPECT_NE(named.err.find("notice: " + file("s_00000010.hdf5") + ", the series' file at step 10, is fp64; this " +
                           "run's snapshots are fp32 (--snapshot-precision)"),
            std::string::npos)
      << named.err;
  EXPECT_EQ(precision_at(20), Precision::fp32);
}

// A restart goes on with its series from the file at its step, which holds the state it starts from. Where that file
// can no longer be read (cut short, overwritten since), it is written again from the checkpoint's state, and said: the
// series is then the one a run never stopped writes, byte for byte. (Before, the damaged file was kept, unsaid.)
TEST_F(Cli, ADamagedSnapshotAtARestartsStepIsWrittenAgain) {
  if (!sim::checkpoints_built()) GTEST_SKIP() << "built without HDF5";
  std::string const outputs = " --snapshot-every 5 --checkpoint-every 10 --bodies 64";
  ASSERT_EQ(nbody("--run -q --steps 20 --snapshots " + file("whole") + " --checkpoint " + file("w.h5") + outputs).code,
            0);
  ASSERT_EQ(nbody("--run -q --steps 10 --snapshots " + file("s") + " --checkpoint " + file("c.h5") + outputs).code, 0);
  fs::resize_file(file("s_00000010.hdf5"), 1000);
  Result const restart = nbody("--run --restart " + file("c.h5") + " --steps 10 --snapshots " + file("s") +
                               " --checkpoint " + file("c.h5") + outputs);
  ASSERT_EQ(restart.code, 0) << restart.err;
  EXPECT_NE(restart.err.find("notice: --snapshots " + file("s") + ": " + file("s_00000010.hdf5") +
                             ", the series' file at this run's step, is no snapshot nbody reads (damaged, cut short, or "
                             "another program's): written again, from the state this run starts at"),
            std::string::npos)
      << restart.err;
  for (char const* step : {"00000000", "00000005", "00000010", "00000015", "00000020"})
    EXPECT_EQ(slurp(file(std::string("s_") + step + ".hdf5")), slurp(file(std::string("whole_") + step + ".hdf5")))
        << step;
}

// A cadence by time shorter than any step the run takes (a mistyped exponent) writes a file every step: said, with
// the step, as typed.
TEST_F(Cli, ACadenceShorterThanAnyStepIsSaid) {
  Result const fixed = nbody("--run --bodies 32 --steps 3 --mass-unit 1Msun --length-unit 1au --dt 1d --diagnostics " +
                             file("d.csv") + " --diagnostics-dt 1s");
  ASSERT_EQ(fixed.code, 0) << fixed.err;
  EXPECT_NE(fixed.err.find("notice: --diagnostics-dt 1s is shorter than the time step (--dt 1d): diagnostics rows at "
                           "every step"),
            std::string::npos)
      << fixed.err;
  Result const blocks = nbody("--run --bodies 32 --integrator hermite4 --t-end 0.001 --diagnostics " + file("h.csv") +
                              " --diagnostics-dt 1e-30");
  ASSERT_EQ(blocks.code, 0) << blocks.err;
  EXPECT_NE(blocks.err.find("notice: --diagnostics-dt 1e-30 is shorter than the shortest step hermite4 takes ("),
            std::string::npos)
      << blocks.err;
  Result const fine = nbody("--run --bodies 32 --steps 3 --dt 0.01 --diagnostics " + file("f.csv") +
                            " --diagnostics-dt 0.01");
  ASSERT_EQ(fine.code, 0) << fine.err;
  EXPECT_EQ(fine.err.find("is shorter than"), std::string::npos) << fine.err;
}

// A restart that continues its run's series and names no cadence samples as that run did (its checkpoint records
// how): a job script's restart line need not repeat it, and the series stays the uninterrupted run's. A piece of the
// job that writes no series says its rows will be missing, and passes the cadence on.
TEST_F(Cli, ARestartSamplesItsSeriesAsItsRunDid) {
  if (!sim::checkpoints_built()) GTEST_SKIP() << "built without HDF5";
  for (std::string const cadence : {"--diagnostics-every 7", "--diagnostics-dt 0.03125"}) {
    for (std::string const integrator : {"leapfrog", "hermite4"}) {
      std::string const what = cadence + " " + integrator;
      // Another course's checkpoints from the case before, further on, would be refused (not replaced).
      for (std::string const name : {"c2.h5", "gap.h5"}) fs::remove(file(name));
      std::string const run = "--run --bodies 128 --precision fp64 -q --integrator " + integrator + " ";
      std::string const steps = integrator == "hermite4" ? "--t-end 0.25" : "--steps 40";
      std::string const half = integrator == "hermite4" ? "--t-end 0.125" : "--steps 20";
      std::string const rest = integrator == "hermite4" ? "--t-end 0.25" : "--steps 20";  // from the half on
      ASSERT_EQ(nbody(run + steps + " " + cadence + " --diagnostics " + file("whole.csv")).code, 0) << what;
      ASSERT_EQ(nbody(run + half + " " + cadence + " --diagnostics " + file("d.csv") + " --checkpoint " +
                      file("c.h5")).code,
                0)
          << what;
      std::string const said = cadence == "--diagnostics-dt 0.03125"
                                   ? "at every multiple of time 0.03125"
                                   : std::string("every 7 ") + (integrator == "hermite4" ? "block steps" : "steps");
      // A piece that writes no series passes the cadence on in its checkpoint; where it steps, it says the series
      // misses its rows.
      Result const none = nbody("--run --restart " + file("c.h5") + " --steps 0 --checkpoint " + file("c2.h5"));
      ASSERT_EQ(none.code, 0) << what << ": " << none.err;
      std::string const missing = "'s diagnostics rows are " + said + "; this run writes none, so this run's will "
                                  "be missing from the series (--diagnostics continues them)";
      EXPECT_EQ(none.err.find(missing), std::string::npos) << what << ": " << none.err;  // no step: no row missed
      Result const gap = nbody("--run --restart " + file("c.h5") + " --steps 3 --checkpoint " + file("gap.h5"));
      ASSERT_EQ(gap.code, 0) << what << ": " << gap.err;
      EXPECT_NE(gap.err.find("notice: " + file("c.h5") + missing), std::string::npos) << what << ": " << gap.err;
      sim::RunRecord const passed_on = sim::read_checkpoint(file("gap.h5")).run;
      EXPECT_EQ(passed_on.diagnostics_every, sim::read_checkpoint(file("c.h5")).run.diagnostics_every) << what;
      EXPECT_EQ(passed_on.diagnostics_dt, sim::read_checkpoint(file("c.h5")).run.diagnostics_dt) << what;
      Result const more = nbody("--run --restart " + file("c2.h5") + " " + rest + " --diagnostics " + file("d.csv"));
      ASSERT_EQ(more.code, 0) << what << ": " << more.err;
      EXPECT_NE(more.err.find("notice: " + file("c2.h5") + "'s diagnostics rows are " + said +
                              ": so are this run's (--diagnostics-every or --diagnostics-dt sets another)"),
                std::string::npos)
          << what << ": " << more.err;
      std::string header;
      auto steps_of = [&](const std::string& name) {
        std::vector<double> s;
        for (auto const& row : csv_rows(slurp(file(name)), &header)) s.push_back(row[0]);
        return s;
      };
      EXPECT_EQ(steps_of("d.csv"), steps_of("whole.csv")) << what;
      EXPECT_GT(steps_of("whole.csv").size(), 5u) << what;
      // Named, the restart's own cadence wins, without a word about the file's.
      ASSERT_EQ(nbody(run + half + " " + cadence + " --diagnostics " + file("e.csv") + " --checkpoint " +
                      file("e.h5")).code,
                0);
      Result const own = nbody("--run --restart " + file("e.h5") + " " + rest + " --diagnostics-every 5 " +
                               "--diagnostics " + file("e.csv"));
      ASSERT_EQ(own.code, 0) << what << ": " << own.err;
      EXPECT_EQ(own.err.find("diagnostics rows are"), std::string::npos) << what << ": " << own.err;
    }
  }
  // Steps of another count (block steps for a leapfrog run) are not taken up, and that is said.
  ASSERT_EQ(nbody("--run --bodies 128 -q --steps 20 --diagnostics-every 7 --diagnostics " + file("l.csv") +
                  " --checkpoint " + file("l.h5")).code,
            0);
  Result const other = nbody("--run --restart " + file("l.h5") + " --integrator hermite4 --t-end 1 --diagnostics " +
                             file("h.csv"));
  ASSERT_EQ(other.code, 0) << other.err;
  EXPECT_NE(other.err.find("notice: " + file("l.h5") + "'s diagnostics rows are every 7 steps, which hermite4 does "
                           "not count in: not taken up"),
            std::string::npos)
      << other.err;
  // That restart writes no state of its own: said (at its start), so that a job script's next piece does not start
  // from the same file unawares.
  EXPECT_NE(other.err.find("notice: this run continues " + file("l.h5") + " but writes no state of its own (no "
                           "--checkpoint or --save): a restart after it starts from " + file("l.h5") + " again"),
            std::string::npos)
      << other.err;
}

// A restart naming its run's series again continues it: the rows before the restart's step stay, and the series
// reads as the run's without the stop, to the bit but for the wall clock. So does a series the stopped run left
// unfinished (it died: the rows are in the partial file). Another run's series is replaced, with a notice; another
// run's unfinished series is refused.
// A job killed before it wrote a checkpoint to restart from is run again by the same command: its unfinished series
// (rows measuring this very start, at this run's times) is taken over, said; another run's is still refused. A
// checkpoint further on than a run starts is said to be replaced, with the restart that would go on from it.
TEST_F(Cli, AJobKilledBeforeItsFirstCheckpointRunsAgainFromItsStart) {
  std::string const run = "--run --bodies 256 --precision fp64 --diagnostics-every 100 --steps 300 ";
  ASSERT_EQ(nbody(run + "-q --diagnostics " + file("whole.csv")).code, 0);
  std::string const whole = slurp(file("whole.csv"));
  auto without_wall = [](const std::string& text) {
    std::string header;
    auto rows = csv_rows(text, &header);
    for (auto& row : rows) row.erase(row.begin() + 2);
    return rows;
  };
  // Killed while writing its row at step 200: rows 0 and 100 whole, and half a row.
  std::string const killed = whole.substr(0, whole.find("\n200,") + 8);
  std::ofstream(file("d.csv.partial")) << killed;
  Result const again = nbody(run + "--diagnostics " + file("d.csv"));
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_NE(again.err.find("notice: --diagnostics " + file("d.csv") + ": " + file("d.csv.partial") + " is the "
                           "unfinished series of an earlier start from this one (its 2 rows measure this start's "
                           "energy, to the bit): kept until this run's rows are shown to be the same, each to the bit "
                           "but for the wall clock, up to its last (step 100), then replaced by them; a row that "
                           "differs keeps it, and this run writes no series\n"),
            std::string::npos)
      << again.err;
  EXPECT_FALSE(fs::exists(file("d.csv.partial")));
  EXPECT_EQ(without_wall(slurp(file("d.csv"))), without_wall(whole));
  // A shorter run again: its rows are the earlier start's first ones, which reach further and stay.
  std::ofstream(file("s.csv.partial")) << killed;
  Result const shorter = nbody("--run --bodies 256 --precision fp64 --diagnostics-every 100 --steps 50 --diagnostics " +
                               file("s.csv"));
  ASSERT_EQ(shorter.code, 0) << shorter.err;
  EXPECT_EQ(slurp(file("s.csv.partial")), killed);
  ASSERT_TRUE(fs::exists(file("s.csv")));
  std::string header;
  EXPECT_EQ(csv_rows(slurp(file("s.csv")), &header).size(), 2u) << "steps 0 and 50";
  // Another run from the same bodies, whose start is this one's to the bit: its first row after the start differs,
  // and it is kept as it was; the run goes on and writes no series.
  std::ofstream(file("y.csv.partial")) << killed;
  Result const other = nbody(run + "--integrator yoshida4 --diagnostics " + file("y.csv"));
  EXPECT_EQ(other.code, 1) << other.err;
  EXPECT_NE(other.err.find("error: the diagnostics series " + file("y.csv") + " is not written (--diagnostics " +
                           file("y.csv") + ": " + file("y.csv.partial") + " is another run's after all: its row at "
                           "step 100 differs from this run's (another integrator or setting, from the same bodies); it "
                           "is kept as it was, and this run writes no series"),
            std::string::npos)
      << other.err;
  EXPECT_EQ(slurp(file("y.csv.partial")), killed);
  EXPECT_FALSE(fs::exists(file("y.csv")));
  // Rows at other steps than the earlier start's (another cadence): none past the start compared, nothing shown.
  std::ofstream(file("k.csv.partial")) << killed;
  Result const cadence = nbody("--run --bodies 256 --precision fp64 --diagnostics-every 30 --steps 300 --diagnostics " +
                               file("k.csv"));
  EXPECT_EQ(cadence.code, 1) << cadence.err;
  EXPECT_NE(cadence.err.find(file("k.csv.partial") + " cannot be shown this run's: none of its rows past the start "
                             "falls at a step of this run's rows"),
            std::string::npos)
      << cadence.err;
  EXPECT_EQ(slurp(file("k.csv.partial")), killed);
  // Another run's: another time step (its rows at other times), another softening (another start energy).
  std::ofstream(file("e.csv.partial")) << killed;
  expect_input_error(run + "--dt 0.02 --diagnostics " + file("e.csv"),
                     "e.csv.partial exists (the unfinished series of a run that died or could not write it all, not "
                     "this run's: row 2 (step 100, time 1) is not at a time of this run, whose step 100 is at time 2); "
                     "rename or remove it first");
  expect_input_error(run + "--softening 0.02 --diagnostics " + file("e.csv"),
                     "not this run's: row 1 (step 0, time 0) measures its energy error from another start energy");
  EXPECT_EQ(slurp(file("e.csv.partial")), killed);
  if (!sim::checkpoints_built()) return;
  ASSERT_EQ(nbody("--run -q --bodies 256 --precision fp64 --steps 300 --checkpoint " + file("c.h5")).code, 0);
  std::string const ten = "--run --bodies 256 --precision fp64 --steps 10 --checkpoint " + file("c.h5");
  Result const from_start = nbody(ten);
  ASSERT_EQ(from_start.code, 0) << from_start.err;
  EXPECT_NE(from_start.err.find("notice: --checkpoint " + file("c.h5") + " holds step 300, past this run's start at "
                                "step 0: this run replaces it when it ends (one stopped before, by a signal or a "
                                "failure, keeps it); --restart " + file("c.h5") + " would go on from there instead\n"),
            std::string::npos)
      << from_start.err;
  // Continued in place, or behind this run's start: nothing to say.
  for (std::string const& args : {"--run --restart " + file("c.h5") + " --steps 5 --checkpoint " + file("c.h5"),
                                  "--run --restart " + file("c.h5") + " --steps 5 --checkpoint " + file("c2.h5"),
                                  "--run --restart " + file("c2.h5") + " --steps 5 --checkpoint " + file("c.h5")}) {
    Result const r = nbody(args);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.err.find("holds step"), std::string::npos) << args << "\n" << r.err;
  }
}

// A checkpoint path that holds another run's checkpoint (a restart from the wrong file, say): replaced when the run
// ends, as any output is, but said as a warning, even with -q, and in --json. The same run's, run again, is not.
TEST_F(Cli, AnotherRunsCheckpointReplacedIsAWarning) {
  if (!sim::checkpoints_built()) GTEST_SKIP() << "built without HDF5";
  std::string const run = "--run --bodies 256 --steps 40 -q ";
  ASSERT_EQ(nbody(run + "--seed 7 --checkpoint " + file("other.h5")).code, 0);
  ASSERT_EQ(nbody(run + "--checkpoint " + file("full.h5")).code, 0);
  Result const wrong = nbody("--run --restart " + file("other.h5") + " --steps 10 -q --checkpoint " + file("full.h5") +
                             " --json " + file("wrong.json"));
  ASSERT_EQ(wrong.code, 0) << wrong.err;
  std::string const said = "--checkpoint " + file("full.h5") + " holds another run's state, at step 40: plummer (seed "
                           "42), 256 bodies, where this run is plummer (seed 7), 256 bodies: this run replaces it "
                           "when it ends (one stopped before, by a signal or a failure, keeps it): name another file "
                           "to keep it";
  EXPECT_NE(wrong.err.find("warning: " + said + "\n"), std::string::npos) << wrong.err;
  EXPECT_EQ(nlohmann::json::parse(slurp(file("wrong.json"))).at("checkpoint_replaced").get<std::string>(), said);
  EXPECT_EQ(sim::read_checkpoint(file("full.h5")).run.seed, 7u);
  // Another body count is another run's too; the same run again from its start is not (a notice says it is ahead).
  Result const more = nbody("--run --bodies 512 --steps 10 -q --checkpoint " + file("other.h5"));
  EXPECT_NE(more.err.find("warning: --checkpoint " + file("other.h5") + " holds another run's state, at step 40: "
                          "plummer (seed 7), 256 bodies, where this run is plummer (seed 42), 512 bodies"),
            std::string::npos)
      << more.err;
  Result const again = nbody("--run --bodies 256 --steps 10 --checkpoint " + file("full.h5") + " --seed 7 --json " +
                             file("again.json"));
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(again.err.find("warning:"), std::string::npos) << again.err;
  EXPECT_NE(again.err.find("notice: --checkpoint " + file("full.h5") + " holds step 50, past this run's start"),
            std::string::npos)
      << again.err;
  EXPECT_TRUE(nlohmann::json::parse(slurp(file("again.json"))).at("checkpoint_replaced").is_null());
  // The same file of bodies, named another way, is the same run's source.
  ASSERT_EQ(nbody("--run --bodies 128 --steps 0 -q --save " + file("ic.bin")).code, 0);
  ASSERT_EQ(nbody("--run --load " + file("ic.bin") + " --steps 5 -q --checkpoint " + file("l.h5")).code, 0);
  Result const renamed = nbody("--run --load " + file("./ic.bin") + " --steps 5 -q --checkpoint " + file("l.h5"));
  ASSERT_EQ(renamed.code, 0) << renamed.err;
  EXPECT_EQ(renamed.err.find("warning:"), std::string::npos) << renamed.err;
}

TEST_F(Cli, ARestartContinuesItsRunsSeries) {
  if (!sim::checkpoints_built()) GTEST_SKIP() << "built without HDF5";
  std::string const run = "--run --bodies 256 --precision fp64 --diagnostics-every 100 -q ";
  ASSERT_EQ(nbody(run + "--steps 300 --diagnostics " + file("whole.csv")).code, 0);
  ASSERT_EQ(nbody(run + "--steps 250 --diagnostics " + file("d.csv") + " --checkpoint " + file("c.h5")).code, 0);
  std::string const first = slurp(file("d.csv"));  // rows 0, 100, 200, 250
  // The same rows, less the wall clock's column.
  auto without_wall = [](const std::string& text) {
    std::string header;
    auto rows = csv_rows(text, &header);
    for (auto& row : rows) row.erase(row.begin() + 2);
    return rows;
  };
  auto const whole = without_wall(slurp(file("whole.csv")));
  ASSERT_EQ(whole.size(), 4u);  // 0, 100, 200, 300

  Result const more = nbody("--run --restart " + file("c.h5") + " --steps 50 --diagnostics-every 100 --diagnostics " +
                            file("d.csv") + " --json " + file("more.json"));
  ASSERT_EQ(more.code, 0) << more.err;
  EXPECT_NE(more.err.find("notice: --diagnostics " + file("d.csv") + ": continues " + file("d.csv") +
                          ": its 3 rows before step 250 kept, 1 row from step 250 on replaced"),
            std::string::npos)
      << more.err;
  auto const j = nlohmann::json::parse(slurp(file("more.json")));
  // This run's: its end. Its start, step 250, is off the grid of the rows it continues (see
  // ARestartsSeriesIsTheOneOfARunThatNeverStopped).
  EXPECT_EQ(j["diagnostics_samples"], 1);
  EXPECT_TRUE(j.at("diagnostics_replaced").is_null());  // continued, not replaced
  auto const continued = without_wall(slurp(file("d.csv")));
  EXPECT_EQ(continued, whole);  // 0, 100, 200, 300
  EXPECT_EQ(slurp(file("d.csv")).rfind(first.substr(0, first.rfind("\n250,") + 1), 0), 0u) << "the rows kept as written";
  EXPECT_EQ(more.err.find("steps apart"), std::string::npos) << more.err;  // the rows' own cadence: nothing said
  // Rows at another step cadence than the ones kept are said: the series' intervals change at the restart.
  std::ofstream(file("every50.csv")) << first;
  Result const every50 = nbody("--run --restart " + file("c.h5") + " --steps 50 --diagnostics-every 50 --diagnostics " +
                               file("every50.csv"));
  ASSERT_EQ(every50.code, 0) << every50.err;
  EXPECT_NE(every50.err.find(": its 3 rows before step 250 kept, 1 row from step 250 on replaced; they are 100 steps "
                             "apart, this run's 50: --diagnostics-every 100 (or the --diagnostics-dt they were taken "
                             "at) keeps the series even"),
            std::string::npos)
      << every50.err;
  // Rows steps of dt apart continued in block steps: no step cadence falls where they did, only a time.
  std::ofstream(file("blocks.csv")) << first;
  Result const blocks = nbody("--run --restart " + file("c.h5") + " --integrator hermite4 --steps 20 --diagnostics " +
                              file("blocks.csv"));
  ASSERT_EQ(blocks.code, 0) << blocks.err;
  EXPECT_NE(blocks.err.find(": its 3 rows before step 250 kept, 1 row from step 250 on replaced; they are 100 steps "
                            "apart, which this run, in block steps, does not count in: --diagnostics-dt at the time "
                            "between them keeps the series even"),
            std::string::npos)
      << blocks.err;
  // By time, its rows fall where the time says, as theirs may have: nothing to say.
  std::ofstream(file("blocks_dt.csv")) << first;
  Result const blocks_by_time = nbody("--run --restart " + file("c.h5") + " --integrator hermite4 --steps 20 " +
                                      "--diagnostics-dt 1 --diagnostics " + file("blocks_dt.csv"));
  ASSERT_EQ(blocks_by_time.code, 0) << blocks_by_time.err;
  EXPECT_EQ(blocks_by_time.err.find("which this run, in block steps, does not count in"), std::string::npos)
      << blocks_by_time.err;

  // A run that died left its rows in the partial file, the last one half written: the restart takes them up.
  std::ofstream(file("e.csv.partial")) << first << "300,0.3,1.5";
  Result const after_crash =
      nbody("--run --restart " + file("c.h5") + " --steps 50 --diagnostics-every 100 --diagnostics " + file("e.csv"));
  ASSERT_EQ(after_crash.code, 0) << after_crash.err;
  EXPECT_NE(after_crash.err.find(": continues " + file("e.csv.partial") + ": its 3 rows before step 250 kept"),
            std::string::npos)
      << after_crash.err;
  EXPECT_FALSE(fs::exists(file("e.csv.partial")));
  EXPECT_EQ(without_wall(slurp(file("e.csv"))), continued);

  // A series written again with CR LF line ends (on Windows, say) holds the same rows: continued, in its line ends.
  auto crlf = [](std::string text) {
    for (std::size_t at = text.find('\n'); at != std::string::npos; at = text.find('\n', at + 2)) text.insert(at, "\r");
    return text;
  };
  std::ofstream(file("w.csv")) << crlf(first);
  std::ofstream(file("wp.csv.partial")) << crlf(first) << "300,0.3";
  for (std::string const name : {"w.csv", "wp.csv"}) {
    Result const windows =
        nbody("--run --restart " + file("c.h5") + " --steps 50 --diagnostics-every 100 --diagnostics " + file(name));
    ASSERT_EQ(windows.code, 0) << windows.err;
    EXPECT_NE(windows.err.find(": its 3 rows before step 250 kept, 1 row from step 250 on replaced"),
              std::string::npos)
        << windows.err;
    std::string const text = slurp(file(name));
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 5) << text;  // the header and rows 0, 100, 200, 300
    EXPECT_EQ(std::count(text.begin(), text.end(), '\r'), 5) << text;  // each line in its kind
    std::string lf = text;
    lf.erase(std::remove(lf.begin(), lf.end(), '\r'), lf.end());
    EXPECT_EQ(without_wall(lf), whole);
  }

  // A restart from an earlier checkpoint keeps the rows before it, and replaces the rest: here its checkpoint's run
  // wrote no series, so nothing shows the rows past it to be the ones it computes again (else they are held: see
  // ARestartFromAnEarlierCheckpointKeepsTheRowsItHasNotReached).
  ASSERT_EQ(nbody("--run --bodies 256 --precision fp64 -q --steps 100 --checkpoint " + file("c100.h5")).code, 0);
  std::ofstream(file("f.csv.partial")) << first;
  Result const earlier =
      nbody("--run --restart " + file("c100.h5") + " --steps 50 --diagnostics-every 100 --diagnostics " + file("f.csv"));
  ASSERT_EQ(earlier.code, 0) << earlier.err;
  EXPECT_NE(earlier.err.find(": continues " + file("f.csv.partial") + ": its 1 row before step 100 kept, 3 rows from "
                             "step 100 on replaced"),
            std::string::npos)
      << earlier.err;
  std::string header;
  std::vector<double> f_steps;
  for (auto const& row : csv_rows(slurp(file("f.csv")), &header)) f_steps.push_back(row[0]);
  EXPECT_EQ(f_steps, (std::vector<double>{0, 100, 150}));
  EXPECT_FALSE(fs::exists(file("f.csv.partial")));

  // A series that ends before the checkpoint's step by more than its cadence (the run got there writing none of it:
  // a restart in between without --diagnostics) goes on with a gap, which is said.
  ASSERT_EQ(nbody(run + "--steps 100 --diagnostics " + file("gap.csv") + " --checkpoint " + file("g100.h5")).code, 0);
  ASSERT_EQ(nbody("--run -q --restart " + file("g100.h5") + " --steps 150 --checkpoint " + file("g250.h5")).code, 0);
  Result const gap = nbody("--run --restart " + file("g250.h5") + " --steps 50 --diagnostics-every 100 --diagnostics " +
                           file("gap.csv"));
  ASSERT_EQ(gap.code, 0) << gap.err;
  EXPECT_NE(gap.err.find(": continues " + file("gap.csv") + ": its 2 rows before step 250 kept; it has no rows "
                         "between step 100 and step 250 (1 row at its cadence, every 100 steps): the run got from one "
                         "to the other without writing this series, and the gap stays"),
            std::string::npos)
      << gap.err;
  // By time: the rows' times, not their steps, say how many are missing (here the middle run doubled dt).
  ASSERT_EQ(nbody(run.substr(0, run.find("--diagnostics-every")) + "-q --steps 100 --diagnostics-dt 0.25 " +
                  "--diagnostics " + file("t.csv") + " --checkpoint " + file("t100.h5")).code,
            0);
  ASSERT_EQ(nbody("--run -q --restart " + file("t100.h5") + " --steps 100 --dt 0.02 --checkpoint " + file("t200.h5"))
                .code,
            0);
  Result const by_time = nbody("--run --restart " + file("t200.h5") + " --steps 10 --diagnostics " + file("t.csv"));
  EXPECT_NE(by_time.err.find("it has no rows between step 100 and step 200 (7 rows at its cadence, every 0.25 in "
                             "time)"),
            std::string::npos)
      << by_time.err;
  // A checkpoint of a run that wrote no series passes on the digest of the one it continued: another run's rows are
  // still told apart after it.
  ASSERT_EQ(nbody("--run -q --restart " + file("c.h5") + " --steps 50 --checkpoint " + file("c300.h5")).code, 0);
  fs::create_directories(dir_ / "carry");
  ASSERT_EQ(nbody(run + "--steps 400 --integrator yoshida4 --diagnostics " + file("carry/d.csv")).code, 0);
  std::string const other_rows = slurp(file("carry/d.csv"));
  Result const carried = nbody("--run --restart " + file("c300.h5") + " --steps 100 --diagnostics " + file("carry/d.csv"));
  EXPECT_NE(carried.err.find(file("carry/d.csv") + " is not this run's series (its first 3 rows are not the rows the "
                             "run wrote"),
            std::string::npos)
      << carried.err;
  // Fewer rows than the digest counts cannot be shown the run's or another's: kept, with a warning that says so.
  fs::create_directories(dir_ / "few");
  std::size_t const two_lines = other_rows.find('\n', other_rows.find('\n') + 1) + 1;
  std::ofstream(file("few/d.csv")) << other_rows.substr(0, two_lines);  // the header and row 0
  Result const few = nbody("--run --restart " + file("c.h5") + " --steps 10 --diagnostics " + file("few/d.csv"));
  EXPECT_NE(few.err.find("warning: --diagnostics " + file("few/d.csv") + ": continues " + file("few/d.csv") +
                         ": its 1 row before step 250 kept; the run wrote 3 rows before step 250 (by the digest of "
                         "them it recorded), and this file holds 1: cut short"),
            std::string::npos)
      << few.err;
  EXPECT_EQ(more.err.find("the gap stays"), std::string::npos) << more.err;
  // Two rows kept tell no cadence of theirs; the checkpoint's (100) does: a restart at another (50) sees no gap.
  EXPECT_EQ(every50.err.find("the gap stays"), std::string::npos) << every50.err;
  EXPECT_EQ(earlier.err.find("the gap stays"), std::string::npos) << earlier.err;

  // A partial file that holds no row (a run stopped before its first sample) has nothing to lose: taken over.
  std::ofstream(file("g.csv.partial")) << "";
  std::ofstream(file("h.csv.partial")) << first.substr(0, first.find('\n') + 1);  // the header
  EXPECT_EQ(nbody(run + "--steps 10 --diagnostics " + file("g.csv")).code, 0);
  EXPECT_EQ(nbody(run + "--steps 10 --diagnostics " + file("h.csv")).code, 0);
  EXPECT_EQ(csv_rows(slurp(file("h.csv")), &header).size(), 2u);

  // The same start (the same energy) with another dt: its rows are at other times than this run's steps.
  ASSERT_EQ(nbody(run + "--steps 200 --dt 0.005 --diagnostics " + file("half.csv")).code, 0);
  Result const other_dt = nbody("--run --restart " + file("c.h5") + " --steps 50 --diagnostics " + file("half.csv"));
  ASSERT_EQ(other_dt.code, 0) << other_dt.err;
  EXPECT_NE(other_dt.err.find(file("half.csv") + " is not this run's series (row 2 (step 100, time 0.5) is not at a "
                              "time of this run, at time 2.5 at step 250 (its step 100 is at time 1)): replaced when "
                              "the run ends"),
            std::string::npos)
      << other_dt.err;

  // Another integrator from the same bodies with the same dt: its rows have this run's start energy and times, but
  // not the rows the run wrote, which its checkpoint records by a digest (of d.csv: here one in another folder).
  fs::create_directories(dir_ / "other");
  ASSERT_EQ(nbody(run + "--steps 300 --integrator yoshida4 --diagnostics " + file("other/d.csv")).code, 0);
  Result const other_integrator =
      nbody("--run --restart " + file("c.h5") + " --steps 50 --diagnostics " + file("other/d.csv"));
  ASSERT_EQ(other_integrator.code, 0) << other_integrator.err;
  EXPECT_NE(other_integrator.err.find(file("other/d.csv") + " is not this run's series (its first 3 rows are not the "
                                      "rows the run wrote before step 250 (by the digest of them that its checkpoint, "
                                      "or its last run, recorded: another run's from the same start, or changed "
                                      "since)): replaced when the run ends"),
            std::string::npos)
      << other_integrator.err;
  auto const replaced_by = without_wall(slurp(file("other/d.csv")));  // this run's rows only: its start and end
  ASSERT_EQ(replaced_by.size(), 2u);
  EXPECT_EQ(replaced_by[0][0], 250);
  EXPECT_EQ(replaced_by[1], continued.back());
  // The same rows under another name are no file the digest is of: the other checks take them.
  ASSERT_EQ(nbody(run + "--steps 300 --integrator yoshida4 --diagnostics " + file("yoshida.csv")).code, 0);
  Result const renamed = nbody("--run --restart " + file("c.h5") + " --steps 50 --diagnostics " + file("yoshida.csv"));
  EXPECT_NE(renamed.err.find("continues " + file("yoshida.csv") + ": its 3 rows before step 250 kept"),
            std::string::npos)
      << renamed.err;
  // A shorter copy of the run's rows (the partial file of an earlier start that died) beside them is no other run's:
  // the digest counts more rows than it holds, and the rows that reach further are continued.
  fs::create_directories(dir_ / "cut");
  std::ofstream(file("cut/d.csv")) << first;
  std::ofstream(file("cut/d.csv.partial")) << first.substr(0, first.find("\n200,") + 1);  // rows 0, 100
  Result const shorter = nbody("--run --restart " + file("c.h5") + " --steps 50 --diagnostics " + file("cut/d.csv"));
  ASSERT_EQ(shorter.code, 0) << shorter.err;
  EXPECT_NE(shorter.err.find(": continues " + file("cut/d.csv") + ": its 3 rows before step 250 kept"),
            std::string::npos)
      << shorter.err;
  EXPECT_EQ(without_wall(slurp(file("cut/d.csv"))), continued);

  // A file that is no series at all (no line end in its first 4 KiB) is replaced unread.
  std::ofstream(file("blob.csv")) << std::string(5000, 'x');
  Result const blob = nbody("--run --restart " + file("c.h5") + " --steps 50 --diagnostics " + file("blob.csv"));
  ASSERT_EQ(blob.code, 0) << blob.err;
  EXPECT_NE(blob.err.find(file("blob.csv") + " is not this run's series (it is not a series of nbody's (no line in "
                          "its first 4 KiB)): replaced when the run ends"),
            std::string::npos)
      << blob.err;

  // Another run's series (another seed: another start energy) is replaced, and a warning says why, even with -q.
  ASSERT_EQ(nbody(run + "--steps 100 --seed 7 --diagnostics " + file("other.csv")).code, 0);
  std::string const other = slurp(file("other.csv"));
  Result const replaced = nbody("--run --restart " + file("c.h5") + " --steps 50 --diagnostics-every 100 -q "
                                "--diagnostics " + file("other.csv") + " --json " + file("replaced.json"));
  ASSERT_EQ(replaced.code, 0) << replaced.err;
  std::string const not_this_runs = "--diagnostics " + file("other.csv") + ": " + file("other.csv") +
                                    " is not this run's series (row 1 (step 0, time 0) measures its energy error from "
                                    "another start energy than this run's ";
  EXPECT_NE(replaced.err.find("warning: " + not_this_runs), std::string::npos) << replaced.err;
  // --json names the series replaced, in the notice's words.
  EXPECT_EQ(nlohmann::json::parse(slurp(file("replaced.json"))).at("diagnostics_replaced").get<std::string>().rfind(
                not_this_runs, 0),
            0u);
  auto const fresh = without_wall(slurp(file("other.csv")));
  ASSERT_EQ(fresh.size(), 2u);
  EXPECT_EQ(fresh[1], whole[3]);

  // Another run's unfinished series is refused, unchanged.
  std::ofstream(file("other.csv.partial")) << other;
  expect_input_error("--run --restart " + file("c.h5") + " --steps 50 --diagnostics " + file("other.csv"),
                     "other.csv.partial exists (the unfinished series of a run that died or could not write it all, "
                     "not this run's: row 1 (step 0, time 0) measures its energy error from another start energy");
  EXPECT_EQ(slurp(file("other.csv.partial")), other);

  // A restart with another softening measures its energy error from its own start energy: the run's series begins
  // again (the rows before would measure another energy). A partial file of rows from before is refused.
  std::string const earlier_rows = slurp(file("d.csv"));
  std::ofstream(file("soft.csv")) << earlier_rows;
  Result const softer = nbody("--run --restart " + file("c.h5") + " --softening 0.05 --steps 50 --diagnostics-every "
                              "100 --diagnostics " + file("soft.csv") + " --json " + file("soft.json"));
  ASSERT_EQ(softer.code, 0) << softer.err;
  std::string const begins_again = "--diagnostics " + file("soft.csv") + ": replaced when the run ends: this run "
                                   "measures its energy error from a new start energy, so its series begins again at "
                                   "step 250; the earlier series is kept as " + file("soft.earlier-1.csv");
  EXPECT_NE(softer.err.find("warning: " + begins_again), std::string::npos) << softer.err;
  EXPECT_EQ(nlohmann::json::parse(slurp(file("soft.json"))).at("diagnostics_replaced"), begins_again);
  std::vector<double> soft_steps;
  for (auto const& row : csv_rows(slurp(file("soft.csv")), &header)) soft_steps.push_back(row[0]);
  EXPECT_EQ(soft_steps, (std::vector<double>{250, 300}));
  // The rows it began again from are the run's own, of the softening before: kept, byte for byte, under a name of
  // their own; the same restart run again continues its new series and keeps nothing more.
  EXPECT_EQ(slurp(file("soft.earlier-1.csv")), earlier_rows);
  std::string const soft_rows = slurp(file("soft.csv"));
  Result const softer_again = nbody("--run --restart " + file("c.h5") + " --softening 0.05 --steps 50 "
                                    "--diagnostics-every 100 --diagnostics " + file("soft.csv"));
  ASSERT_EQ(softer_again.code, 0) << softer_again.err;
  EXPECT_EQ(softer_again.err.find("earlier series is kept"), std::string::npos) << softer_again.err;
  EXPECT_FALSE(fs::exists(file("soft.earlier-2.csv")));
  EXPECT_EQ(without_wall(slurp(file("soft.csv"))), without_wall(soft_rows));
  std::ofstream(file("soft.csv.partial")) << first;
  Result const refused =
      nbody("--run --restart " + file("c.h5") + " --softening 0.05 --steps 50 --diagnostics " + file("soft.csv"));
  EXPECT_EQ(refused.code, 2) << refused.err;
  EXPECT_NE(refused.err.find("\nerror: --diagnostics " + file("soft.csv") + ": " + file("soft.csv.partial") +
                             " exists (the unfinished series of a run that died or could not write it all, not this "
                             "run's: row 1 (step 0, time 0) measures its energy error from another start energy"),
            std::string::npos)
      << refused.err;
  EXPECT_EQ(slurp(file("soft.csv.partial")), first);
  // Such a restart that died, run again, goes on with its own series: it measures the same new start energy.
  std::string const softer_run = "--run --restart " + file("c.h5") + " --softening 0.05 --steps 50 "
                                 "--diagnostics-every 10 --diagnostics " + file("soft2.csv");
  ASSERT_EQ(nbody(softer_run).code, 0);
  auto const soft_whole = without_wall(slurp(file("soft2.csv")));
  ASSERT_EQ(soft_whole.size(), 6u);  // 250, 260, ..., 300
  std::string const soft_text = slurp(file("soft2.csv"));
  std::size_t cut = 0;
  for (int line = 0; line < 3; ++line) cut = soft_text.find('\n', cut) + 1;  // the header, 250 and 260
  fs::remove(file("soft2.csv"));
  std::ofstream(file("soft2.csv.partial")) << soft_text.substr(0, cut);
  Result const again = nbody(softer_run);
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_NE(again.err.find(": continues " + file("soft2.csv.partial") + ": no row before step 250, 2 rows from step "
                           "250 on replaced"),
            std::string::npos)
      << again.err;
  EXPECT_EQ(without_wall(slurp(file("soft2.csv"))), soft_whole);

  // A series begun again off its grid (rows 250, 280, 320, 360: the first gap short) still has its cadence, said to
  // a restart at another one.
  ASSERT_EQ(nbody("--run -q --restart " + file("c.h5") + " --softening 0.05 --steps 150 --diagnostics-every 40 "
                  "--diagnostics " + file("soft3.csv") + " --checkpoint " + file("soft3.h5")).code,
            0);
  Result const default_every =
      nbody("--run --restart " + file("soft3.h5") + " --steps 10 --diagnostics-every 100 --diagnostics " +
            file("soft3.csv"));
  ASSERT_EQ(default_every.code, 0) << default_every.err;
  EXPECT_NE(default_every.err.find(": its 4 rows before step 400 kept, 1 row from step 400 on replaced; they are 40 "
                                   "steps apart, this run's 100: --diagnostics-every 40"),
            std::string::npos)
      << default_every.err;

  // JSON lines the same way.
  ASSERT_EQ(nbody(run + "--steps 250 --diagnostics " + file("d.jsonl")).code, 0);
  ASSERT_EQ(nbody("--run -q --restart " + file("c.h5") + " --steps 50 --diagnostics-every 100 --diagnostics " +
                  file("d.jsonl")).code,
            0);
  std::istringstream lines(slurp(file("d.jsonl")));
  std::string line;
  std::vector<std::uint64_t> steps;
  while (std::getline(lines, line)) steps.push_back(nlohmann::json::parse(line)["step"].get<std::uint64_t>());
  EXPECT_EQ(steps, (std::vector<std::uint64_t>{0, 100, 200, 300}));
}

// The disk model assumes a 0.05 core around its central mass; with the defaults a collision must
// conserve energy (measured 8.3e-5 here at N = 2048, t = 3; with softening 0.01 a 4096-body disk
// reached 1.15).
TEST_F(Cli, CollisionWithItsDefaultsConservesEnergy) {
  Result const r = nbody("--run --scenario collision --bodies 2048 --steps 300 -q --json " + file("c.json"));
  ASSERT_EQ(r.code, 0) << r.err;
  auto const j = nlohmann::json::parse(slurp(file("c.json")));
  double const error = j["end"]["relative_energy_error"];
  std::printf("collision, 2048 bodies, t = 3: energy error %.3e\n", error);
  EXPECT_LT(error, 2e-3);
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
  Result const bad = nbody("--run --scenario disk --bodies 2048 --steps 300 --softening 0.01 -q --json " + file("d.json"));
  ASSERT_EQ(bad.code, 0) << bad.err;
  EXPECT_GT(nlohmann::json::parse(slurp(file("d.json")))["end"]["relative_energy_error"].get<double>(), 2e-3)
      << "negative control: an unresolved core should break the bound";
}

// A run whose energy ends far from the start's (more than 1e-2 of it) did not resolve its orbits; it still ends
// normally (exit 0, its outputs written), with one line that says so and what to change.
TEST_F(Cli, AnUnresolvedRunWarnsAboutItsEnergy) {
  Result const leapfrog = nbody("--run --scenario two-body --eccentricity 0.99 --softening 0.001 --steps 2000 -q");
  EXPECT_EQ(leapfrog.code, 0) << leapfrog.err;
  EXPECT_NE(leapfrog.err.find("warning: the energy changed by"), std::string::npos) << leapfrog.err;
  EXPECT_NE(leapfrog.err.find("give a smaller --dt (this run: 0.01) or a larger --softening (this run: 0.001)"),
            std::string::npos)
      << leapfrog.err;
  EXPECT_EQ(std::count(leapfrog.err.begin(), leapfrog.err.end(), '\n'), 1) << leapfrog.err;
  // Leapfrog's samples on the way are not judged (a symplectic integrator's error rises at a close passage and
  // recovers): its series past the bound at step 400 still gets only the end's line.
  Result const sampled = nbody("--run --scenario two-body --eccentricity 0.99 --softening 0.001 --steps 2000 -q "
                               "--diagnostics " + file("e100.csv") + " --diagnostics-every 100");
  EXPECT_EQ(sampled.code, 0) << sampled.err;
  EXPECT_EQ(sampled.err.find("warning: the energy changed by "), 0u) << sampled.err;
  EXPECT_EQ(std::count(sampled.err.begin(), sampled.err.end(), '\n'), 1) << sampled.err;
  // A restart of that run is judged by its own energy change, not the file's step 0: one that takes the advice
  // (a step 100 times smaller) or makes no steps is not warned about.
  Result const saved = nbody("--run --scenario two-body --eccentricity 0.99 --softening 0.001 --steps 2000 -q "
                             "--checkpoint " + file("unresolved.h5"));
  ASSERT_EQ(saved.code, 0) << saved.err;
  for (char const* more : {"--dt 0.0001 --steps 100", "--steps 0"}) {
    Result const again = nbody("--run -q --restart " + file("unresolved.h5") + " " + more);
    EXPECT_EQ(again.code, 0) << more << ": " << again.err;
    EXPECT_EQ(again.err.find("warning"), std::string::npos) << more << ": " << again.err;
  }
  Result const hermite = nbody("--run --integrator hermite4 --scenario two-body --eccentricity 0.999999 --softening 0 "
                               "--t-end 10 -q");
  EXPECT_EQ(hermite.code, 0) << hermite.err;
  EXPECT_NE(hermite.err.find("give a smaller --eta (this run: 0.02) or a softening (this run: none"), std::string::npos)
      << hermite.err;
  // hermite4's error grows and stays: a diagnostics series says it at its first sample that shows it (the plunge's
  // first pericentre, near block step 320), once, then the end again; --json keeps both lines. (The figures of this
  // unresolved plunge differ between builds, -O1 under the sanitizers and -O3: the test reads the lines' form.)
  Result const plunging = nbody("--run --integrator hermite4 --scenario two-body --eccentricity 0.999999 --softening 0 "
                              "--t-end 10 -q --diagnostics " + file("h20.csv") + " --diagnostics-every 20 --json " +
                              file("h20.json"));
  EXPECT_EQ(plunging.code, 0) << plunging.err;
  EXPECT_EQ(plunging.err.find("warning: at step "), 0u) << plunging.err;
  EXPECT_NE(plunging.err.find(" of its start (more than 0.01): the block steps did not resolve the closest encounters; "
                              "give a smaller --eta (this run: 0.02) or a softening (this run: none, with no "
                              "regularisation); the run goes on\nwarning: the energy changed by "),
            std::string::npos)
      << plunging.err;
  EXPECT_EQ(std::count(plunging.err.begin(), plunging.err.end(), '\n'), 2) << plunging.err;
  auto const said = nlohmann::json::parse(slurp(file("h20.json")));
  ASSERT_EQ(said["warnings"].size(), 2u) << said.dump();
  EXPECT_EQ(said["warnings"][1], said["energy_warning"]);
  // A sample that turns out to be the end (the block steps reached --t-end at step 100) is the end's to say: once.
  Result const last = nbody("--run --integrator hermite4 --scenario two-body --eccentricity 0.99 --softening 0.001 "
                            "--eta 1 --t-end 4 -q --diagnostics " + file("h100.csv") + " --diagnostics-every 100");
  EXPECT_EQ(last.code, 0) << last.err;
  EXPECT_EQ(last.err.find("warning: the energy changed by "), 0u) << last.err;
  EXPECT_EQ(std::count(last.err.begin(), last.err.end(), '\n'), 1) << last.err;
  // With a softening, the warning names it too.
  Result const softened = nbody("--run --integrator hermite4 --scenario two-body --eccentricity 0.999 --softening "
                                "1e-4 --eta 50 --t-end 10 -q");
  EXPECT_EQ(softened.code, 0) << softened.err;
  EXPECT_NE(softened.err.find("give a smaller --eta (this run: 50) or a larger --softening (this run: 0.0001)"),
            std::string::npos)
      << softened.err;
  // The same orbit resolved: no warning.
  Result const fine = nbody("--run --integrator hermite4 --scenario two-body --eccentricity 0.9 --t-end 10 -q");
  EXPECT_EQ(fine.code, 0) << fine.err;
  EXPECT_EQ(fine.err, "");
  // A parabolic encounter (total energy 0, to float32's rounding): its error relative to that 0 measures nothing,
  // and a resolved run of it is not warned about.
  sim::BodySet pair;
  pair.resize(2);
  float const w = std::sqrt(0.5f / std::sqrt(1.0f + 0.01f * 0.01f));
  pair.pos_mass[0] = {-0.5, 0, 0, 0.5};
  pair.pos_mass[1] = {0.5, 0, 0, 0.5};
  pair.velocity[0] = {0, -w, 0};
  pair.velocity[1] = {0, w, 0};
  sim::write_tipsy(file("parabola.bin"), pair, 0.01);
  Result const parabola = nbody("--run --load " + file("parabola.bin") + " --steps 1000 -q --json " + file("p.json"));
  EXPECT_EQ(parabola.code, 0) << parabola.err;
  EXPECT_EQ(parabola.err, "");
  auto const j = nlohmann::json::parse(slurp(file("p.json")));
  EXPECT_GT(j["end"]["relative_energy_error"].get<double>(), 1e-2) << "the case is not the one meant";
  EXPECT_TRUE(j["energy_warning"].is_null()) << j.dump();
  // Its pericentre (1) is resolved by a step twice as long too.
  Result const longer = nbody("--run --load " + file("parabola.bin") + " --dt 0.02 --steps 500 -q");
  EXPECT_EQ(longer.code, 0) << longer.err;
  EXPECT_EQ(longer.err, "");
  // The same total of 0 on a nearly radial orbit whose pericentre (1e-3) no step of 0.01 resolves: the change is
  // judged against the start's kinetic plus potential energy, and warned about.
  sim::BodySet plunge = pair;
  float const vt = std::sqrt(2e-3f), vr = std::sqrt(2.0f / std::sqrt(1.0f + 1e-8f) - vt * vt);
  plunge.velocity[0] = {vr / 2, -vt / 2, 0};
  plunge.velocity[1] = {-vr / 2, vt / 2, 0};
  sim::write_tipsy(file("plunge.bin"), plunge, 1e-4);
  Result const unresolved = nbody("--run --load " + file("plunge.bin") + " --steps 100 -q --json " + file("u.json"));
  EXPECT_EQ(unresolved.code, 0) << unresolved.err;
  EXPECT_NE(unresolved.err.find("of its start's kinetic plus potential energy about the centre of mass (more than "
                                "0.001; their sum, "),
            std::string::npos)
      << unresolved.err;
  auto const u = nlohmann::json::parse(slurp(file("u.json")));
  EXPECT_LT(std::abs(u["start"]["total"].get<double>()), 1e-3 * 0.5) << "the case is not the one meant";
  // --json carries the warning (without its "warning: "); a run without one has null.
  ASSERT_TRUE(u["energy_warning"].is_string()) << u.dump();
  EXPECT_EQ("warning: " + u["energy_warning"].get<std::string>() + "\n", unresolved.err);
}

// An output that names the file a run starts from would replace it: a typo must not cost the only checkpoint of a
// long run. Refused in every spelling, before any work, the file unchanged; --restart's --checkpoint continues in place.
TEST_F(Cli, NoOutputReplacesTheFileARunStartsFrom) {
  ASSERT_EQ(nbody("--run --bodies 64 --steps 3 -q --checkpoint " + file("in.h5") + " --save " + file("in.bin")).code, 0);
  std::string const checkpoint = slurp(file("in.h5")), snapshot = slurp(file("in.bin"));
  std::string const dir = dir_.string();
  for (auto const& [args, words] : std::vector<std::pair<std::string, std::string>>{
           {"--run --restart " + file("in.h5") + " --json " + file("in.h5"),
            "--json " + file("in.h5") + ": the --restart file; writing it would replace the file this run starts "
            "from; give --json another file"},
           {"--run --restart " + file("in.h5") + " --save " + dir + "/./in.h5", "--save " + dir + "/./in.h5: the --restart file"},
           {"--run --restart " + file("in.h5") + " --diagnostics " + file("in.h5"), "--diagnostics"},
           {"--benchmark --restart " + file("in.h5") + " --json " + file("in.h5"), "--json"},
           {"--run --load " + file("in.bin") + " --json " + file("in.bin"), "the --load file"},
           {"--run --load " + file("in.dat") + " --checkpoint " + file("in.dat"), "--checkpoint " + file("in.dat") + ": the --load file"},
       }) {
    fs::copy_file(file("in.bin"), file("in.dat"), fs::copy_options::overwrite_existing);  // a tipsy file too
    expect_input_error(args, words);
    EXPECT_EQ(slurp(file("in.h5")), checkpoint) << args;
    EXPECT_EQ(slurp(file("in.bin")), snapshot) << args;
    EXPECT_EQ(slurp(file("in.dat")), snapshot) << args;
  }
  // A checkpoint of bodies from a file has no seed to check a --seed against.
  ASSERT_EQ(nbody("--run --load " + file("in.bin") + " --steps 1 -q --checkpoint " + file("from_file.h5")).code, 0);
  expect_input_error("--run --restart " + file("from_file.h5") + " --seed 0 --steps 1",
                     "'s bodies came from file:" + file("in.bin") + ", not a seeded scenario");
  // A hard link is the same file under another name.
  fs::create_hard_link(file("in.h5"), file("link.h5"));
  expect_input_error("--run --restart " + file("in.h5") + " --json " + file("link.h5"), "the --restart file");
  EXPECT_EQ(slurp(file("in.h5")), checkpoint);
  // The state continued in place: --restart's --checkpoint, --load's --save.
  Result const in_place = nbody("--run --restart " + file("in.h5") + " --steps 2 -q --checkpoint " + file("in.h5"));
  EXPECT_EQ(in_place.code, 0) << in_place.err;
  EXPECT_NE(slurp(file("in.h5")), checkpoint);
  Result const advanced = nbody("--run --load " + file("in.bin") + " --steps 2 -q --save " + file("in.bin"));
  EXPECT_EQ(advanced.code, 0) << advanced.err;
  EXPECT_NE(slurp(file("in.bin")), snapshot);
}

TEST_F(Cli, BenchmarkReportsAndWritesJson) {
  Result const r = nbody("--benchmark --bodies 512 --steps 3 --warmup 1 --json " + file("b.json"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("interactions"), std::string::npos);
  EXPECT_NE(r.out.find("20 flops per interaction"), std::string::npos);
  auto const j = nlohmann::json::parse(slurp(file("b.json")));
  EXPECT_EQ(j["bodies"], 512);
  EXPECT_EQ(j["timed_steps"], 3);
  double const ms = j["median_step_ms"];
  EXPECT_GT(ms, 0.0);
  EXPECT_NEAR(j["interactions_per_second"].get<double>(), 512.0 * 512.0 / (ms * 1e-3), 1.0);
  EXPECT_FALSE(fs::exists(file("b.json.tmp")));
  // Each timed step's time, whose median is the figure; and the settings as numbers, not only inside strings.
  std::vector<double> steps = j["step_ms"];
  ASSERT_EQ(steps.size(), 3u);
  std::sort(steps.begin(), steps.end());
  EXPECT_EQ(steps[1], ms);
  EXPECT_EQ(steps.front(), j["min_step_ms"].get<double>());
  // Measured numbers as measured, to 12 significant digits: no float noise in the last ones (0.07868199999999997 ms).
  for (double const v : j["step_ms"].get<std::vector<double>>()) {
    char twelve[32];
    std::snprintf(twelve, sizeof twelve, "%.12g", v);
    EXPECT_EQ(std::strtod(twelve, nullptr), v) << v;
  }
  EXPECT_EQ(j["dt"], 0.01);
  EXPECT_EQ(j["softening"], 0.01);
  EXPECT_GE(j["cpu_threads"].get<int>(), 1);
  EXPECT_TRUE(j.at("damping").is_null()) << "leapfrog damps nothing";
  EXPECT_TRUE(j.at("units").is_null()) << "N-body units";
  // euler-damped's factor, and the physical scale dt is in: what tells two reports of one dt apart.
  Result const damped = nbody("--benchmark -q --bodies 64 --steps 1 --integrator euler-damped --damping 0.9 "
                              "--mass-unit 1e3Msun --length-unit 1pc --json " + file("d.json"));
  ASSERT_EQ(damped.code, 0) << damped.err;
  auto const d = nlohmann::json::parse(slurp(file("d.json")));
  EXPECT_EQ(d.at("damping"), 0.9);
  EXPECT_EQ(d.at("units").at("mass"), "1e3Msun");
  EXPECT_NEAR(d.at("units").at("time_s").get<double>(), 1.4879e13, 1e9);
  // The end state, which another layout's report of as many steps shares bit for bit: the state a run of those steps
  // saves.
  EXPECT_EQ(j["steps_made"], 4);
  Result const three = nbody("--benchmark -q --bodies 512 --steps 3 --warmup 1 --numgpus 3 --threading workers --json " +
                             file("b3.json"));
  ASSERT_EQ(three.code, 0) << three.err;
  EXPECT_EQ(nlohmann::json::parse(slurp(file("b3.json")))["state_hash"], j["state_hash"]);
  EXPECT_EQ(j["state_hash"].get<std::string>().size(), 16u);
  // A report's command line holds argv's bytes: a file name that is no UTF-8 is written, not a JSON failure.
  std::string const latin1 = file("b\xe9.json");
  Result const named = nbody("--benchmark -q --bodies 64 --steps 1 --json '" + latin1 + "'");
  ASSERT_EQ(named.code, 0) << named.err;
  EXPECT_EQ(nlohmann::json::parse(slurp(latin1))["made_by"]["command_line"].back(),
            file("b") + "\xef\xbf\xbd.json");
  // Each timed step's time is kept: more than a million are refused naming --steps, before a step, not as the memory
  // they would take (which had been said as "try fewer --bodies").
  expect_input_error("--benchmark --bodies 64 --steps 1000000000000000",
                     "--steps 1000000000000000: a benchmark times each of its steps, at most 1000000 (a longer run: "
                     "--run)");
}

// What is said of a benchmark is in its --json, under --quiet too: the setup's notices (threads sharing cores) and
// the timing's own (one timed step is no median). The three modes' reports name the backend alike.
TEST_F(Cli, ReportsKeepTheirNoticesAndNameTheBackendAlike) {
  Result const r = nbody("--benchmark -q --threads 64 --bodies 256 --steps 1 --warmup 0 --json " +
                         file("b.json"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err.find("notice"), std::string::npos) << r.err;
  auto const b = nlohmann::json::parse(slurp(file("b.json")));
  std::string const notices = b["notices"].dump();
  EXPECT_NE(notices.find("--threads 64: 64 threads on the"), std::string::npos) << notices;
  EXPECT_NE(notices.find("1 timed step: no median to trust"), std::string::npos) << notices;
  ASSERT_EQ(nbody("--run -q --bodies 64 --steps 2 --json " + file("r.json")).code, 0);
  ASSERT_EQ(nbody("--validate -q --threads 64 --bodies 64 --json " + file("v.json")).code, 0);
  auto const run = nlohmann::json::parse(slurp(file("r.json")));
  auto const validate = nlohmann::json::parse(slurp(file("v.json")));
  for (auto const* j : {&b, &run, &validate}) {
    EXPECT_EQ((*j)["backend"], "cpu") << (*j)["mode"];
    EXPECT_EQ((*j)["kernel"], "simd") << (*j)["mode"];
    EXPECT_EQ((*j)["precision"], "fp32") << (*j)["mode"];
    EXPECT_EQ((*j)["description"].get<std::string>().rfind("cpu x1, kernel simd, fp32", 0), 0u) << (*j)["mode"];
  }
  EXPECT_NE(validate["notices"].dump().find("--threads 64"), std::string::npos) << validate.dump();
}

TEST_F(Cli, ValidatePassesAndCanFail) {
  Result const ok = nbody("--validate --bodies 700");
  EXPECT_EQ(ok.code, 0) << ok.out << ok.err;
  EXPECT_NE(ok.out.find("PASS"), std::string::npos) << ok.out;
  // Negative control: an fp32 kernel cannot meet an fp64 tolerance.
  Result const strict = nbody("--validate --bodies 700 --tolerance 1e-12");
  EXPECT_EQ(strict.code, 1) << strict.out;
  EXPECT_NE(strict.out.find("FAIL"), std::string::npos) << strict.out;
  // --steps: the forces after them, said in the report; 0 is the default's.
  Result const none = nbody("--validate --bodies 300 --steps 0");
  EXPECT_EQ(none.code, 0) << none.err;
  EXPECT_EQ(none.out.find("after"), std::string::npos) << none.out;
  Result const later = nbody("--validate --bodies 300 --integrator hermite4 --precision fp64 --steps 5 --json " +
                             file("v.json"));
  EXPECT_EQ(later.code, 0) << later.out << later.err;
  EXPECT_NE(later.out.find("(seed 42), after 5 block steps"), std::string::npos) << later.out;
  EXPECT_NE(later.out.find("PASS"), std::string::npos) << later.out;
  EXPECT_EQ(nlohmann::json::parse(slurp(file("v.json")))["steps"], 5);
}

TEST_F(Cli, CompareThreadingWritesOneRowPerModelDeviceCountAndSize) {
  Result const r = nbody("--compare-threading --numgpus 2 --bodies 256,300 --steps 2 --warmup 1 -q --csv " +
                         file("c.csv") + " --json " + file("c.json"));
  ASSERT_EQ(r.code, 0) << r.err;
  std::string const csv = slurp(file("c.csv"));
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 2 * 2 * 2) << csv;
  EXPECT_NE(r.out.find("workers"), std::string::npos);
  // The per-device medians, the last column, agree with the JSON's to the CSV's 6 digits (not the table's 4
  // decimals), one space between them.
  auto const j = nlohmann::json::parse(slurp(file("c.json")));
  // The CSV's columns are the JSON rows' keys.
  std::istringstream columns(csv.substr(0, csv.find('\n')));
  for (std::string column; std::getline(columns, column, ',');)
    EXPECT_TRUE(j["rows"][0].contains(column)) << column << " is not a key of the JSON's rows: " << j["rows"][0];
  // The file says what its rows were measured with.
  EXPECT_EQ(j["backend"], "cpu");
  EXPECT_EQ(j["precision"], "fp32");
  EXPECT_EQ(j["integrator"], "leapfrog");
  EXPECT_EQ(j["timed_steps"], 2);
  EXPECT_EQ(j["warmup_steps"], 1);
  EXPECT_TRUE(j["hardware"].is_string());
  std::istringstream rows(csv);
  std::string line;
  std::getline(rows, line);  // the header
  for (auto const& row : j["rows"]) {
    ASSERT_TRUE(std::getline(rows, line)) << csv;
    std::string const quoted = line.substr(line.find('"'), line.rfind('"') - line.find('"') + 1);
    std::istringstream values(quoted.substr(1, quoted.size() - 2));
    std::size_t count = 0;
    for (double v; values >> v; ++count) {
      double const want = row["device_median_step_ms"].at(count).get<double>();
      EXPECT_NEAR(v, want, 1e-5 * want) << line;
    }
    EXPECT_EQ(count, row["device_median_step_ms"].size()) << line;
    EXPECT_EQ(quoted.find(" \""), std::string::npos) << line;
    // Each row's end state, which every row of its size that made as many steps shares bit for bit.
    // (Its size's first row has none to agree with: null, an empty field.)
    bool const first = row == j["rows"][0] || row == j["rows"][4];
    EXPECT_EQ(line.substr(line.rfind('"') + 1),
              ",3," + row["state_hash"].get<std::string>() + "," + (first ? "" : "true")) << line;
    EXPECT_EQ(row["bitwise_agrees"], first ? nlohmann::json(nullptr) : nlohmann::json(true)) << row;
    EXPECT_EQ(row["state_hash"], j["rows"][row["bodies"] == 256 ? 0 : 4]["state_hash"]) << row;
    EXPECT_EQ(row["steps_made"], 3);
  }
  EXPECT_NE(j["rows"][0]["state_hash"], j["rows"][4]["state_hash"]);
  EXPECT_NE(r.out.find("every row of each N that made as many steps ended in the same state, bit for bit"),
            std::string::npos)
      << r.out;
  // And per size, which way was fastest and why.
  EXPECT_NE(r.out.find("fastest, per N:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  N = 256: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  N = 300: "), std::string::npos) << r.out;
}

// A signal ends --compare-threading within its pass, not after it: a row of 10^6 bodies on one thread is a pass of
// 10^12 pairs (minutes), which a job's SIGTERM waited out (the simulations had no cancel flag).
TEST_F(Cli, CompareThreadingStopsWithinAPass) {
  pid_t const pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::string const out = file("out"), err = file("err");
    if (!freopen(out.c_str(), "w", stdout) || !freopen(err.c_str(), "w", stderr)) _exit(126);
    execl(NBODY_EXECUTABLE, NBODY_EXECUTABLE, "--backend", "cpu", "--compare-threading", "--bodies", "1000000",
          "--threads", "1", "--steps", "1", "--warmup", "0", static_cast<char*>(nullptr));
    _exit(127);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  kill(pid, SIGTERM);
  auto const sent = std::chrono::steady_clock::now();
  int status = 0;
  if (!ended_within(pid, std::chrono::seconds(60), status)) FAIL() << "still running 60 s after SIGTERM";
  double const waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count();
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 143) << slurp(dir_ / "err");
  EXPECT_LT(waited, 30.0) << slurp(dir_ / "err");
}

// A comparison stopped by a signal keeps the rows it measured: its table, --json and --csv hold them, marked
// interrupted, and the exit code is the signal's. (Before, an hour of rows was lost to a Ctrl-C in the last one.)
TEST_F(Cli, AnInterruptedComparisonWritesTheRowsItMeasured) {
  std::string const json_path = file("c.json"), csv_path = file("c.csv");
  pid_t const pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::string const out = file("out"), err = file("err");
    if (!freopen(out.c_str(), "w", stdout) || !freopen(err.c_str(), "w", stderr)) _exit(126);
    execl(NBODY_EXECUTABLE, NBODY_EXECUTABLE, "--backend", "cpu", "--compare-threading", "--bodies", "256,1000000",
          "--threads", "1", "--steps", "1", "--warmup", "0", "--json", json_path.c_str(), "--csv", csv_path.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  // The two rows of N = 256 (single and workers on one host device), then N = 10^6's first forces, minutes long.
  std::string const last_small = "measured workers/stream, 1 device(s), N = 256";
  for (int k = 0; k < 600 && slurp(dir_ / "err").find(last_small) == std::string::npos; ++k)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  kill(pid, SIGTERM);
  int status = 0;
  if (!ended_within(pid, std::chrono::seconds(60), status)) FAIL() << "still running 60 s after SIGTERM";
  ASSERT_TRUE(WIFEXITED(status));
  std::string const err = slurp(dir_ / "err");
  EXPECT_EQ(WEXITSTATUS(status), 143) << err;
  EXPECT_NE(err.find("nbody: terminated (SIGTERM); the table holds the 2 rows measured before it\n"), std::string::npos)
      << err;
  EXPECT_NE(slurp(dir_ / "out").find(": only the rows measured before it)"), std::string::npos) << slurp(dir_ / "out");
  auto const j = nlohmann::json::parse(slurp(json_path));
  EXPECT_EQ(j.at("interrupted"), true);
  EXPECT_EQ(j.at("dt"), 0.01);  // the settings as numbers, as a benchmark's report has them
  EXPECT_EQ(j.at("cpu_threads"), 1);
  ASSERT_EQ(j.at("rows").size(), 2u);
  for (auto const& row : j.at("rows")) EXPECT_EQ(row.at("bodies"), 256);
  EXPECT_EQ(j.at("rows")[1].at("bitwise_agrees"), true);
  std::string const csv = slurp(csv_path);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 3) << csv;  // the header and the two rows
}

TEST_F(Cli, InterruptedRunSavesAStateItCanRestartFrom) {
  std::string const snap = file("int.bin");
  pid_t const pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::string const out = file("out"), err = file("err");
    if (!freopen(out.c_str(), "w", stdout) || !freopen(err.c_str(), "w", stderr)) _exit(126);
    execl(NBODY_EXECUTABLE, NBODY_EXECUTABLE, "--backend", "cpu", "--run", "--bodies", "1500", "--steps", "100000000",
          "--save", snap.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  kill(pid, SIGINT);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130) << slurp(dir_ / "err");
  EXPECT_NE(slurp(dir_ / "err").find("state saved"), std::string::npos);
  auto const b = sim::read_tipsy(snap);
  EXPECT_EQ(b.size(), 1500u);
  EXPECT_GT(b.time, 0.0);
  Result const again = nbody("--load " + snap + " --run --steps 2");
  EXPECT_EQ(again.code, 0) << again.err;
}

// Hostile and mistaken command lines, one per row: each is refused with exit code 2 and one line
// that names the bad value (or file) and what is allowed, before any work is done.
TEST_F(Cli, HostileInputIsRefusedUpFront) {
  std::string const dir = dir_.string();
  fs::create_directory(dir_ / "folder");
  ASSERT_EQ(::mkfifo(file("fifo").c_str(), 0600), 0);
  std::ofstream(file("real.bin")) << "x";
  fs::create_symlink(file("real.bin"), file("link.bin"));
  struct Row {
    std::string args, words;
  };
  std::vector<Row> const rows{
      // Counts are checked as signed text: nothing wraps around to 2^64 - 1.
      {"--run --steps -1", "--steps -1: must be a whole number from 0 to"},
      {"--benchmark --warmup -1", "--warmup -1: must be a whole number from 0 to"},
      {"--validate --steps -1", "--steps -1: must be a whole number from 0 to"},
      {"--run --seed -3", "--seed -3: must be a whole number from 0 to"},
      {"--run --threads 100000", "--threads 100000: must be a whole number from 1 to 1024"},
      {"--run --numgpus 1000000", "--numgpus 1000000: must be a whole number from 1 to 256"},
      {"--run --bodies 1073741825", "--bodies 1073741825: must be a whole number from 1 to 1073741824"},
      {"--run --gpus -1", "--gpus -1: '-1' is not a GPU number"},
      // Values that are not finite, or not physical.
      {"--run --dt 1e400", "--dt 1e400: must be a time step in (0, 1e+12]"},
      {"--run --dt nan", "--dt nan: must be a time step in (0, 1e+12]"},
      {"--run --dt inf", "--dt inf: must be a time step in (0, 1e+12]"},
      {"--run --softening 0", "--softening 0: must be a length in (0, 1e+12]"},
      {"--run --softening -inf", "--softening -inf: must be a length in (0, 1e+12]"},
      {"--run --softening 0.001pc", "--softening 0.001pc: must be a length in (0, 1e+12] (0 too with --integrator "
                                    "hermite4), a number in the run's length unit (--length-unit; a length takes no unit "
                                    "of its own)"},
      {"--run --integrator euler-damped --damping nan", "--damping nan: must be a factor in (0, 1]"},
      {"--run --scenario two-body --eccentricity nan", "--eccentricity nan: must be a number in [0, 1)"},
      {"--validate --tolerance nan", "--tolerance nan: must be a relative error in (0, 1]"},
      {"--run --numgpus 2 --weights 1,nan", "--weights 1,nan: 'nan' is not a positive number"},
      // Files that are not snapshots: refused without reading them (a FIFO would block forever).
      {"--run --load /dev/zero", "/dev/zero: not a regular file (a character device)"},
      {"--run --load " + file("folder"), "--load " + file("folder") + ": is a folder; name a snapshot file"},
      {"--run --load " + file("fifo"), file("fifo") + ": not a regular file (a FIFO)"},
      {"--run --restart /dev/zero", "/dev/zero: not a regular file"},
      {"--run --restart " + file("missing.h5"), "--restart " + file("missing.h5") + ": no such file"},
      {"--run --restart " + file("real.bin"), file("real.bin") + ": not an HDF5 file"},
      {"--run --restart " + file("a.h5") + " --load " + file("b.bin"), "--restart and --load both given"},
      // Outputs a user would not expect to be replaced, or that two options share.
      {"--run --save " + file("link.bin"), "--save " + file("link.bin") + ": is a symbolic link"},
      {"--run --save " + file("fifo"), "--save " + file("fifo") + ": is a FIFO"},
      {"--benchmark --json " + file("folder"), "--json " + file("folder") + ": is a directory"},
      {"--run --save " + file("r.bin") + " --json " + dir + "/./r.bin", "--save and --json both name"},
      // (The units file a --save of r.bin writes, and any other .param, which pynbody and yt read as parameters.)
      {"--run --save " + file("r.bin") + " --json " + file("r.bin.param"),
       "--json " + file("r.bin.param") + ": a JSON report named .param, which pynbody and yt would read as a "
       "parameter file (they take every *.param of its folder for one); name it otherwise (run.json, say)"},
      {"--compare-threading --csv " + file("t.param"), "--csv " + file("t.param") + ": a CSV table named .param"},
      {"--run --checkpoint " + file("c.h5") + " --save " + dir + "/../" + dir_.filename().string() + "/c.h5",
       "--save and --checkpoint both name"},
      {"--run --checkpoint-every 5", "--checkpoint-every 5: give --checkpoint FILE too"},
      // Options that would do nothing in the chosen mode.
      {"--benchmark --save " + file("x.bin"), "--save does nothing with --benchmark; it belongs to --run"},
      {"--benchmark --checkpoint " + file("x.h5"), "--checkpoint does nothing with --benchmark"},
      {"--run --csv " + file("x.csv"), "--csv does nothing with --run; it belongs to --compare-threading"},
      {"--run --tolerance 1e-3", "--tolerance does nothing with --run; it belongs to --validate"},
      {"--run --warmup 3", "--warmup does nothing with --run"},
      {"--viewer --steps 3", "--steps does nothing with the viewer"},
      {"--run --width 640", "--width does nothing with --run; it belongs to the viewer"},
      {"--devices --bodies 10", "--bodies does nothing with --devices"},
      {"--compare-threading --load " + file("real.bin"), "--load does nothing with --compare-threading"},
      {"--run --restart " + file("a.h5") + " --eccentricity 0.5", "--eccentricity does nothing with --restart"},
      {"--run --load " + file("real.bin") + " --seed 3", "--seed does nothing with --load; the snapshot holds"},
      {"--run --load " + file("real.bin") + " --eccentricity 0.5", "--eccentricity does nothing with --load"},
      {"--run --scenario plummer --eccentricity 0.9",
       "--eccentricity 0.9: applies to --scenario two-body only (this run's is plummer)"},
      {"--run --scenario two-body --seed 7",
       "--seed 7 does nothing with --scenario two-body: its two bodies are placed, not drawn; leave --seed out"},
  };
  for (auto const& row : rows) {
    Result const r = nbody(row.args);
    EXPECT_EQ(r.code, 2) << row.args << "\n" << r.err;
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << row.args << ": " << r.err;
    EXPECT_NE(r.err.find(row.words), std::string::npos) << row.args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line: " << r.err;
    EXPECT_EQ(r.out, "") << row.args << ": work started";
    for (const char* internal : {"basic_filebuf", "std::", "vector", "what()"})
      EXPECT_EQ(r.err.find(internal), std::string::npos) << row.args << ": " << r.err;
  }
  EXPECT_EQ(slurp(file("real.bin")), "x") << "the symlink's target was touched";
}

// An empty path or list element is refused, never taken as "no file" or "no element" (nor "-" as a standard stream):
// '--restart' '' used to run a fresh scenario, '--save' '' to write nothing, '--weights 1,1,' to drop the last. An empty number is
// named as given: '--eta' '' was refused as "--eta 0", a value nobody gave.
TEST_F(Cli, EmptyPathsAndListElementsAreRefused) {
  struct Row {
    std::string args, words;
  };
  std::vector<Row> const rows{
      {"--run --restart ''", "--restart '': the path is empty; name a file"},
      {"--run --load ''", "--load '': the path is empty; name a file"},
      {"--run --save ''", "--save '': the path is empty; name a file"},
      {"--run --json ''", "--json '': the path is empty"},
      {"--run --checkpoint ''", "--checkpoint '': the path is empty"},
      {"--run --diagnostics ''", "--diagnostics '': the path is empty; name a file"},
      // With no mode named: an empty name was taken for none given, and the mode it would choose went unchosen.
      {"--save ''", "--save '': the path is empty; name a file"},  // (--steps 1 added below: the benchmark's)
      {"--snapshots ''", "--snapshots '': the path is empty; name a file"},
      // "-" is no standard stream here: --json - wrote a file named "-".
      {"--run --json -", "--json -: nbody reads and writes files, not standard input or output; name a file (./- for "
                         "one named '-')"},
      {"--run --load -", "--load -: nbody reads and writes files, not standard input or output; name a file"},
      // A missing file or a folder is said with its option (the readers name the file alone).
      {"--run --load no-such-file", "--load no-such-file: no such file"},
      {"--run --restart no-such-file", "--restart no-such-file: no such file"},
      {"--run --load /", "--load /: is a folder; name a snapshot file (tipsy, HDF5 or GADGET)"},
      {"--run --restart /", "--restart /: is a folder; name a checkpoint written by --checkpoint"},
      // A value empty or with blanks at its ends is quoted, so that the message does not read as a typo.
      {"--run --scenario ''", "--scenario '': valid: plummer, "},
      {"--run --seed ' 1'", "--seed ' 1': must be a whole number"},  // (also in NumbersAreDecimalEverywhere)
      {"--run --dt '0.1 '", "--dt '0.1 ': must be a time step"},
      {"--serve ''", "--serve '': the port must be"},
      {"--offscreen --frames-dir -", "--frames-dir -: nbody reads and writes files, not standard input or output; "
                                     "name a folder"},
      {"--compare-threading --csv ''", "--csv '': the path is empty"},
      {"--offscreen --screenshot ''", "--screenshot '': the path is empty"},
      {"--offscreen --video ''", "--video '': the path is empty"},
      {"--offscreen --video movie.avi", "--video movie.avi: the movie is H.264 in an MP4 file; name it FILE.mp4"},
      {"--offscreen --screenshot shot.jpg", "--screenshot shot.jpg: the picture is a PNG file; name it FILE.png"},
      {"--offscreen --frames-dir ''", "--frames-dir '': the path is empty; name a folder"},
      {"--viewer --screenshot-dir ''", "--screenshot-dir '': the path is empty; name a folder"},
      {"--run --weights ''", "--weights '': the list is empty"},
      {"--run --numgpus 2 --weights 1,1,", "--weights 1,1,: an empty element"},
      {"--run --numgpus 2 --weights ,1,1", "--weights ,1,1: an empty element"},
      {"--run --gpus ''", "--gpus '': the list is empty"},
      {"--run --gpus 0,,1", "--gpus 0,,1: an empty element"},
      {"--compare-threading --bodies 256,", "--bodies 256,: an empty element"},
      {"--compare-threading --bodies 64,128,64", "--bodies 64,128,64: 64 is given twice; give each size once"},
      {"--run --bodies 64,64", "--bodies 64,64: a list of sizes is only for --compare-threading"},
      {"--run --bodies 1,000", "--bodies 1,000: a count is written without separators (--bodies 1000); a list of "
                               "sizes with commas is only for --compare-threading"},
      {"--run --bodies 65,536,000", "--bodies 65,536,000: a count is written without separators (--bodies 65536000)"},
      {"--run --bodies 256,512", "--bodies 256,512: a list of sizes is only for --compare-threading"},
      {"--compare-threading --bodies 1,000", "--bodies 1,000: '000' is not a body count (a whole number from 1 to "
                                             "1073741824; a count is written without separators)"},
      {"--offscreen --checkpoint " + file("c.h5"),
       "--offscreen does nothing with --run (which --checkpoint implies); it belongs to the viewer"},
      {"--offscreen --diagnostics " + file("d.csv"),
       "--offscreen does nothing with --run (which --diagnostics implies); it belongs to the viewer"},
      {"--run --bodies ''", "--bodies '': the list is empty"},
      {"--run --dt ''", "--dt '': must be a time step in (0, 1e+12]"},
      {"--run --seed ''", "--seed '': must be a whole number from 0 to"},
      {"--run --integrator hermite4 --eta ''", "--eta '': must be a number in (0, 100]"},
      {"--run --integrator hermite4 --eta-start ''", "--eta-start '': must be a number in (0, 100]"},
      {"--run --integrator hermite4 --dt-max ''", "--dt-max '': must be a number in [1e-09, 1e12]"},
  };
  for (auto const& row : rows) {
    // Short work if the refusal were missing: one step, or one frame.
    bool const viewer = row.args.find("--offscreen") != std::string::npos || row.args.find("--viewer") != std::string::npos;
    Result const r = nbody(row.args + (viewer ? " --bodies 16 --frames 1" : " --steps 1"));
    EXPECT_EQ(r.code, 2) << row.args << "\n" << r.err;
    EXPECT_EQ(r.err.rfind("error: " + row.words, 0), 0u) << row.args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line: " << r.err;
    EXPECT_EQ(r.out, "") << row.args << ": work started";
  }
  // An output chooses --run, a diagnostics series as the others do.
  Result const implied = nbody("--bodies 64 --steps 3 -q --diagnostics " + file("implied.csv"));
  EXPECT_EQ(implied.code, 0) << implied.err;
  std::string header;
  EXPECT_EQ(csv_rows(slurp(file("implied.csv")), &header).size(), 2u);  // steps 0 and 3
}

// A value that brings a control character into the error (a newline pasted with it, an escape) is shown escaped: the
// error stays one line, which a script reads, and no terminal is driven by it.
// Names a slip makes, which no listing shows as they are: a blank left between quotes, a newline or a tab pasted into
// a job script. Refused before any work, naming the option; nothing written. (A blank inside a name is a name.)
TEST_F(Cli, ABlankNameOrOneHoldingAControlCharacterIsRefused) {
  expect_input_error("--run --bodies 64 --steps 1 --snapshots '" + file(" ") + "'",
                     "--snapshots '" + file(" ") + "': the name is blank; name a file");
  expect_input_error("--run --bodies 64 --steps 1 --json '" + file("out/ ") + "'",
                     "--json '" + file("out/ ") + "': the name is blank; name a file");
  expect_input_error("--run --bodies 64 --steps 1 --load ' '", "--load ' ': the name is blank; name a file");
  // (printf makes the newline and the tab: sh has no $'...'.)
  expect_input_error("--run --bodies 64 --steps 1 --save \"$(printf '" + file("a") + "\\nb.h5')\"",
                     "--save " + file("a") + "\\nb.h5: the name holds a control character (a newline or a tab, "
                     "say); name a file without one");
  expect_input_error("--run --bodies 64 --steps 1 --checkpoint \"$(printf '" + file("c") + "\\t.h5')\"",
                     "the name holds a control character");
  for (auto const& entry : fs::directory_iterator(dir_)) {
    std::string const name = entry.path().filename().string();
    EXPECT_TRUE(name == "out" || name == "err") << "a refused run wrote " << name;
  }
  EXPECT_EQ(nbody("--run -q --bodies 64 --steps 1 --save '" + file("a b.h5") + "'").code, 0);
  EXPECT_TRUE(fs::exists(file("a b.h5")));
}

TEST_F(Cli, AnErrorIsOneLineWhateverItsValueHolds) {
  Result const r = nbody("--run --bodies 64 --steps 1 --dt \"$(printf '0.01\\nx')\"");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "error: --dt 0.01\\nx: not a number, nor a number and a time unit (Gyr, Myr, kyr, yr, d, s; case "
                   "matters), e.g. 10Myr (see --help)\n");
  Result const escape = nbody("--run --bodies 64 --steps 1 --checkpoint \"$(printf 'a\\033b')/c.h5\"");
  EXPECT_EQ(escape.code, 2);
  EXPECT_EQ(escape.err, "error: --checkpoint a\\x1bb/c.h5: the name holds a control character (a newline or a tab, "
                        "say); name a file without one\n");
}

// A refused value is told the rule itself: the bounds the check uses, not a looser summary.
TEST_F(Cli, RangeMessagesStateTheRealBounds) {
  expect_input_error("--run --dt 1e30", "--dt 1e30: must be a time step in (0, 1e+12]");
  expect_input_error("--run --softening 1e13", "--softening 1e13: must be a length in (0, 1e+12]");
  expect_input_error("--viewer --brightness 1e7", "--brightness 1e7: must be a brightness in (0, 1e+06]");
  expect_input_error("--run --scenario two-body --eccentricity 1", "--eccentricity 1: must be a number in [0, 1)");
  // A value just outside a bound is shown as given, not rounded onto the bound ("--eta 100: must be in (0, 100]").
  expect_input_error("--run --integrator hermite4 --eta 100.0000001", "--eta 100.0000001: must be in (0, 100]");
  expect_input_error("--run --integrator hermite4 --eta-start 100.0000001",
                     "--eta-start 100.0000001: must be in (0, 100]");
  expect_input_error("--run --integrator hermite4 --dt-max 1.0000001e12", "--dt-max 1.0000001e+12: must be in");
  // A number too small for a normal double is still a number within the range (it was refused as outside it); one
  // that rounds to 0 is not shown as 0.
  EXPECT_EQ(nbody("--run --bodies 16 -q --t-end 5e-324").code, 0);
  expect_input_error("--run --integrator hermite4 --eta 1e-400", "--eta 1e-400: must be a number in (0, 100]");
  expect_input_error("--run --softening -1e-400", "--softening -1e-400: must be a length in");
  // Weights whose running sum overflows the partition's arithmetic (it ran out of memory, blaming
  // --bodies) are refused as such; a small one still is not a positive number.
  expect_input_error("--run --numgpus 2 --bodies 100 --weights 1e308,1e308",
                     "--weights 1e308,1e308: '1e308' is too large; each weight is a relative share in (0, 1e+12]");
  expect_input_error("--run --numgpus 2 --weights 1,0", "--weights 1,0: '0' is not a positive number");
  // Negative control: the bounds themselves are accepted.
  EXPECT_EQ(nbody("--run --bodies 16 --steps 1 -q --numgpus 2 --weights 1e12,1").code, 0);
  EXPECT_EQ(nbody("--run --bodies 16 --steps 1 -q --softening 1e12").code, 0);
}

// One grammar for a number given as text, decimal: hexadecimal (which strtod reads: 0x10 is 16) is refused by every
// option and by a units file, as --bodies and the others refused it, naming the value. Blanks are refused at either
// end of a count, as around every other number (a leading one was skipped, a trailing one refused).
TEST_F(Cli, NumbersAreDecimalEverywhere) {
  expect_input_error("--run --dt 0x10 --bodies 16 --steps 1", "--dt 0x10: must be a time step in (0, 1e+12]");
  expect_input_error("--run --softening 0x10 --bodies 16 --steps 1",
                     "--softening 0x10: must be a length in (0, 1e+12]");
  expect_input_error("--run --integrator hermite4 --eta 0x1 --bodies 16 --steps 1",
                     "--eta 0x1: must be a number in (0, 100]");
  expect_input_error("--run --integrator hermite4 --eta-start 0x1 --bodies 16 --steps 1",
                     "--eta-start 0x1: must be a number in (0, 100]");
  expect_input_error("--run --integrator hermite4 --dt-max 0x1 --bodies 16 --steps 1",
                     "--dt-max 0x1: must be a number in [1e-09, 1e12]");
  expect_input_error("--run --integrator euler-damped --damping 0x1 --bodies 16 --steps 1",
                     "--damping 0x1: must be a factor in (0, 1]");
  expect_input_error("--run --numgpus 2 --weights 0x1,1 --bodies 16 --steps 1",
                     "--weights 0x1,1: '0x1' is not a positive number");
  expect_input_error("--viewer --color-range 0x1:2", "--color-range 0x1:2: '0x1' is not a number");
  // Blanks around a list's element are its layout ("0, 2"), at either end alike; inside a number they are refused.
  for (std::string const blanks : {"--bodies ' 16'", "--bodies '16 '", "--bodies 16 --numgpus 2 --weights '1, 2'"})
    EXPECT_EQ(nbody("--run -q --steps 0 " + blanks).code, 0) << blanks;
  expect_input_error("--run --steps 1 --bodies '1 6'", "--bodies 1 6: must be a whole number from 1 to 1073741824");
  expect_input_error("--run --seed ' 7' --bodies 16 --steps 1", "--seed ' 7': must be a whole number from 0");
  // Negative control: decimal numbers in each form, signs and exponents included.
  Result const decimal = nbody("--run -q --bodies 16 --steps 1 --dt 1.6e-2 --softening +0.01 --seed 7");
  EXPECT_EQ(decimal.code, 0) << decimal.err;
  // A units file holds its numbers in the same grammar.
  ASSERT_EQ(nbody("--run -q --bodies 16 --steps 1 --mass-unit 1e3Msun --length-unit 1pc --save " + file("u.bin")).code,
            0);
  std::string const param = slurp(file("u.bin.param"));
  std::string hex = param;
  ASSERT_NE(hex.find("dMsolUnit = 1000\n"), std::string::npos) << param;
  hex.replace(hex.find("dMsolUnit = 1000\n"), 16, "dMsolUnit = 0x10");
  { std::ofstream(file("u.bin.param")) << hex; }
  expect_input_error("--run --steps 1 --load " + file("u.bin"),
                     file("u.bin.param") + ": nbody's statement of the units of " + file("u.bin") +
                         ", but dMsolUnit is '0x10', not a positive number");
  // Its advice, to give the units, takes the run past it.
  Result const given = nbody("--run -q --steps 1 --load " + file("u.bin") + " --mass-unit 1e3Msun --length-unit 1pc");
  EXPECT_EQ(given.code, 0) << given.err;
  { std::ofstream(file("u.bin.param")) << param; }
  Result const loaded = nbody("--run -q --steps 1 --load " + file("u.bin"));
  EXPECT_EQ(loaded.code, 0) << loaded.err;
  // Edited in an editor that indents, aligns with tabs or ends lines with CRLF: the same units.
  std::string edited;
  for (std::size_t at = 0, end; at < param.size(); at = end + 1) {
    end = param.find('\n', at);
    std::string line = param.substr(at, end - at);
    if (line.rfind("dMsolUnit = ", 0) == 0 || line.rfind("dKpcUnit = ", 0) == 0)
      line = "\t" + line.replace(line.find(" = "), 3, "\t=\t") + "\t# as gasoline comments its values";
    if (line.rfind("# mass unit", 0) == 0) line = "  " + line;
    edited += line + (at == 0 ? "\n" : "\r\n");  // (the first line is nbody's mark: as written)
  }
  { std::ofstream(file("u.bin.param")) << edited; }
  Result const tabbed = nbody("--run --steps 1 --load " + file("u.bin"));
  EXPECT_EQ(tabbed.code, 0) << edited << tabbed.err;
  EXPECT_NE(tabbed.err.find("units 1e3Msun"), std::string::npos) << tabbed.err;
}

// A units file's numbers out of bounds are named as the file has them (dMsolUnit), not as an option the user did not
// give (--mass-unit).
TEST_F(Cli, AUnitsFilesRefusalNamesItsFields) {
  ASSERT_EQ(nbody("--run -q --bodies 16 --steps 1 --mass-unit 1e3Msun --length-unit 1pc --save " + file("h.bin")).code,
            0);
  std::string param = slurp(file("h.bin.param"));
  ASSERT_NE(param.find("dKpcUnit = 0.001\n"), std::string::npos) << param;
  param.replace(param.find("dKpcUnit = 0.001\n"), 16, "dKpcUnit = 1e308");
  { std::ofstream(file("h.bin.param")) << param; }
  expect_input_error("--run --steps 1 --load " + file("h.bin"),
                     file("h.bin.param") + ": nbody's statement of the units of " + file("h.bin") +
                         ", but dKpcUnit 1e308: that is beyond a double's range in cm, and the scale must lie within "
                         "1e-30 .. 1e60 cm");
  EXPECT_EQ(nbody("--run --steps 1 --load " + file("h.bin")).err.find("--length-unit"), std::string::npos);
}

// A run may carry a body past the 1e15 nbody takes from any file (core/bounds.h): its --save is written whole, for the
// programs that read it, and says that it starts no nbody run, where before it said nothing and the file was refused
// at the next start.
TEST_F(Cli, ASaveOfABodyPastTheBoundSaysItStartsNoRun) {
  sim::BodySet fast;
  fast.resize(2);
  fast.pos_mass[0] = {0, 0, 0, 0.5};
  fast.pos_mass[1] = {1, 0, 0, 0.5};
  fast.velocity[1] = {9e14, 0, 0};
  sim::write_tipsy(file("fast.bin"), fast, 0.01);
  for (std::string const name : {"far.bin", "far.h5"}) {
    if (name == "far.h5" && !sim::checkpoints_built()) continue;
    Result const r = nbody("--run -q --load " + file("fast.bin") + " --steps 200 --save " + file(name) +
                           " --snapshots " + file(name + "-s") + " --snapshot-every 50");
    ASSERT_EQ(r.code, 0) << r.err;
    // The series too, once: from its first snapshot past the bound (step 150, x = 1.35e15).
    std::string const said = "warning: --snapshots " + file(name + "-s_00000150.hdf5") + ": body 1's position x is " +
                             "1.35e+15; nbody reads magnitudes up to 1e15: the file starts no nbody run (other " +
                             "programs read it; a checkpoint continues the run) (said at this run's first)\n";
    EXPECT_NE(r.err.find(said), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("warning: --snapshots"), r.err.rfind("warning: --snapshots")) << r.err;
    EXPECT_NE(r.err.find("warning: --save " + file(name) + ": body 1's position x is 1.8e+15; nbody reads magnitudes "
                         "up to 1e15: the file starts no nbody run (other programs read it; a checkpoint continues the "
                         "run)\n"),
              std::string::npos)
        << r.err;
    Result const again = nbody("--run -q --load " + file(name) + " --steps 1");
    EXPECT_EQ(again.code, 2) << again.err;
    EXPECT_NE(again.err.find("position x is 1.8e+15; nbody reads magnitudes up to 1e15"), std::string::npos)
        << again.err;
  }
  Result const near = nbody("--run -q --load " + file("fast.bin") + " --steps 1 --save " + file("near.bin"));
  ASSERT_EQ(near.code, 0) << near.err;
  EXPECT_EQ(near.err.find("starts no nbody run"), std::string::npos) << near.err;
}

// Bodies at one position have an infinite force without a softening (hermite4's 0): refused before any work, naming
// them, where the first step would have made NaN of every body. A softening makes them a resolved pair.
TEST_F(Cli, BodiesAtOnePositionWithoutSofteningAreRefused) {
  sim::BodySet three;
  three.resize(3);
  three.pos_mass[0] = {0.5, 0, 0, 1.0 / 3};
  three.pos_mass[1] = {-0.5, 0, 0, 1.0 / 3};
  three.pos_mass[2] = {0.5, 0, 0, 1.0 / 3};
  sim::write_tipsy(file("same.bin"), three, 0.01);
  expect_input_error("--run --integrator hermite4 --softening 0 --steps 5 --load " + file("same.bin") + " --checkpoint " +
                         file("same.h5"),
                     file("same.bin") + ": bodies 0 and 2 are at the same position (0.5, 0, 0): with --softening 0 "
                                        "their force is infinite; give a softening, or move one of them");
  EXPECT_FALSE(fs::exists(file("same.h5")));
  Result const softened = nbody("--run --integrator hermite4 --softening 0.01 --steps 5 -q --load " + file("same.bin"));
  EXPECT_EQ(softened.code, 0) << softened.err;
}

// A run that blows up stops with an error naming the step and the likely cause, and writes nothing.
TEST_F(Cli, ARunThatBecomesNonFiniteStopsWithoutWritingIt) {
  Result const r = nbody("--run --bodies 64 --dt 1e12 --steps 100 -q --save " + file("nan.bin"));
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("the state is no longer finite at step 100"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(--dt, or hermite4's --eta; --softening)"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(file("nan.bin")));
  // A snapshot due finds it first: the run stops there, rather than warn of each snapshot it cannot write and go on
  // to its end with a state of NaNs.
  if (!sim::checkpoints_built()) return;
  Result const s = nbody("--run --bodies 64 --dt 1e12 --steps 100 -q --snapshots " + file("s") +
                         " --snapshot-every 10 --json " + file("s.json"));
  EXPECT_EQ(s.code, 1) << s.err;
  EXPECT_EQ(s.err.find("not written"), std::string::npos) << s.err;
  EXPECT_NE(s.err.find("error: the state is no longer finite at step 10 "), std::string::npos) << s.err;
  auto const j = nlohmann::json::parse(slurp(file("s.json")));
  EXPECT_EQ(j["step"], 10);
  EXPECT_TRUE(fs::exists(file("s_00000000.hdf5")));
  EXPECT_FALSE(fs::exists(file("s_00000010.hdf5")));
}

// Where the run cannot go on (it blew up; a GPU stalled past the watchdog), the last state checked
// sound goes where the final checkpoint would have: here step 0, checked before the run, since the
// state is no longer finite at the first check (step 50). It restarts.
TEST_F(Cli, ARunThatCannotGoOnSavesItsLastSoundState) {
  if (!sim::checkpoints_built()) GTEST_SKIP() << "built without HDF5";
  Result const r =
      nbody("--run --bodies 64 --dt 1e12 --steps 100 -q --checkpoint-every 50 --checkpoint " + file("kept.h5") +
            " --json " + file("failed.json"));
  EXPECT_EQ(r.code, 1) << r.err;
  // --json says what happened and where the state is, for a script.
  auto const j = nlohmann::json::parse(slurp(file("failed.json")));
  EXPECT_NE(j["failure"].get<std::string>().find("the state is no longer finite at step 50"), std::string::npos);
  EXPECT_EQ(j["saved_step"], 0);
  EXPECT_EQ(j["saved_state"], "the last state checked");
  EXPECT_EQ(j["step"], 50);  // where the run ended, not the state saved
  EXPECT_EQ(j["time"], 50 * 1e12);
  EXPECT_EQ(j["checkpoint"], file("kept.h5"));
  // The state a sample checked on the way (measured while the next steps ran) is saved with its own step and time,
  // not with the steps run since: the same bodies as a run that stopped there.
  Result const sampled = nbody("--run --bodies 64 --dt 1e8 --steps 2000 -q --diagnostics-every 100 --diagnostics " +
                               file("s.csv") + " --checkpoint " + file("sampled.h5") + " --json " + file("s.json"));
  EXPECT_EQ(sampled.code, 1) << sampled.err;
  auto const saved = nlohmann::json::parse(slurp(file("s.json")))["saved_step"].get<std::uint64_t>();
  EXPECT_GT(saved, 0u);
  ASSERT_EQ(nbody("--run --bodies 64 --dt 1e8 -q --steps " + std::to_string(saved) + " --checkpoint " +
                  file("there.h5")).code,
            0);
  sim::Checkpoint const at = sim::read_checkpoint(file("sampled.h5")), there = sim::read_checkpoint(file("there.h5"));
  EXPECT_EQ(at.run.step, saved);
  EXPECT_EQ(at.run.step, there.run.step);
  ASSERT_EQ(at.bodies.size(), there.bodies.size());
  EXPECT_EQ(std::memcmp(at.bodies.pos_mass.data(), there.bodies.pos_mass.data(),
                        at.bodies.size() * sizeof(at.bodies.pos_mass[0])),
            0)
      << "the state of another step";
  // Found only by the end's check (no series checks it on the way): the kept start is saved all the same.
  Result const late = nbody("--run --bodies 64 --dt 1e12 --steps 100 -q --checkpoint " + file("late.h5") +
                            " --json " + file("late.json"));
  EXPECT_EQ(late.code, 1) << late.err;
  EXPECT_NE(late.err.find("holds step 0, the last state checked before the failure"), std::string::npos) << late.err;
  EXPECT_EQ(nlohmann::json::parse(slurp(file("late.json")))["saved_step"], 0);
  // Without --checkpoint nothing is kept, and --json says that too.
  Result const none = nbody("--run --bodies 64 --dt 1e12 --steps 100 -q --json " + file("none.json"));
  EXPECT_EQ(none.code, 1) << none.err;
  auto const n = nlohmann::json::parse(slurp(file("none.json")));
  EXPECT_NE(n["failure"].get<std::string>().find("no longer finite"), std::string::npos);
  EXPECT_TRUE(n["saved_step"].is_null());
  EXPECT_TRUE(n["saved_state"].is_null());
  EXPECT_EQ(n["save_failure"], "no --checkpoint was given");
  // The start was measured before the failure: it is there as in a run that ends well.
  ASSERT_TRUE(n["start"].is_object()) << n.dump();
  EXPECT_EQ(n["start"]["relative_energy_error"], 0.0);
  EXPECT_EQ(n["start"]["total"], j["start"]["total"]);
  EXPECT_NE(r.err.find("the state is no longer finite at step 50"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("holds step 0, the last state checked before the failure"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(file("kept_00000050.h5")));
  ASSERT_TRUE(fs::exists(file("kept.h5")));
  EXPECT_EQ(nbody("--run --steps 1 -q --dt 0.01 --restart " + file("kept.h5")).code, 0);
}

// --run --steps 0 writes a scenario's initial state, which continues exactly as a run that never
// stopped: 7 steps from it equal 7 steps from the scenario, bit for bit. Other modes refuse 0 steps.
TEST_F(Cli, ZeroStepsWritesTheInitialStateThatContinuesBitForBit) {
  if (!sim::checkpoints_built()) GTEST_SKIP() << "built without HDF5";
  std::string const common = " --scenario disk --bodies 300 -q";
  Result const initial = nbody("--run --steps 0 --checkpoint " + file("zero.h5") + " --save " + file("zero.bin") + common);
  ASSERT_EQ(initial.code, 0) << initial.err;
  sim::Checkpoint const zero = sim::read_checkpoint(file("zero.h5"));
  EXPECT_EQ(zero.run.step, 0u);
  EXPECT_TRUE(test::bitwise_equal(zero.bodies, test::rounded_to_float(test::scenario("disk", 300))));  // an fp32 run
  EXPECT_EQ(sim::read_tipsy(file("zero.bin")).size(), 300u);
  ASSERT_EQ(nbody("--run --steps 7 --checkpoint " + file("direct.h5") + common).code, 0);
  ASSERT_EQ(nbody("--run --steps 7 -q --restart " + file("zero.h5") + " --checkpoint " + file("via.h5")).code, 0);
  EXPECT_TRUE(test::bitwise_equal(sim::read_checkpoint(file("via.h5")).bodies,
                                  sim::read_checkpoint(file("direct.h5")).bodies));
  expect_input_error("--benchmark --steps 0", "--steps 0: only --run (to write the initial state");
}

// Restart from a checkpoint through the command line: every setting comes back from the file (the
// disk's softening 0.05 and euler-damped's damping with no option given), the result equals an
// uninterrupted run bit for bit, and an option given with --restart overrides the file, saying so.
TEST_F(Cli, RestartContinuesBitForBitWithEverySetting) {
  if (!sim::checkpoints_built()) GTEST_SKIP() << "built without HDF5";
  std::string const common = " --scenario disk --bodies 700 --integrator euler-damped --damping 0.99 -q";
  ASSERT_EQ(nbody("--run --steps 30 --checkpoint " + file("straight.h5") + common).code, 0);
  ASSERT_EQ(nbody("--run --steps 12 --checkpoint " + file("half.h5") + common).code, 0);
  Result const again = nbody("--run --steps 18 --restart " + file("half.h5") + " --checkpoint " + file("again.h5"));
  ASSERT_EQ(again.code, 0) << again.err;
  auto const a = sim::read_checkpoint(file("straight.h5")), b = sim::read_checkpoint(file("again.h5"));
  EXPECT_TRUE(test::bitwise_equal(a.bodies, b.bodies));
  EXPECT_EQ(a.bodies.time, b.bodies.time);
  EXPECT_EQ(b.run.step, 30u);
  EXPECT_EQ(b.run.softening, 0.05);
  EXPECT_EQ(b.run.damping, 0.99);
  EXPECT_EQ(b.run.integrator, "euler-damped");
  EXPECT_EQ(b.run.initial_energy, a.run.initial_energy) << "the energy error keeps its baseline";
  // --seed is a check with --restart, as --bodies is: the file's passes, another is refused.
  EXPECT_EQ(nbody("--run --steps 1 -q --restart " + file("half.h5") + " --seed 42").code, 0);
  expect_input_error("--run --steps 1 -q --restart " + file("half.h5") + " --seed 7",
                     "--seed 7: " + file("half.h5") + "'s bodies were made with seed 42; leave --seed out with --restart");
  Result const overridden = nbody("--run --steps 1 --restart " + file("half.h5") + " --dt 0.02");
  EXPECT_EQ(overridden.code, 0) << overridden.err;
  EXPECT_NE(overridden.err.find("notice: --dt 0.02 overrides " + file("half.h5") + "'s 0.01"), std::string::npos)
      << overridden.err;
  // Negative control: the overridden dt gives another state than the file's own settings would.
  ASSERT_EQ(nbody("--run --steps 18 --restart " + file("half.h5") + " --dt 0.02 --checkpoint " + file("other.h5")).code, 0);
  EXPECT_FALSE(test::bitwise_equal(a.bodies, sim::read_checkpoint(file("other.h5")).bodies));
  // Another softening is another potential: the energy error starts from this run's start, not the file's, and
  // the restart's checkpoint keeps that baseline.
  Result const softer = nbody("--run --steps 1 --restart " + file("half.h5") + " --softening 0.2 --checkpoint " +
                              file("softer.h5") + " --json " + file("softer.json"));
  EXPECT_EQ(softer.code, 0) << softer.err;
  EXPECT_NE(softer.err.find("notice: the energy error is measured from this run's start, not " + file("half.h5") +
                            "'s: another softening is another potential"),
            std::string::npos)
      << softer.err;
  auto const j = nlohmann::json::parse(slurp(file("softer.json")));
  EXPECT_EQ(j["start"]["relative_energy_error"].get<double>(), 0.0);
  EXPECT_EQ(*sim::read_checkpoint(file("softer.h5")).run.initial_energy, j["start"]["total"].get<double>());
  EXPECT_EQ(overridden.err.find("measured from this run's start"), std::string::npos) << "--dt keeps the baseline";
}

// A series: --checkpoint-every K writes FILE_<step> every K steps of the run, and FILE at the end.
TEST_F(Cli, CheckpointSeriesIsNamedAfterTheStep) {
  if (!sim::checkpoints_built()) GTEST_SKIP() << "built without HDF5";
  Result const r = nbody("--run --bodies 100 --steps 25 -q --checkpoint " + file("s.h5") + " --checkpoint-every 10");
  ASSERT_EQ(r.code, 0) << r.err;
  for (auto const& name : {"s_00000010.h5", "s_00000020.h5", "s.h5"}) EXPECT_TRUE(fs::exists(file(name))) << name;
  EXPECT_FALSE(fs::exists(file("s_00000025.h5")));
  EXPECT_EQ(sim::read_checkpoint(file("s_00000020.h5")).run.step, 20u);
  EXPECT_EQ(sim::read_checkpoint(file("s.h5")).run.step, 25u);
}

// Every name of a series is checked before the run like the other outputs: a directory where a
// checkpoint falls due stopped the run half way (exit 2), losing the final --checkpoint and --save.
TEST_F(Cli, PeriodicCheckpointNamesAreCheckedBeforeTheRun) {
  fs::create_directory(dir_ / "pd_00000050.h5");
  std::string const series = " --checkpoint " + file("pd.h5") + " --checkpoint-every 50 --save " + file("pd.bin");
  expect_input_error("--run --bodies 256 --steps 200" + series,
                     "--checkpoint-every 50 writes " + file("pd_00000050.h5") + ": is a directory");
  EXPECT_EQ(nbody("--run --bodies 256 --steps 200" + series).out, "") << "the run started";
  // Too many names to look at each (2,000,000 here): the ones the folder holds are still found.
  fs::create_directory(dir_ / "pd_01999950.h5");
  fs::remove(dir_ / "pd_00000050.h5");
  expect_input_error("--run --bodies 16 --steps 2000000" + series,
                     "--checkpoint-every 50 writes " + file("pd_01999950.h5") + ": is a directory");
  // Another output named like a checkpoint of the series would be replaced by it.
  fs::remove(dir_ / "pd_01999950.h5");
  expect_input_error("--run --bodies 16 --steps 100 --checkpoint " + file("pd.h5") + " --checkpoint-every 50 --save " +
                         file("pd_00000100.h5"),
                     "both name " + file("pd_00000100.h5"));
  // Negative control: a directory named for a step the run does not reach stops nothing.
  fs::create_directory(dir_ / "pd_00000250.h5");
  Result const r = nbody("--run --bodies 16 --steps 200 -q" + series);
  EXPECT_EQ(r.code, 0) << r.err;
}

// A new run's series (from step 0) is not written among another run's files of that series: an analysis tool reading
// snap_*.hdf5 would read two runs as one. Refused before the run, every such series named, nothing removed. A run past
// step 0 continues one (its own files past its step, left by a run that died after its last checkpoint, are written
// again bit for bit); a directory of such a name is no file of the series.
TEST_F(Cli, ASeriesIsNotMixedWithAnEarlierRunsFiles) {
  if (!sim::checkpoints_built()) GTEST_SKIP() << "built without HDF5";
  ASSERT_EQ(nbody("--run -q --bodies 128 --steps 20 --snapshots " + file("mix/s") + " --snapshot-every 10 --checkpoint " +
                  file("c.h5") + " --checkpoint-every 10").code,
            0);
  std::string const first_run = slurp(file("mix/s_00000010.hdf5")), first_zero = slurp(file("mix/s_00000000.hdf5"));
  expect_input_error("--run --bodies 64 --scenario disk --steps 5 --snapshots " + file("mix/s"),
                     "--snapshots " + file("mix/s") + ": the folder holds 2 files of that series past step 0 (" +
                     file("mix/s_00000010.hdf5") + ", ...), another run's, which this new run's would mix with; remove "
                     "them or name another series");
  EXPECT_EQ(slurp(file("mix/s_00000010.hdf5")), first_run) << "nothing removed or replaced";
  EXPECT_EQ(slurp(file("mix/s_00000000.hdf5")), first_zero) << "the step-0 file kept too";
  // Both series at once: each named, in one message.
  expect_input_error("--run --bodies 64 --steps 5 --snapshots " + file("mix/s") + " --checkpoint " + file("c.h5") +
                         " --checkpoint-every 5",
                     "would mix with; remove them or name another series; --checkpoint-every 5: the folder holds 2 "
                     "files of that series past step 0 (" + file("c_00000010.h5") + ", ...), another run's");

  // A run that died after its checkpoint at step 10 (its files at 20 left), restarted from it: its series goes on, the
  // files past step 10 written again (the same state; HDF5 stamps each file with its time).
  Result const again = nbody("--run --restart " + file("c_00000010.h5") + " --steps 10 --snapshots " + file("mix/s") +
                             " --snapshot-every 10 --checkpoint " + file("c.h5") + " --checkpoint-every 10");
  EXPECT_EQ(again.code, 0) << again.err;
  EXPECT_NE((again.out + again.err).find("snapshot " + file("mix/s_00000020.hdf5")), std::string::npos) << again.err;
  // The same from a step-0 checkpoint (a job script's --steps 0 start): an earlier start of the restart, killed, left
  // its files past step 0; the restart run again goes on over them, not refused as another run's.
  ASSERT_EQ(nbody("--run -q --bodies 128 --steps 0 --checkpoint " + file("zero.h5")).code, 0);
  fs::copy_file(file("zero.h5"), file("zero_start.h5"));
  std::string const from_zero = "--run -q --restart " + file("zero.h5") + " --steps 20 --snapshots " + file("zero/s") +
                                " --snapshot-every 10 --checkpoint " + file("zero.h5") + " --checkpoint-every 10";
  ASSERT_EQ(nbody(from_zero).code, 0);
  fs::copy_file(file("zero_start.h5"), file("zero.h5"), fs::copy_options::overwrite_existing);  // as if killed
  Result const resubmitted = nbody(from_zero);
  EXPECT_EQ(resubmitted.code, 0) << resubmitted.err;
  // One that names a setting of the run's course anew branches at step 0: refused among the files of the course it
  // leaves.
  expect_input_error("--run -q --restart " + file("zero_start.h5") + " --dt 0.02 --steps 20 --snapshots " +
                         file("zero/s"),
                     "--snapshots " + file("zero/s") + ": the folder holds 2 files of that series past step 0 of "
                     "another course (" + file("zero/s_00000010.hdf5") + ", ...)");
  // A directory named like a file of the series is no file of it.
  fs::create_directories(dir_ / "other" / "s_00000050.hdf5");
  EXPECT_EQ(nbody("--run -q --bodies 64 --steps 20 --snapshots " + file("other/s")).code, 0);
  // The same name with the other ending is read with it (mix/s_*): mix/s.h5 is refused as mix/s is.
  expect_input_error("--run --bodies 64 --steps 5 --snapshots " + file("mix/s.h5"),
                     "--snapshots " + file("mix/s.h5") + ": the folder holds 2 files of that series past step 0 (" +
                         file("mix/s_00000010.hdf5") + ", ...), another run's");
  EXPECT_FALSE(fs::exists(file("mix/s_00000000.h5")));
}

// A job script's fresh command, killed after its first periodic checkpoints but before its end wrote --checkpoint,
// then resubmitted as it was: its series' files past step 0 are of its own course (the same bodies and settings), an
// earlier start of this very run. It runs, writes them again to the bit and says so, and ends where a run never
// killed does. A command that would not write them all again as they are is another run, refused as before: another
// seed, another snapshot precision or units, a shorter run (the files past its end, or a --checkpoint further on),
// the series of the same name with the other ending.
TEST_F(Cli, AFreshCommandResubmittedAfterAKillWritesItsOwnSeriesAgain) {
  if (!sim::checkpoints_built()) GTEST_SKIP() << "built without HDF5";
  std::string const series = " --checkpoint-every 10 --snapshots " + file("k/s") + " --snapshot-every 10";
  std::string const command = "--run --bodies 128 --steps 40 --checkpoint " + file("c.h5") + series;
  // The killed start: its files to step 20, no --checkpoint (a run killed outright writes no final one).
  ASSERT_EQ(nbody("--run -q --bodies 128 --steps 20 --checkpoint " + file("c.h5") + series).code, 0);
  fs::remove(file("c.h5"));
  sim::BodySet const at_20 = sim::read_checkpoint(file("c_00000020.h5")).bodies;
  expect_input_error("--run --bodies 128 --seed 7 --steps 40 --checkpoint " + file("c.h5") + series,
                     "--checkpoint-every 10: the folder holds 2 files of that series past step 0 (" +
                         file("c_00000010.h5") + ", ...), another run's, which this new run's would mix with (--restart " +
                         file("c_00000020.h5") + " would go on from its last)");
  std::string const refused = ": the folder holds 2 files of that series past step 0 (";
  expect_input_error("--run --bodies 128 --steps 40 --checkpoint " + file("c.h5") + series + " --snapshot-precision fp64",
                     "--snapshots " + file("k/s") + refused);
  expect_input_error("--run --bodies 128 --steps 40 --checkpoint " + file("c.h5") + series +
                         " --mass-unit 1e4Msun --length-unit 1pc",
                     "--snapshots " + file("k/s") + refused);
  expect_input_error("--run --bodies 128 --steps 15 --checkpoint " + file("c.h5") + series,
                     "--checkpoint-every 10" + refused);
  expect_input_error("--run --bodies 128 --steps 40 --snapshots " + file("k/s.h5") + " --snapshot-every 10",
                     "--snapshots " + file("k/s.h5") + refused);
  // Each file written again, not left: their times are set back, and are later after the run.
  auto const long_ago = fs::file_time_type::clock::now() - std::chrono::hours(24);
  for (std::string const name : {"c_00000010.h5", "c_00000020.h5", "k/s_00000010.hdf5", "k/s_00000020.hdf5"})
    fs::last_write_time(file(name), long_ago);
  Result const again = nbody(command);
  ASSERT_EQ(again.code, 0) << again.err;
  for (std::string const name : {"c_00000010.h5", "c_00000020.h5", "k/s_00000010.hdf5", "k/s_00000020.hdf5"})
    EXPECT_GT(fs::last_write_time(file(name)), long_ago + std::chrono::hours(1)) << name << " was not written again";
  EXPECT_NE(again.err.find("notice: --checkpoint-every 10: the folder holds 2 files of that series past step 0 (" +
                           file("c_00000010.h5") + ", ...) of this run's course, an earlier start of it, which this "
                           "run writes again as it passes them (--restart " + file("c_00000020.h5") +
                           " would go on from its last instead)"),
            std::string::npos)
      << again.err;
  EXPECT_NE(again.err.find("notice: --snapshots " + file("k/s") + ": the folder holds 2 files of that series past step "
                           "0 (" + file("k/s_00000010.hdf5") + ", ...) of this run's course"),
            std::string::npos)
      << again.err;
  EXPECT_TRUE(test::bitwise_equal(sim::read_checkpoint(file("c_00000020.h5")).bodies, at_20)) << "written again to the bit";
  // As a run never killed ends.
  ASSERT_EQ(nbody("--run -q --bodies 128 --steps 40 --checkpoint " + file("whole.h5")).code, 0);
  EXPECT_TRUE(test::bitwise_equal(sim::read_checkpoint(file("c.h5")).bodies, sim::read_checkpoint(file("whole.h5")).bodies));
}

// A series is not written over files of the other kind of the same name: a restart's --snapshots run.h5 would put
// snapshots, which no restart reads, in place of --checkpoint run.h5's periodic checkpoints (run_00000004.h5), and
// periodic checkpoints would replace a snapshot series' files. Refused before the run, nothing changed; a new run of
// the same course (which its own files do not stop) too.
TEST_F(Cli, ASeriesIsNotWrittenOverFilesOfTheOtherKind) {
  if (!sim::checkpoints_built()) GTEST_SKIP() << "built without HDF5";
  ASSERT_EQ(nbody("--run -q --bodies 64 --steps 4 --checkpoint " + file("run.h5") + " --checkpoint-every 1").code, 0);
  std::string const checkpoint_4 = slurp(file("run_00000004.h5"));
  expect_input_error("--run -q --restart " + file("run_00000002.h5") + " --steps 2 --snapshots " + file("run.h5"),
                     "--snapshots " + file("run.h5") + " would write " + file("run_00000004.h5") +
                         " over a checkpoint (a periodic one of that name), which a restart goes on from; give the "
                         "series another name");
  expect_input_error("--run -q --bodies 64 --steps 4 --snapshots " + file("run.h5"),
                     "--snapshots " + file("run.h5") + " would write " + file("run_00000004.h5") + " over a checkpoint");
  EXPECT_EQ(slurp(file("run_00000004.h5")), checkpoint_4) << "nothing replaced";
  EXPECT_TRUE(sim::is_nbody_checkpoint(file("run_00000004.h5")));
  // Periodic checkpoints over a snapshot series.
  ASSERT_EQ(nbody("--run -q --bodies 64 --steps 4 --snapshots " + file("s.h5") + " --snapshot-every 1").code, 0);
  std::string const snapshot_3 = slurp(file("s_00000003.h5"));
  expect_input_error("--run -q --restart " + file("run_00000002.h5") + " --steps 2 --checkpoint " + file("s.h5") +
                         " --checkpoint-every 1",
                     "--checkpoint-every 1 would write " + file("s_00000003.h5") + " over a snapshot (of a --snapshots "
                     "series of that name); give the series another name");
  EXPECT_EQ(slurp(file("s_00000003.h5")), snapshot_3) << "nothing replaced";
  // Negative controls: the restart's snapshots under another name are written, and so is one whose only file among
  // the checkpoints is a new one (its start is the checkpoint it goes on from, which it does not write).
  Result const other = nbody("--run -q --restart " + file("run_00000002.h5") + " --steps 2 --snapshots " + file("snap.h5"));
  EXPECT_EQ(other.code, 0) << other.err;
  ASSERT_EQ(nbody("--run -q --bodies 64 --steps 8 --checkpoint " + file("p.h5") + " --checkpoint-every 4").code, 0);
  Result const between = nbody("--run -q --restart " + file("p_00000004.h5") + " --steps 1 --snapshots " + file("p.h5"));
  EXPECT_EQ(between.code, 0) << between.err;
  EXPECT_TRUE(sim::is_nbody_snapshot(file("p_00000005.h5")));
  EXPECT_TRUE(sim::is_nbody_checkpoint(file("p_00000004.h5")));
  // Nor beside them under the name with the other ending (run_*.hdf5 snapshots beside run_*.h5 checkpoints: one
  // series to run_*), as a new run with both is refused.
  expect_input_error("--run -q --restart " + file("run_00000002.h5") + " --steps 2 --snapshots " + file("run"),
                     "--snapshots " + file("run") + " would write its files beside " + file("run_00000001.h5") +
                         " and the like, periodic checkpoints of the name with the other ending");
  EXPECT_FALSE(fs::exists(file("run_00000004.hdf5")));
  // Periodic checkpoints of the other ending beside another run's: refused as the snapshots' are.
  expect_input_error("--run -q --bodies 64 --seed 9 --steps 4 --checkpoint " + file("run.hdf5") + " --checkpoint-every 1",
                     "--checkpoint-every 1: the folder holds 4 files of that series past step 0 (" +
                         file("run_00000001.h5") + ", ...), another run's");
}

// A restart that changes a setting of the course (a branch) would write its files among those the course it leaves
// wrote past its step, which a reader of the folder then takes for one series: refused, nothing removed. Every file
// records its course, so a branch resubmitted over its own files (killed before) goes on, and so does a restart that
// names a setting with the value it had, or one that changes nothing there (eta_start once every body has a step).
TEST_F(Cli, ABranchIsNotMixedWithTheCourseItLeaves) {
  if (!sim::checkpoints_built()) GTEST_SKIP() << "built without HDF5";
  ASSERT_EQ(nbody("--run -q --bodies 128 --steps 30 --snapshots " + file("b/s") + " --snapshot-every 10 --checkpoint " +
                  file("c.h5") + " --checkpoint-every 10").code,
            0);
  std::string const old_20 = slurp(file("b/s_00000020.hdf5"));
  expect_input_error("--run -q --restart " + file("c_00000010.h5") + " --dt 0.005 --steps 20 --snapshots " + file("b/s") +
                         " --checkpoint " + file("c.h5"),
                     "--snapshots " + file("b/s") + ": the folder holds 2 files of that series past step 10 of another "
                     "course (" + file("b/s_00000020.hdf5") + ", ...): the run this one branches from at step 10 with "
                     "other settings, or another run, which this run's would mix with; remove them or name another "
                     "series; --checkpoint-every 10 (taken up from " + file("c_00000010.h5") + "): the folder holds 2 "
                     "files of that series past step 10 of another course (" + file("c_00000020.h5") + ", ...)");
  EXPECT_EQ(slurp(file("b/s_00000020.hdf5")), old_20) << "nothing removed or replaced";
  // The branch's own series, but the checkpoint of the course it leaves, further on: a stop would keep that one, and a
  // resubmitted --restart of it would go on with the old course.
  std::string const old_end = slurp(file("c.h5"));
  expect_input_error("--run -q --restart " + file("c_00000010.h5") + " --dt 0.005 --steps 20 --checkpoint " +
                         file("c.h5"),
                     "--checkpoint " + file("c.h5") + " holds step 30 of another course: the run this one branches "
                     "from at step 10 with other settings, or another run, which this run would replace at its end "
                     "and keep if stopped, where --restart " + file("c.h5") + " would go on with that course; remove "
                     "it or name another checkpoint");
  EXPECT_EQ(slurp(file("c.h5")), old_end);
  // The periodic checkpoint the run goes on from, named as its --checkpoint: its end would stand under step 10's
  // name, and step 10's state would be gone (a branch or not). Before, it was replaced without a word.
  std::string const old_10 = slurp(file("c_00000010.h5"));
  for (std::string const dt : {"0.005", "0.01"})
    expect_input_error("--run -q --restart " + file("c_00000010.h5") + " --dt " + dt + " --steps 20 --checkpoint " +
                           file("c_00000010.h5") + " --checkpoint-every 0",
                       "--checkpoint " + file("c_00000010.h5") + " is the checkpoint of step 10 of a series (as its "
                       "name says), which this run would replace with its end and keep if stopped: another step's "
                       "state under step 10's name, and step 10's own lost; name the series' own checkpoint (" +
                       file("c.h5") + ") or another file");
  // Another file of the series, behind the one the run goes on from, alike; a run that makes no step from the file
  // it names leaves it as it is.
  expect_input_error("--run -q --restart " + file("c_00000020.h5") + " --steps 10 --checkpoint " + file("c_00000010.h5") +
                         " --checkpoint-every 0",
                     "--checkpoint " + file("c_00000010.h5") + " is the checkpoint of step 10 of a series");
  EXPECT_EQ(slurp(file("c_00000010.h5")), old_10);
  Result const none = nbody("--run -q --restart " + file("c_00000010.h5") + " --steps 0 --checkpoint " +
                            file("c_00000010.h5") + " --checkpoint-every 0");
  EXPECT_EQ(none.code, 0) << none.err;
  // The same dt named again: the same course, its files written again.
  Result const same = nbody("--run -q --restart " + file("c_00000010.h5") + " --dt 0.01 --steps 20 --snapshots " +
                            file("b/s") + " --checkpoint " + file("c.h5"));
  EXPECT_EQ(same.code, 0) << same.err;
  // The branch in a series of its own, then again as if killed and resubmitted: its own files are its course's.
  std::string const branch = "--run -q --restart " + file("c_00000010.h5") + " --dt 0.005 --steps 20 --snapshots " +
                             file("b2/s") + " --checkpoint " + file("c2.h5") + " --checkpoint-every 10";
  ASSERT_EQ(nbody(branch).code, 0);
  Result const resubmitted = nbody(branch);
  EXPECT_EQ(resubmitted.code, 0) << resubmitted.err;
  // A restart from the branch's checkpoint goes on along the branch, not refused by its own course.
  Result const onward = nbody("--run -q --restart " + file("c2_00000020.h5") + " --steps 10 --snapshots " +
                              file("b2/s") + " --checkpoint " + file("c2.h5"));
  EXPECT_EQ(onward.code, 0) << onward.err;
  // A branch at step 0 (a step-0 checkpoint restarted with another dt) is its own course too: resubmitted, it goes on
  // over its own files, where the course it leaves is refused among them.
  ASSERT_EQ(nbody("--run -q --bodies 128 --steps 0 --checkpoint " + file("zero.h5")).code, 0);
  std::string const zero_branch = "--run -q --restart " + file("zero.h5") + " --dt 0.005 --steps 20 --snapshots " +
                                  file("z/s") + " --snapshot-every 10";
  ASSERT_EQ(nbody(zero_branch).code, 0);
  Result const again = nbody(zero_branch);
  EXPECT_EQ(again.code, 0) << again.err;
  expect_input_error("--run -q --restart " + file("zero.h5") + " --steps 20 --snapshots " + file("z/s"),
                     "--snapshots " + file("z/s") + ": the folder holds 2 files of that series past step 0 of another "
                     "course");

  // hermite4: eta_start chooses first steps only, and a dt_max of the same power of two takes the same steps.
  ASSERT_EQ(nbody("--run -q --integrator hermite4 --bodies 64 --steps 30 --snapshots " + file("h/s") +
                  " --snapshot-every 10 --checkpoint " + file("h.h5") + " --checkpoint-every 10").code,
            0);
  for (std::string const setting : {"--eta-start 0.005", "--dt-max 0.1"}) {
    Result const r = nbody("--run -q --restart " + file("h_00000010.h5") + " " + setting + " --steps 20 --snapshots " +
                           file("h/s") + " --checkpoint " + file("h.h5"));
    EXPECT_EQ(r.code, 0) << setting << ": " << r.err;
  }
  expect_input_error("--run -q --restart " + file("h_00000010.h5") + " --eta 0.01 --steps 10 --snapshots " + file("h/s") +
                         " --checkpoint " + file("h.h5"),
                     "--snapshots " + file("h/s") + ": the folder holds 2 files of that series past step 10 of "
                     "another course");
}

// A text output named where a checkpoint is (--json c.h5 for c.json, by a slip) would replace the state a restart goes
// on from: refused before any work, the checkpoint kept. So is one named as the diagnostics series' working file,
// which a restart reads the series' rows from.
TEST_F(Cli, TextOutputsDoNotReplaceAnHdf5FileOrTheSeriesWorkingFile) {
  if (!sim::checkpoints_built()) GTEST_SKIP() << "built without HDF5";
  ASSERT_EQ(nbody("--run -q --bodies 64 --steps 2 --checkpoint " + file("c.h5")).code, 0);
  std::string const state = slurp(file("c.h5"));
  for (std::string const& args : {"--benchmark --bodies 64 --steps 2 --json " + file("c.h5"),
                                  "--compare-threading --bodies 64 --steps 2 --csv " + file("c.h5"),
                                  "--run --bodies 64 --steps 2 --json " + file("c.h5")}) {
    std::string const option = args.find("--csv") != std::string::npos ? "--csv" : "--json";
    expect_input_error(args, option + " " + file("c.h5") + ": is an HDF5 file (a checkpoint or a snapshot, say), "
                                      "which this text output would replace");
  }
  EXPECT_EQ(slurp(file("c.h5")), state);
  expect_input_error("--run --bodies 64 --steps 2 --diagnostics " + file("d.csv") + " --json " + file("d.csv.partial"),
                     "--json and --diagnostics " + file("d.csv") + "'s working file both name " +
                         file("d.csv.partial"));
}

// A report named as a format it is not (--json run.csv, meant for --csv) would leave JSON where a spreadsheet looks for
// a table: refused before any work, with the name to give. No ending, or the report's own, is taken.
TEST_F(Cli, AReportNamedAsAnotherFormatIsRefused) {
  expect_input_error("--benchmark --bodies 64 --steps 2 --json " + file("r.csv"),
                     "--json " + file("r.csv") + ": the report is a JSON document, and .csv names a CSV table; name "
                     "it " + file("r.json") + " (--csv writes the table)");
  expect_input_error("--compare-threading --bodies 64 --steps 2 --csv " + file("t.json"),
                     "--csv " + file("t.json") + ": the table is CSV, and .json names a JSON file; name it " +
                         file("t.csv") + " (--json writes the JSON report)");
  expect_input_error("--run --bodies 64 --steps 1 --json " + file("r.h5"),
                     "--json " + file("r.h5") + ": the report is a JSON document, and .h5 names an HDF5 file");
  expect_input_error("--benchmark --bodies 64 --steps 2 --json " + file("r.json.gz"),
                     "--json " + file("r.json.gz") + ": the report is a JSON document, and .gz names a gzip archive; "
                     "name it " + file("r.json"));
  expect_input_error("--compare-threading --bodies 64 --steps 2 --csv " + file("t.tsv"),
                     "--csv " + file("t.tsv") + ": the table is CSV, and .tsv names a tab-separated table");
  for (std::string const name : {"r.csv", "t.json", "r.h5", "r.json.gz", "t.tsv"})
    EXPECT_FALSE(fs::exists(file(name))) << name;
  EXPECT_EQ(nbody("--benchmark -q --bodies 64 --steps 2 --json " + file("report")).code, 0);
  EXPECT_EQ(nbody("--benchmark -q --bodies 64 --steps 2 --json " + file("report.txt")).code, 0);
  EXPECT_EQ(nbody("--compare-threading -q --bodies 64 --steps 2 --csv " + file("t.txt")).code, 0);
}

// A snapshot series is HDF5 whatever BASE is: a BASE ending in another format's name is refused before any work, with
// the names to give, where it made run.bin_00000000.hdf5. An ending of no format (run.v2) stays part of the name.
TEST_F(Cli, ASnapshotSeriesNamedAsAnotherFormatIsRefused) {
  expect_input_error("--run --bodies 64 --steps 2 --snapshots " + file("run.bin"),
                     "--snapshots " + file("run.bin") + ": snapshots are HDF5 files named after BASE and their step (" +
                         file("run") + "_00000100.hdf5), and .bin names a tipsy file; give " + file("run") + " or " +
                         file("run") + ".h5 (" + file("run") + "_00000100.h5)");
  expect_input_error("--run --bodies 64 --steps 2 --snapshots " + file("s.CSV"),
                     "--snapshots " + file("s.CSV") + ": snapshots are HDF5 files named after BASE and their step");
  expect_input_error("--run --bodies 64 --steps 2 --snapshots " + file("s.hdf"), ".hdf names an HDF file");
  for (auto const& entry : fs::directory_iterator(dir_)) EXPECT_NE(entry.path().extension(), ".hdf5") << entry.path();
  Result const kept = nbody("--run -q --bodies 64 --steps 2 --snapshots " + file("run.v2"));
  EXPECT_EQ(kept.code, 0) << kept.err;
  EXPECT_TRUE(fs::exists(file("run.v2_00000002.hdf5")));
}

// The run's report states the physics it ran and the scale of its units: the softening in the header and --json, the
// time and velocity units that follow from --mass-unit and --length-unit; a tipsy file, which has no units, is said
// to hold the run's.
// The virial ratio takes K about the centre of mass: where the system moves as a whole, the report says which K, as
// the K printed beside it is the total. A system at rest prints one K; one body's ratio is undefined.
TEST_F(Cli, TheReportSaysWhichKineticEnergyTheVirialRatioTakes) {
  sim::BodySet pair;
  pair.resize(2);
  pair.pos_mass[0] = {-0.5, 0, 0, 0.5};
  pair.pos_mass[1] = {0.5, 0, 0, 0.5};
  pair.velocity[0] = {1, -0.5, 0};
  pair.velocity[1] = {1, 0.5, 0};  // K = 0.625 in all, 0.125 about the centre of mass; W = -0.25 (to softening)
  sim::write_tipsy(file("moving.bin"), pair, 0.01);
  Result const moving = nbody("--run --load " + file("moving.bin") + " --steps 1");
  EXPECT_EQ(moving.code, 0) << moving.err;
  EXPECT_NE(moving.out.find("K = 6.250000e-01"), std::string::npos) << moving.out;
  EXPECT_NE(moving.out.find("2K/|W| = 1.0000 (K about the centre of mass 1.250000e-01)"), std::string::npos)
      << moving.out;
  Result const still = nbody("--run --bodies 64 --steps 1");
  EXPECT_EQ(still.out.find("K about the centre of mass"), std::string::npos) << still.out;
  Result const one = nbody("--run --bodies 1 --steps 1");
  EXPECT_EQ(one.code, 0) << one.err;
  EXPECT_NE(one.out.find("2K/|W| = undefined (W = 0)"), std::string::npos) << one.out;
}

TEST_F(Cli, TheReportStatesTheSofteningAndTheUnits) {
  Result const r = nbody("--run --bodies 64 --steps 2 --mass-unit 1e3Msun --length-unit 1pc --json " + file("u.json") +
                         " --save " + file("u.bin"));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("\n  units 1e3Msun, 1pc: time unit 471.5 kyr, velocity unit 2.074 km/s\n  leapfrog, dt 0.01, "
                       "softening 0.01, 2 steps\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\n  time 0.02 (9.43 kyr) after 2 steps"), std::string::npos) << r.out;  // 0.02 x 471.5 kyr
  EXPECT_NE(r.err.find("notice: --save " + file("u.bin") + ": tipsy holds no units; " + file("u.bin.param") +
                       " beside it states this run's (1e3Msun, 1pc) for pynbody and yt\n"),
            std::string::npos)
      << r.err;
  auto const j = nlohmann::json::parse(slurp(file("u.json")));
  EXPECT_EQ(j["softening"], 0.01);
  EXPECT_EQ(j["units"]["mass"], "1e3Msun");
  EXPECT_EQ(j["units"]["length"], "1pc");
  EXPECT_TRUE(j.at("damping").is_null());
  EXPECT_NEAR(j["units"]["time_s"].get<double>(), 1.4879e13, 1e9);
  EXPECT_NEAR(j["units"]["velocity_km_s"].get<double>(), 2.0739, 1e-4);
  // N-body units: no line, null in --json, no notice with --save.
  Result const plain = nbody("--run --bodies 64 --steps 2 --softening 0.02 --json " + file("p.json") + " --save " +
                             file("p.bin"));
  EXPECT_EQ(plain.code, 0) << plain.err;
  EXPECT_EQ(plain.out.find("units"), std::string::npos) << plain.out;
  EXPECT_EQ(plain.err.find("tipsy holds no units"), std::string::npos) << plain.err;
  auto const p = nlohmann::json::parse(slurp(file("p.json")));
  EXPECT_EQ(p["softening"], 0.02);
  EXPECT_TRUE(p["units"].is_null());
}

// A tipsy file loaded from a gasoline run's folder, whose run.param states the units of every tipsy file there to
// pynbody: nbody takes units only from the file's own FILE.param, and says that it runs in N-body units.
TEST_F(Cli, ATipsyLoadFromAFolderWithAnotherParameterFileSaysItsUnitsAreNone) {
  fs::create_directories(dir_ / "g" / "sub");
  ASSERT_EQ(nbody("--run --bodies 64 --steps 0 -q --save " + file("g/sub/ics.tipsy")).code, 0);
  ASSERT_EQ(nbody("--run --bodies 64 --steps 0 -q --save " + file("g/ics.tipsy")).code, 0);
  { std::ofstream(file("g/run.param")) << "dKpcUnit = 1\ndMsolUnit = 2.325e5\n"; }
  Result const here = nbody("--run --steps 0 --load " + file("g/ics.tipsy"));
  ASSERT_EQ(here.code, 0) << here.err;
  EXPECT_NE(here.err.find("notice: the folder of " + file("g/ics.tipsy") + " holds " + file("g/run.param") +
                          ", from which pynbody and yt may take its units; nbody takes them only from " +
                          file("g/ics.tipsy.param") + ", so this run is in N-body units"),
            std::string::npos)
      << here.err;
  Result const below = nbody("--run --steps 0 --load " + file("g/sub/ics.tipsy"));
  ASSERT_EQ(below.code, 0) << below.err;
  EXPECT_NE(below.err.find("notice: the folder above " + file("g/sub/ics.tipsy") + " holds "), std::string::npos)
      << below.err;
  EXPECT_NE(below.err.find(" holds " + file("g/run.param") + ", from which pynbody may take its units"),
            std::string::npos)
      << below.err;
}

// Tipsy has no field for units: a save in physical units states them beside the file, in the parameter file its
// readers (pynbody, yt) take them from, which a run loading the file takes them from too. A parameter file there that
// is another program's is kept; nbody's own goes with a save in N-body units; another in the folder is said.
TEST_F(Cli, ATipsySaveStatesItsUnitsBesideIt) {
  std::string const units = " --mass-unit 1e3Msun --length-unit 1pc";
  Result const saved = nbody("--run --bodies 64 --steps 2 --save " + file("u.bin") + units);
  ASSERT_EQ(saved.code, 0) << saved.err;
  EXPECT_EQ(slurp(file("u.bin.param")),
            "# nbody: the units of the tipsy file u.bin (G = 1), for its readers (pynbody, yt)\n"
            "# mass unit 1e3Msun, length unit 1pc: time unit 471.5 kyr, velocity unit 2.074 km/s\n"
            "achOutName = u.bin\ndMsolUnit = 1000\ndKpcUnit = 0.001\nbComove = 0\nbPeriodic = 0\n");
  // Loaded, the file's values are in those units, which another save states again; the folder now holds two.
  Result const loaded = nbody("--run --steps 1 --load " + file("u.bin") + " --save " + file("v.bin"));
  ASSERT_EQ(loaded.code, 0) << loaded.err;
  EXPECT_NE(loaded.err.find("notice: units 1e3Msun, 1pc from " + file("u.bin.param") +
                            " (--mass-unit and --length-unit relabel them)"),
            std::string::npos)
      << loaded.err;
  EXPECT_NE(loaded.out.find("  units 1e3Msun, 1pc: time unit 471.5 kyr"), std::string::npos) << loaded.out;
  EXPECT_NE(loaded.err.find("warning: --save " + file("v.bin") + ": its folder holds " + file("u.bin.param") +
                            " beside " + file("v.bin.param") + ": pynbody may take either file's units"),
            std::string::npos)
      << loaded.err;
  // A save in N-body units over it takes nbody's statement away: it was of the file replaced.
  Result const plain = nbody("--run --bodies 64 --steps 1 --save " + file("v.bin"));
  ASSERT_EQ(plain.code, 0) << plain.err;
  EXPECT_FALSE(fs::exists(file("v.bin.param")));
  EXPECT_NE(plain.err.find("notice: --save " + file("v.bin") + ": " + file("v.bin.param") +
                           ", which stated the units of the tipsy file replaced, is removed"),
            std::string::npos)
      << plain.err;
  // Its readers then go on to the folder's other parameter file, u.bin's: said too.
  EXPECT_NE(plain.err.find("warning: --save " + file("v.bin") + ": its folder holds " + file("u.bin.param") +
                           ", from which pynbody and yt may take units for this run's values, which have none"),
            std::string::npos)
      << plain.err;
  // Another program's parameter file of that name is kept, and said.
  std::string const gasoline = "achOutName = w\ndMsolUnit = 2.325e5\ndKpcUnit = 1\n";
  { std::ofstream(file("w.bin.param")) << gasoline; }
  Result const theirs = nbody("--run -q --bodies 64 --steps 1 --save " + file("w.bin") + units);
  ASSERT_EQ(theirs.code, 0) << theirs.err;
  EXPECT_EQ(slurp(file("w.bin.param")), gasoline);
  EXPECT_NE(theirs.err.find("warning: --save " + file("w.bin") + ": tipsy holds no units, and " + file("w.bin.param") +
                            ", where nbody states them (1e3Msun, 1pc) for pynbody and yt, is another program's file, "
                            "which is kept: they will take their units from it"),
            std::string::npos)
      << theirs.err;
  Result const nbody_units = nbody("--run -q --bodies 64 --steps 1 --save " + file("w.bin"));
  EXPECT_NE(nbody_units.err.find("warning: --save " + file("w.bin") + ": " + file("w.bin.param") + " beside it is "
                                 "another program's parameter file: pynbody and yt will take units from it"),
            std::string::npos)
      << nbody_units.err;
  EXPECT_EQ(slurp(file("w.bin.param")), gasoline);
  // pynbody looks in the folder above where a file's own holds none.
  fs::create_directories(dir_ / "sub");
  Result const below = nbody("--run -q --bodies 64 --steps 1 --save " + file("sub/n.bin"));
  EXPECT_NE(below.err.find("warning: --save " + file("sub/n.bin") + ": the folder above holds "), std::string::npos)
      << below.err;
  // Loaded, the file's values are in the units another program's parameter file beside it gives, as pynbody reads
  // them (nbody ran it in N-body units, and pynbody in gasoline's). One that gives none is said.
  Result const theirs_read = nbody("--run --steps 1 --load " + file("w.bin"));
  EXPECT_EQ(theirs_read.code, 0) << theirs_read.err;
  EXPECT_NE(theirs_read.err.find("notice: units 2.325e5Msun, 1kpc from " + file("w.bin.param")), std::string::npos)
      << theirs_read.err;
  { std::ofstream(file("w.bin.param")) << "achOutName = w\nnSteps = 10\n"; }
  Result const not_read = nbody("--run --steps 1 --load " + file("w.bin"));
  EXPECT_EQ(not_read.code, 0) << not_read.err;
  EXPECT_EQ(not_read.out.find("units"), std::string::npos) << not_read.out;
  EXPECT_NE(not_read.err.find("notice: " + file("w.bin.param") + " beside " + file("w.bin") + " states no units "
                              "(dMsolUnit and dKpcUnit, which pynbody takes together only), so this run is in N-body "
                              "units"),
            std::string::npos)
      << not_read.err;
  // One of the two alone is none, as pynbody takes it.
  { std::ofstream(file("w.bin.param")) << "dMsolUnit = 2.325e5\n"; }
  Result const one = nbody("--run --steps 1 --load " + file("w.bin"));
  EXPECT_EQ(one.code, 0) << one.err;
  EXPECT_NE(one.err.find(file("w.bin.param") + " beside " + file("w.bin") + " states no units"), std::string::npos)
      << one.err;
  // A cosmological run's is refused naming the file, and units given go past it (the file may be someone else's).
  { std::ofstream(file("w.bin.param")) << "dMsolUnit = 2.325e5\ndKpcUnit = 1\nbComove = 1\n"; }
  expect_input_error("--run --steps 1 --load " + file("w.bin"),
                     file("w.bin.param") + ": bComove is '1': a cosmological run's (comoving coordinates), and nbody "
                     "integrates bodies in open space (the units of " + file("w.bin") + ", as pynbody reads them); "
                     "--mass-unit and --length-unit give the run units of its own, past it");
  Result const past = nbody("--run -q --steps 1 --load " + file("w.bin") + units);
  EXPECT_EQ(past.code, 0) << past.err;
  // A tipsy file named .param would be taken for a parameter file by its readers: refused.
  expect_input_error("--run --bodies 64 --steps 1 --save " + file("x.param"),
                     "--save " + file("x.param") + ": a tipsy file named .param, which pynbody and yt would read as a "
                     "parameter file");
  // So is a save or checkpoint named as a format it would not be, and nothing is written.
  expect_input_error("--run --bodies 64 --steps 1 --save " + file("f.hdf"),
                     "--save " + file("f.hdf") + ": .hdf names an HDF file, and only names ending in .h5 or .hdf5 are "
                     "HDF5 snapshots (any other is a tipsy file); name it " + file("f.h5") + " for an HDF5 snapshot, "
                     "or " + file("f.bin") + " for tipsy");
  expect_input_error("--run --bodies 64 --steps 1 --save " + file("f.CSV"),
                     "--save " + file("f.CSV") + ": .csv names a CSV table, and this would be a tipsy file (binary); "
                     "name it " + file("f.h5") + " for an HDF5 snapshot, or " + file("f.bin") + " for tipsy");
  expect_input_error("--run --bodies 64 --steps 1 --checkpoint " + file("f.tipsy"),
                     "--checkpoint " + file("f.tipsy") + ": a checkpoint is an HDF5 file, and .tipsy names a tipsy "
                     "file; name it " + file("f.h5") + " (a save writes tipsy files)");
  expect_input_error("--run --bodies 64 --steps 1 --checkpoint " + file("f.npy"),
                     "--checkpoint " + file("f.npy") + ": a checkpoint is an HDF5 file, and .npy names a NumPy array; "
                     "name it " + file("f.h5"));
  for (const char* name : {"f.hdf", "f.CSV", "f.tipsy", "f.npy"}) EXPECT_FALSE(fs::exists(file(name))) << name;
  // A checkpoint already there under such a name (an older nbody's, a job script's) goes on in place.
  ASSERT_EQ(nbody("--run -q --bodies 64 --steps 1 --checkpoint " + file("job.h5")).code, 0);
  fs::rename(file("job.h5"), file("job.bin"));
  Result const job = nbody("--run -q --restart " + file("job.bin") + " --steps 1 --checkpoint " + file("job.bin"));
  EXPECT_EQ(job.code, 0) << job.err;
  EXPECT_EQ(sim::read_checkpoint(file("job.bin")).run.step, 2u);
  // The pair on disk always agrees. A parameter file that cannot be written is refused before the run (here a
  // symbolic link); a tipsy file that cannot be written (a file size limit) leaves both as they were.
  fs::create_symlink(file("u.bin.param"), file("s.bin.param"));
  expect_input_error("--run --bodies 64 --steps 1 --save " + file("s.bin") + units,
                     "--save " + file("s.bin") + ": its units go to " + file("s.bin.param") +
                         " beside it, which cannot be written: ");
  EXPECT_FALSE(fs::exists(file("s.bin")));
  // A folder of that name is in the way too; in N-body units it does nothing (pynbody passes over it) and is not
  // taken for another program's parameter file.
  fs::create_directories(file("f.bin.param"));
  expect_input_error("--run --bodies 64 --steps 1 --save " + file("f.bin") + units,
                     "--save " + file("f.bin") + ": its units go to " + file("f.bin.param") +
                         " beside it, which is a directory: rename it, or save to a name ending in .h5, which holds "
                         "its units itself");
  // So is a link to a folder; and a FIFO of that name in N-body units is passed over, not read (which would wait for
  // a writer for ever), as a folder is; nor is either taken for a parameter file beside another save.
  fs::create_directory_symlink(file("f.bin.param"), file("g.bin.param"));
  expect_input_error("--run --bodies 64 --steps 1 --save " + file("g.bin") + units,
                     "--save " + file("g.bin") + ": its units go to " + file("g.bin.param") +
                         " beside it, which is a symbolic link");
  // A FIFO in the way is named as one.
  ASSERT_EQ(mkfifo(file("p.bin.param").c_str(), 0644), 0);
  expect_input_error("--run --bodies 64 --steps 1 --save " + file("p.bin") + units,
                     "--save " + file("p.bin") + ": its units go to " + file("p.bin.param") +
                         " beside it, which is a FIFO, not a regular file: rename it");
  ASSERT_EQ(mkfifo(file("h.bin.param").c_str(), 0644), 0);
  Result const fifo = nbody("--run -q --bodies 64 --steps 1 --save " + file("h.bin"));
  EXPECT_EQ(fifo.code, 0) << fifo.err;
  EXPECT_EQ(fifo.err.find(file("h.bin.param")), std::string::npos) << fifo.err;
  Result const folder_beside = nbody("--run -q --bodies 64 --steps 1 --save " + file("f.bin"));
  EXPECT_EQ(folder_beside.code, 0) << folder_beside.err;
  EXPECT_EQ(folder_beside.err.find(file("f.bin.param")), std::string::npos) << folder_beside.err;
  fs::create_directories(file("only/z.param"));
  Result const folder_in_folder = nbody("--run -q --bodies 64 --steps 1 --save " + file("only/k.bin"));
  EXPECT_EQ(folder_in_folder.code, 0) << folder_in_folder.err;
  EXPECT_EQ(folder_in_folder.err.find("z.param"), std::string::npos) << folder_in_folder.err;
  std::string const pair[2] = {slurp(file("u.bin")), slurp(file("u.bin.param"))};
  for (std::string const other : {" --mass-unit 1e6Msun --length-unit 1pc", ""}) {
    std::string const limited = "trap '' XFSZ; ulimit -f 4; exec " + std::string(NBODY_EXECUTABLE) +
                                " --backend cpu --run -q --bodies 128 --steps 1 --save " + file("u.bin") + other +
                                " 2>" + file("limited.err");
    EXPECT_NE(std::system(limited.c_str()), 0);
    EXPECT_NE(slurp(file("limited.err")).find("cannot write snapshot: File too large"), std::string::npos)
        << slurp(file("limited.err"));
    EXPECT_EQ(slurp(file("u.bin")), pair[0]);
    EXPECT_EQ(slurp(file("u.bin.param")), pair[1]) << other;
  }
  // Edited, the numbers its readers take are the units; damaged, it is refused, naming it.
  std::string text = slurp(file("u.bin.param"));
  text.replace(text.find("dKpcUnit = 0.001"), 16, "dKpcUnit = 0.002");
  { std::ofstream(file("u.bin.param")) << text; }
  Result const edited = nbody("--run --steps 1 --load " + file("u.bin"));
  EXPECT_NE(edited.out.find("  units 1000Msun, 0.002kpc:"), std::string::npos) << edited.out;
  text.replace(text.find("dKpcUnit = 0.002"), 16, "dKpcUnit = kpc");
  { std::ofstream(file("u.bin.param")) << text; }
  expect_input_error("--run --steps 1 --load " + file("u.bin"),
                     file("u.bin.param") + ": nbody's statement of the units of " + file("u.bin") +
                         ", but dKpcUnit is 'kpc', not a positive number; remove it");
}

// A restart's series starts after its step: only the names it will write are checked.
TEST_F(Cli, ARestartsSeriesIsCheckedFromItsStep) {
  if (!sim::checkpoints_built()) GTEST_SKIP() << "built without HDF5";
  ASSERT_EQ(nbody("--run --bodies 64 --steps 30 -q --checkpoint " + file("r.h5")).code, 0);
  fs::create_directory(dir_ / "s_00000020.h5");  // before the restart's step: never written
  Result const ok = nbody("--run --restart " + file("r.h5") + " --steps 30 -q --checkpoint " + file("s.h5") +
                          " --checkpoint-every 20");
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_TRUE(fs::exists(file("s_00000040.h5")));
  EXPECT_TRUE(fs::exists(file("s_00000060.h5")));
  fs::remove(file("s_00000040.h5"));
  fs::remove(file("s_00000060.h5"));
  fs::create_directory(dir_ / "s_00000060.h5");
  expect_input_error("--run --restart " + file("r.h5") + " --steps 30 --checkpoint " + file("s.h5") +
                         " --checkpoint-every 20",
                     "--checkpoint-every 20 writes " + file("s_00000060.h5") + ": is a directory");
  EXPECT_FALSE(fs::exists(file("s_00000040.h5"))) << "the run started";
}

// A checkpoint of the series that still cannot be written (here its name became a directory during
// the run) costs only itself: one warning, the run goes on, the final outputs are written, and the
// exit code (1) and a closing line say which were lost.
TEST_F(Cli, APeriodicCheckpointThatFailsDuringTheRunCostsOnlyItself) {
  if (!sim::checkpoints_built()) GTEST_SKIP() << "built without HDF5";
  // Under the sanitizers, whose steps are some 15 times slower, 512 bodies: 2,048 took 122 s in all under
  // AddressSanitizer.
  std::string const bodies = test::sanitized_or("512", "2048");
  std::string const first = file("pd_00001000.h5");
  pid_t const pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::string const out = file("out"), err = file("err"), checkpoint = file("pd.h5"), save = file("pd.bin");
    if (!freopen(out.c_str(), "w", stdout) || !freopen(err.c_str(), "w", stderr)) _exit(126);
    // 1,000 steps between checkpoints: about 0.5 s at N = 2048 on two cores, ample to make the
    // directory before step 2000 once step 1000's file appears.
    execl(NBODY_EXECUTABLE, NBODY_EXECUTABLE, "--backend", "cpu", "--run", "--bodies", bodies.c_str(), "--steps", "3000", "-q",
          "--checkpoint", checkpoint.c_str(), "--checkpoint-every", "1000", "--save", save.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  auto const deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (!fs::exists(first) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  fs::create_directory(dir_ / "pd_00002000.h5");
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  std::string const err = slurp(dir_ / "err");
  EXPECT_EQ(WEXITSTATUS(status), 1) << err;
  EXPECT_NE(err.find("warning: periodic checkpoint not written: " + file("pd_00002000.h5")), std::string::npos) << err;
  EXPECT_NE(err.find("error: 1 of 3 periodic checkpoints not written (" + file("pd_00002000.h5")), std::string::npos)
      << err;
  EXPECT_EQ(sim::read_checkpoint(file("pd_00003000.h5")).run.step, 3000u);
  EXPECT_EQ(sim::read_checkpoint(file("pd.h5")).run.step, 3000u);
  EXPECT_EQ(sim::read_tipsy(file("pd.bin")).size(), std::stoul(bodies));
}

// A disk that fills up in the middle of a diagnostics row (here a file size limit: the write takes what fits, then
// fails) stops the series with its rows so far in the partial file, which ends with the last whole row.
TEST_F(Cli, ADiagnosticsSeriesStoppedByAFullDiskKeepsWholeRows) {
  pid_t const pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::string const err = file("err"), series = file("d.csv"), report = file("d.json");
    if (!freopen(err.c_str(), "w", stderr)) _exit(126);
    signal(SIGXFSZ, SIG_IGN);  // a write past the limit then fails with EFBIG, as one past a full disk with ENOSPC
    rlimit const limit{6000, 6000};  // a few rows; the --json report fits
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0) _exit(125);
    execl(NBODY_EXECUTABLE, NBODY_EXECUTABLE, "--backend", "cpu", "--run", "--bodies", "64", "--steps", "100", "-q",
          "--diagnostics", series.c_str(), "--diagnostics-every", "1", "--json", report.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  std::string const err = slurp(dir_ / "err");
  EXPECT_EQ(WEXITSTATUS(status), 1) << err;
  EXPECT_NE(err.find("diagnostics series stopped"), std::string::npos) << err;
  std::string const rows = slurp(dir_ / "d.csv.partial");
  ASSERT_FALSE(rows.empty()) << err;
  EXPECT_EQ(rows.back(), '\n') << rows;
  std::istringstream lines(rows);
  std::string line;
  std::size_t count = 0;
  while (std::getline(lines, line)) {
    EXPECT_EQ(std::count(line.begin(), line.end(), ','), 19) << "line " << count << ": " << line;
    ++count;
  }
  EXPECT_GE(count, 2u) << rows;  // the header and a row at least
  // --json counts the rows written, and says why the series stopped and where its rows are.
  auto const j = nlohmann::json::parse(slurp(file("d.json")));
  EXPECT_EQ(j["diagnostics_samples"], count - 1) << j.dump();
  EXPECT_NE(j["diagnostics_failure"].get<std::string>().find("File too large"), std::string::npos) << j.dump();
  EXPECT_EQ(j["diagnostics_rows_in"], file("d.csv.partial"));
}

// A snapshot that fails at the run's last step, which is both a periodic one's step and the end's, is tried once and
// counted once: "1 of 4", not the same file lost twice.
TEST_F(Cli, ASnapshotThatFailsAtTheLastStepIsCountedOnce) {
  if (!sim::checkpoints_built()) GTEST_SKIP() << "built without HDF5";
  std::string const bodies = test::sanitized_or("512", "2048");
  std::string const first = file("s_00001000.hdf5");
  pid_t const pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::string const out = file("out"), err = file("err"), series = file("s"), json = file("r.json");
    if (!freopen(out.c_str(), "w", stdout) || !freopen(err.c_str(), "w", stderr)) _exit(126);
    execl(NBODY_EXECUTABLE, NBODY_EXECUTABLE, "--backend", "cpu", "--run", "--bodies", bodies.c_str(), "--steps", "3000",
          "-q", "--snapshots", series.c_str(), "--snapshot-every", "1000", "--json", json.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  auto const deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (!fs::exists(first) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  fs::create_directory(dir_ / "s_00003000.hdf5");
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  std::string const err = slurp(dir_ / "err");
  EXPECT_EQ(WEXITSTATUS(status), 1) << err;
  EXPECT_NE(err.find("error: 1 of 4 snapshots not written (" + file("s_00003000.hdf5") + ";"), std::string::npos)
      << err;
  auto const j = nlohmann::json::parse(slurp(file("r.json")));
  EXPECT_EQ(j["snapshots_not_written"].size(), 1u) << j.dump();
  EXPECT_EQ(j["snapshots_written"], 3) << j.dump();
}

// A final checkpoint that cannot be written (here its name became a folder during the run) costs only itself: the
// tipsy file, the diagnostics series (published whole, its end row included) and --json are written, --json names
// the checkpoint in outputs_not_written, and the run exits with 1. The same after Ctrl-C, which exits with 130.
TEST_F(Cli, AFinalCheckpointThatCannotBeWrittenCostsOnlyItself) {
  if (!sim::checkpoints_built()) GTEST_SKIP() << "built without HDF5";
  for (bool const interrupted : {false, true}) {
    SCOPED_TRACE(interrupted ? "interrupted" : "to its end");
    for (const char* name : {"ck.h5", "pd.bin", "d.csv", "d.csv.partial", "r.json"}) fs::remove_all(dir_ / name);
    std::string const partial = file("d.csv.partial");
    pid_t const pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      std::string const out = file("out"), err = file("err"), series = file("d.csv"), json = file("r.json"),
                        checkpoint = file("ck.h5"), save = file("pd.bin");
      if (!freopen(out.c_str(), "w", stdout) || !freopen(err.c_str(), "w", stderr)) _exit(126);
      execl(NBODY_EXECUTABLE, NBODY_EXECUTABLE, "--backend", "cpu", "--run", "--bodies", "512", "--steps",
            interrupted ? "10000000" : "4000", "-q", "--checkpoint", checkpoint.c_str(), "--save", save.c_str(),
            "--diagnostics", series.c_str(), "--diagnostics-every", "100", "--json", json.c_str(),
            static_cast<char*>(nullptr));
      _exit(127);
    }
    // The series' partial file is made before the first step.
    auto const deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (!fs::exists(partial) && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    fs::create_directory(dir_ / "ck.h5");
    if (interrupted) {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      kill(pid, SIGINT);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    std::string const err = slurp(dir_ / "err");
    EXPECT_EQ(WEXITSTATUS(status), interrupted ? 130 : 1) << err;
    EXPECT_NE(err.find("error: --checkpoint not written: " + file("ck.h5") + ": cannot write checkpoint: "),
              std::string::npos)
        << err;
    EXPECT_EQ(sim::read_tipsy(file("pd.bin")).size(), 512u) << err;
    EXPECT_FALSE(fs::exists(partial)) << err;
    std::string const rows = slurp(dir_ / "d.csv");
    // The header and the start, and to the end a later row (stopped, the run may not have reached one: a sanitizer's
    // steps are slow).
    EXPECT_GE(std::count(rows.begin(), rows.end(), '\n'), interrupted ? 2 : 3) << rows;
    auto const j = nlohmann::json::parse(slurp(file("r.json")));
    EXPECT_TRUE(j["failure"].is_null()) << j.dump();
    EXPECT_EQ(j["interrupted"], interrupted) << j.dump();
    EXPECT_EQ(j["end"].is_null(), interrupted) << j.dump();
    ASSERT_EQ(j["outputs_not_written"].size(), 1u) << j.dump();
    EXPECT_EQ(j["outputs_not_written"][0]["output"], "--checkpoint") << j.dump();
    EXPECT_EQ(j["outputs_not_written"][0]["path"], file("ck.h5")) << j.dump();
    if (!interrupted) {
      EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << "one line: " << err;
      EXPECT_EQ(rows.substr(rows.rfind('\n', rows.size() - 2) + 1, 5), "4000,") << rows;  // the end's row
    } else {
      EXPECT_NE(err.find("; state saved"), std::string::npos) << err;  // the tipsy file
    }
  }
}

// A file-size limit (ulimit -f) is met as a full disk: the checkpoint past it is refused by name, and the smaller
// outputs are written. Its signal, SIGXFSZ, would otherwise end nbody with nothing written.
TEST_F(Cli, AFileSizeLimitIsMetAsAFullDisk) {
  if (!sim::checkpoints_built()) GTEST_SKIP() << "built without HDF5";
  pid_t const pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::string const out = file("out"), err = file("err"), checkpoint = file("c.h5"), save = file("s.bin"),
                      json = file("r.json");
    if (!freopen(out.c_str(), "w", stdout) || !freopen(err.c_str(), "w", stderr)) _exit(126);
    signal(SIGXFSZ, SIG_DFL);  // as a shell leaves it
    rlimit const limit{100 * 1024, 100 * 1024};  // the checkpoint of 2,048 bodies is about 180 KB, the tipsy 74 KB
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0) _exit(125);
    execl(NBODY_EXECUTABLE, NBODY_EXECUTABLE, "--backend", "cpu", "--run", "--bodies", "2048", "--steps", "2", "-q",
          "--precision", "fp64", "--checkpoint", checkpoint.c_str(), "--save", save.c_str(), "--json", json.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  std::string const err = slurp(dir_ / "err");
  ASSERT_TRUE(WIFEXITED(status)) << "ended by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0) << ": " << err;
  EXPECT_EQ(WEXITSTATUS(status), 1) << err;
  EXPECT_NE(err.find("error: --checkpoint not written: " + file("c.h5")), std::string::npos) << err;
  EXPECT_EQ(sim::read_tipsy(file("s.bin")).size(), 2048u);
  auto const j = nlohmann::json::parse(slurp(file("r.json")));
  EXPECT_EQ(j["outputs_not_written"].size(), 1u) << j.dump();
  for (auto const& entry : fs::directory_iterator(dir_))
    EXPECT_NE(entry.path().filename().string().front(), '.') << "left behind: " << entry.path();
}

// Two series of one name would overwrite each other's files, or mix with each other's: refused before any work.
TEST_F(Cli, TwoSeriesOfOneNameAreRefused) {
  if (!sim::checkpoints_built()) GTEST_SKIP() << "built without HDF5";
  expect_input_error("--run --steps 10 --checkpoint " + file("a.h5") + " --checkpoint-every 5 --snapshots " +
                         file("a.h5") + " --snapshot-every 5",
                     "--snapshots " + file("a.h5") + " and --checkpoint-every 5 with --checkpoint " + file("a.h5") +
                         " both write " + file("a_00000001.h5") + " and the like; give the series different names");
  EXPECT_TRUE(fs::is_empty(dir_) || !fs::exists(file("a_00000005.h5")));
  // Names that differ only in the ending: a_*.hdf5 beside a_*.h5, which a tool reading a_* takes for one series (as a
  // new run does, which refuses to mix with either).
  expect_input_error("--run --steps 10 --checkpoint " + file("a.h5") + " --checkpoint-every 5 --snapshots " +
                         file("a") + " --snapshot-every 5",
                     "--snapshots " + file("a") + " and --checkpoint-every 5 with --checkpoint " + file("a.h5") +
                         " write " + file("a_00000001.hdf5") + " beside " + file("a_00000001.h5") +
                         " and the like, one series to a tool that reads the folder by a pattern; give the series "
                         "different names");
  EXPECT_FALSE(fs::exists(file("a_00000000.hdf5")) || fs::exists(file("a_00000005.h5")));
  Result const apart = nbody("--run --steps 10 -q --checkpoint " + file("a.h5") + " --checkpoint-every 5 --snapshots " +
                             file("s") + " --snapshot-every 5");
  EXPECT_EQ(apart.code, 0) << apart.err;
}

// A --json that cannot be written at the end costs only itself: the other losses are still reported, and the exit
// code is the run's (1 for a lost output; 130 after Ctrl-C).
TEST_F(Cli, AJsonThatCannotBeWrittenStillReportsTheOtherLosses) {
  if (!sim::checkpoints_built()) GTEST_SKIP() << "built without HDF5";
  pid_t const pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::string const out = file("out"), err = file("err"), series = file("d.csv"), json = file("r.json"),
                      checkpoint = file("ck.h5");
    if (!freopen(out.c_str(), "w", stdout) || !freopen(err.c_str(), "w", stderr)) _exit(126);
    execl(NBODY_EXECUTABLE, NBODY_EXECUTABLE, "--backend", "cpu", "--run", "--bodies", "512", "--steps", "4000", "-q",
          "--checkpoint", checkpoint.c_str(), "--diagnostics", series.c_str(), "--json", json.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  auto const deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (!fs::exists(file("d.csv.partial")) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  fs::create_directory(dir_ / "ck.h5");
  fs::create_directory(dir_ / "r.json");
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  std::string const err = slurp(dir_ / "err");
  EXPECT_EQ(WEXITSTATUS(status), 1) << err;
  EXPECT_NE(err.find("error: --checkpoint not written: " + file("ck.h5")), std::string::npos) << err;
  EXPECT_NE(err.find("error: --json not written: " + file("r.json")), std::string::npos) << err;
  EXPECT_TRUE(fs::exists(file("d.csv"))) << err;
}

// --compare-threading's --csv that cannot be written (its name became a folder while the rows were measured) does not
// cost its --json.
TEST_F(Cli, ATableWhoseCsvCannotBeWrittenStillWritesItsJson) {
  pid_t const pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::string const out = file("out"), err = file("err"), csv = file("t.csv"), json = file("t.json");
    if (!freopen(out.c_str(), "w", stdout) || !freopen(err.c_str(), "w", stderr)) _exit(126);
    execl(NBODY_EXECUTABLE, NBODY_EXECUTABLE, "--backend", "cpu", "--compare-threading", "--bodies", "4096", "--steps",
          "20", "--warmup", "2", "--numgpus", "2", "--csv", csv.c_str(), "--json", json.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  // The outputs are checked before any work; the work starts threads (OpenMP's, the workers').
  auto const deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  fs::path const tasks = "/proc/" + std::to_string(pid) + "/task";
  auto threads = [&] {
    std::error_code ec;
    return std::distance(fs::directory_iterator(tasks, ec), fs::directory_iterator());
  };
  while (threads() < 2 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  fs::create_directory(dir_ / "t.csv");
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  std::string const err = slurp(dir_ / "err");
  EXPECT_NE(WEXITSTATUS(status), 0) << err;
  EXPECT_NE(err.find("error: " + file("t.csv") + ": "), std::string::npos) << err;
  auto const j = nlohmann::json::parse(slurp(file("t.json")));
  EXPECT_FALSE(j["rows"].empty()) << j.dump();
}

// Out of memory is said with what was being done; fewer --bodies is advice only for a user who gave
// --bodies. 256 host devices of the default 16,384 bodies, with 120 MB of address space: the
// allocation fails in setup, after every check of the options passed.
TEST_F(Cli, OutOfMemoryBlamesOnlyWhatTheUserGave) {
  if (test::kSanitized) GTEST_SKIP() << "sanitizers reserve more address space than the limit";
  auto limited = [&](const std::string& args) {
    std::string const cmd = "ulimit -v 120000; " + std::string(NBODY_EXECUTABLE) +
                            " --backend cpu --run --numgpus 256 --steps 1 -q " + args + " >" + file("out") + " 2>" +
                            file("err") + " </dev/null";
    int const status = std::system(("bash -c '" + cmd + "'").c_str());
    return Result{WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(dir_ / "out"), slurp(dir_ / "err")};
  };
  Result const plain = limited("");
  if (plain.err.find("out of memory") == std::string::npos) GTEST_SKIP() << "no allocation failed here: " << plain.err;
  EXPECT_EQ(plain.code, 1) << plain.err;
  EXPECT_EQ(plain.err, "error: out of memory (--run with the default number of bodies)\n");
  Result const given = limited("--bodies 16384");
  EXPECT_EQ(given.code, 1) << given.err;
  EXPECT_EQ(given.err, "error: out of memory (--run with --bodies 16384; try fewer --bodies)\n");
}

// A reader of the report that goes away (`| tee log` ended by the Ctrl-C that also reaches nbody, `| head`) costs no
// file: nbody is not ended by SIGPIPE between its outputs, writes every one, and says the report was cut short (exit 1).
// So does a report that cannot be written at all (a full disk under `> log`).
TEST_F(Cli, AReportThatCannotBeWrittenCostsNoFile) {
  if (!sim::checkpoints_built()) GTEST_SKIP() << "built without HDF5";
  std::string const cmd = std::string(NBODY_EXECUTABLE) + " --backend cpu --run --bodies 1024 --steps 100 --checkpoint " +
                          file("c.h5") + " --json " + file("j.json") + " --diagnostics " + file("d.csv") + " --save " +
                          file("t.bin") + " 2>" + file("err") + " | head -c 1 >/dev/null; exit ${PIPESTATUS[0]}";
  int const status = std::system(("bash -c '" + cmd + "'").c_str());
  ASSERT_TRUE(WIFEXITED(status));
  std::string const err = slurp(dir_ / "err");
  EXPECT_EQ(WEXITSTATUS(status), 1) << "141: ended by SIGPIPE\n" << err;
  EXPECT_NE(err.find("error: the report on standard output was not written whole"), std::string::npos) << err;
  for (const char* name : {"c.h5", "j.json", "d.csv", "t.bin"}) EXPECT_TRUE(fs::exists(dir_ / name)) << name;
  EXPECT_EQ(sim::read_checkpoint(file("c.h5")).run.step, 100u);
  int const full = std::system((std::string(NBODY_EXECUTABLE) + " --backend cpu --run --bodies 64 --steps 2 --json " +
                                 file("f.json") + " >/dev/full 2>" + file("err"))
                                    .c_str());
  ASSERT_TRUE(WIFEXITED(full));
  EXPECT_EQ(WEXITSTATUS(full), 1) << slurp(dir_ / "err");
  EXPECT_NE(slurp(dir_ / "err").find("error: the report on standard output was not written whole (No space left on "
                                     "device)"),
            std::string::npos)
      << slurp(dir_ / "err");
  EXPECT_TRUE(fs::exists(dir_ / "f.json"));
}

// The help, read up to what the reader wanted (`nbody --help | head`, under `set -o pipefail` in a script), ends well
// and says nothing; one that cannot be written (a full disk) is still said.
TEST_F(Cli, HelpReadInPartEndsWell) {
  for (const char* option : {"--help", "--version"}) {
    // The reader is gone before nbody writes a word (the writer starts 0.3 s later).
    std::string const cmd = "(sleep 0.3; exec " + std::string(NBODY_EXECUTABLE) + " " + option + " 2>" + file("err") +
                            ") | (exec 0<&-; true); exit ${PIPESTATUS[0]}";
    int const status = std::system(("bash -c '" + cmd + "'").c_str());
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << option << ": " << slurp(dir_ / "err");
    EXPECT_EQ(slurp(dir_ / "err"), "") << option;
  }
  int const full = std::system((std::string(NBODY_EXECUTABLE) + " --help >/dev/full 2>" + file("err")).c_str());
  ASSERT_TRUE(WIFEXITED(full));
  EXPECT_EQ(WEXITSTATUS(full), 1);
  EXPECT_NE(slurp(dir_ / "err").find("No space left on device"), std::string::npos) << slurp(dir_ / "err");
}

// The temporary file of an output that a writer killed before it finished left (SIGKILL, the out-of-memory killer) is
// said, with its size (as large as the output), and kept: another process may be writing it now.
TEST_F(Cli, ATemporaryFileAKilledWriterLeftIsSaid) {
  if (!sim::checkpoints_built()) GTEST_SKIP() << "built without HDF5";
  std::ofstream(file(".c.h5.AbCd3f")) << "half a checkpoint";
  std::ofstream(file(".c.h5.AbCd")) << "not a temporary name";  // too short: another file
  std::ofstream(file(".t.bin.Zz9yXw.bin")) << "the other form";
  Result const r = nbody("--run --bodies 64 --steps 2 --checkpoint " + file("c.h5") + " --save " + file("t.bin"));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("notice: --checkpoint " + file("c.h5") + ": its folder holds " + file(".c.h5.AbCd3f") +
                       " (17 bytes), the temporary file of a writer killed before it finished; remove it unless "
                       "another process writes " + file("c.h5") + " now"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("its folder holds " + file(".t.bin.Zz9yXw.bin")), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(".c.h5.AbCd "), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(file(".c.h5.AbCd3f")));
  // Those of a series' files too: a periodic checkpoint or a snapshot killed while it was written.
  std::ofstream(file(".p_00000029.h5.Ip0fPE")) << "a periodic one";
  std::ofstream(file(".s_00000010.h5.Qw3rTy")) << "a snapshot";
  std::ofstream(file(".p_00000029.h5.backup")) << "a user's";
  Result const series = nbody("--run --bodies 64 --steps 2 --checkpoint " + file("p.h5") + " --checkpoint-every 1 " +
                              "--snapshots " + file("s.h5") + " --snapshot-every 10");
  EXPECT_EQ(series.code, 0) << series.err;
  EXPECT_NE(series.err.find("notice: --checkpoint " + file("p.h5") + ": its folder holds " +
                            file(".p_00000029.h5.Ip0fPE") + " (14 bytes), the temporary file of a writer killed " +
                            "before it finished; remove it unless another process writes its periodic checkpoints now"),
            std::string::npos)
      << series.err;
  EXPECT_NE(series.err.find("notice: --snapshots " + file("s.h5") + ": its folder holds " +
                            file(".s_00000010.h5.Qw3rTy")),
            std::string::npos)
      << series.err;
  EXPECT_EQ(series.err.find(".p_00000029.h5.backup"), std::string::npos) << series.err;
}

// An nbody HDF5 snapshot starts a new run from its bodies (--load), as a tipsy file does: at its time, with its
// softening and units, from step 0; in fp64, its values are the run's to the shift's rounding.
// The bodies of a run loaded from one of its fp64 snapshots (`loaded`) against its own (`run`): masses and velocities
// the same, positions to the rounding of the snapshot's shift.
void expect_bodies_of_snapshot(const sim::BodySet& loaded, const sim::BodySet& run) {
  ASSERT_EQ(loaded.size(), run.size());
  for (std::size_t i = 0; i < run.size(); ++i) {
    auto const &a = loaded.pos_mass[i], &b = run.pos_mass[i];
    EXPECT_EQ(a.w, b.w) << i;
    EXPECT_EQ(loaded.velocity[i].x, run.velocity[i].x) << i;
    EXPECT_EQ(loaded.velocity[i].y, run.velocity[i].y) << i;
    EXPECT_EQ(loaded.velocity[i].z, run.velocity[i].z) << i;
    double const scale = std::max({1.0, std::abs(b.x), std::abs(b.y), std::abs(b.z)});
    EXPECT_LE(std::abs(a.x - b.x) + std::abs(a.y - b.y) + std::abs(a.z - b.z), 1e-14 * scale) << i;
  }
}

TEST_F(Cli, ASnapshotStartsANewRunFromItsBodies) {
  if (!sim::checkpoints_built()) GTEST_SKIP() << "built without HDF5";
  Result const made = nbody("--run -q --bodies 256 --scenario disk --steps 20 --precision fp64 --softening 0.02 "
                            "--mass-unit 1e3Msun --length-unit 1pc --snapshots " + file("s/s") + " --snapshot-every 10 "
                            "--snapshot-precision fp64 --checkpoint " + file("c.h5") + " --checkpoint-every 10");
  ASSERT_EQ(made.code, 0) << made.err;
  std::string const snap = file("s/s_00000010.hdf5");
  Result const r = nbody("--run --load " + snap + " --precision fp64 --steps 0 --checkpoint " + file("l.h5") +
                         " --json " + file("l.json"));
  ASSERT_EQ(r.code, 0) << r.err;
  for (std::string const& said : {"notice: units 1e3Msun, 1pc from " + snap, "notice: softening 0.02 from " + snap,
                                 "notice: " + snap + " is an nbody snapshot of step 10: fp64 values, positions to the "
                                 "shift's rounding, no integrator or time step; this is a new run from step 0 at its time"})
    EXPECT_NE(r.err.find(said), std::string::npos) << said << "\n" << r.err;
  sim::Checkpoint const loaded = sim::read_checkpoint(file("l.h5")), run = sim::read_checkpoint(file("c_00000010.h5"));
  EXPECT_EQ(loaded.run.step, 0u);
  EXPECT_EQ(loaded.bodies.time, run.bodies.time);
  EXPECT_EQ(loaded.run.softening, 0.02);
  EXPECT_EQ(loaded.run.units, run.run.units);
  EXPECT_EQ(loaded.bodies.type, run.bodies.type);  // the disk's families
  expect_bodies_of_snapshot(loaded.bodies, run.bodies);
  auto const j = nlohmann::json::parse(slurp(file("l.json")));
  EXPECT_EQ(j["softening"], 0.02);
  EXPECT_EQ(j["units"]["mass"], "1e3Msun");
  // It runs on, and an fp32 snapshot loads too.
  EXPECT_EQ(nbody("--run -q --load " + snap + " --steps 5").code, 0);
  ASSERT_EQ(nbody("--run -q --bodies 64 --steps 0 --snapshots " + file("f/s")).code, 0);
  Result const fp32 = nbody("--run --load " + file("f/s_00000000.hdf5") + " --steps 2");
  EXPECT_EQ(fp32.code, 0) << fp32.err;
  EXPECT_NE(fp32.err.find("is an nbody snapshot of step 0: fp32 values, no integrator"), std::string::npos) << fp32.err;
  // A checkpoint is no snapshot: --restart continues it.
  expect_input_error("--run --load " + file("c.h5"), file("c.h5") + ": an nbody checkpoint, not a snapshot; --restart "
                     "continues it (--load reads tipsy files and HDF5 snapshots, nbody's and others')");
  // The snapshot loaded is replaced by no file of the new run's --snapshots series (its step 10 is this run's too).
  std::string const kept = slurp(snap);
  expect_input_error("--run --load " + snap + " --steps 20 --snapshot-every 10 --snapshots " + file("s/s"),
                     "--snapshots " + file("s/s") + ": a file of this series would replace " + snap +
                         ", the --load file the run starts from; name another series");
  EXPECT_EQ(slurp(snap), kept);
  // One cut short is said to be damaged, not to be no snapshot.
  std::ofstream(file("cut.hdf5"), std::ios::binary) << kept.substr(0, kept.size() / 2);
  Result const cut = nbody("--run --load " + file("cut.hdf5"));
  EXPECT_EQ(cut.code, 2) << cut.err;
  EXPECT_EQ(cut.err.find("not an nbody snapshot;"), std::string::npos) << cut.err;
}

// --save with a name ending in .h5 or .hdf5 writes an HDF5 snapshot in fp64, with the units and families a tipsy
// file cannot hold: the state --load starts a run from, as the run's checkpoint has it.
TEST_F(Cli, ASaveNamedLikeHdf5IsAnHdf5Snapshot) {
  if (!sim::checkpoints_built()) {
    expect_input_error("--run --bodies 64 --steps 1 --save " + file("s.h5"),
                       "--save " + file("s.h5") + " is an HDF5 snapshot (its name ends in .h5), which needs HDF5, and "
                       "this nbody was built without it; name a tipsy file (any other ending), or rebuild");
    return;
  }
  Result const r = nbody("--run --bodies 256 --scenario disk --steps 10 --precision fp64 --softening 0.02 --mass-unit "
                         "1e3Msun --length-unit 1pc --save " + file("s.h5") + " --checkpoint " + file("c.h5"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("saved " + file("s.h5") + " (HDF5 snapshot, fp64)"), std::string::npos) << r.out;
  EXPECT_EQ(r.err.find("tipsy"), std::string::npos) << r.err;  // no word of tipsy's missing units, nor its order
  ASSERT_TRUE(sim::is_nbody_snapshot(file("s.h5")));
  Result const l = nbody("--run --load " + file("s.h5") + " --precision fp64 --steps 0 --checkpoint " + file("l.h5"));
  ASSERT_EQ(l.code, 0) << l.err;
  EXPECT_NE(l.err.find("notice: units 1e3Msun, 1pc from " + file("s.h5")), std::string::npos) << l.err;
  EXPECT_NE(l.err.find("is an nbody snapshot of step 10: fp64 values"), std::string::npos) << l.err;
  sim::Checkpoint const loaded = sim::read_checkpoint(file("l.h5")), run = sim::read_checkpoint(file("c.h5"));
  EXPECT_EQ(loaded.bodies.time, run.bodies.time);
  EXPECT_EQ(loaded.run.softening, 0.02);
  EXPECT_EQ(loaded.bodies.type, run.bodies.type);
  expect_bodies_of_snapshot(loaded.bodies, run.bodies);
  // A tipsy byte order is no snapshot's; --save .hdf5 is one too.
  expect_input_error("--run --bodies 64 --steps 1 --save-format little-endian --save " + file("t.hdf5"),
                     "--save-format little-endian: a tipsy file's byte order, and --save " + file("t.hdf5") +
                         " is an HDF5 snapshot (its name ends in .hdf5); leave the format out, or name a tipsy file");
  ASSERT_EQ(nbody("--run -q --bodies 64 --steps 1 --save " + file("t.hdf5")).code, 0);
  EXPECT_TRUE(sim::is_nbody_snapshot(file("t.hdf5")));
  ASSERT_EQ(nbody("--run -q --bodies 64 --steps 1 --save " + file("upper.H5")).code, 0);  // the ending in any case
  EXPECT_TRUE(sim::is_nbody_snapshot(file("upper.H5")));
  // A snapshot saved over the snapshot loaded is the state continued in place, as a tipsy file over its tipsy file;
  // a tipsy file that happens to be named .h5 is not replaced by a snapshot.
  Result const again = nbody("--run -q --load " + file("s.h5") + " --steps 3 --save " + file("s.h5"));
  EXPECT_EQ(again.code, 0) << again.err;
  EXPECT_TRUE(sim::is_nbody_snapshot(file("s.h5")));
  ASSERT_EQ(nbody("--run -q --bodies 64 --steps 1 --save " + file("tipsy.bin")).code, 0);
  std::filesystem::rename(file("tipsy.bin"), file("tipsy.h5"));
  std::string const tipsy = slurp(file("tipsy.h5"));
  expect_input_error("--run --load " + file("tipsy.h5") + " --steps 1 --save " + file("tipsy.h5"),
                     "--save " + file("tipsy.h5") + ": the --load file; writing it would replace the file this run "
                     "starts from");
  EXPECT_EQ(slurp(file("tipsy.h5")), tipsy);
}

// A time option may be given in a time unit where the run has physical units (named, or its file's): taken in the
// run's units and said; in N-body units, or out of the option's range, refused naming it.
// An empty unit is named itself; it was taken for a unit not given, and the other unit's option was blamed.
TEST_F(Cli, AnEmptyUnitIsNamedItself) {
  expect_input_error("--run --bodies 16 --steps 1 --mass-unit '' --length-unit 1pc",
                     "--mass-unit '': the unit is empty; give e.g. 1e5Msun");
  expect_input_error("--run --bodies 16 --steps 1 --mass-unit 1Msun --length-unit ' '",
                     "--length-unit ' ': the unit is empty; give e.g. 1pc");
  expect_input_error("--run --bodies 16 --steps 1 --mass-unit '' --length-unit 1pc --t-end 1Myr",
                     "--mass-unit '': the unit is empty");
}

TEST_F(Cli, TimesInAUnitAreTakenInTheRunsUnits) {
  sim::Units const units = sim::parse_units("1e3Msun", "1pc");
  double const myr = 1e6 * 365.25 * 86400.0 / units.time_s();  // 1 Myr in the run's units, about 2.12
  std::string const run = "--run --bodies 64 --mass-unit 1e3Msun --length-unit 1pc ";
  // A refusal names the time as typed, not as the number it became.
  Result const bench = nbody("--benchmark --bodies 64 --mass-unit 1e3Msun --length-unit 1pc --t-end 1Myr");
  EXPECT_EQ(bench.code, 2) << bench.err;
  EXPECT_NE(bench.err.find("error: --t-end 1Myr: --benchmark runs to a time with --integrator hermite4 only"),
            std::string::npos)
      << bench.err;
  Result const r = nbody(run + "--t-end 1Myr --diagnostics " + file("d.csv") + " --diagnostics-dt 0.25Myr --json " +
                         file("r.json"));
  ASSERT_EQ(r.code, 0) << r.err;
  char number[32];
  std::snprintf(number, sizeof number, "%.6g", myr);
  EXPECT_NE(r.err.find(std::string("notice: --t-end 1Myr is ") + number + " in the run's units (1e3Msun, 1pc; time "
                       "unit 471.5 kyr)\n"),
            std::string::npos)
      << r.err;
  auto const j = nlohmann::json::parse(slurp(file("r.json")));
  EXPECT_EQ(j["steps"].get<std::uint64_t>(), std::uint64_t(std::ceil(myr / 0.01)));  // the first step at or past it
  std::string header;
  auto const rows = csv_rows(slurp(file("d.csv")), &header);
  ASSERT_EQ(rows.size(), 5u) << "0, and the first steps at or past 0.25, 0.5, 0.75 Myr, and the end";
  EXPECT_EQ(rows[1][0], std::ceil(0.25 * myr / 0.01 - 1e-9));
  // A restart takes its file's units.
  if (sim::checkpoints_built()) {
    ASSERT_EQ(nbody(run + "-q --steps 0 --checkpoint " + file("u.h5")).code, 0);
    Result const more = nbody("--run --restart " + file("u.h5") + " --t-end 0.5Myr --json " + file("m.json"));
    ASSERT_EQ(more.code, 0) << more.err;
    EXPECT_EQ(nlohmann::json::parse(slurp(file("m.json")))["steps"].get<std::uint64_t>(),
              std::uint64_t(std::ceil(0.5 * myr / 0.01)));
  }
  expect_input_error("--run --bodies 64 --t-end 1Myr",
                     "--t-end 1Myr: a time in Myr needs the run's units: give --mass-unit and --length-unit (or start "
                     "from a file that records them); this run is in N-body units, where times are plain numbers");
  expect_input_error(run + "--dt 0s", "--dt 0s (0 in the run's units, 1e3Msun, 1pc): must be a time step in (0, ");
  expect_input_error(run + "--t-end 10myr", "--t-end 10myr: not a number, nor a number and a time unit (Gyr, Myr, kyr, "
                                           "yr, d, s; case matters), e.g. 10Myr");
  expect_input_error(run + "--t-end 1Myr --steps 3", "--t-end 1Myr and --steps 3 both given; give one of them");
  // Every message names the time as it was given.
  expect_input_error(run + "--checkpoint-dt 1Myr", "--checkpoint-dt 1Myr: give --checkpoint FILE too");
  expect_input_error(run + "--diagnostics-dt 1Myr --diagnostics-every 10 --diagnostics " + file("e.csv"),
                     "--diagnostics-dt 1Myr and --diagnostics-every 10 both given");
  expect_input_error(run + "--integrator hermite4 --dt-max 1e-9yr",
                     "--dt-max 1e-9yr (2.12097e-15 in the run's units, 1e3Msun, 1pc): must be a longest step in");
  // The library's own checks too, past the options'.
  Result const far = nbody(run + "--t-end 1e12Gyr");  // after the notice of its conversion
  EXPECT_EQ(far.code, 2) << far.err;
  EXPECT_NE(far.err.find("\nerror: --t-end 1e12Gyr: more than 1e+15 steps of dt 0.01 away"), std::string::npos)
      << far.err;
  for (auto const& [options, steps] : {std::pair<std::string, std::string>{"--dt 1kyr", "steps of dt 1kyr"},
                                        {"--integrator hermite4 --dt-max 1kyr", "block steps of at most 1kyr"}}) {
    Result const far_typed = nbody(run + options + " --t-end 1e12Gyr");  // dt as typed too
    EXPECT_EQ(far_typed.code, 2) << far_typed.err;
    EXPECT_NE(far_typed.err.find("\nerror: --t-end 1e12Gyr: more than 1e+15 " + steps + " away"), std::string::npos)
        << far_typed.err;
  }
  Result const samples = nbody(run + "--integrator hermite4 --t-end 0.1Myr --diagnostics-dt 10kyr --diagnostics " +
                               file("h.csv"));
  EXPECT_NE(samples.err.find("notice: --diagnostics-dt 10kyr: not a multiple of the longest step 0.0625"),
            std::string::npos)
      << samples.err;
  EXPECT_EQ(samples.code, 0) << samples.err;
  EXPECT_EQ(samples.err.find("is not a block time"), std::string::npos) << samples.err;  // it ends at 0.1Myr
  // A restart's messages give the times its file records in the run's units, in a physical unit too: the user gave
  // "10kyr", never 0.0212097.
  if (sim::checkpoints_built()) {
    ASSERT_EQ(nbody(run + "-q --integrator hermite4 --t-end 0.1Myr --diagnostics-dt 10kyr --diagnostics " +
                    file("k.csv") + " --checkpoint " + file("k.h5"))
                  .code,
              0);
    Result const taken = nbody("--run --restart " + file("k.h5") + " --t-end 0.2Myr --diagnostics " + file("k.csv"));
    EXPECT_EQ(taken.code, 0) << taken.err;
    EXPECT_NE(taken.err.find("'s diagnostics rows are at every multiple of time 0.021209672678920693 (10 kyr)"),
              std::string::npos)
        << taken.err;
    EXPECT_NE(taken.err.find("notice: --diagnostics-dt 0.021209672678920693 (10 kyr): each sample is at the first "
                             "block time at or past its multiple"),
              std::string::npos)
        << taken.err;
    EXPECT_NE(taken.out.find("block steps to time 0.4241934535784138 (200 kyr)\n"), std::string::npos) << taken.out;
    // Already past its --t-end: the header says there are none, rather than where they would go.
    Result const past = nbody("--run --restart " + file("k.h5") + " --t-end 50kyr");
    EXPECT_EQ(past.code, 0) << past.err;
    EXPECT_NE(past.err.find("notice: --t-end 50kyr: the run is already at time 0.2120967267892069 (100 kyr)"),
              std::string::npos)
        << past.err;
    EXPECT_NE(past.out.find(", no block steps, already at time 0.2120967267892069 (100 kyr)\n"), std::string::npos)
        << past.out;
    EXPECT_EQ(past.out.find("block steps to time"), std::string::npos) << past.out;
    // A restart's dt is its file's number: the energy warning gives it in the units too.
    ASSERT_EQ(nbody(run + "-q --dt 20kyr --t-end 1Myr --diagnostics " + file("w.csv") + " --checkpoint " + file("w.h5"))
                  .code,
              0);
    Result const warned = nbody("--run -q --restart " + file("w.h5") + " --t-end 2Myr --diagnostics " + file("w.csv"));
    EXPECT_NE(warned.err.find("give a smaller --dt (this run: 0.0424193, 20 kyr)"), std::string::npos) << warned.err;
  }
  expect_input_error(run + "--integrator hermite4 --dt 1kyr",
                     "--dt 1kyr: hermite4 chooses each body's step (a power of two up to --dt-max, from --eta)");
  if (sim::checkpoints_built()) {
    Result const longest = nbody("--run --restart " + file("u.h5") + " --integrator hermite4 --dt-max 1kyr --steps 1");
    EXPECT_NE(longest.err.find("notice: --dt-max 1kyr: the longest step is 0.00195312, the power of two at or below "
                               "it"),
              std::string::npos)
        << longest.err;
    Result const step = nbody("--run --restart " + file("u.h5") + " --dt 1kyr --steps 1");
    EXPECT_NE(step.err.find("notice: --dt 1kyr overrides " + file("u.h5") + "'s 0.01\n"), std::string::npos)
        << step.err;
  }
  // Hexadecimal is no number (0x1d is neither 29 nor a day); a file that is no snapshot is said.
  expect_input_error("--run --bodies 64 --t-end 0x1d --steps 1",
                     "--t-end 0x1d: not a number, nor a number and a time unit");
  expect_input_error("--run --load " + file("none.bin") + " --t-end 1Myr", file("none.bin") + ": cannot open");
  // A time from a file is named as the file has it (a restart that goes on to its run's end).
  if (sim::checkpoints_built()) {
    ASSERT_EQ(nbody("--run -q --integrator hermite4 --bodies 64 --t-end 0.3 --checkpoint " + file("h.h5") +
                    " --checkpoint-every 3").code,
              0);
    Result const to_end = nbody("--run --restart " + file("h_00000003.h5"));
    EXPECT_NE(to_end.err.find("notice: " + file("h_00000003.h5") + "'s run was going to time 0.3: this run goes on to "
                              "it"),
              std::string::npos)
        << to_end.err;
    EXPECT_NE(to_end.out.find("  time 0.3 after "), std::string::npos) << to_end.out;  // there, though no block time
  }
  // A benchmark to a time in a unit takes the units.
  Result const b = nbody("--benchmark --integrator hermite4 --bodies 256 --warmup 1 " +
                         std::string("--mass-unit 1e3Msun --length-unit 1pc --t-end 50kyr"));
  EXPECT_EQ(b.code, 0) << b.err;
}

// A read error of the disk (EIO: a failing disk, a network file system gone) on a checkpoint or a snapshot is the
// machine's failure (exit 1, in the system's words), not a damaged file (exit 2): a job script may try again, or copy
// the file elsewhere, rather than give it up. Injected by a preloaded pread that fails from an offset on.
TEST_F(Cli, AReadErrorOfTheDiskIsNotADamagedFile) {
  if (!sim::checkpoints_built()) GTEST_SKIP() << "built without HDF5";
  if (test::kSanitized) GTEST_SKIP() << "a preloaded library would come before the sanitizer's runtime";
  ASSERT_EQ(nbody("--run -q --bodies 256 --steps 1 --checkpoint " + file("c.h5") + " --snapshots " + file("s/s")).code,
            0);
  for (auto const& [option, path] : {std::pair<std::string, std::string>{"--restart", file("c.h5")},
                                     {"--load", file("s/s_00000001.hdf5")}}) {
    auto const size = fs::file_size(path);
    for (std::uintmax_t const from : {std::uintmax_t(0), std::uintmax_t(2048), size / 2}) {
      std::string const cmd = "LD_PRELOAD=" NBODY_READ_ERROR_PRELOAD " NBODY_TEST_EIO_FILE=" + path +
                              " NBODY_TEST_EIO_FROM=" + std::to_string(from) + " " NBODY_EXECUTABLE
                              " --backend cpu --run --steps 1 " + option + " " + path + " >" + file("out") + " 2>" +
                              file("err") + " </dev/null";
      int const status = std::system(cmd.c_str());
      std::string const err = slurp(file("err"));
      EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 1) << option << " from " << from << ": " << err;
      EXPECT_NE(err.find("error: " + path + ": cannot read: " + std::strerror(EIO) + " (the disk or file system failed "
                         "to read it; the file itself may be whole)\n"),
                std::string::npos)
          << option << " from " << from << ": " << err;
    }
    // Read without the error, the file is whole.
    Result const whole = nbody("--run -q --steps 1 " + option + " " + path);
    EXPECT_EQ(whole.code, 0) << whole.err;
  }
  // A --checkpoint output that cannot be read to tell how far it goes is said to be, and kept by a stopped run.
  std::string const cmd = "LD_PRELOAD=" NBODY_READ_ERROR_PRELOAD " NBODY_TEST_EIO_FILE=" + file("c.h5") +
                          " " NBODY_EXECUTABLE " --backend cpu --run --bodies 64 --steps 1 --checkpoint " + file("c.h5") +
                          " >" + file("out") + " 2>" + file("err") + " </dev/null";
  EXPECT_EQ(WEXITSTATUS(std::system(cmd.c_str())), 0);
  EXPECT_NE(slurp(file("err")).find("warning: --checkpoint " + file("c.h5") + " cannot be read to tell how far it goes ("),
            std::string::npos)
      << slurp(file("err"));
}

// A disk that loses writes (says it wrote and did not) or fails to sync a folder: every output is read back before it
// is published, so a lost write replaces nothing and is an output not written (exit 1); a series published into a
// folder that then fails its sync is said (it was silent).
TEST_F(Cli, ALostWriteOrAFailedFolderSyncIsAnOutputNotWritten) {
  if (test::kSanitized) GTEST_SKIP() << "a preloaded library would come before the sanitizer's runtime";
  fs::create_directories(file("sub"));
  auto run = [&](const std::string& env, const std::string& args) {
    std::string const cmd = "LD_PRELOAD=" NBODY_READ_ERROR_PRELOAD " " + env + " " NBODY_EXECUTABLE
                            " --backend cpu --run --bodies 64 --steps 2 -q " + args + " >" + file("out") + " 2>" +
                            file("err") + " </dev/null";
    int const status = std::system(cmd.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  using Case = std::tuple<std::string, std::string, std::string>;  // option, file, what its message calls it
  for (auto const& [option, name, what] : {Case{"--json", "j.json", "output"}, Case{"--save", "s.bin", "snapshot"}}) {
    std::ofstream(file(name)) << "the last good one\n";
    EXPECT_EQ(run("NBODY_TEST_LOST_WRITE=" + name, option + " " + file(name)), 1) << option << slurp(file("err"));
    EXPECT_NE(slurp(file("err")).find("error: " + option + " not written: " + file(name) + ": cannot write " + what +
                                      ": the file read back differs from what was written; the disk may be full or "
                                      "failing (nothing was replaced)"),
              std::string::npos)
        << slurp(file("err"));
    EXPECT_EQ(slurp(file(name)), "the last good one\n") << option;
    EXPECT_EQ(run("", option + " " + file(name)), 0) << option << slurp(file("err"));  // the control: no fault, written
    EXPECT_NE(slurp(file(name)), "the last good one\n") << option;
  }
  // An HDF5 snapshot whose values the disk lost (its structures written): read back, refused. Values of 4,096 bodies
  // go in writes of 32 KiB or more; HDF5's structures in smaller ones.
  if (sim::checkpoints_built()) {
    std::ofstream(file("s.h5")) << "the last good one\n";
    std::string const cmd = "LD_PRELOAD=" NBODY_READ_ERROR_PRELOAD " NBODY_TEST_LOST_WRITE=s.h5 "
                            "NBODY_TEST_LOST_WRITE_MIN=32768 " NBODY_EXECUTABLE " --backend cpu --run --bodies 4096 "
                            "--steps 1 -q --save " + file("s.h5") + " >" + file("out") + " 2>" + file("err") +
                            " </dev/null";
    int const status = std::system(cmd.c_str());
    EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 1) << slurp(file("err"));
    EXPECT_NE(slurp(file("err")).find("error: --save not written: " + file("s.h5") + ": cannot write snapshot: the "
                                      "values read back differ from those written"),
              std::string::npos)
        << slurp(file("err"));
    EXPECT_EQ(slurp(file("s.h5")), "the last good one\n");
  }
  // A diagnostics series written row by row: a row the disk lost stops the series, said, as a full disk does.
  EXPECT_EQ(run("NBODY_TEST_LOST_WRITE=lost.csv", "--diagnostics-every 1 --diagnostics " + file("lost.csv")), 1)
      << slurp(file("err"));
  EXPECT_NE(slurp(file("err")).find("warning: diagnostics series stopped: --diagnostics " + file("lost.csv") + ": " +
                                    file("lost.csv") + ".partial: cannot write: it holds fewer bytes than were "
                                    "written to it; the disk may be full or failing; the run goes on"),
            std::string::npos)
      << slurp(file("err"));
  // The series is in place, whole: a warning that it may not outlast a crash, no failure of the series.
  EXPECT_EQ(run("NBODY_TEST_FSYNC_EIO_DIR=" + file("sub"), "--diagnostics-every 1 --diagnostics " + file("sub/d.csv") +
                                                               " --json " + file("j.json")),
            0)
      << slurp(file("err"));
  std::string const synced = file("sub/d.csv") + ": the diagnostics series written, but the folder " + file("sub") +
                             " could not be synced: " + std::strerror(EIO) +
                             "; it is in place, but may not outlast a crash of the machine";
  EXPECT_NE(slurp(file("err")).find("warning: " + synced + "\n"), std::string::npos) << slurp(file("err"));
  EXPECT_TRUE(nlohmann::json::parse(slurp(file("j.json"))).at("diagnostics_failure").is_null());
  EXPECT_EQ(std::count(std::istreambuf_iterator<char>(*std::make_unique<std::ifstream>(file("sub/d.csv"))), {}, '\n'),
            4);  // the header and the rows of steps 0, 1 and 2
}

// A tipsy snapshot carries its softening: a disk restarted from one keeps 0.05 without the option,
// and the user is told that tipsy holds no run settings.
TEST_F(Cli, TipsySofteningIsUsedAndItsLimitsAreStated) {
  ASSERT_EQ(nbody("--run --scenario disk --bodies 300 --steps 2 -q --save " + file("d.bin")).code, 0);
  Result const r = nbody("--run --steps 1 --load " + file("d.bin"));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("notice: softening 0.05 from " + file("d.bin")), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("is a tipsy snapshot: float32 positions and velocities, no step count"), std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("are not kept"), std::string::npos) << r.err;  // nothing but gravity's fields
  // Gas and stars: their other fields (density, temperature, metals, formation time) are said to be gravity's loss.
  sim::BodySet mixed = test::rounded_to_float(test::scenario("plummer", 16));
  for (std::size_t i = 0; i < mixed.size(); ++i)
    mixed.type[i] = i < 4 ? sim::BodyType::gas : i < 6 ? sim::BodyType::star : sim::BodyType::dark;
  sim::write_tipsy(file("mixed.bin"), mixed, 0.01);
  Result const zeros = nbody("--run --steps 0 --load " + file("mixed.bin"));  // nbody's own file: 0, nothing lost
  EXPECT_EQ(zeros.err.find("are not kept"), std::string::npos) << zeros.err;
  // So a save may replace it, the state continued in place (which another program's below may not).
  EXPECT_EQ(nbody("--run -q --steps 1 --load " + file("mixed.bin") + " --save " + file("mixed.bin")).code, 0);
  {  // another program's: the first gas particle's density and the first star's metals (big-endian 1.0f), after the
     // 32-byte header and records of 48 (gas) and 36 (dark) bytes
    std::fstream f(file("mixed.bin"), std::ios::in | std::ios::out | std::ios::binary);
    char const one[4] = {0x3f, char(0x80), 0, 0};
    f.seekp(32 + 28);
    f.write(one, 4);
    f.seekp(32 + 4 * 48 + 10 * 36 + 28);
    f.write(one, 4);
  }
  Result const m = nbody("--run --steps 0 --load " + file("mixed.bin"));
  EXPECT_EQ(m.code, 0) << m.err;
  EXPECT_NE(m.err.find("; its gas's density, temperature and metals and its stars' metals and formation times are not "
                       "kept (nbody integrates gravity alone: a save writes them as 0)"),
            std::string::npos)
      << m.err;
  // A save over that file would write those fields as 0: refused before the run, the file as it was.
  std::string const before = slurp(file("mixed.bin"));
  expect_input_error("--run --steps 1 --load " + file("mixed.bin") + " --save " + file("mixed.bin"),
                     "--save " + file("mixed.bin") + ": the --load file, which holds what nbody does not keep (its "
                     "gas's density, temperature and metals and its stars' metals and formation times): a save over "
                     "it would lose that; give --save another file");
  EXPECT_EQ(slurp(file("mixed.bin")), before);
  // So would each body's own eps (a gas's smoothing length), where they differ: nbody keeps one softening.
  sim::BodySet dark = test::rounded_to_float(test::scenario("plummer", 16));
  for (auto& t : dark.type) t = sim::BodyType::dark;
  sim::write_tipsy(file("eps.bin"), dark, 0.01);
  {
    std::fstream f(file("eps.bin"), std::ios::in | std::ios::out | std::ios::binary);
    char const two[4] = {0x40, 0, 0, 0};  // big-endian 2.0f, the first (dark) body's eps, after its mass and vectors
    f.seekp(32 + 28);
    f.write(two, 4);
  }
  expect_input_error("--run --steps 1 --load " + file("eps.bin") + " --save " + file("eps.bin"),
                     ": the --load file, which holds what nbody does not keep (its bodies' own softenings (eps from "
                     "0.01 to 2)): a save over it would lose that");
  // A file's softening out of bounds is refused with advice that fits it: one too large is not told to grow.
  sim::write_tipsy(file("wide.bin"), test::rounded_to_float(test::scenario("plummer", 16)), 1e14);
  expect_input_error("--run --steps 1 --load " + file("wide.bin"),
                     file("wide.bin") + "'s softening 1e+14: must be a positive length of at most 1e12; give "
                                        "--softening in (0, 1e+12]");
  sim::write_tipsy(file("narrow.bin"), test::rounded_to_float(test::scenario("plummer", 16)), 1e-14);
  expect_input_error("--run --steps 1 --load " + file("narrow.bin"),
                     file("narrow.bin") + "'s softening 1e-14: too small for fp32: a body's pair with itself "
                                          "overflows to NaN below 2.9e-13; give a larger --softening");
}

TEST_F(Cli, HelpListsOptionsWithDefaults) {
  Result const r = nbody("--help", false);
  EXPECT_EQ(r.code, 0);
  for (const char* s : {"--bodies", "--scenario", "--seed", "--steps", "--dt", "--softening", "--integrator",
                        "--precision", "--backend", "--load", "--save", "--benchmark", "--json", "--quiet", "=16384"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
}

// The progress line's ETA goes by the pace since its first update: the start-up's forces and a hermite4 run's first
// block steps made the first estimate 196 s for a run that took 4, from the pace since the start.
TEST(Progress, TheEtaGoesByThePaceSinceTheFirstUpdate) {
  EXPECT_FALSE(app::Progress::eta_seconds(0.5, 0.001, 0.2)) << "under a second of pace measured";
  EXPECT_FALSE(app::Progress::eta_seconds(2.0, 0.1, 0.1)) << "no progress since the first update";
  EXPECT_DOUBLE_EQ(*app::Progress::eta_seconds(1.0, 0.0, 0.25), 3.0);
  EXPECT_DOUBLE_EQ(*app::Progress::eta_seconds(2.0, 0.2, 0.6), 2.0);
  EXPECT_EQ(app::Progress::eta_seconds(0.1, 0.0, 1.0), 0.0) << "the end of a run shorter than a second";
}

}  // namespace
}  // namespace nbody
