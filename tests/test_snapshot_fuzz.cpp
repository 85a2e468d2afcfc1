// tests/test_snapshot_fuzz.cpp - read_tipsy on hundreds of mutated snapshots: refused by name, or loaded sound.
//
// Budget: kMutantsPerKind files per kind of mutation and byte order (well under a second in CI,
// under ASan+UBSan too). For a longer search, set NBODY_FUZZ_ITERATIONS (files per kind and byte
// order, e.g. 20000) and NBODY_FUZZ_SEED (another sequence of files); the checkpoint fuzzer
// (test_checkpoint_fuzz.cpp) reads them too.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/errors.h"
#include "sim/io/tipsy.h"
#include "test_support.h"

namespace nbody {
namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<unsigned char>;

constexpr std::size_t kHeaderBytes = 32;
constexpr int kMutantsPerKind = 50;          // x 6 kinds x 2 byte orders = 600 files
constexpr std::uint64_t kSeed = 0x7195E5EEDull;  // fixed: the same files on every run
constexpr double kFuzzSecondsBound = 20.0;   // measured 0.17 s (Release), 0.14 s (ASan+UBSan), 2 cores

int fuzz_iterations() {
  char const* v = std::getenv("NBODY_FUZZ_ITERATIONS");
  int const n = v ? std::atoi(v) : 0;
  return n > 0 ? n : kMutantsPerKind;
}

std::uint64_t fuzz_seed() {
  char const* v = std::getenv("NBODY_FUZZ_SEED");
  return v && *v ? std::strtoull(v, nullptr, 0) : kSeed;
}

enum class Mutation { bit_flips, byte_overwrite, truncation, appended_junk, header_count, special_float };
constexpr std::array<Mutation, 6> kMutations{Mutation::bit_flips,     Mutation::byte_overwrite,
                                             Mutation::truncation,    Mutation::appended_junk,
                                             Mutation::header_count,  Mutation::special_float};
const char* mutation_name(Mutation m) {
  switch (m) {
    case Mutation::bit_flips: return "bit-flips";
    case Mutation::byte_overwrite: return "byte-overwrite";
    case Mutation::truncation: return "truncation";
    case Mutation::appended_junk: return "appended-junk";
    case Mutation::header_count: return "header-count";
    case Mutation::special_float: return "special-float";
  }
  return "?";
}

// 40 Plummer bodies made 1 gas, 9 dark and 30 stars, so every tipsy record layout is mutated.
sim::BodySet fuzz_bodies() {
  auto b = test::rounded_to_float(test::scenario("plummer", 40));
  b.type[0] = sim::BodyType::gas;
  std::fill(b.type.begin() + 1, b.type.begin() + 10, sim::BodyType::dark);
  return b;
}
constexpr std::size_t kGas = 1, kDark = 9, kStar = 30;

using test::bytes_of;
using test::write_bytes;

template <class T>
void put(Bytes& raw, std::size_t at, T value, bool little) {
  unsigned char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  std::uint16_t const one = 1;
  unsigned char host_first = 0;
  std::memcpy(&host_first, &one, 1);
  if (little != (host_first == 1)) std::reverse(bytes, bytes + sizeof(T));
  std::copy(bytes, bytes + sizeof(T), raw.begin() + std::ptrdiff_t(at));
}

// Whether the float word at byte `at` of the base file is one read_tipsy loads or takes as eps:
// mass pos[3] vel[3] and gas hsmooth (9), dark eps (7), star eps (9). The rest is never read.
bool is_checked_field(std::size_t at) {
  std::size_t word = (at - kHeaderBytes) / 4;
  for (auto [count, floats, eps] : {std::array<std::size_t, 3>{kGas, 12, 9}, std::array<std::size_t, 3>{kDark, 9, 7},
                                    std::array<std::size_t, 3>{kStar, 11, 9}}) {
    if (word < count * floats) return word % floats < 7 || word % floats == eps;
    word -= count * floats;
  }
  return false;
}

struct Mutant {
  Bytes raw;
  bool must_refuse = false;  // a value or a size that no sound snapshot has
};

Mutant mutate(const Bytes& base, Mutation kind, bool little, std::mt19937_64& rng) {
  auto pick = [&](std::size_t n) { return std::size_t(rng() % n); };
  Mutant m{base, false};
  switch (kind) {
    case Mutation::bit_flips:
      for (std::size_t k = 0, n = 1 + pick(8); k < n; ++k) m.raw[pick(m.raw.size())] ^= std::uint8_t(1u << pick(8));
      break;
    case Mutation::byte_overwrite: {
      constexpr std::uint8_t kValues[] = {0x00, 0xff, 0x7f};
      for (std::size_t k = 0, n = 1 + pick(4); k < n; ++k) {
        std::size_t const at = pick(m.raw.size());
        std::size_t const run = std::min(1 + pick(4), m.raw.size() - at);
        std::fill_n(m.raw.begin() + std::ptrdiff_t(at), run, kValues[pick(3)]);
      }
      break;
    }
    case Mutation::truncation:
      m.raw.resize(pick(m.raw.size()));
      m.must_refuse = true;
      break;
    case Mutation::appended_junk:
      for (std::size_t k = 0, n = 1 + pick(100); k < n; ++k) m.raw.push_back(std::uint8_t(rng()));
      m.must_refuse = true;
      break;
    case Mutation::header_count: {
      constexpr std::int32_t kCounts[] = {0, -1, -40, std::numeric_limits<std::int32_t>::min(),
                                          std::numeric_limits<std::int32_t>::max(), 1 << 30, (1 << 30) + 1,
                                          1 << 28, 39, 41, 80};
      std::int32_t const count = kCounts[pick(std::size(kCounts))];
      if (pick(3) == 0) {  // nbodies and nstar together: a consistent header promising another size
        put<std::int32_t>(m.raw, 8, count, little);
        put<std::int32_t>(m.raw, 24, static_cast<std::int32_t>(std::uint32_t(count) - std::uint32_t(kGas + kDark)), little);
      } else if (pick(6) == 0) {  // time
        put<double>(m.raw, 0, pick(2) ? std::numeric_limits<double>::quiet_NaN() : -std::numeric_limits<double>::infinity(),
                    little);
      } else {  // one of nbodies ndim nsph ndark nstar
        put<std::int32_t>(m.raw, 8 + 4 * pick(5), count, little);
      }
      m.must_refuse = true;  // no count listed equals the field it replaces, and every time is non-finite
      break;
    }
    case Mutation::special_float: {
      constexpr float kInf = std::numeric_limits<float>::infinity();
      constexpr float kValues[] = {std::numeric_limits<float>::quiet_NaN(), kInf, -kInf, 1e30f, -1e30f, 1e19f, -1.0f,
                                   2e15f, 1e-40f /* subnormal */, -0.0f, std::numeric_limits<float>::max()};
      float const value = kValues[pick(std::size(kValues))];
      std::size_t const at = kHeaderBytes + 4 * pick((m.raw.size() - kHeaderBytes) / 4);
      put<float>(m.raw, at, value, little);
      // -1 is refused as a mass or eps only; the subnormal and -0 load anywhere.
      m.must_refuse = is_checked_field(at) && !(std::abs(value) <= sim::kTipsyMaxMagnitude);
      break;
    }
  }
  return m;
}

// A loaded snapshot is sound when its size is what the header and the file say and every value
// read_tipsy promises is finite and within its bounds.
::testing::AssertionResult sound(const sim::BodySet& b, const sim::TipsyInfo& info, std::uint64_t file_bytes) {
  std::size_t const n = info.gas + info.dark + info.star;
  if (b.size() != n || b.velocity.size() != n || b.type.size() != n) {
    return ::testing::AssertionFailure() << b.size() << " bodies for a header of " << n;
  }
  if (file_bytes != kHeaderBytes + 48 * info.gas + 36 * info.dark + 44 * info.star) {
    return ::testing::AssertionFailure() << "loaded " << n << " bodies from a file of " << file_bytes << " bytes";
  }
  if (!std::isfinite(b.time)) return ::testing::AssertionFailure() << "time " << b.time;
  if (info.softening && !(std::isfinite(*info.softening) && *info.softening >= 0)) {
    return ::testing::AssertionFailure() << "softening " << *info.softening;
  }
  for (std::size_t i = 0; i < n; ++i) {
    auto const& p = b.pos_mass[i];
    auto const& v = b.velocity[i];
    for (double x : {p.x, p.y, p.z, p.w, v.x, v.y, v.z}) {
      if (!std::isfinite(x) || std::abs(x) > sim::kTipsyMaxMagnitude) {
        return ::testing::AssertionFailure() << "body " << i << " holds " << x;
      }
    }
    if (p.w < 0) return ::testing::AssertionFailure() << "body " << i << " has mass " << p.w;
  }
  return ::testing::AssertionSuccess();
}

enum class Outcome { refused, loaded, wrong };

// read_tipsy(path) either throws InputError or RuntimeFailure with one line naming the file, or
// returns a sound snapshot. Anything else is `wrong`, and says why in `why`.
Outcome read_mutant(const std::string& path, std::uint64_t file_bytes, std::string& why) {
  auto refusal = [&](const std::exception& e) {
    std::string const message = e.what();
    if (message.rfind(path + ": ", 0) == 0 && message.find('\n') == std::string::npos) return Outcome::refused;
    why = "message '" + message + "' is not one line starting with the file";
    return Outcome::wrong;
  };
  try {
    sim::TipsyInfo info;
    auto const b = sim::read_tipsy(path, &info);
    auto const ok = sound(b, info, file_bytes);
    if (ok) return Outcome::loaded;
    why = std::string("loaded an unsound snapshot: ") + ok.message();
  } catch (const InputError& e) {
    return refusal(e);
  } catch (const RuntimeFailure& e) {
    return refusal(e);
  } catch (const std::exception& e) {
    why = std::string("threw another exception type: ") + e.what();
  } catch (...) {
    why = "threw something that is not a std::exception";
  }
  return Outcome::wrong;
}

TEST(SnapshotFuzz, SoundnessCheckCatchesBadSnapshots) {  // negative controls for `sound`
  auto b = fuzz_bodies();
  sim::TipsyInfo info;
  info.gas = kGas, info.dark = kDark, info.star = kStar;
  std::uint64_t const bytes = kHeaderBytes + 48 * kGas + 36 * kDark + 44 * kStar;
  EXPECT_TRUE(sound(b, info, bytes));
  EXPECT_FALSE(sound(b, info, bytes + 4));
  auto nan = b;
  nan.velocity[17].y = std::numeric_limits<double>::quiet_NaN();
  EXPECT_FALSE(sound(nan, info, bytes));
  auto huge = b;
  huge.pos_mass[3].x = 1e19;
  EXPECT_FALSE(sound(huge, info, bytes));
  auto short_set = b;
  short_set.velocity.pop_back();
  EXPECT_FALSE(sound(short_set, info, bytes));
}

TEST(SnapshotFuzz, MutatedSnapshotsAreRefusedByNameOrLoadSound) {
  test::TestDir const dir("nbody-fuzz");
  auto const bodies = fuzz_bodies();
  int const per_kind = fuzz_iterations();
  std::mt19937_64 rng(fuzz_seed());
  auto const start = std::chrono::steady_clock::now();
  int refused = 0, loaded = 0, files = 0;
  for (auto format : {sim::TipsyFormat::standard, sim::TipsyFormat::little_endian}) {
    bool const little = format == sim::TipsyFormat::little_endian;
    std::string const base_path = (dir / ("base-" + name_of(format) + ".bin")).string();
    sim::write_tipsy(base_path, bodies, 0.01, format);
    Bytes const base = bytes_of(base_path);
    ASSERT_EQ(base.size(), kHeaderBytes + 48 * kGas + 36 * kDark + 44 * kStar);

    // Negative control: the unmutated file loads, whole.
    sim::TipsyInfo info;
    auto const back = sim::read_tipsy(base_path, &info);
    EXPECT_TRUE(test::bitwise_equal(back, bodies));
    EXPECT_EQ(info.softening, std::optional<double>(0.01));  // stored as a float, read as written

    for (Mutation kind : kMutations) {
      int kind_refused = 0, kind_loaded = 0;
      for (int k = 0; k < per_kind; ++k, ++files) {
        Mutant const m = mutate(base, kind, little, rng);
        char name[96];
        std::snprintf(name, sizeof name, "mutant-%s-%s-%04d.bin", name_of(format).c_str(), mutation_name(kind), k);
        std::string const path = (dir / name).string();
        write_bytes(path, m.raw);
        std::string why;
        Outcome const outcome = read_mutant(path, m.raw.size(), why);
        ASSERT_NE(outcome, Outcome::wrong) << name << ": " << why;
        if (m.must_refuse) {
          EXPECT_EQ(outcome, Outcome::refused) << name << " loaded";
        }
        (outcome == Outcome::refused ? kind_refused : kind_loaded)++;
        fs::remove(path);
      }
      std::printf("  %-13s %-15s refused %3d, loaded %3d\n", name_of(format).c_str(), mutation_name(kind), kind_refused,
                  kind_loaded);
      refused += kind_refused;
      loaded += kind_loaded;
    }
  }
  double const seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("  %d mutated files: %d refused, %d loaded, in %.2f s\n", files, refused, loaded, seconds);
  EXPECT_EQ(files, 2 * int(kMutations.size()) * per_kind);
  // Both ways out are exercised: a fuzz that only ever refuses (or only loads) tests half the reader.
  EXPECT_GT(refused, files / 4);
  EXPECT_GT(loaded, files / 10);
  EXPECT_LT(seconds, kFuzzSecondsBound * per_kind / kMutantsPerKind);
}

}  // namespace
}  // namespace nbody
