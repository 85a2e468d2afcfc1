// tests/test_support.h - helpers shared by the tests: error norms and ready-made states.
#pragma once

#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/errors.h"
#include "rejection.h"
#include "sim/physics/body_set.h"
#include "sim/physics/reference_forces.h"
#include "sim/physics/scenarios.h"

namespace nbody::test {

// Whether this test program runs under AddressSanitizer or ThreadSanitizer, which slow nbody down several times.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
inline constexpr bool kSanitized = __has_feature(address_sanitizer) || __has_feature(thread_sanitizer);
#else
inline constexpr bool kSanitized = false;
#endif
// A size or a time bound for this build: `sanitized` under a sanitizer, else `plain`.
template <class T>
T sanitized_or(T sanitized, T plain) {
  return kSanitized ? sanitized : plain;
}

// ||a - ref|| / ||ref|| over all components.
inline double relative_l2(const std::vector<Vec3d>& a, const std::vector<Vec3d>& ref) {
  double e = 0, r = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    Vec3d const d = a[i] - ref[i];
    e += dot(d, d);
    r += dot(ref[i], ref[i]);
  }
  return r > 0 ? std::sqrt(e / r) : std::sqrt(e);
}

// The named scenario ("plummer", "two-body", ...) of n bodies.
inline sim::BodySet scenario(const std::string& name, std::size_t n, std::uint64_t seed = 42) {
  sim::ScenarioParams p;
  p.scenario = from_name<sim::Scenario>(name).value();
  p.bodies = n;
  p.seed = seed;
  return sim::make_scenario(p);
}

// Two bodies of mass 0.5 falling head on from rest at distance 1, a light body at 5, and `light` bodies of mass 1e-9
// on circular orbits at radii 50 and beyond: with no softening the pair's step falls below the hermite4 floor after
// about 512 block steps, and the light bodies give the system groups enough for every device of a layout.
inline sim::BodySet head_on_collision(std::size_t light = 0) {
  sim::BodySet b;
  b.append({-0.5, 0, 0, 0.5}, {0, 0, 0}, sim::BodyType::star);
  b.append({0.5, 0, 0, 0.5}, {0, 0, 0}, sim::BodyType::star);
  b.append({5, 0, 0, 1e-6}, {0, 0.3, 0}, sim::BodyType::star);
  for (std::size_t k = 0; k < light; ++k) {
    double const r = 50.0 + 0.25 * double(k), phi = 0.1 * double(k), speed = std::sqrt(1.0 / r);
    b.append({r * std::cos(phi), r * std::sin(phi), 0, 1e-9}, {-speed * std::sin(phi), speed * std::cos(phi), 0},
             sim::BodyType::star);
  }
  return b;
}

// A Plummer sphere of 2 x `pairs` bodies (each body and its mirror image through the centre, velocity mirrored too)
// around a body moving through the centre (body 0): the pulls on it cancel to rounding, its jerk does not (hermite4
// starts it from its strongest pull's criterion).
inline sim::BodySet symmetric_around_a_moving_centre(std::size_t pairs) {
  sim::BodySet const half = scenario("plummer", pairs, 7);
  sim::BodySet b;
  b.append({0, 0, 0, half.pos_mass[0].w}, {0.3, -0.2, 0.1}, sim::BodyType::star);
  for (std::size_t i = 0; i < pairs; ++i) {
    auto const p = half.pos_mass[i];
    Vec3d const v = half.velocity[i];
    b.append(p, v, sim::BodyType::star);
    b.append({-p.x, -p.y, -p.z, p.w}, {-v.x, -v.y, -v.z}, sim::BodyType::star);
  }
  return b;
}

inline std::vector<Vec3d> reference_accelerations(const sim::BodySet& b, double softening) {
  std::vector<Vec3d> a(b.size());
  sim::reference_accelerations(b.pos_mass.data(), b.size(), 0, b.size(), softening * softening, a.data());
  return a;
}

// Rounds to the nearest float. Out of line on purpose: GCC 12.2 at -O2/-O3 drops some of the
// double -> float -> double round trips when they are written inline in a loop over structs.
[[gnu::noinline]] inline double to_float_precision(double x) { return static_cast<double>(static_cast<float>(x)); }

// Positions rounded to fp32, so fp32 and fp64 paths see the same input.
inline sim::BodySet rounded_to_float(sim::BodySet b) {
  for (auto& p : b.pos_mass) {
    p.x = to_float_precision(p.x);
    p.y = to_float_precision(p.y);
    p.z = to_float_precision(p.z);
    p.w = to_float_precision(p.w);
  }
  for (auto& v : b.velocity) {
    v.x = to_float_precision(v.x);
    v.y = to_float_precision(v.y);
    v.z = to_float_precision(v.z);
  }
  return b;
}

// Positions, masses and velocities equal bit for bit; on failure, says where they first differ.
inline ::testing::AssertionResult bitwise_equal(const sim::BodySet& a, const sim::BodySet& b) {
  if (a.size() != b.size()) return ::testing::AssertionFailure() << "sizes " << a.size() << " and " << b.size();
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::memcmp(&a.pos_mass[i], &b.pos_mass[i], sizeof(a.pos_mass[i])) != 0 ||
        std::memcmp(&a.velocity[i], &b.velocity[i], sizeof(a.velocity[i])) != 0) {
      return ::testing::AssertionFailure()
             << "body " << i << " differs: x " << a.pos_mass[i].x << " vs " << b.pos_mass[i].x << ", m "
             << a.pos_mass[i].w << " vs " << b.pos_mass[i].w << ", vx " << a.velocity[i].x << " vs "
             << b.velocity[i].x;
    }
  }
  return ::testing::AssertionSuccess();
}

// A whole file's bytes, and a file written from bytes (the fuzzers' mutants).
inline std::vector<unsigned char> bytes_of(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

inline void write_bytes(const std::string& path, const std::vector<unsigned char>& b) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
}

// A new empty directory for the running test, named after it (a parameterised test's "Name/3" as "Name-3"): tests
// that run side by side (ctest --parallel) never share one. TestDir removes it; a caller of this removes it itself.
inline std::filesystem::path fresh_test_dir(const std::string& prefix) {
  std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  for (char& c : name)
    if (c == '/') c = '-';
  auto const dir = std::filesystem::temp_directory_path() / (prefix + "-" + std::to_string(::getpid()) + "-" + name);
  std::filesystem::remove_all(dir);  // one left by an earlier process of the same pid would not be empty
  std::filesystem::create_directories(dir);
  return dir;
}

// A fresh_test_dir that is removed with all it holds when it goes out of scope, however the test ends (a failed
// ASSERT returns early), its folders made writable first so that a test that took the permission away leaves
// nothing behind. keep() leaves it for a post-mortem (a fuzzer's wrong mutants).
class TestDir {
 public:
  explicit TestDir(const std::string& prefix) : path_(fresh_test_dir(prefix)) {}
  ~TestDir() {
    if (kept_) return;
    namespace fs = std::filesystem;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(path_, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec))
      if (it->is_directory(ec) && !it->is_symlink(ec))
        fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(path_, ec);
  }
  TestDir(const TestDir&) = delete;
  TestDir& operator=(const TestDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::string string() const { return path_.string(); }
  void keep() { kept_ = true; }

 private:
  std::filesystem::path path_;
  bool kept_ = false;
};

}  // namespace nbody::test
