// tools/kernel_sweep.cu - times variants of the fast force kernel (bodies per thread, block
// size, j-bodies per step and the order of their pairs, double-buffered tiles, register cap) on
// one GPU, to choose the shape the engine uses. The register cap and the pair order matter beyond
// occupancy: they change how the compiler allocates registers and schedules the loop.
// Developer tool: `kernel_sweep [fp32|fp64|small|small-fp64]`; prints interactions/s per variant and size.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "gpu/check.h"
#include "sim/engines/cuda_engine.h"
#include "sim/kernels/fast.cuh"
#include "sim/kernels/segments.h"

using namespace nbody;
using namespace nbody::sim;

namespace {

template <class Real, class Rsqrt, int B, class Order, int M = 255, bool P = false>
void time_variant(const char* name, std::size_t n, int sms) {
  constexpr int R = Order::bodies;
  auto const kernel = kernels::fast_forces<Real, Rsqrt, B, Order, M, P>;
  kernels::SegmentLayout const layout = kernels::segment_layout(n);
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
  // Split over segments when that fills the last wave better, as the engine decides.
  int per_sm = 0;
  NBODY_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, B, 0));
  double const slots = double(std::max(1, per_sm) * sms);
  auto fill = [&](double b) { return b / (std::ceil(b / slots) * slots); };
  bool const split = layout.count > 1 && fill(double(blocks) * double(layout.count)) >= fill(double(blocks));
  if (split) NBODY_CUDA_CHECK(cudaMalloc(&partial, layout.count * n * sizeof(Real4<Real>)));
  dim3 const grid(blocks, split ? args.segments : 1);
  auto launch = [&] {
    kernel<<<grid, B>>>(pos, args, Real(1e-4), split ? partial : acc);
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
  NBODY_CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
  std::printf("%-26s N=%8zu  %.4e interactions/s  (%d regs, %d blocks/SM, %s)\n", name, n,
              double(n) * double(n) / (ms / reps * 1e-3), attr.numRegs, per_sm, split ? "split" : "whole");
  cudaFree(pos);
  cudaFree(acc);
  cudaFree(partial);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
}

// Other groupings of m r^-3 = m y^3 (y = rsqrt(r^2)), to compare with RsqrtDefault's (m y)(y y).
struct MassYYY {  // ((m y) y) y
  __device__ static float mass_over_r3(float m, float r2) {
    float const y = rsqrtf(r2);
    return ((m * y) * y) * y;
  }
};
struct YYMassY {  // (y y)(y m)
  __device__ static float mass_over_r3(float m, float r2) {
    float const y = rsqrtf(r2);
    return (y * y) * (y * m);
  }
};
struct MassCube {  // m ((y y) y): the grouping used before
  __device__ static float mass_over_r3(float m, float r2) {
    float const y = rsqrtf(r2);
    return m * ((y * y) * y);
  }
};

// One row; R bodies per thread, steps of U j-bodies, pairs in j order unless Order is given.
template <class Real, class Rsqrt, int B, int R, int U, int M, bool P, class Order = kernels::JMajorOrder<R, U>>
void row(const char* label_prefix, std::size_t n, int sms) {
  static_assert(Order::bodies == R && Order::step == U, "the label must describe the order");
  std::string const label = std::string(label_prefix) + "B" + std::to_string(B) + " R" + std::to_string(R) + " U" +
                            std::to_string(U) + (P ? " P" : "") + (M < 255 ? " M" + std::to_string(M) : "");
  time_variant<Real, Rsqrt, B, Order, M, P>(label.c_str(), n, sms);
}

