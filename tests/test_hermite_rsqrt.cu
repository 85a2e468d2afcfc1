// tests/test_hermite_rsqrt.cu - the premise of the fp64 pair arithmetic's r^-1 (sim/kernels/hermite_pair.cuh,
// pair_rsqrt), on the GPU at hand: the hardware estimate is within 2^-20 of r^-1 (so |e| < 2^-19), and the
// second-order correction brings it within 1.05 x 2^-53, where one Newton step would not. The estimate reads only
// the high word of its argument (the sign, the exponent and 20 bits of the mantissa) and its error is monotone in
// the low word, so every high word of two binades of opposite exponent parity with low words of zeros and of ones
// is every case of the estimate; hashed low words sample the rounding of the corrected value, and a few far
// binades check the scaling. Measured on an H200: the estimate 2^-20.04, the correction 1.015 x 2^-53, the
// fourth-order form it replaced 1.000 x 2^-53, one Newton step about 1.3e-12.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>

#include "gpu/check.h"
#include "gpu/devices.h"
#include "gpu/resources.h"
#include "sim/kernels/hermite_pair.cuh"

namespace nbody {
namespace {

namespace k = sim::kernels;

constexpr unsigned kMantissas = 1u << 20;

// What the test reports: the worst relative error of each form of x^-1/2.
enum Form : int { estimate, corrected, fourth_order, newton, forms };

// The relative error of y as x^-1/2, (1 - x y^2) / 2 to first order, with x y^2 in double-double (every rounding
// explicit: no contraction may fold 1 - q into an FMA that would count q's low part twice). A NaN counts as +inf.
__device__ double relative_error(double x, double y) {
  double const p = __dmul_rn(y, y), p_low = __fma_rn(y, y, -p);
  double const q = __dmul_rn(x, p), q_low = __fma_rn(x, p, -q);
  double const e = __dmul_rn(0.5, fabs(__dsub_rn(__dsub_rn(__dsub_rn(1.0, q), q_low), __dmul_rn(x, p_low))));
  return isnan(e) ? INFINITY : e;
}

__global__ void rsqrt_errors(int exponent, unsigned low_kind, double* worst) {
  unsigned const m = blockIdx.x * blockDim.x + threadIdx.x;
  double err[forms] = {};
  if (m < kMantissas) {
    unsigned const low = low_kind == 0 ? 0u : low_kind == 1 ? 0xffffffffu : (m * 2654435761u) ^ 0x9e3779b9u;
    double const x = __longlong_as_double(static_cast<long long>((std::uint64_t(1023 + exponent) << 52) |
                                                                 (std::uint64_t(m) << 32) | low));
    double const y0 = k::approximate_rsqrt(x);
    double const e = __fma_rn(-x, __dmul_rn(y0, y0), 1.0);
    err[estimate] = relative_error(x, y0);
    err[corrected] = relative_error(x, k::pair_rsqrt(x));
    err[fourth_order] = relative_error(x, __fma_rn(__dmul_rn(y0, e), __fma_rn(e, __fma_rn(e, 0.3125, 0.375), 0.5), y0));
    err[newton] = relative_error(x, __fma_rn(__dmul_rn(y0, e), 0.5, y0));
  }
  for (int f = 0; f < forms; ++f) {
    double v = err[f];
    for (int o = 16; o > 0; o /= 2) v = fmax(v, __shfl_xor_sync(0xffffffffu, v, o));
    // Non-negative doubles (+inf included) order as their bits.
    if ((threadIdx.x & 31) == 0) atomicMax(reinterpret_cast<unsigned long long*>(&worst[f]), __double_as_longlong(v));
  }
}

TEST(HermiteGpu, PairRsqrtIsWithinAnUlpOverEveryHighWord) {
  if (gpu::devices().empty()) GTEST_SKIP() << "no CUDA device visible";
  gpu::DeviceBuffer<double> worst(0, forms);
  NBODY_CUDA_CHECK(cudaMemset(worst.data(), 0, forms * sizeof(double)));
  for (int exponent : {0, 1, -2, 3, -31, 40, -600, 601})
    for (unsigned low_kind = 0; low_kind < 3; ++low_kind) {
      rsqrt_errors<<<kMantissas / 256, 256>>>(exponent, low_kind, worst.data());
      NBODY_CHECK_LAUNCH();
    }
  double got[forms] = {};
  NBODY_CUDA_CHECK(cudaMemcpy(got, worst.data(), sizeof got, cudaMemcpyDeviceToHost));
  double const ulp = std::ldexp(1.0, -53);
  std::printf("x^-1/2, worst relative error: the estimate 2^%.2f; pair_rsqrt %.4f x 2^-53; the fourth-order form "
              "%.4f x 2^-53; one Newton step %.3e\n",
              std::log2(got[estimate]), got[corrected] / ulp, got[fourth_order] / ulp, got[newton]);
  EXPECT_GT(got[estimate], 0.0) << "no error measured at all: the probe did not run";
  EXPECT_LT(got[estimate], std::ldexp(1.0, -20)) << "the estimate is poorer than the correction assumes";
  EXPECT_LT(got[corrected], 1.05 * ulp);
  EXPECT_GT(got[newton], 1.05 * ulp) << "one Newton step passes too: the bound cannot tell the forms apart";
}

}  // namespace
}  // namespace nbody
