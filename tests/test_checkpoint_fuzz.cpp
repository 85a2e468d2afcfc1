// tests/test_checkpoint_fuzz.cpp - read_checkpoint on hundreds of mutated HDF5 checkpoints: each is
// refused with InputError naming the file, or loads with every value finite; none crashes, hangs or
// allocates without bound.
//
// Each mutant is read in a child process (fork), so that a crash, a memory error or leak (under
// ASan+UBSan) or a hang is reported with the mutation that caused it, and the others still run.
// The child's memory is bounded, so a file that declares a huge size and makes the reader allocate
// for it fails here at once instead of swapping the machine: its address space (kChildMemoryBytes),
// or under ASan the allocator's largest allocation (ASan then ends the child with its report).
//
// Budget: kMutantsPerKind files per kind of mutation and precision (a few seconds in CI, under
// ASan+UBSan too). For a longer search, set NBODY_FUZZ_ITERATIONS (files per kind and precision,
// e.g. 5000) and NBODY_FUZZ_SEED (another sequence of files); the tipsy fuzzer reads them too.
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <new>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/errors.h"
#include "sim/io/checkpoint.h"
#include "test_support.h"

#if defined(__SANITIZE_ADDRESS__)
#define NBODY_FUZZ_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NBODY_FUZZ_ASAN 1
#endif
#endif

#if NBODY_FUZZ_ASAN
// Under ASan the child's address space cannot be limited (the shadow memory needs terabytes of it):
// the allocator refuses instead. malloc (HDF5's) then returns null; ASan's operator new does not
// throw but ends the process with a report naming the allocation.
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1:max_allocation_size_mb=1024"; }
#endif

