// tools/hermite_pair_ceiling.cu - how fast the fp64 Hermite pair can run on this GPU, apart from the force pass
// around it: what bounds the every-body-active rate of hermite4 in fp64.
// Developer tool; needs one GPU of compute capability 8.0 or later (the share of the fp64 peak only on 8.0 and 9.0,
// GA100 and GH100, whose SMs have 64 fp64 lanes):
//   hermite_pair_ceiling [N]      (N: bodies, a multiple of 1,024 up to 1,048,576; default 262,144)
// Prints, at the SM clock measured while each kernel runs (clock64 against the global timer):
//  1. fp64 throughput of independent chains by how many distinct registers each instruction reads from the
//     register file, as a share of the nominal peak (SMs x 64 fp64 lanes x clock): fused multiply-adds reading
//     one register (the other operand from the reuse cache, a constant), two, one twice and another, three, three
//     of which one is shared by consecutive instructions (the reuse cache serves it); a multiply and an add of two.
//  2. The pair loop alone: the very pair arithmetic of the force pass (sim/kernels/hermite_pair.cuh, fp64, no
//     potential, no self pair), every body active, one fp64 N^2 sweep with j-bodies staged through shared memory,
//     in several loop shapes (active bodies a thread, pairs computed before they are added, unrolling, blocks an
//     SM). Each shape sums a body's pairs in the pass's runs of kHermiteRun from zero, adding the runs in order into
//     one sum (the pass folds them by span, group and total: the same work, other sums), so every shape's sums must
//     be the same bits; the tool says so. Pairs a second and the share of the peak at the fp64 instructions the pair
//     takes (31).
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "gpu/check.h"
#include "sim/kernels/hermite_pair.cuh"

