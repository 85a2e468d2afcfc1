// tests/test_tipsy.cpp - tipsy snapshots: round trips, the real galaxy_20K file, corrupt and hostile files.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <limits>
#include <string>
#include <thread>

#include "core/errors.h"
#include "core/interrupt.h"
#include "sim/io/tipsy.h"
#include "test_support.h"

namespace nbody {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() : path_(fs::temp_directory_path() / ("nbody-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++))) {
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  static inline int counter_ = 0;
  fs::path path_;
};

std::vector<char> bytes_of(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, const std::vector<char>& b) {
  std::ofstream f(path, std::ios::binary);
  f.write(b.data(), std::streamsize(b.size()));
}

std::string error_of(const std::string& path) {
  try {
    sim::read_tipsy(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// A collision mixes dark and star bodies out of tipsy's order: the writer groups them.
sim::BodySet mixed_bodies() {
  auto b = test::rounded_to_float(test::scenario("collision", 301));
  b.time = 1.25;
  b.type[5] = sim::BodyType::gas;
  std::stable_sort(b.type.begin(), b.type.end());  // keep a set that is already in tipsy order
  return b;
}

TEST(Tipsy, RoundTripIsExactInBothByteOrders) {
  TempDir dir;
  auto const b = mixed_bodies();
  for (auto format : {sim::TipsyFormat::standard, sim::TipsyFormat::little_endian}) {
    std::string const path = dir.file("snap.bin");
    sim::write_tipsy(path, b, 0.01, format);
    sim::TipsyInfo info;
    auto const back = sim::read_tipsy(path, &info);
    EXPECT_EQ(info.format, format);
    EXPECT_EQ(info.gas, 1u);
    EXPECT_TRUE(test::bitwise_equal(b, back));
    EXPECT_EQ(b.type, back.type);
    EXPECT_EQ(back.time, 1.25);
    EXPECT_FALSE(fs::exists(path + ".tmp"));
  }
}

TEST(Tipsy, StandardFilesAreBigEndian) {
  TempDir dir;
  auto const b = test::rounded_to_float(test::scenario("plummer", 3));
  sim::write_tipsy(dir.file("s.bin"), b, 0.01, sim::TipsyFormat::standard);
  auto const raw = bytes_of(dir.file("s.bin"));
  ASSERT_EQ(raw.size(), 32u + 3 * 44);
  EXPECT_EQ(raw[8], 0);  // nbodies = 3 as a big-endian int: 00 00 00 03
  EXPECT_EQ(raw[11], 3);
}

TEST(Tipsy, WriterGroupsFamiliesInTipsyOrder) {
  TempDir dir;
  auto const b = test::rounded_to_float(test::scenario("collision", 100));  // dark, stars, dark, stars
  sim::write_tipsy(dir.file("c.bin"), b, 0.01);
  auto const back = sim::read_tipsy(dir.file("c.bin"));
  ASSERT_EQ(back.size(), b.size());
  EXPECT_TRUE(std::is_sorted(back.type.begin(), back.type.end()));
  EXPECT_EQ(std::count(back.type.begin(), back.type.end(), sim::BodyType::dark), 2);
  EXPECT_NEAR(sim::total_mass(back), sim::total_mass(b), 1e-6);
}

TEST(Tipsy, Galaxy20KLoadsAsItsReadmeDescribes) {
  std::string const path = std::string(NBODY_SHARED_DATA_DIR) + "/galaxy_20K.bin";
  if (!fs::exists(path)) GTEST_SKIP() << path << " not found (it lives in ../shared/data)";
  sim::TipsyInfo info;
  auto const b = sim::read_tipsy(path, &info);
  EXPECT_EQ(info.format, sim::TipsyFormat::little_endian);
  ASSERT_EQ(b.size(), 20000u);
  EXPECT_EQ(info.dark, 2500u);
  EXPECT_EQ(info.star, 17500u);
  EXPECT_EQ(info.gas, 0u);
  EXPECT_EQ(b.type[0], sim::BodyType::dark);
  EXPECT_EQ(b.type[2499], sim::BodyType::dark);
  EXPECT_EQ(b.type[2500], sim::BodyType::star);
  // Every dark particle has the same mass; stars have two masses, both ~20x lighter.
  for (std::size_t i = 0; i < 2500; ++i) ASSERT_FLOAT_EQ(float(b.pos_mass[i].w), 0.04270478f);
  for (std::size_t i = 2500; i < b.size(); ++i) {
    float const m = float(b.pos_mass[i].w);
    ASSERT_TRUE(m == 0.0025182546f || m == 0.0011906531f) << "star " << i << " mass " << m;
  }
  EXPECT_FLOAT_EQ(float(b.pos_mass[0].x), 0.47185373f);  // the first dark particle's position
  // The halo is extended, the stars sit in a thin disk of radius ~10.
  auto radius_median = [&](std::size_t a, std::size_t e, bool cylindrical) {
    std::vector<double> r;
    for (std::size_t i = a; i < e; ++i) {
      auto const& p = b.pos_mass[i];
      r.push_back(std::sqrt(p.x * p.x + p.y * p.y + (cylindrical ? 0 : p.z * p.z)));
    }
    std::nth_element(r.begin(), r.begin() + std::ptrdiff_t(r.size() / 2), r.end());
    return r[r.size() / 2];
  };
  EXPECT_NEAR(radius_median(0, 2500, false), 63.2, 1.0);
  EXPECT_NEAR(radius_median(2500, 20000, true), 9.2, 0.5);
  std::vector<double> z;
  for (std::size_t i = 2500; i < b.size(); ++i) z.push_back(std::abs(b.pos_mass[i].z));
  std::nth_element(z.begin(), z.begin() + std::ptrdiff_t(z.size() / 2), z.end());
  EXPECT_LT(z[z.size() / 2], 1.0);  // measured 0.69: thin
  EXPECT_FALSE(info.softening.has_value());  // eps 0.44 (dark), 0.133 and 0.171 (stars): no one softening
}

TEST(Tipsy, CorruptFilesAreRejectedWithTheFileAndTheProblem) {
  TempDir dir;
  auto const b = test::rounded_to_float(test::scenario("plummer", 10));
  std::string const good = dir.file("good.bin");
  sim::write_tipsy(good, b, 0.01);
  auto const raw = bytes_of(good);

  EXPECT_NE(error_of(dir.file("missing.bin")).find("cannot open"), std::string::npos);

  std::string const truncated = dir.file("truncated.bin");
  write_bytes(truncated, std::vector<char>(raw.begin(), raw.end() - 5));
  std::string e = error_of(truncated);
  EXPECT_NE(e.find(truncated), std::string::npos) << e;
  EXPECT_NE(e.find("truncated"), std::string::npos) << e;

  std::string const header_only = dir.file("header.bin");
  write_bytes(header_only, std::vector<char>(raw.begin(), raw.begin() + 20));
  EXPECT_NE(error_of(header_only).find("truncated tipsy header"), std::string::npos);

  std::string const oversized = dir.file("oversized.bin");
  auto big = raw;
  big.push_back(0);
  write_bytes(oversized, big);
  EXPECT_NE(error_of(oversized).find("oversized"), std::string::npos);

  std::string const garbage = dir.file("garbage.bin");
  write_bytes(garbage, std::vector<char>(500, 'x'));
  EXPECT_NE(error_of(garbage).find("not a tipsy file"), std::string::npos);

  std::string const nan = dir.file("nan.bin");
  auto bad = raw;
  for (int k = 0; k < 4; ++k) bad[32 + 44 * 3 + 4 + std::size_t(k)] = char(0xff);  // star 3's x: NaN
  write_bytes(nan, bad);
  e = error_of(nan);
  EXPECT_EQ(e, nan + ": body 3: position x is nan; nbody reads finite values only");
}

// One line naming the file, in the project's words: nothing from the standard library's insides.
::testing::AssertionResult is_one_line_naming(const std::string& message, const std::string& path) {
  if (message.find(path) != 0) return ::testing::AssertionFailure() << "'" << message << "' does not start with " << path;
  if (message.find('\n') != std::string::npos) return ::testing::AssertionFailure() << "'" << message << "' has several lines";
  for (const char* internal : {"basic_", "std::", "bad_alloc", "vector", "underflow"}) {
    if (message.find(internal) != std::string::npos) {
      return ::testing::AssertionFailure() << "'" << message << "' shows '" << internal << "'";
    }
  }
  return ::testing::AssertionSuccess();
}

// Runs f on another thread and says whether it returned within `limit`. If it did not, `unblock`
// is called until it does, so that a failing test ends instead of hanging.
template <class F, class U>
bool returns_within(std::chrono::milliseconds limit, F f, U unblock) {
  auto done = std::async(std::launch::async, f);
  bool const in_time = done.wait_for(limit) == std::future_status::ready;
  while (done.wait_for(std::chrono::milliseconds(50)) != std::future_status::ready) unblock();
  done.get();  // rethrows what f threw
  return in_time;
}

// When reading never ends (a device), nothing can unblock it: stop the test binary with a reason.
void give_up(const char* what) {
  std::fprintf(stderr, "%s: still reading after the time limit; stopping\n", what);
  std::abort();
}

constexpr std::chrono::milliseconds kNoBlockLimit{5000};  // a refusal from stat takes well under 1 ms

// Standard (big-endian) tipsy with only stars: record k starts at 32 + 44 k; mass pos[3] vel[3]
// metals tform eps phi.
constexpr std::size_t kStarRecord = 44;
std::size_t star_field(std::size_t body, std::size_t field) { return 32 + kStarRecord * body + 4 * field; }

void put_big_endian(std::vector<char>& raw, std::size_t at, std::uint32_t bits) {
  for (int k = 0; k < 4; ++k) raw[at + std::size_t(k)] = char((bits >> (24 - 8 * k)) & 0xffu);
}
void put_big_endian(std::vector<char>& raw, std::size_t at, float value) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &value, 4);
  put_big_endian(raw, at, bits);
}
void put_count(std::vector<char>& raw, std::size_t at, std::int32_t count) {
  put_big_endian(raw, at, static_cast<std::uint32_t>(count));
}
constexpr std::size_t kNbodiesAt = 8, kNdarkAt = 20, kNstarAt = 24;  // header offsets

// Ten stars in a standard file, to be spoiled by each test.
class HostileTipsy : public ::testing::Test {
 protected:
  void SetUp() override {
    sim::write_tipsy(dir_.file("good.bin"), test::rounded_to_float(test::scenario("plummer", 10)), 0.01);
    raw_ = bytes_of(dir_.file("good.bin"));
    ASSERT_EQ(raw_.size(), 32 + 10 * kStarRecord);
  }
  std::string write(const std::string& name, const std::vector<char>& raw) {
    write_bytes(dir_.file(name), raw);
    return dir_.file(name);
  }
  std::string with_float(const std::string& name, std::size_t body, std::size_t field, float value) {
    auto raw = raw_;
    put_big_endian(raw, star_field(body, field), value);
    return write(name, raw);
  }
  TempDir dir_;
  std::vector<char> raw_;
};

TEST_F(HostileTipsy, FifoIsRefusedWithoutBlocking) {
  test::TestDir const dir("nbody-tipsy");
  std::string const fifo = (dir / "snap.fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  // A writer that opens and closes at once releases a reader waiting in open() (it then sees end of file).
  auto release_reader = [&] {
    int const fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (fd >= 0) ::close(fd);
  };
  // Negative control: a plain open for reading does block on a FIFO, and the guard sees it.
  EXPECT_FALSE(returns_within(std::chrono::milliseconds(200), [&] { std::ifstream f(fifo); }, release_reader));

  std::string message;
  EXPECT_TRUE(returns_within(kNoBlockLimit, [&] { message = error_of(fifo); }, release_reader))
      << "read_tipsy blocked on a FIFO";
  EXPECT_EQ(message, fifo + ": not a regular file (a FIFO); give a snapshot file (tipsy, HDF5 or GADGET)");
}

TEST_F(HostileTipsy, DirectoryIsRefusedByName) {
  std::string const dir = dir_.file("snapshots");
  fs::create_directories(dir);
  std::string const message = error_of(dir);
  EXPECT_EQ(message, dir + ": not a regular file (a directory); give a snapshot file (tipsy, HDF5 or GADGET)");
  EXPECT_TRUE(is_one_line_naming(message, dir));
}

TEST_F(HostileTipsy, DevZeroIsRefusedBeforeReading) {
  if (!fs::exists("/dev/zero")) GTEST_SKIP() << "no /dev/zero";
  std::string message;
  returns_within(kNoBlockLimit, [&] { message = error_of("/dev/zero"); }, [] { give_up("read_tipsy(/dev/zero)"); });
  EXPECT_EQ(message, "/dev/zero: not a regular file (a character device); give a snapshot file (tipsy, HDF5 or GADGET)");
  EXPECT_TRUE(test::rejected_with([] { sim::read_tipsy("/dev/null"); }, "/dev/null: not a regular file (a character device)"));
}

TEST_F(HostileTipsy, HeaderPromisingMoreBodiesThanTheFileHoldsIsRefused) {
  auto raw = raw_;
  put_count(raw, kNbodiesAt, 1010);
  put_count(raw, kNstarAt, 1010);
  std::string const more = write("more.bin", raw);
  EXPECT_EQ(error_of(more), more + ": truncated tipsy file: header describes 1010 bodies (0 gas, 0 dark, 1010 star) in " +
                                std::to_string(32 + 1010 * kStarRecord) + " bytes, file has 472");
  // 2^30 bodies promised in 472 bytes: refused from the header and the size, nothing allocated.
  put_count(raw, kNbodiesAt, 1 << 30);
  put_count(raw, kNstarAt, 1 << 30);
  std::string const billion = write("billion.bin", raw);
  EXPECT_TRUE(test::rejected_with([&] { sim::read_tipsy(billion); },
                                  billion + ": truncated tipsy file: header describes 1073741824 bodies"));
}

TEST_F(HostileTipsy, OversizedFileIsRefusedFromItsSizeWithoutReadingIt) {
  // 4 GiB, sparse: reading it would take seconds and 4 GiB of memory; stat's size takes none.
  std::string const path = write("huge.bin", raw_);
  fs::resize_file(path, std::uintmax_t{4} << 30);
  std::string message;
  auto const start = std::chrono::steady_clock::now();
  returns_within(kNoBlockLimit, [&] { message = error_of(path); }, [] { give_up("read_tipsy(huge.bin)"); });
  double const seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(message, path + ": oversized tipsy file: header describes 10 bodies (0 gas, 0 dark, 10 star) in 472 "
                            "bytes, file has 4294967296");
  EXPECT_LT(seconds, 0.5);  // measured 0.0001 s
}

TEST_F(HostileTipsy, AbsurdHeaderCountsAreRefused) {
  auto raw = raw_;
  put_count(raw, kNbodiesAt, (1 << 30) + 1);
  put_count(raw, kNstarAt, (1 << 30) + 1);
  std::string path = write("too-many.bin", raw);
  EXPECT_EQ(error_of(path), path + ": header says nbodies = 1073741825; nbody reads 1 to 1073741824 (2^30) bodies");

  raw = raw_;
  put_count(raw, kNbodiesAt, 0);
  put_count(raw, kNstarAt, 0);
  path = write("none.bin", raw);
  EXPECT_EQ(error_of(path), path + ": header says nbodies = 0; nbody reads 1 to 1073741824 (2^30) bodies");

  raw = raw_;
  put_count(raw, kNdarkAt, -3);
  put_count(raw, kNstarAt, 13);
  path = write("negative.bin", raw);
  EXPECT_EQ(error_of(path), path + ": header says ndark = -3; a count must be >= 0");

  raw = raw_;
  put_count(raw, kNdarkAt, std::numeric_limits<std::int32_t>::max());
  path = write("overflow.bin", raw);  // 10 + 2^31-1 wraps in 32 bits; summed in 64
  EXPECT_EQ(error_of(path), path + ": header counts do not add up: nsph 0 + ndark 2147483647 + nstar 10 = "
                                   "2147483657, but nbodies = 10");

  raw = raw_;
  put_count(raw, 12, 4);  // ndim
  path = write("ndim.bin", raw);
  EXPECT_EQ(error_of(path), path + ": not a tipsy file: its header's ndim (bytes 12-15), 67108864 little-endian and 4 "
                                   "big-endian, is 3 in a tipsy file");
  // Named as HDF5, and neither: the name is said not to match (a text file, a CSV renamed).
  path = write("ndim.h5", raw);
  EXPECT_EQ(error_of(path), path + ": not a tipsy file: its header's ndim (bytes 12-15), 67108864 little-endian and 4 "
                                   "big-endian, is 3 in a tipsy file; nor an HDF5 file, as its name says (no HDF5 "
                                   "signature)");
  path = write("short.hdf5", std::vector<char>{'t', 'e', 'x', 't', '\n'});
  EXPECT_EQ(error_of(path), path + ": truncated tipsy header: 5 bytes, need 32; nor an HDF5 file, as its name says (no "
                                   "HDF5 signature)");

  // An HDF5 file (a checkpoint given to --load) is named as one.
  raw = raw_;
  std::memcpy(raw.data(), "\x89HDF\r\n\x1a\n", 8);
  put_count(raw, 12, 0);  // HDF5's superblock there: no ndim of 3
  path = write("checkpoint.h5", raw);
  EXPECT_EQ(error_of(path), path + ": an HDF5 file in neither nbody's nor GADGET's layout (a Header group with "
                                   "NumPart_Total or NumPart_ThisFile, and PartTypeN groups, N from 0 to 5); --load "
                                   "reads tipsy files and "
                                   "HDF5 snapshots in the GADGET/SWIFT layout, nbody's and others' (a checkpoint "
                                   "continues with --restart)");
}

TEST_F(HostileTipsy, NanVelocityIsRefusedNamingBodyAndField) {
  std::string const path = with_float("nan.bin", 3, 5, std::numeric_limits<float>::quiet_NaN());
  std::string const message = error_of(path);
  EXPECT_EQ(message, path + ": body 3: velocity y is nan; nbody reads finite values only");
  EXPECT_TRUE(is_one_line_naming(message, path));
  std::string const inf = with_float("inf.bin", 9, 3, -std::numeric_limits<float>::infinity());
  EXPECT_EQ(error_of(inf), inf + ": body 9: position z is -inf; nbody reads finite values only");
}

TEST_F(HostileTipsy, HugePositionIsRefused) {
  std::string const path = with_float("huge.bin", 0, 1, 1e19f);
  EXPECT_EQ(error_of(path), path + ": body 0: position x is 1e+19; nbody reads magnitudes up to 1e15");
  // Negative control: the bound itself loads, 1% beyond it does not.
  EXPECT_NO_THROW(sim::read_tipsy(with_float("at-bound.bin", 0, 4, -1e15f)));
  EXPECT_TRUE(test::rejected_with([&] { sim::read_tipsy(with_float("beyond.bin", 0, 4, -1.01e15f)); },
                                  "body 0: velocity x is -1.01e+15; nbody reads magnitudes up to 1e15"));
}

TEST_F(HostileTipsy, NegativeMassOrSofteningIsRefused) {
  std::string const mass = with_float("mass.bin", 2, 0, -1.0f);
  EXPECT_EQ(error_of(mass), mass + ": body 2: mass is -1; it must be >= 0");
  std::string const eps = with_float("eps.bin", 4, 9, -0.01f);
  EXPECT_EQ(error_of(eps), eps + ": body 4: eps is -0.01; it must be >= 0");
  std::string const nan_eps = with_float("nan-eps.bin", 4, 9, std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(error_of(nan_eps), nan_eps + ": body 4: eps is nan; nbody reads finite values only");
  // Negative control: a massless body and fields nbody does not read (metals, phi) load.
  std::string const massless = with_float("massless.bin", 2, 0, 0.0f);
  EXPECT_NO_THROW(sim::read_tipsy(massless));
  std::string const phi = with_float("phi.bin", 2, 10, std::numeric_limits<float>::quiet_NaN());
  EXPECT_NO_THROW(sim::read_tipsy(phi));
}

TEST_F(HostileTipsy, LittleEndianFilesAreCheckedAlike) {
  auto b = test::rounded_to_float(test::scenario("plummer", 10));
  b.velocity[6].y = std::numeric_limits<double>::quiet_NaN();
  sim::write_tipsy(dir_.file("le.bin"), b, 0.01, sim::TipsyFormat::little_endian);
  EXPECT_EQ(error_of(dir_.file("le.bin")),
            dir_.file("le.bin") + ": body 6: velocity y is nan; nbody reads finite values only");
}

// A file whose header was turned little-endian and whose bodies were left big-endian (a converter that swapped the
// header alone) reads as nonsense; the refusal says the values are sound in the other byte order. One whose values
// are nonsense either way gets no such hint.
TEST_F(HostileTipsy, BodiesInTheOtherByteOrderThanTheHeaderAreSaidToBe) {
  auto little_header = [](std::vector<char> raw) {
    auto swap_bytes = [&](std::size_t at, std::size_t n) {
      for (std::size_t k = 0; k < n / 2; ++k) std::swap(raw.at(at + k), raw.at(at + n - 1 - k));
    };
    swap_bytes(0, 8);  // the time
    for (std::size_t at = 8; at < 32; at += 4) swap_bytes(at, 4);
    return raw;
  };
  std::string const path = write("mixed.bin", little_header(raw_));
  std::string const error = error_of(path);
  EXPECT_EQ(error.rfind(path + ": body 0: ", 0), 0u) << error;
  EXPECT_NE(error.find("; its values are sound read big-endian, and the header is little-endian: were the bodies "
                       "written in the other byte order?"),
            std::string::npos)
      << error;
  EXPECT_EQ(error_of(with_float("nan.bin", 3, 5, std::numeric_limits<float>::quiet_NaN())),
            dir_.file("nan.bin") + ": body 3: velocity y is nan; nbody reads finite values only");
  // A bad value among round ones (0.5, -1), whose bytes turned round are tiny subnormal numbers: no hint.
  auto round = raw_;
  for (std::size_t field = 0; field < 11; ++field) put_big_endian(round, star_field(4, field), 0.5f);
  put_big_endian(round, star_field(4, 0), -1.0f);
  EXPECT_EQ(error_of(write("round.bin", round)), dir_.file("round.bin") + ": body 4: mass is -1; it must be >= 0");
  // Round values (a file written by hand), their header turned: each reads as a subnormal number, within the bounds
  // but no body's value; refused for it, with the hint. (Before, they were read as masses of 9e-44 without a word.)
  auto hand = raw_;
  for (std::size_t body = 0; body < 10; ++body)
    for (std::size_t field = 0; field < 11; ++field) put_big_endian(hand, star_field(body, field), 0.5f);
  EXPECT_EQ(error_of(write("hand.bin", little_header(hand))),
            dir_.file("hand.bin") + ": body 0: mass is 8.82818e-44, a subnormal number; its values are sound read "
                                    "big-endian, and the header is little-endian: were the bodies written in the "
                                    "other byte order?");
  EXPECT_EQ(sim::read_tipsy(write("hand_whole.bin", hand)).size(), 10u);
}

// The header's time within the times a run can name (core/bounds.h), as an HDF5 snapshot's Header/Time is: a time of
// 1e300 was read, and the run's time arithmetic went on from it.
TEST_F(HostileTipsy, HeaderTimeOutsideARunsTimesIsRefused) {
  auto with_time = [&](const std::string& name, double time) {
    auto raw = raw_;
    std::uint64_t bits = 0;
    std::memcpy(&bits, &time, 8);
    put_big_endian(raw, 0, std::uint32_t(bits >> 32));
    put_big_endian(raw, 4, std::uint32_t(bits & 0xffffffffu));
    return write(name, raw);
  };
  std::string path = with_time("huge.bin", 1e300);
  EXPECT_EQ(error_of(path), path + ": header time 1e+300 is not a time in [-1e27, 1e27]");
  path = with_time("before.bin", -1e300);
  EXPECT_EQ(error_of(path), path + ": header time -1e+300 is not a time in [-1e27, 1e27]");
  path = with_time("beyond.bin", 1.0000001e27);
  EXPECT_EQ(error_of(path), path + ": header time 1.0000001e+27 is not a time in [-1e27, 1e27]");
  path = with_time("nan.bin", std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(error_of(path), path + ": header time nan is not a time in [-1e27, 1e27]");
  // Negative control: the bounds themselves, and a time just inside them, load.
  EXPECT_EQ(sim::read_tipsy(with_time("end.bin", 1e27)).time, 1e27);
  EXPECT_EQ(sim::read_tipsy(with_time("start.bin", -1e27)).time, -1e27);
  EXPECT_EQ(sim::read_tipsy(with_time("inside.bin", 9e26)).time, 9e26);
}

// Reading a snapshot is a start-up phase: a signal that came before it stops it (Interrupted, not a refusal of the
// file), and the same file reads whole once the interrupt is answered.
TEST(Tipsy, ASignalStopsTheReadingOfASnapshot) {
  TempDir dir;
  sim::BodySet const b = test::rounded_to_float(test::scenario("plummer", 70000));  // two chunks
  sim::write_tipsy(dir.file("big.bin"), b, 0.01);
  request_interrupt(SIGTERM);
  EXPECT_THROW(sim::read_tipsy(dir.file("big.bin")), Interrupted);
  clear_interrupt();
  EXPECT_EQ(sim::read_tipsy(dir.file("big.bin")).size(), b.size());
}

// Where the reader of `path` (open in this process) stands in it: the position /proc/self/fdinfo gives, or -1 while
// the file is not open.
long long read_position(const std::string& path) {
  std::error_code ignored;
  std::string const target = fs::weakly_canonical(path, ignored).string();
  for (auto const& fd : fs::directory_iterator("/proc/self/fd", ignored)) {
    if (fs::read_symlink(fd.path(), ignored).string() != target) continue;
    std::ifstream info("/proc/self/fdinfo/" + fd.path().filename().string());
    std::string key;
    long long pos = -1;
    while (info >> key)
      if (key == "pos:" && info >> pos) return pos;
  }
  return -1;
}

// A signal that arrives while a snapshot is being read stops the reading at the next chunk: a thread watches how far
// the reader is and raises the interrupt once it is a chunk in, with many chunks still to come.
TEST(Tipsy, ASignalStopsTheReadingOfASnapshotBetweenChunks) {
  TempDir dir;
  constexpr std::size_t kChunk = 1 << 16, kChunks = 6, kRecordBytes = 36;  // dark matter records
  sim::BodySet b;
  for (std::size_t i = 0; i < kChunk * kChunks; ++i) {
    float const x = float(i % 1000) * 1e-3f;
    b.append({x, -x, 0.5f * x, 1.0f / float(kChunk * kChunks)}, {0.25f * x, 0.0, -x}, sim::BodyType::dark);
  }
  std::string const path = dir.file("large.bin");
  sim::write_tipsy(path, b, 0.0);
  std::uintmax_t const bytes = fs::file_size(path);
  std::atomic<bool> done{false};
  std::atomic<long long> raised_at{-1};
  std::thread watcher([&] {
    while (!done.load()) {
      long long const pos = read_position(path);
      if (pos >= 32 + static_cast<long long>(kChunk * kRecordBytes)) {
        raised_at = pos;
        request_interrupt(SIGTERM);
        return;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  });
  bool interrupted = false;
  try {
    (void)sim::read_tipsy(path);
  } catch (const Interrupted& e) {
    interrupted = true;
    EXPECT_EQ(e.signal, SIGTERM);
  }
  done = true;
  watcher.join();
  clear_interrupt();
  long long const at = raised_at.load();
  if (!interrupted && (at < 0 || std::uintmax_t(at) + 2 * kChunk * kRecordBytes >= bytes))
    GTEST_SKIP() << "the reader finished before the watcher saw it a chunk in (at byte " << at << " of " << bytes << ")";
  EXPECT_TRUE(interrupted) << "read on to the end of " << bytes << " bytes after a signal at byte " << at;
}

TEST(Tipsy, SofteningRoundTripsInBothByteOrders) {
  TempDir dir;
  for (auto format : {sim::TipsyFormat::standard, sim::TipsyFormat::little_endian}) {
    sim::write_tipsy(dir.file("snap.bin"), mixed_bodies(), 0.05, format);  // gas (hsmooth), dark and stars
    sim::TipsyInfo info;
    sim::read_tipsy(dir.file("snap.bin"), &info);
    ASSERT_TRUE(info.softening.has_value());
    EXPECT_EQ(*info.softening, 0.05);  // stored as a float, read as written
  }
  // eps 0 in every body is a softening of 0 (hermite4's unsoftened runs write it), not "none"; a reused TipsyInfo
  // forgets the last file's.
  sim::TipsyInfo info;
  sim::write_tipsy(dir.file("a.bin"), mixed_bodies(), 0.02);
  sim::read_tipsy(dir.file("a.bin"), &info);
  ASSERT_TRUE(info.softening.has_value());
  EXPECT_EQ(info.eps_min, 0.02);
  EXPECT_EQ(info.eps_max, 0.02);
  sim::write_tipsy(dir.file("zero.bin"), mixed_bodies(), 0.0);
  sim::read_tipsy(dir.file("zero.bin"), &info);
  ASSERT_TRUE(info.softening.has_value());
  EXPECT_EQ(*info.softening, 0.0);
  EXPECT_EQ(info.eps_max, 0.0);
}

TEST(Tipsy, MixedSofteningReportsNone) {
  TempDir dir;
  sim::write_tipsy(dir.file("snap.bin"), test::rounded_to_float(test::scenario("plummer", 10)), 0.01);
  auto raw = bytes_of(dir.file("snap.bin"));
  put_big_endian(raw, star_field(7, 9), 0.02f);  // star 7's eps
  write_bytes(dir.file("mixed.bin"), raw);
  sim::TipsyInfo info;
  sim::read_tipsy(dir.file("mixed.bin"), &info);
  EXPECT_EQ(info.star, 10u);
  EXPECT_FALSE(info.softening.has_value());
  EXPECT_EQ(info.eps_min, 0.01);  // the range, for the notice that names the softening used instead
  EXPECT_EQ(info.eps_max, 0.02);
  // Negative control: the same file with star 7's eps put back reports it.
  put_big_endian(raw, star_field(7, 9), 0.01f);
  write_bytes(dir.file("same.bin"), raw);
  sim::read_tipsy(dir.file("same.bin"), &info);
  EXPECT_EQ(info.softening, std::optional<double>(0.01));
}

TEST(Tipsy, FailedWriteLeavesNothingBehind) {
  TempDir dir;
  auto const b = test::scenario("plummer", 10);
  std::string const path = dir.file("no-such-dir/snap.bin");
  EXPECT_THROW(sim::write_tipsy(path, b, 0.01), InputError);
  EXPECT_FALSE(fs::exists(path));
  EXPECT_FALSE(fs::exists(path + ".tmp"));
}

TEST(Tipsy, ExistingFileIsReplacedWhole) {
  TempDir dir;
  std::string const path = dir.file("snap.bin");
  sim::write_tipsy(path, test::rounded_to_float(test::scenario("plummer", 50)), 0.01);
  auto const small = test::rounded_to_float(test::scenario("plummer", 5));
  sim::write_tipsy(path, small, 0.01);
  EXPECT_TRUE(test::bitwise_equal(sim::read_tipsy(path), small));
}

}  // namespace
}  // namespace nbody