namespace nbody {
namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<unsigned char>;

constexpr std::size_t kBodies = 40;
constexpr int kMutantsPerKind = 30;              // x 5 kinds x 2 precisions = 300 files
constexpr std::uint64_t kSeed = 0xC4EC7B0147ull;  // fixed: the same files on every run
constexpr double kFileSecondsBound = 10.0;  // one read; measured at most 0.003 s Release, 0.11 s ASan+UBSan
constexpr double kFuzzSecondsBound = 60.0;  // the default budget; measured 0.8 s Release, 4.2 s ASan+UBSan, 2 cores
constexpr std::uint64_t kChildMemoryBytes = std::uint64_t(2) << 30;  // the base checkpoint is 9 KB

int fuzz_iterations() {
  char const* v = std::getenv("NBODY_FUZZ_ITERATIONS");
  if (!v || !*v) return kMutantsPerKind;
  int const n = std::atoi(v);
  return n > 0 ? n : kMutantsPerKind;
}

std::uint64_t fuzz_seed() {
  char const* v = std::getenv("NBODY_FUZZ_SEED");
  return v && *v ? std::strtoull(v, nullptr, 0) : kSeed;
}

enum class Mutation { bit_flips, byte_overwrite, truncation, appended_junk, declared_size };
constexpr std::array<Mutation, 5> kMutations{Mutation::bit_flips, Mutation::byte_overwrite, Mutation::truncation,
                                             Mutation::appended_junk, Mutation::declared_size};
const char* mutation_name(Mutation m) {
  switch (m) {
    case Mutation::bit_flips: return "bit-flips";
    case Mutation::byte_overwrite: return "byte-overwrite";
    case Mutation::truncation: return "truncation";
    case Mutation::appended_junk: return "appended-junk";
    case Mutation::declared_size: return "declared-size";
  }
  return "?";
}

using test::bytes_of;
using test::write_bytes;

// Where the file states the body count: the NumPart_ThisFile and NumPart_Total attributes (6
// 32-bit counts; the plummer sphere's bodies are stars, the fifth) and each dataset's extent and maximum extent (HDF5's dataspace
// message: version 1, rank, flag 1 = maxima present, 5 reserved bytes, then 8-byte lengths; or, in
// the 1.8 format nbody writes, version 2, rank, flags, type 1 = simple, then the lengths). Found by
// their bytes, not by parsing HDF5: the base file is nbody's own. (In the 1.8 format the object
// headers carry checksums, so HDF5 itself refuses most of these rewrites.)
struct CountPlaces {
  std::vector<std::size_t> u32, u64;
};

CountPlaces body_count_places(const Bytes& raw) {
  CountPlaces at;
  auto u64_at = [&](std::size_t i) {
    std::uint64_t v = 0;
    for (int b = 7; b >= 0; --b) v = (v << 8) | raw[i + std::size_t(b)];
    return v;
  };
  for (std::size_t i = 0; i + 8 + 4 * 8 <= raw.size(); ++i) {
    // 6 counts: the dataspace's one length, 6, then 0, 0, 0, 0, kBodies of PartType4, 0.
    if (i >= 8 && u64_at(i - 8) == 6) {
      bool counts = true;
      for (std::size_t b = 0; b < 24; ++b) counts = counts && raw[i + b] == (b == 16 ? kBodies : 0);
      if (counts) at.u32.push_back(i + 16);
    }
    unsigned char const rank = raw[i + 1];
    if (rank != 1 && rank != 2) continue;
    std::size_t lengths = 0;  // where the 8-byte lengths begin, for a dataspace message at i
    if (raw[i] == 1 && raw[i + 2] == 1 && u64_at(i) >> 24 == 0) lengths = i + 8;
    if (raw[i] == 2 && (raw[i + 2] & 1) && raw[i + 3] == 1) lengths = i + 4;
    if (lengths && u64_at(lengths) == kBodies && u64_at(lengths + 8 * rank) == kBodies) {
      at.u64.push_back(lengths);
      at.u64.push_back(lengths + 8 * rank);
    }
  }
  return at;
}

struct Mutant {
  Bytes raw;
  std::string what;          // the mutation, exactly: to reproduce a failure
  bool must_refuse = false;  // no sound checkpoint has this file's size
};

Mutant mutate(const Bytes& base, Mutation kind, std::mt19937_64& rng) {
  auto pick = [&](std::size_t n) { return std::size_t(rng() % n); };
  Mutant m{base, "", false};
  std::ostringstream what;
  switch (kind) {
    case Mutation::bit_flips:
      what << "bits flipped at byte.bit";
      for (std::size_t k = 0, n = 1 + pick(8); k < n; ++k) {
        std::size_t const at = pick(m.raw.size()), bit = pick(8);
        m.raw[at] ^= std::uint8_t(1u << bit);
        what << " " << at << "." << bit;
      }
      break;
    case Mutation::byte_overwrite: {
      constexpr std::uint8_t kValues[] = {0x00, 0xff, 0x7f, 0x80};
      what << "bytes overwritten (at x count = value)";
      for (std::size_t k = 0, n = 1 + pick(4); k < n; ++k) {
        std::size_t const at = pick(m.raw.size());
        std::size_t const run = std::min(1 + pick(8), m.raw.size() - at);
        std::uint8_t const value = kValues[pick(std::size(kValues))];
        std::fill_n(m.raw.begin() + std::ptrdiff_t(at), run, value);
        what << " " << at << "x" << run << "=0x" << std::hex << int(value) << std::dec;
      }
      break;
    }
    case Mutation::truncation:
      m.raw.resize(pick(m.raw.size()));
      what << "truncated to " << m.raw.size() << " of " << base.size() << " bytes";
      m.must_refuse = true;
      break;
    case Mutation::appended_junk: {
      std::size_t const n = 1 + pick(4096);
      for (std::size_t k = 0; k < n; ++k) m.raw.push_back(std::uint8_t(rng()));
      what << n << " random bytes appended";
      break;
    }
    case Mutation::declared_size: {
      // The body count, everywhere the file states it, made another: a consistent file that
      // promises more (or fewer) bodies than its data holds, up to 10^9 bodies in 9 KB.
      constexpr std::uint32_t kCounts[] = {0, 1, kBodies - 1, kBodies + 1, 1u << 20, 1000000000u, 1u << 30,
                                           (1u << 30) + 1, 0xffffffffu};
      std::uint32_t const count = kCounts[pick(std::size(kCounts))];
      auto const places = body_count_places(base);
      what << "body count " << count << " in " << places.u32.size() << " attributes and " << places.u64.size()
           << " dataspace lengths";
      for (std::size_t at : places.u32)
        for (int b = 0; b < 4; ++b) m.raw[at + std::size_t(b)] = std::uint8_t(count >> (8 * b));
      for (std::size_t at : places.u64)
        for (int b = 0; b < 8; ++b) m.raw[at + std::size_t(b)] = std::uint8_t(std::uint64_t(count) >> (8 * b));
      break;
    }
  }
  m.what = what.str();
  return m;
}

// A loaded checkpoint is sound when its arrays agree in size and every value is finite (masses
// not negative, types 0..2), its settings included.
::testing::AssertionResult sound(const sim::Checkpoint& c) {
  auto const& b = c.bodies;
  std::size_t const n = b.size();
  if (n == 0 || b.velocity.size() != n || b.type.size() != n)
    return ::testing::AssertionFailure() << n << " positions, " << b.velocity.size() << " velocities, " << b.type.size()
                                         << " types";
  auto const& r = c.run;
  for (double x : {b.time, r.start_time, r.dt, r.softening, r.damping, r.initial_energy.value_or(0.0)})
    if (!std::isfinite(x)) return ::testing::AssertionFailure() << "a setting or the time is " << x;
  if (!(r.dt > 0) || !(r.softening > 0)) return ::testing::AssertionFailure() << "dt " << r.dt << ", softening " << r.softening;
  for (std::size_t i = 0; i < n; ++i) {
    auto const& p = b.pos_mass[i];
    auto const& v = b.velocity[i];
    for (double x : {p.x, p.y, p.z, p.w, v.x, v.y, v.z})
      if (!std::isfinite(x)) return ::testing::AssertionFailure() << "body " << i << " holds " << x;
    if (p.w < 0) return ::testing::AssertionFailure() << "body " << i << " has mass " << p.w;
    if (int(b.type[i]) > 2) return ::testing::AssertionFailure() << "body " << i << " has type " << int(b.type[i]);
  }
  return ::testing::AssertionSuccess();
}

// What the child that read one mutant says by its exit status. Any other end (a signal, ASan's
// exit status 1, LeakSanitizer's 23) is a crash or a memory error.
constexpr int kExitLoaded = 40, kExitRefused = 41, kExitWrong = 42;

// In the child: read `path`, say how it went by the exit status (and why on stderr when wrong).
[[noreturn]] void read_in_child(const std::string& path) {
#if !NBODY_FUZZ_ASAN
  rlimit const limit{kChildMemoryBytes, kChildMemoryBytes};
  setrlimit(RLIMIT_AS, &limit);
#endif
  int code = kExitWrong;
  std::string why;
  try {
    auto const c = sim::read_checkpoint(path);
    auto const ok = sound(c);
    if (ok) {
      code = kExitLoaded;
    } else {
      why = std::string("loaded with ") + ok.message();
    }
  } catch (const InputError& e) {
    std::string const message = e.what();
    if (message.find(path) != std::string::npos && message.find('\n') == std::string::npos) {
      code = kExitRefused;
    } else {
      why = "refused with a message that is not one line naming the file: '" + message + "'";
    }
  } catch (const std::bad_alloc&) {
    why = "out of memory: the reader asked for more than " + std::to_string(kChildMemoryBytes >> 20) +
          " MiB (an allocation sized by the file, before checking it)";
  } catch (const std::exception& e) {
    why = std::string("threw something other than InputError: ") + e.what();
  } catch (...) {
    why = "threw something that is not a std::exception";
  }
  if (!why.empty()) std::fprintf(stderr, "%s\n", why.c_str());
  std::fflush(nullptr);
  std::exit(code);  // exit, not _exit: LeakSanitizer checks the child's heap at exit
}

enum class Outcome { loaded, refused, wrong };

// Reads `path` in a child process, waiting at most kFileSecondsBound. `why` says what went wrong.
Outcome read_mutant(const std::string& path, double& seconds, std::string& why) {
  std::fflush(nullptr);  // nothing buffered is written twice
  auto const start = std::chrono::steady_clock::now();
  pid_t const child = fork();
  if (child < 0) {
    why = std::string("fork: ") + std::strerror(errno);
    return Outcome::wrong;
  }
  if (child == 0) read_in_child(path);
  int status = 0;
  while (true) {
    pid_t const done = waitpid(child, &status, WNOHANG);
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (done == child) break;
    if (done < 0 && errno != EINTR) {
      why = std::string("waitpid: ") + std::strerror(errno);
      return Outcome::wrong;
    }
    if (seconds > kFileSecondsBound) {
      kill(child, SIGKILL);
      waitpid(child, &status, 0);
      why = "still reading after " + std::to_string(kFileSecondsBound) + " s (a hang): killed";
      return Outcome::wrong;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == kExitLoaded) return Outcome::loaded;
  if (WIFEXITED(status) && WEXITSTATUS(status) == kExitRefused) return Outcome::refused;
  if (WIFEXITED(status) && WEXITSTATUS(status) == kExitWrong) {
    why = "read wrongly (its reason above)";
  } else if (WIFSIGNALED(status)) {
    why = std::string("the reader crashed: signal ") + std::to_string(WTERMSIG(status)) + " (" +
          strsignal(WTERMSIG(status)) + ")";
  } else {
    why = "the reader ended with exit status " + std::to_string(WEXITSTATUS(status)) +
          " (a sanitizer's report above)";
  }
  return Outcome::wrong;
}

sim::RunRecord fuzz_record(Precision precision) {
  sim::RunRecord r;
  r.step = 17;
  r.start_time = 0.25;
  r.precision = precision;
  r.integrator = "leapfrog";
  r.dt = 0.005;
  r.softening = 0.05;
  r.scenario = "plummer";
  r.seed = 42;
  r.initial_energy = -0.25;
  return r;
}

class CheckpointFuzz : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!sim::checkpoints_built()) GTEST_SKIP() << "this nbody was built without HDF5 (no checkpoints)";
  }
};

