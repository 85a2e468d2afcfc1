// tools/kernel_sweep.cu - times variants of the fast force kernel (bodies per thread, block
// size, unroll depth, register cap) on one GPU, to choose the launch shape the engine uses.
// Developer tool: `kernel_sweep [fp32|fp64]`; prints interactions/s per variant and size.
#include <cuda_runtime.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "sim/cuda_check.h"
#include "sim/cuda_engine.h"
#include "sim/force_kernels.cuh"

using namespace nbody::sim;

namespace {

template <class Real, class Rsqrt, int B, int R, int U, int M, bool P = false>
void time_variant(const char* name, std::size_t n, int sms) {
  SegmentLayout const layout = segment_layout(n);
  std::vector<Real4<Real>> host(layout.padded(), Real4<Real>{0, 0, 0, 0});
  std::mt19937 rng(1);
  std::uniform_real_distribution<double> u(-1, 1);
  for (std::size_t i = 0; i < n; ++i) host[i] = {Real(u(rng)), Real(u(rng)), Real(u(rng)), Real(1.0 / n)};
  Real4<Real>*pos = nullptr, *acc = nullptr, *partial = nullptr;
  NBODY_CUDA_CHECK(cudaMalloc(&pos, host.size() * sizeof(Real4<Real>)));
  NBODY_CUDA_CHECK(cudaMalloc(&acc, n * sizeof(Real4<Real>)));
  NBODY_CUDA_CHECK(cudaMemcpy(pos, host.data(), host.size() * sizeof(Real4<Real>), cudaMemcpyHostToDevice));
  kernels::ForceArgs const args{int(layout.length), int(layout.count), 0, int(n)};
  int const blocks = int((n + B * R - 1) / (B * R));
  bool const split = layout.count > 1 && blocks < 2 * sms;
  if (split) NBODY_CUDA_CHECK(cudaMalloc(&partial, layout.count * n * sizeof(Real4<Real>)));
  dim3 const grid(blocks, split ? args.segments : 1);
  auto launch = [&] {
    kernels::fast_forces<Real, Rsqrt, B, R, U, M, P><<<grid, B>>>(pos, args, Real(1e-4), split ? partial : acc);
    NBODY_CHECK_LAUNCH();
    if (split) {
      kernels::reduce_partials<Real><<<(n + 255) / 256, 256>>>(partial, args.segments, int(n), acc);
      NBODY_CHECK_LAUNCH();
    }
  };
  launch();
  cudaEvent_t a, b;
  NBODY_CUDA_CHECK(cudaEventCreate(&a));
  NBODY_CUDA_CHECK(cudaEventCreate(&b));
  int const reps = n >= (1u << 20) ? 2 : n >= (1u << 18) ? 4 : 20;
  NBODY_CUDA_CHECK(cudaEventRecord(a));
  for (int r = 0; r < reps; ++r) launch();
  NBODY_CUDA_CHECK(cudaEventRecord(b));
  NBODY_CUDA_CHECK(cudaEventSynchronize(b));
  float ms = 0;
  NBODY_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
  cudaFuncAttributes attr{};
  NBODY_CUDA_CHECK(cudaFuncGetAttributes(&attr, kernels::fast_forces<Real, Rsqrt, B, R, U, M, P>));
  std::printf("%-22s N=%8zu  %.4e interactions/s  (%d regs, %s)\n", name, n, double(n) * double(n) / (ms / reps * 1e-3),
              attr.numRegs, split ? "split" : "whole");
  cudaFree(pos);
  cudaFree(acc);
  cudaFree(partial);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
}

template <class Real, class Rsqrt>
void sweep(const std::vector<std::size_t>& sizes, int sms) {
  for (std::size_t n : sizes) {
    time_variant<Real, Rsqrt, 256, 4, 8, 1, true>("B256 R4 U8 P", n, sms);
    time_variant<Real, Rsqrt, 256, 4, 4, 3, true>("B256 R4 U4 M3 P", n, sms);
    time_variant<Real, Rsqrt, 256, 4, 8, 3, true>("B256 R4 U8 M3 P", n, sms);
    time_variant<Real, Rsqrt, 128, 4, 8, 6, true>("B128 R4 U8 M6 P", n, sms);
    time_variant<Real, Rsqrt, 256, 3, 8, 3, true>("B256 R3 U8 M3 P", n, sms);
    time_variant<Real, Rsqrt, 256, 4, 8, 4, true>("B256 R4 U8 M4 P", n, sms);
    time_variant<Real, Rsqrt, 256, 2, 16, 4, true>("B256 R2 U16 M4 P", n, sms);
    time_variant<Real, Rsqrt, 128, 8, 4, 4, true>("B128 R8 U4 M4 P", n, sms);
    time_variant<Real, Rsqrt, 64, 4, 8, 12, true>("B64 R4 U8 M12 P", n, sms);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string const precision = argc > 1 ? argv[1] : "fp32";
  cudaDeviceProp p{};
  NBODY_CUDA_CHECK(cudaGetDeviceProperties(&p, 0));
  std::printf("%s, %d SMs\n", p.name, p.multiProcessorCount);
  if (precision == "one") {  // one launch shape, for the profiler
    time_variant<float, kernels::RsqrtHardware, 256, 4, 4, 1>("B256 R4 U4", 262144, p.multiProcessorCount);
  } else if (precision == "fp32") {
    sweep<float, kernels::RsqrtHardware>({16384, 65536, 1u << 20}, p.multiProcessorCount);
  } else {
    std::printf("-- r^-3: y0^3 (1 + 3e/2)\n");
    time_variant<double, kernels::InvR3FromFloat, 256, 4, 4, 1>("B256 R4 U4", 262144, p.multiProcessorCount);
    time_variant<double, kernels::InvR3FromFloat, 256, 4, 4, 1, true>("B256 R4 U4 P", 262144, p.multiProcessorCount);
    time_variant<double, kernels::InvR3FromFloat, 128, 4, 4, 1>("B128 R4 U4", 262144, p.multiProcessorCount);
    time_variant<double, kernels::InvR3FromFloat, 256, 4, 4, 1>("B256 R4 U4", 65536, p.multiProcessorCount);
  }
  return 0;
}