namespace {

using nbody::sim::kernels::add_factors;
using nbody::sim::kernels::kHermiteRun;
using nbody::sim::kernels::pair_factors;
using nbody::sim::kernels::PairFactors;
using nbody::sim::kernels::PairSums;

constexpr int kBlock = 128;
constexpr int kTile = 64;         // j-bodies staged at a time, as the force pass does
constexpr int kPairFp64Ops = 31;  // fp64 instructions of one pair (sim/kernels/hermite_pair.cuh)
static_assert(kBlock == 2 * kTile, "half the block stages positions, half velocities");

// fp64 lanes an SM where the tool knows them (GA100, GH100), else 0: no share of the peak is printed.
int fp64_lanes_per_sm(const cudaDeviceProp& prop) {
  return prop.minor == 0 && (prop.major == 8 || prop.major == 9) ? 64 : 0;
}
std::string share_of_peak(double ops_per_second, int sms, int lanes, double ghz) {
  if (lanes == 0 || ghz <= 0) return "(no fp64 peak known for this GPU)";
  char text[64];
  std::snprintf(text, sizeof text, "%5.1f%% of the peak", 100 * ops_per_second / (sms * lanes * ghz * 1e9));
  return text;
}

struct alignas(32) Body4 {
  double x, y, z, w;
};

__device__ unsigned long long global_nanoseconds() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
// Block 0's SM clock over the kernel, in cycles a nanosecond (written by thread 0 of block 0).
struct ClockProbe {
  long long cycles0;
  unsigned long long ns0;
};
__device__ ClockProbe start_probe() { return {clock64(), global_nanoseconds()}; }
__device__ void finish_probe(const ClockProbe& probe, double* ghz) {
  long long const cycles = clock64() - probe.cycles0;
  unsigned long long const ns = global_nanoseconds() - probe.ns0;
  if (threadIdx.x == 0 && blockIdx.x == 0 && ns > 0) *ghz = double(cycles) / double(ns);
}

// ---- 1. fp64 throughput by registers read ----
enum class Operands : int {
  fma_one_register,
  fma_two_registers,
  fma_one_twice_and_another,
  fma_three_registers,
  fma_three_one_shared,
  fma3_and_mul2,
  add_two
};
constexpr int kChains = 8;

template <Operands kOp>
__global__ void __launch_bounds__(kBlock, 4)
    operand_peak(double* out, int iterations, double a, double b, double* ghz) {
  ClockProbe const probe = start_probe();
  double x[kChains], y[kChains], z[kChains];
  double const w = a * (1.0 + threadIdx.x * 1e-9);  // a register of its own, shared by every chain
#pragma unroll
  for (int c = 0; c < kChains; ++c) {
    x[c] = threadIdx.x + c;
    y[c] = a + c * 1e-3;
    z[c] = b - c * 1e-3;
  }
  for (int i = 0; i < iterations; ++i) {
#pragma unroll
    for (int c = 0; c < kChains; ++c) {
      if constexpr (kOp == Operands::fma_one_register) x[c] = __fma_rn(x[c], a, 0.5);
      if constexpr (kOp == Operands::fma_two_registers) x[c] = __fma_rn(x[c], y[c], 0.5);
      if constexpr (kOp == Operands::fma_one_twice_and_another) x[c] = __fma_rn(y[c], y[c], x[c]);
      if constexpr (kOp == Operands::fma_three_registers) x[c] = __fma_rn(x[c], y[c], z[c]);
      if constexpr (kOp == Operands::fma_three_one_shared) x[c] = __fma_rn(w, y[c], x[c]);  // as mr3 in the sums
      if constexpr (kOp == Operands::fma3_and_mul2) {
        x[c] = __fma_rn(x[c], y[c], z[c]);
        z[c] = __dmul_rn(z[c], y[c]);
      }
      if constexpr (kOp == Operands::add_two) x[c] = __dadd_rn(x[c], y[c]);
    }
  }
  double s = 0;
#pragma unroll
  for (int c = 0; c < kChains; ++c) s += x[c] + z[c];
  out[blockIdx.x * kBlock + threadIdx.x] = s;
  finish_probe(probe, ghz);
}

template <Operands kOp>
void time_operands(const char* name, int sms, int lanes, double* out, double* ghz) {
  int const blocks = sms * 4 * 8, iterations = 20000;
  operand_peak<kOp><<<blocks, kBlock>>>(out, 10, 0.999, 0.5, ghz);  // warm-up
  NBODY_CHECK_LAUNCH();
  cudaEvent_t e0, e1;
  NBODY_CUDA_CHECK(cudaEventCreate(&e0));
  NBODY_CUDA_CHECK(cudaEventCreate(&e1));
  NBODY_CUDA_CHECK(cudaEventRecord(e0));
  operand_peak<kOp><<<blocks, kBlock>>>(out, iterations, 0.999, 0.5, ghz);
  NBODY_CHECK_LAUNCH();
  NBODY_CUDA_CHECK(cudaEventRecord(e1));
  NBODY_CUDA_CHECK(cudaEventSynchronize(e1));
  float ms = 0;
  NBODY_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
  double clock = 0;
  NBODY_CUDA_CHECK(cudaMemcpy(&clock, ghz, sizeof clock, cudaMemcpyDeviceToHost));
  double const per_iteration = kOp == Operands::fma3_and_mul2 ? 2 : 1;
  double const ops = double(blocks) * kBlock * iterations * kChains * per_iteration / (ms * 1e-3);
  std::printf("  %-58s %.4e fp64 ops/s  %s at %.0f MHz\n", name, ops, share_of_peak(ops, sms, lanes, clock).c_str(),
              clock * 1e3);
  NBODY_CUDA_CHECK(cudaEventDestroy(e0));
  NBODY_CUDA_CHECK(cudaEventDestroy(e1));
}

// ---- 2. the pair loop alone ----
// kI active bodies a thread (k, k + kBlock, ...), kBatch pairs' factors computed before any is added, kUnroll
// batches unrolled, kMinBlocks blocks an SM asked of the compiler.
template <int kI, int kBatch, int kUnroll, int kMinBlocks>
__global__ void __launch_bounds__(kBlock, kMinBlocks)
    pair_loop(const Body4* __restrict__ pos, const Body4* __restrict__ vel, int n, double eps2, double* out,
              double* ghz) {
  static_assert(kHermiteRun % kBatch == 0 && kTile % kHermiteRun == 0, "whole batches a run, whole runs a tile");
  ClockProbe const probe = start_probe();
  __shared__ Body4 tile_pos[kTile], tile_vel[kTile];
  int const base = blockIdx.x * kBlock * kI + threadIdx.x;
  double bx[kI], by[kI], bz[kI], bvx[kI], bvy[kI], bvz[kI], sum[kI][6];
#pragma unroll
  for (int a = 0; a < kI; ++a) {
    Body4 const p = pos[base + a * kBlock], v = vel[base + a * kBlock];
    bx[a] = p.x, by[a] = p.y, bz[a] = p.z, bvx[a] = v.x, bvy[a] = v.y, bvz[a] = v.z;
#pragma unroll
    for (int c = 0; c < 6; ++c) sum[a][c] = 0.0;
  }
  for (int j0 = 0; j0 < n; j0 += kTile) {
    __syncthreads();
    if (threadIdx.x < kTile)
      tile_pos[threadIdx.x] = pos[j0 + threadIdx.x];
    else
      tile_vel[threadIdx.x - kTile] = vel[j0 + threadIdx.x - kTile];
    __syncthreads();
    for (int r = 0; r < kTile; r += kHermiteRun) {
      PairSums<double> run[kI];
#pragma unroll
      for (int a = 0; a < kI; ++a) run[a] = {0, 0, 0, 0, 0, 0, 0};
#pragma unroll kUnroll
      for (int u1 = r; u1 < r + kHermiteRun; u1 += kBatch) {
        PairFactors<double> t[kI][kBatch];
#pragma unroll
        for (int q = 0; q < kBatch; ++q) {
          Body4 const pj = tile_pos[u1 + q], vj = tile_vel[u1 + q];
#pragma unroll
          for (int a = 0; a < kI; ++a)
            t[a][q] = pair_factors<false>(__dsub_rn(pj.x, bx[a]), __dsub_rn(pj.y, by[a]), __dsub_rn(pj.z, bz[a]),
                                          __dsub_rn(vj.x, bvx[a]), __dsub_rn(vj.y, bvy[a]), __dsub_rn(vj.z, bvz[a]),
                                          pj.w, eps2, 0.0);
        }
#pragma unroll
        for (int q = 0; q < kBatch; ++q)
#pragma unroll
          for (int a = 0; a < kI; ++a) add_factors<false>(t[a][q], run[a]);
      }
#pragma unroll
      for (int a = 0; a < kI; ++a) {
        double const s[6] = {run[a].ax, run[a].ay, run[a].az, run[a].jx, run[a].jy, run[a].jz};
#pragma unroll
        for (int c = 0; c < 6; ++c) sum[a][c] = __dadd_rn(sum[a][c], s[c]);
      }
    }
  }
#pragma unroll
  for (int a = 0; a < kI; ++a)
#pragma unroll
    for (int c = 0; c < 6; ++c) out[std::size_t(base + a * kBlock) * 6 + c] = sum[a][c];
  finish_probe(probe, ghz);
}

struct PairData {
  Body4* pos;
  Body4* vel;
  double* out;
  double* ghz;
  int n;
  int sms;
  int lanes;
  std::vector<double> first;  // the first shape's sums: every other shape must give the same bits
};

template <int kI, int kBatch, int kUnroll, int kMinBlocks>
void time_pair_loop(PairData& d) {
  auto const kernel = pair_loop<kI, kBatch, kUnroll, kMinBlocks>;
  cudaFuncAttributes attributes{};
  NBODY_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
  int const blocks = d.n / (kBlock * kI);
  double const eps2 = 1e-8;
  // Cleared to NaN first: a shape that left a body out cannot match the first shape's sums.
  NBODY_CUDA_CHECK(cudaMemset(d.out, 0xff, std::size_t(d.n) * 6 * sizeof(double)));
  kernel<<<blocks, kBlock>>>(d.pos, d.vel, d.n, eps2, d.out, d.ghz);  // warm-up
  NBODY_CHECK_LAUNCH();
  cudaEvent_t e0, e1;
  NBODY_CUDA_CHECK(cudaEventCreate(&e0));
  NBODY_CUDA_CHECK(cudaEventCreate(&e1));
  float best = 1e30f;
  for (int rep = 0; rep < 3; ++rep) {
    NBODY_CUDA_CHECK(cudaEventRecord(e0));
    kernel<<<blocks, kBlock>>>(d.pos, d.vel, d.n, eps2, d.out, d.ghz);
    NBODY_CHECK_LAUNCH();
    NBODY_CUDA_CHECK(cudaEventRecord(e1));
    NBODY_CUDA_CHECK(cudaEventSynchronize(e1));
    float ms = 0;
    NBODY_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    if (ms < best) best = ms;
  }
  NBODY_CUDA_CHECK(cudaGetLastError());
  std::vector<double> sums(std::size_t(d.n) * 6);
  NBODY_CUDA_CHECK(cudaMemcpy(sums.data(), d.out, sums.size() * sizeof(double), cudaMemcpyDeviceToHost));
  double clock = 0;
  NBODY_CUDA_CHECK(cudaMemcpy(&clock, d.ghz, sizeof clock, cudaMemcpyDeviceToHost));
  char const* bits = "(the sums every shape must match)";
  if (d.first.empty())
    d.first = sums;
  else
    bits = std::memcmp(d.first.data(), sums.data(), sums.size() * sizeof(double)) == 0 ? "same sums, bit for bit"
                                                                                         : "SUMS DIFFER";
  double const pairs = double(d.n) * d.n / (best * 1e-3);
  std::printf("  %d a thread, batches of %2d, unrolled %d, %d blocks an SM (%3d registers): %.4e pairs/s, %s at %.0f "
              "MHz; %s\n",
              kI, kBatch, kUnroll, kMinBlocks, attributes.numRegs, pairs,
              share_of_peak(pairs * kPairFp64Ops, d.sms, d.lanes, clock).c_str(), clock * 1e3, bits);
  NBODY_CUDA_CHECK(cudaEventDestroy(e0));
  NBODY_CUDA_CHECK(cudaEventDestroy(e1));
}

}  // namespace