template <class Real, class Rsqrt>
void sweep(const std::vector<std::size_t>& sizes, int sms) {
  for (std::size_t n : sizes) {
    row<Real, Rsqrt, 128, 4, 4, 255, true, kernels::MeasuredOrder4x4>("measured order ", n, sms);  // fp32 engine
    row<Real, Rsqrt, 128, 4, 4, 255, true>("", n, sms);
    row<Real, Rsqrt, 128, 4, 4, 255, false, kernels::MeasuredOrder4x4>("measured order ", n, sms);
    row<Real, Rsqrt, 128, 4, 4, 100, true>("", n, sms);
    row<Real, Rsqrt, 128, 4, 4, 96, true>("", n, sms);
    row<Real, Rsqrt, 128, 4, 4, 255, false>("", n, sms);
    row<Real, Rsqrt, 128, 4, 8, 255, true>("", n, sms);
    row<Real, Rsqrt, 128, 4, 16, 255, true>("", n, sms);
    row<Real, Rsqrt, 128, 3, 4, 255, true>("", n, sms);
    row<Real, Rsqrt, 128, 5, 4, 255, true>("", n, sms);
    row<Real, Rsqrt, 64, 4, 4, 255, true>("", n, sms);
    row<Real, Rsqrt, 256, 4, 4, 255, true>("", n, sms);
    row<Real, Rsqrt, 256, 4, 8, 255, true>("", n, sms);
    row<Real, Rsqrt, 512, 4, 4, 255, true>("", n, sms);
    if constexpr (std::is_same_v<Real, float>) {
      row<Real, MassYYY, 128, 4, 4, 255, true>("((my)y)y ", n, sms);
      row<Real, YYMassY, 128, 4, 4, 255, true>("(yy)(ym) ", n, sms);
      row<Real, MassCube, 128, 4, 4, 255, true>("m((yy)y) ", n, sms);
    }
  }
}

// Small N: the step is a handful of launches, so time the force stage as a step replays it, in a
// CUDA graph: the split kernel (one block per group of bodies and segment of length L) and
// reduce_partials. Prints us per force stage for each launch shape and segment length.
template <class Real, int B, int R, bool P>
void time_small(std::size_t n, std::size_t length, const char* note = "") {
  using Order = std::conditional_t<R == 4 && std::is_same_v<Real, float>, kernels::MeasuredOrder4x4,
                                   kernels::JMajorOrder<R, 4>>;
  if (length % B != 0) return;  // a tile may not straddle two segments
  auto const kernel = kernels::fast_forces<Real, kernels::RsqrtHardware, B, Order, 255, P>;
  std::size_t const count = (n + length - 1) / length;
  std::vector<Real4<Real>> host(length * count, Real4<Real>{0, 0, 0, 0});
  std::mt19937 rng(1);
  std::uniform_real_distribution<double> u(-1, 1);
  for (std::size_t i = 0; i < n; ++i) host[i] = {Real(u(rng)), Real(u(rng)), Real(u(rng)), Real(1.0 / n)};
  Real4<Real>*pos = nullptr, *acc = nullptr, *partial = nullptr;
  int const blocks = int((n + B * R - 1) / (B * R));
  NBODY_CUDA_CHECK(cudaMalloc(&pos, host.size() * sizeof(Real4<Real>)));
  NBODY_CUDA_CHECK(cudaMalloc(&acc, n * sizeof(Real4<Real>)));
  NBODY_CUDA_CHECK(cudaMalloc(&partial, count * n * sizeof(Real4<Real>)));
  NBODY_CUDA_CHECK(cudaMemcpy(pos, host.data(), host.size() * sizeof(Real4<Real>), cudaMemcpyHostToDevice));
  kernels::ForceArgs const args{int(length), int(count), 0, int(n)};
  cudaStream_t stream;
  NBODY_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  dim3 const grid(blocks, unsigned(count));
  bool const split = count > 1;
  auto launch = [&] {
    kernel<<<grid, B, 0, stream>>>(pos, args, Real(1e-4), split ? partial : acc);
    NBODY_CHECK_LAUNCH();
    if (split) {
      kernels::reduce_partials<Real><<<(n + 255) / 256, 256, 0, stream>>>(partial, args.segments, int(n), acc);
      NBODY_CHECK_LAUNCH();
    }
  };
  int const kLaunches = n >= 262144 ? 4 : 100, kReplays = n >= 262144 ? 2 : 5;
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  NBODY_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  gpu::capturing = true;  // Debug builds' launch checks must not synchronise inside a capture
  for (int r = 0; r < kLaunches; ++r) launch();
  gpu::capturing = false;
  NBODY_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  NBODY_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  NBODY_CUDA_CHECK(cudaGraphLaunch(exec, stream));
  cudaEvent_t a, b;
  NBODY_CUDA_CHECK(cudaEventCreate(&a));
  NBODY_CUDA_CHECK(cudaEventCreate(&b));
  NBODY_CUDA_CHECK(cudaEventRecord(a, stream));
  for (int r = 0; r < kReplays; ++r) NBODY_CUDA_CHECK(cudaGraphLaunch(exec, stream));
  NBODY_CUDA_CHECK(cudaEventRecord(b, stream));
  NBODY_CUDA_CHECK(cudaEventSynchronize(b));
  float ms = 0;
  NBODY_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
  double const us = ms * 1e3 / (kLaunches * kReplays);
  std::printf("small N=%6zu L=%5zu S=%3zu B%-4d R%d%s %8.2f us %.3e interactions/s %s\n", n, length, count, B, R,
              P ? " P" : "  ", us, double(n) * double(n) / (us * 1e-6), note);
  NBODY_CUDA_CHECK(cudaGraphExecDestroy(exec));
  NBODY_CUDA_CHECK(cudaGraphDestroy(graph));
  cudaFree(pos);
  cudaFree(acc);
  cudaFree(partial);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  cudaStreamDestroy(stream);
}