// The blocks a write reserves past the file's end (so that a full disk fails before HDF5 holds data it cannot
// write) are given back once it is written: a published file takes its own size on the disk, not about twice.
TEST_F(CheckpointFuzz, WrittenFilesHoldNoReservedBlocksPastTheirEnd) {
  test::TestDir const dir("nbody-checkpoint-blocks");
  std::string const checkpoint = (dir / "c.h5").string(), snapshot = (dir / "s.hdf5").string();
  sim::write_checkpoint(checkpoint, test::scenario("plummer", 1024), fuzz_record(Precision::fp32));
  sim::write_snapshot(snapshot, test::scenario("plummer", 1024), fuzz_record(Precision::fp32), Precision::fp32);
  for (std::string const& path : {checkpoint, snapshot}) {
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0) << path;
    std::uint64_t const on_disk = std::uint64_t(st.st_blocks) * 512, size = std::uint64_t(st.st_size);
    // Its size and at most 32 KiB of rounding to whole blocks (the reservation left would add about 64 KiB).
    EXPECT_LE(on_disk, size + 32768) << path << ": " << size << " bytes take " << on_disk << " on the disk";
  }
}

// A state written twice is the same bytes twice, a second apart: HDF5 records no time of its own in the files (its
// default stamps every object with the time it was made), so identical checkpoints can be told by cmp or a hash.
TEST_F(CheckpointFuzz, OneStateWrittenTwiceIsTheSameBytes) {
  test::TestDir const dir("nbody-checkpoint-bytes");
  sim::BodySet const bodies = test::scenario("plummer", 256);
  auto write_both = [&](const std::string& tag) {
    sim::write_checkpoint((dir / ("c" + tag + ".h5")).string(), bodies, fuzz_record(Precision::fp64));
    sim::write_snapshot((dir / ("s" + tag + ".hdf5")).string(), bodies, fuzz_record(Precision::fp64), Precision::fp32);
  };
  write_both("1");
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // HDF5's times are in whole seconds
  write_both("2");
  auto bytes = [&](const char* name) {
    std::ifstream in(dir / name, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  EXPECT_EQ(bytes("c1.h5"), bytes("c2.h5"));
  EXPECT_EQ(bytes("s1.hdf5"), bytes("s2.hdf5"));
}

TEST_F(CheckpointFuzz, SoundnessCheckAndChildCatchBadReads) {  // negative controls
  test::TestDir const dir("nbody-checkpoint-fuzz");
  std::string const path = (dir / "base.h5").string();
  sim::write_checkpoint(path, test::scenario("plummer", kBodies), fuzz_record(Precision::fp64));
  sim::Checkpoint c = sim::read_checkpoint(path);
  EXPECT_TRUE(sound(c));
  auto nan = c;
  nan.bodies.velocity[17].y = std::numeric_limits<double>::quiet_NaN();
  EXPECT_FALSE(sound(nan));
  auto inf_dt = c;
  inf_dt.run.dt = std::numeric_limits<double>::infinity();
  EXPECT_FALSE(sound(inf_dt));
  auto short_set = c;
  short_set.bodies.type.pop_back();
  EXPECT_FALSE(sound(short_set));
  // The child's verdicts: a whole file loads, no file is refused by name, a file the child cannot
  // read at all (a directory) is refused.
  double seconds = 0;
  std::string why;
  EXPECT_EQ(read_mutant(path, seconds, why), Outcome::loaded) << why;
  EXPECT_EQ(read_mutant((dir / "absent.h5").string(), seconds, why), Outcome::refused) << why;
  // The places the declared-size mutation rewrites: NumPart_ThisFile and NumPart_Total, and the
  // five datasets' extents and maximum extents (ParticleIDs, Coordinates, CoordinateRoundoff,
  // Velocities, Masses).
  auto const places = body_count_places(bytes_of(path));
  EXPECT_EQ(places.u32.size(), 2u);
  EXPECT_EQ(places.u64.size(), 10u);
}

TEST_F(CheckpointFuzz, MutatedCheckpointsAreRefusedByNameOrLoadFinite) {
  test::TestDir dir("nbody-checkpoint-fuzz");
  int const per_kind = fuzz_iterations();
  std::mt19937_64 rng(fuzz_seed());
  auto const start = std::chrono::steady_clock::now();
  int refused = 0, loaded = 0, files = 0, wrong = 0;
  double slowest = 0;
  for (Precision precision : {Precision::fp32, Precision::fp64}) {
    std::string const base_path = (dir / ("base-" + name_of(precision) + ".h5")).string();
    sim::write_checkpoint(base_path, test::scenario("plummer", kBodies), fuzz_record(precision));
    Bytes const base = bytes_of(base_path);
    ASSERT_GT(base.size(), 0u);
    for (Mutation kind : kMutations) {
      int kind_refused = 0, kind_loaded = 0;
      for (int k = 0; k < per_kind; ++k, ++files) {
        Mutant const m = mutate(base, kind, rng);
        char name[96];
        std::snprintf(name, sizeof name, "mutant-%s-%s-%04d.h5", name_of(precision).c_str(), mutation_name(kind), k);
        std::string const path = (dir / name).string();
        write_bytes(path, m.raw);
        double seconds = 0;
        std::string why;
        Outcome const outcome = read_mutant(path, seconds, why);
        slowest = std::max(slowest, seconds);
        if (outcome == Outcome::wrong) {
          ++wrong;
          ADD_FAILURE() << name << " (" << m.what << "): " << why;
          continue;  // kept in the directory, to be read again
        }
        if (m.must_refuse) {
          EXPECT_EQ(outcome, Outcome::refused) << name << " (" << m.what << ") loaded";
        }
        (outcome == Outcome::refused ? kind_refused : kind_loaded)++;
        fs::remove(path);
      }
      std::printf("  %-5s %-15s refused %4d, loaded %4d\n", name_of(precision).c_str(), mutation_name(kind),
                  kind_refused, kind_loaded);
      refused += kind_refused;
      loaded += kind_loaded;
    }
  }
  double const seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("  %d mutated checkpoints: %d refused, %d loaded, %d wrong, in %.2f s (slowest file %.3f s)\n", files,
              refused, loaded, wrong, seconds, slowest);
  EXPECT_EQ(files, 2 * int(kMutations.size()) * per_kind);
  // Both ways out are exercised: a fuzz that only ever refuses (or only loads) tests half the reader.
  EXPECT_GT(refused, files / 4);
  EXPECT_GT(loaded, files / 20);
  EXPECT_LT(seconds, kFuzzSecondsBound * per_kind / kMutantsPerKind);
  if (wrong != 0) dir.keep();  // the wrong mutants, to read
}

}  // namespace
}  // namespace nbody