int main(int argc, char** argv) try {
  char* end = nullptr;
  long const n = argc > 1 ? std::strtol(argv[1], &end, 10) : 262144;
  // 2^20 bodies: 8 shapes of 4 launches of about 2.5 s each on an H200.
  if (argc > 2 || (argc > 1 && *end != '\0') || n < 1024 || n > (1 << 20) || n % 1024 != 0) {
    std::fprintf(stderr, "hermite_pair_ceiling: N must be a multiple of 1024 from 1024 to 1048576 (got %s)\n",
                 argc > 1 ? argv[1] : "?");
    return 2;
  }
  cudaDeviceProp prop{};
  NBODY_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  if (prop.major < 8) {
    std::fprintf(stderr, "hermite_pair_ceiling: needs sm_80 or later (GPU 0 is sm_%d%d)\n", prop.major, prop.minor);
    return 2;
  }
  std::printf("%s, %d SMs\n", prop.name, prop.multiProcessorCount);

  double* ghz = nullptr;
  double* out = nullptr;
  NBODY_CUDA_CHECK(cudaMalloc(&ghz, sizeof(double)));
  NBODY_CUDA_CHECK(cudaMalloc(&out, std::size_t(n) * 6 * sizeof(double)));
  int const sms = prop.multiProcessorCount, lanes = fp64_lanes_per_sm(prop);
  std::printf("fp64 throughput of independent chains, by the distinct registers an instruction reads:\n");
  time_operands<Operands::fma_one_register>("fma x a + 0.5 (a from the reuse cache)", sms, lanes, out, ghz);
  time_operands<Operands::fma_two_registers>("fma x y + 0.5, two registers", sms, lanes, out, ghz);
  time_operands<Operands::fma_one_twice_and_another>("fma y y + x, one register twice and another", sms, lanes, out,
                                                     ghz);
  time_operands<Operands::fma_three_registers>("fma x y + z, three registers", sms, lanes, out, ghz);
  time_operands<Operands::fma_three_one_shared>("fma w y + x, three, w shared by consecutive ones", sms, lanes, out,
                                                ghz);
  time_operands<Operands::fma3_and_mul2>("fma of three registers and mul of two, alternating", sms, lanes, out, ghz);
  time_operands<Operands::add_two>("add x + y, two registers", sms, lanes, out, ghz);

  // Plummer-like spread is not needed: the pair's instructions do not depend on the values.
  std::vector<Body4> pos(n), vel(n);
  std::uint64_t state = 12345;
  auto uniform = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return double(state >> 11) / 9007199254740992.0 - 0.5;
  };
  for (long i = 0; i < n; ++i) {
    pos[i] = {uniform(), uniform(), uniform(), 1.0 / double(n)};
    vel[i] = {uniform(), uniform(), uniform(), 0.0};
  }
  PairData d{nullptr, nullptr, out, ghz, int(n), sms, lanes, {}};
  NBODY_CUDA_CHECK(cudaMalloc(&d.pos, pos.size() * sizeof(Body4)));
  NBODY_CUDA_CHECK(cudaMalloc(&d.vel, vel.size() * sizeof(Body4)));
  NBODY_CUDA_CHECK(cudaMemcpy(d.pos, pos.data(), pos.size() * sizeof(Body4), cudaMemcpyHostToDevice));
  NBODY_CUDA_CHECK(cudaMemcpy(d.vel, vel.data(), vel.size() * sizeof(Body4), cudaMemcpyHostToDevice));
  std::printf("the fp64 pair loop alone, every body active, N = %ld (%d fp64 instructions a pair):\n", n,
              kPairFp64Ops);
  time_pair_loop<1, 8, 2, 4>(d);  // the force pass's shape
  time_pair_loop<1, 16, 1, 4>(d);
  time_pair_loop<1, 4, 4, 4>(d);
  time_pair_loop<1, 2, 8, 4>(d);
  time_pair_loop<1, 8, 2, 5>(d);
  time_pair_loop<2, 2, 4, 4>(d);
  time_pair_loop<2, 4, 2, 4>(d);
  time_pair_loop<2, 8, 1, 3>(d);
  NBODY_CUDA_CHECK(cudaFree(d.pos));
  NBODY_CUDA_CHECK(cudaFree(d.vel));
  NBODY_CUDA_CHECK(cudaFree(out));
  NBODY_CUDA_CHECK(cudaFree(ghz));
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "hermite_pair_ceiling: %s\n", e.what());
  return 1;
}