template <class Real>
void sweep_small(const std::vector<std::size_t>& sizes) {
  for (std::size_t n : sizes) {
    auto const today = kernels::segment_layout(n);
    std::printf("-- N = %zu, the engine's layout: L = %zu, %zu segments\n", n, today.length, today.count);
    for (std::size_t length = 32; length <= 1024; length *= 2) {
      if ((n + length - 1) / length > 128 || length > n) continue;
      time_small<Real, 32, 1, false>(n, length);
      time_small<Real, 32, 2, false>(n, length);
      time_small<Real, 64, 1, false>(n, length);
      time_small<Real, 64, 2, false>(n, length);
      time_small<Real, 64, 4, false>(n, length);
      time_small<Real, 64, 4, true>(n, length);
      time_small<Real, 128, 1, false>(n, length);
      time_small<Real, 128, 2, false>(n, length);
      time_small<Real, 128, 4, false>(n, length);
      time_small<Real, 128, 4, true>(n, length);
      time_small<Real, 256, 1, false>(n, length);
      time_small<Real, 256, 2, false>(n, length);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string const precision = argc > 1 ? argv[1] : "fp32";
  cudaDeviceProp p{};
  NBODY_CUDA_CHECK(cudaGetDeviceProperties(&p, 0));
  std::printf("%s, %d SMs\n", p.name, p.multiProcessorCount);
  if (precision == "small") {
    sweep_small<float>({1024, 2048, 4096, 8192, 16384});
    // The large-N shape on the engine's layouts, in the same harness.
    for (std::size_t n : {16384u, 65536u, 262144u, 1u << 20}) {
      std::size_t const length = kernels::segment_layout(n).length;
      time_small<float, 128, 4, true>(n, length, "(the large-N shape)");
    }
  } else if (precision == "small-fp64") {
    sweep_small<double>({1024, 4096, 16384});
  } else if (precision == "one") {  // one launch shape, for the profiler
    time_variant<float, kernels::RsqrtHardware, 128, kernels::MeasuredOrder4x4, 255, true>("measured order B128 R4 U4 P", 262144, p.multiProcessorCount);
  } else if (precision == "fp32") {
    sweep<float, kernels::RsqrtHardware>({65536, 1u << 20}, p.multiProcessorCount);
  } else {
    std::printf("-- r^-3: y0^3 (1 + 3e/2)\n");
    time_variant<double, kernels::InvR3FromFloat, 128, kernels::JMajorOrder<4, 4>>("B128 R4 U4", 262144, p.multiProcessorCount);
    time_variant<double, kernels::InvR3FromFloat, 128, kernels::MeasuredOrder4x4>("measured order B128 R4 U4", 262144, p.multiProcessorCount);
    time_variant<double, kernels::InvR3FromFloat, 128, kernels::JMajorOrder<4, 4>, 255, true>("B128 R4 U4 P", 262144, p.multiProcessorCount);
    time_variant<double, kernels::InvR3FromFloat, 256, kernels::JMajorOrder<4, 4>>("B256 R4 U4", 262144, p.multiProcessorCount);
    time_variant<double, kernels::InvR3FromFloat, 128, kernels::JMajorOrder<4, 4>>("B128 R4 U4", 65536, p.multiProcessorCount);
  }
  return 0;
}
