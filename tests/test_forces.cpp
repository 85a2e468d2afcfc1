// tests/test_forces.cpp - CPU force paths against the fp64 reference.
#include <gtest/gtest.h>

#include "engine_support.h"
#include "sim/engines/cpu_engine.h"
#include "sim/engines/simd_forces.h"
#include "sim/kernels/pair_order.h"
#include "sim/kernels/segments.h"
#include "sim/kernels/tuning.h"
#include "test_support.h"

namespace nbody {
namespace {

constexpr double kSoftening = 0.01;
// fp32 SIMD path (rsqrt estimate + one Newton step, lane sums): measured 1.2e-7 .. 4.5e-7 on these
// inputs, against sim::force_error_bound (1e-5 up to 4096 bodies).

std::vector<Vec3d> engine_accelerations(const sim::BodySet& b, Precision precision, sim::Kernel kernel,
                                             Slice slice) {
  auto engine = sim::make_cpu_engine(test::engine_config(b, precision, kernel, kSoftening, slice));
  engine->upload(b);
  return engine->download_accelerations();
}

struct ForceCase {
  std::string scenario;
  std::size_t n;
};

class CpuForces : public ::testing::TestWithParam<ForceCase> {};

TEST_P(CpuForces, Fp32SimdMatchesFp64Reference) {
  auto const b = test::rounded_to_float(test::scenario(GetParam().scenario, GetParam().n));
  auto const ref = test::reference_accelerations(b, kSoftening);
  auto const fast = engine_accelerations(b, Precision::fp32, sim::Kernel::simd, {0, b.size()});
  double const err = test::relative_l2(fast, ref);
  EXPECT_LT(err, sim::force_error_bound(Precision::fp32, b.size())) << GetParam().scenario << " N=" << GetParam().n;
  if (b.size() > 1) {
    EXPECT_GT(err, 0.0) << "fp32 identical to fp64: the fast path is not what ran";
  }
}

TEST_P(CpuForces, Fp64EngineIsTheReference) {
  auto const b = test::scenario(GetParam().scenario, GetParam().n);
  auto const ref = test::reference_accelerations(b, kSoftening);
  auto const a = engine_accelerations(b, Precision::fp64, sim::Kernel::simd, {0, b.size()});
  EXPECT_EQ(test::relative_l2(a, ref), 0.0);
}

// The fp64 SIMD path itself (not only through the engine): the reference's bits for every body of any slice, its
// blocks of lanes starting anywhere and ending part full.
TEST_P(CpuForces, Fp64SimdPathHasTheReferencesBits) {
  auto const b = test::scenario(GetParam().scenario, GetParam().n);
  std::size_t const n = b.size();
  auto const ref = test::reference_accelerations(b, kSoftening);
  for (Slice s : {Slice{0, n}, Slice{n / 3, n - n / 3}, Slice{n - 1, 1}}) {
    std::vector<Real3<double>> a(s.count);
    sim::simd_accelerations(b.pos_mass.data(), n, s.begin, s.count, kSoftening * kSoftening, a.data());
    for (std::size_t i = 0; i < s.count; ++i) {
      Vec3d const got{a[i].x, a[i].y, a[i].z};
      ASSERT_EQ(std::memcmp(&got, &ref[s.begin + i], sizeof(Vec3d)), 0)
          << "body " << s.begin + i << " in slice [" << s.begin << ", " << s.end() << "): " << got.x << " against "
          << ref[s.begin + i].x;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, CpuForces,
                         ::testing::Values(ForceCase{"random-sphere", 1}, ForceCase{"random-sphere", 2},
                                           ForceCase{"random-sphere", 7}, ForceCase{"random-sphere", 1000},
                                           ForceCase{"random-sphere", 4097}, ForceCase{"plummer", 2},
                                           ForceCase{"plummer", 7}, ForceCase{"plummer", 1000},
                                           ForceCase{"plummer", 4097}),
                         [](auto const& param_info) {
                           std::string s = param_info.param.scenario + "_" + std::to_string(param_info.param.n);
                           for (auto& c : s)
                             if (c == '-') c = '_';
                           return s;
                         });

TEST(CpuForces, SingleBodyFeelsNoForce) {
  auto const b = test::scenario("plummer", 1);
  auto const a = engine_accelerations(b, Precision::fp32, sim::Kernel::simd, {0, 1});
  EXPECT_EQ(a[0].x, 0.0);
  EXPECT_EQ(a[0].y, 0.0);
  EXPECT_EQ(a[0].z, 0.0);
}

TEST(CpuForces, TwoBodiesPullEachOtherEqually) {
  auto const b = test::scenario("two-body", 2);
  auto const a = engine_accelerations(b, Precision::fp64, sim::Kernel::reference, {0, 2});
  // Equal masses: equal and opposite accelerations, pointing at each other.
  EXPECT_DOUBLE_EQ(a[0].x, -a[1].x);
  EXPECT_GT(a[0].x * (b.pos_mass[1].x - b.pos_mass[0].x), 0.0);
}

// Each body's result must not depend on which slice computes it (layout determinism).
TEST(CpuForces, SimdResultDoesNotDependOnTheSlice) {
  auto const b = test::rounded_to_float(test::scenario("plummer", 1003));
  auto const whole = engine_accelerations(b, Precision::fp32, sim::Kernel::simd, {0, b.size()});
  for (Slice s : {Slice{0, 1}, Slice{1, 5}, Slice{3, 998}, Slice{501, 502}, Slice{1002, 1}}) {
    auto const part = engine_accelerations(b, Precision::fp32, sim::Kernel::simd, s);
    ASSERT_EQ(part.size(), s.count);
    for (std::size_t i = 0; i < s.count; ++i) {
      EXPECT_EQ(std::memcmp(&part[i], &whole[s.begin + i], sizeof(Vec3d)), 0)
          << "body " << s.begin + i << " in slice [" << s.begin << ", " << s.end() << ")";
    }
  }
}

TEST(CpuForces, Fp32ScalarKernelMatchesReference) {
  auto const b = test::rounded_to_float(test::scenario("plummer", 1000));
  auto const ref = test::reference_accelerations(b, kSoftening);
  auto const a = engine_accelerations(b, Precision::fp32, sim::Kernel::reference, {0, b.size()});
  EXPECT_LT(test::relative_l2(a, ref), sim::force_error_bound(Precision::fp32, b.size()));
}

TEST(CpuForces, UnknownKernelIsRejectedWithTheValidOnes) {
  sim::EngineConfig c;
  c.bodies = 4;
  c.slice = {0, 4};
  c.engine.kernel = sim::Kernel::tiled;
  try {
    sim::make_cpu_engine(c);
    FAIL() << "no exception";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("simd, reference"), std::string::npos) << e.what();
  }
}

// The fast GPU kernel may issue a step's pairs in any order this check accepts; results stay
// bitwise the same only if each body's forces are added in j order. 2 bodies x 2 j-bodies here:
// pair p = 2 u + r.
TEST(PairOrder, AcceptsOrdersThatKeepEachBodysSumInJOrder) {
  using sim::kernels::kForceStage;
  using sim::kernels::valid_pair_order;
  constexpr int F = kForceStage;
  EXPECT_TRUE((valid_pair_order<2, 2>({0, F + 0, 1, F + 1, 2, F + 2, 3, F + 3})));
  EXPECT_TRUE((valid_pair_order<2, 2>({0, 1, 2, 3, F + 0, F + 1, F + 2, F + 3})));
  EXPECT_TRUE((valid_pair_order<2, 2>({1, F + 1, 0, 3, F + 0, F + 3, 2, F + 2})));
  EXPECT_TRUE((valid_pair_order<4, 4>(sim::kernels::MeasuredOrder4x4::tokens)));
  EXPECT_TRUE((valid_pair_order<4, 4>(sim::kernels::JMajorOrder<4, 4>::tokens)));
}

TEST(PairOrder, RejectsOrdersThatBreakTheSumOrSkipAStage) {
  using sim::kernels::kForceStage;
  using sim::kernels::valid_pair_order;
  constexpr int F = kForceStage;
  // body 0: the force of j-body 1 (p = 2) before that of j-body 0 (p = 0)
  EXPECT_FALSE((valid_pair_order<2, 2>({2, F + 2, 0, F + 0, 1, F + 1, 3, F + 3})));
  // a force before its distance
  EXPECT_FALSE((valid_pair_order<2, 2>({F + 0, 0, 1, F + 1, 2, F + 2, 3, F + 3})));
  // a stage twice, another missing
  EXPECT_FALSE((valid_pair_order<2, 2>({0, F + 0, 0, F + 1, 2, F + 2, 3, F + 3})));
  // too few tokens; a pair that does not exist
  EXPECT_FALSE((valid_pair_order<2, 2>({0, F + 0, 1, F + 1, 2, F + 2})));
  EXPECT_FALSE((valid_pair_order<2, 2>({0, F + 0, 1, F + 1, 2, F + 2, 4, F + 4})));
  EXPECT_FALSE((valid_pair_order<2, 2>({0, F + 0, 1, F + 1, 2, F + 2, 3, -1})));
}

// The canonical segments every GPU kernel sums by: they cover N, there are at most 16, a tile of any
// block size (or, where the segment is shorter, the segment) never straddles two, and the fast
// kernel's launch shape fits them. From 8,193 bodies on they are those of before small N had its
// own (a multiple of 1,024 bodies), so large N keeps its bits.
TEST(Segments, CoverNAndFitEveryTileForAnyN) {
  using namespace sim::kernels;
  for (std::size_t n = 1; n <= 300000; n += n < 20000 ? 1 : 997) {
    SegmentLayout const l = segment_layout(n);
    ASSERT_GE(l.padded(), n) << n;
    ASSERT_LT(l.padded() - l.length, n) << n << ": a segment of padding only";
    ASSERT_LE(l.count, kMaxSegments) << n;
    if (n > 8192) {
      std::size_t const share = (n + kMaxSegments - 1) / kMaxSegments;
      ASSERT_EQ(l.length, std::max(kSegmentAlign, (share + kSegmentAlign - 1) / kSegmentAlign * kSegmentAlign)) << n;
    } else {
      ASSERT_GE(l.length, kMinSegment) << n;
      ASSERT_LE(l.length, kSegmentAlign / 2) << n;
      ASSERT_EQ(l.length & (l.length - 1), 0u) << n << ": not a power of two";
      for (std::size_t block = 32; block <= 1024; block *= 2)  // tiled and naive --block-size
        ASSERT_EQ(std::max(l.length, block) % std::min(l.length, block), 0u) << n << ", block " << block;
    }
    // The fast kernel: its small shape's blocks are one segment long, its large shape's divide one.
    if (l.length <= kSmallShapeLongestSegment)
      EXPECT_TRUE(l.length == 64 || l.length == 128 || l.length == 256) << n;
    else
      ASSERT_EQ(l.length % std::size_t(FastShape<float>::block), 0u) << n;
  }
  EXPECT_EQ(segment_layout(1024).length, 64u);
  EXPECT_EQ(segment_layout(4096).length, 256u);
  EXPECT_EQ(segment_layout(16384).length, 1024u);
  EXPECT_EQ(segment_layout(1048576).length, 65536u);
}

}  // namespace
}  // namespace nbody
