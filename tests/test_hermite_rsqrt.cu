// The premise of the fp64 pair arithmetic's r^-1 (sim/kernels/hermite_pair.cuh, pair_rsqrt): the hardware estimate is
// within 2^-19.5 of r^-1 and the second-order correction brings it within 1.05 x 2^-53, on the GPU at hand. The
// estimate reads only the high word of its argument (the sign, the exponent and 20 bits of the mantissa), so every
// high word of two binades of opposite exponent parity, with low words of zeros, of ones and hashed, is every case
// there is; a few far binades check the scaling.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "gpu/check.h"
#include "gpu/devices.h"
#include "sim/kernels/hermite_pair.cuh"

namespace nbody {
namespace {

namespace k = sim::kernels;

constexpr unsigned kMantissas = 1u << 20;

// The relative error of y as x^-1/2, (1 - x y^2) / 2 to first order, with x y^2 in double-double.
__device__ double relative_error(double x, double y) {
  double const p = y * y, p_low = fma(y, y, -p);
  double const q = x * p, q_low = fma(x, p, -q);
  return 0.5 * fabs(((1.0 - q) - q_low) - x * p_low);
}

__global__ void rsqrt_errors(int exponent, unsigned low_kind, double* worst_estimate, double* worst_corrected) {
  unsigned const m = blockIdx.x * blockDim.x + threadIdx.x;
  double estimate = 0.0, corrected = 0.0;
  if (m < kMantissas) {
    unsigned const low = low_kind == 0 ? 0u : low_kind == 1 ? 0xffffffffu : (m * 2654435761u) ^ 0x9e3779b9u;
    double const x = __longlong_as_double(static_cast<long long>((std::uint64_t(1023 + exponent) << 52) |
                                                                 (std::uint64_t(m) << 32) | low));
    estimate = relative_error(x, k::approximate_rsqrt(x));
    corrected = relative_error(x, k::pair_rsqrt(x));
  }
  for (int o = 16; o > 0; o /= 2) {
    estimate = fmax(estimate, __shfl_xor_sync(0xffffffffu, estimate, o));
    corrected = fmax(corrected, __shfl_xor_sync(0xffffffffu, corrected, o));
  }
  if ((threadIdx.x & 31) == 0) {  // non-negative doubles order as their bits
    atomicMax(reinterpret_cast<unsigned long long*>(worst_estimate), __double_as_longlong(estimate));
    atomicMax(reinterpret_cast<unsigned long long*>(worst_corrected), __double_as_longlong(corrected));
  }
}

TEST(HermiteGpu, PairRsqrtIsWithinAnUlpOverEveryHighWord) {
  if (gpu::devices().empty()) GTEST_SKIP() << "no CUDA device visible";
  double* worst = nullptr;
  NBODY_CUDA_CHECK(cudaMalloc(&worst, 2 * sizeof(double)));
  NBODY_CUDA_CHECK(cudaMemset(worst, 0, 2 * sizeof(double)));
  for (int exponent : {0, 1, -2, 3, -31, 40, -600, 601})
    for (unsigned low_kind = 0; low_kind < 3; ++low_kind)
      rsqrt_errors<<<kMantissas / 256, 256>>>(exponent, low_kind, worst, worst + 1);
  NBODY_CUDA_CHECK(cudaGetLastError());
  double got[2] = {};
  NBODY_CUDA_CHECK(cudaMemcpy(got, worst, sizeof got, cudaMemcpyDeviceToHost));
  NBODY_CUDA_CHECK(cudaFree(worst));
  std::printf("rsqrt.approx.ftz.f64 within 2^%.2f of x^-1/2; pair_rsqrt within %.4f x 2^-53\n", std::log2(got[0]),
              got[1] / std::ldexp(1.0, -53));
  EXPECT_GT(got[0], 0.0) << "no error measured at all: the probe did not run";
  EXPECT_LT(got[0], std::ldexp(1.0, -19) / std::sqrt(2.0)) << "the estimate is poorer than the correction assumes";
  EXPECT_LT(got[1], 1.05 * std::ldexp(1.0, -53));
}

}  // namespace
}  // namespace nbody
