// tests/test_tipsy.cpp - tipsy snapshots: round trips, the real galaxy_20K file, corrupt files.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "core/errors.h"
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
  EXPECT_NE(e.find("star particle 3"), std::string::npos) << e;
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
