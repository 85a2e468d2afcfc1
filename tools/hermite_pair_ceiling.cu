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
//  3. The pair loop with its sums on the fp64 tensor cores (mma.sync .f64, DMMA; the m16 shapes on 9.x only): first
//     the DMMA rate alone and beside fused multiply-adds, as a share of the vector peak (the nominal tensor rate of
//     GA100 and GH100 is 200%); then the loop of section 2 with each pair's factors (pair_factors, as section 2) as
//     A, the j-bodies' coordinates about a reference point as B, and the nine accumulations as two DMMA accumulators
//     a tile of 8 i-bodies, in several shapes (instruction, tiles a warp, unrolling, blocks an SM, j-bodies staged at
//     a time; the self pair computed, adding m eps^-3 terms that cancel, or masked; "lean": the mass in B and the 3
//     of alpha at the end, 21 vector instructions a pair in place of 23), each with pairs a second, the share of the
//     peak at 31 fp64 instructions a pair (comparable with section 2's) and how far its sums lie from section 2's
//     (largest and median relative error of a and of the jerk over the bodies). Last the same distance with 1% of the
//     bodies in close pairs 1e-6 apart, at eps2 = 1e-8 and at eps2 = 0 (the self pair masked in both loops).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
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
using nbody::sim::kernels::pair_rsqrt;
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

// The shortest of `runs` timed launches (after the caller's warm-up), in milliseconds by CUDA events.
template <class Launch>
float best_time_ms(int runs, Launch&& launch) {
  cudaEvent_t e0, e1;
  NBODY_CUDA_CHECK(cudaEventCreate(&e0));
  NBODY_CUDA_CHECK(cudaEventCreate(&e1));
  float best = 1e30f;
  for (int rep = 0; rep < runs; ++rep) {
    NBODY_CUDA_CHECK(cudaEventRecord(e0));
    launch();
    NBODY_CHECK_LAUNCH();
    NBODY_CUDA_CHECK(cudaEventRecord(e1));
    NBODY_CUDA_CHECK(cudaEventSynchronize(e1));
    float ms = 0;
    NBODY_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    if (ms < best) best = ms;
  }
  NBODY_CUDA_CHECK(cudaGetLastError());
  NBODY_CUDA_CHECK(cudaEventDestroy(e0));
  NBODY_CUDA_CHECK(cudaEventDestroy(e1));
  return best;
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
  float const ms = best_time_ms(1, [&] { operand_peak<kOp><<<blocks, kBlock>>>(out, iterations, 0.999, 0.5, ghz); });
  double clock = 0;
  NBODY_CUDA_CHECK(cudaMemcpy(&clock, ghz, sizeof clock, cudaMemcpyDeviceToHost));
  double const per_iteration = kOp == Operands::fma3_and_mul2 ? 2 : 1;
  double const ops = double(blocks) * kBlock * iterations * kChains * per_iteration / (ms * 1e-3);
  std::printf("  %-58s %.4e fp64 ops/s  %s at %.0f MHz\n", name, ops, share_of_peak(ops, sms, lanes, clock).c_str(),
              clock * 1e3);
}

// ---- 2. the pair loop alone ----
// kI active bodies a thread (k, k + kBlock, ...), kBatch pairs' factors computed before any is added, kUnroll
// batches unrolled, kMinBlocks blocks an SM asked of the compiler. kSelf: the pair of a body with itself is masked
// out as the force pass masks it (section 3's reference at eps2 = 0); else it is computed, d = 0 adding +0.
template <int kI, int kBatch, int kUnroll, int kMinBlocks, bool kSelf = false>
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
            t[a][q] = pair_factors<kSelf>(__dsub_rn(pj.x, bx[a]), __dsub_rn(pj.y, by[a]), __dsub_rn(pj.z, bz[a]),
                                          __dsub_rn(vj.x, bvx[a]), __dsub_rn(vj.y, bvy[a]), __dsub_rn(vj.z, bvz[a]),
                                          pj.w, eps2, kSelf && j0 + u1 + q == base + a * kBlock ? 1.0 : 0.0);
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
  float const best = best_time_ms(3, [&] { kernel<<<blocks, kBlock>>>(d.pos, d.vel, d.n, eps2, d.out, d.ghz); });
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
}

// ---- 3. the pair loop with its sums on the fp64 tensor cores (DMMA) ----
// The nine accumulating fused multiply-adds of the pair moved onto the fp64 tensor cores: mma.sync.aligned, .row.col,
// .f64 throughout (DMMA: D = A B + C, in place on C here), of shape m8n8k4 (sm_80 on) or m16n8k4, m16n8k8, m16n8k16
// (sm_90 on; elsewhere they trap, and the tool launches them only on 9.x). The fragments (PTX ISA; CuTe's
// SM80_8x8x4_F64F64F64F64_TN and SM90_16x8x{4,8,16}_F64F64F64F64_TN), with r = lane / 4 and q = lane % 4:
//   m8n8k4   a0 = A[r][q]; b0 = B[q][r]; c0, c1 = C[r][2q], C[r][2q + 1];
//   m16n8k4  a0, a1 = A[r][q], A[r + 8][q]; b0 = B[q][r]; c0, c1 = C[r][2q, 2q + 1], c2, c3 = C[r + 8][2q, 2q + 1];
//   m16n8k8  as m16n8k4 for k < 4, and a2, a3 = A[r][q + 4], A[r + 8][q + 4], b1 = B[q + 4][r];
//   m16n8k16 likewise, a(2u), a(2u + 1) = A[r][q + 4u], A[r + 8][q + 4u] and bu = B[q + 4u][r], u < 4.
// So an m16 instruction is two tiles of 8 rows (the m8 instruction's, twice) against the same B, and k8, k16 are two,
// four steps of 4 j-bodies: lane (r, q) holds, in every shape, A of i-body r of each tile against j-body q of each
// step, and computes that very pair with pair_factors. With x_ref and v_ref the position and velocity of the warp's
// first i-body,
//   sum_j mr3 d = sum_j mr3 (x_j - x_ref) - (x_i - x_ref) sum_j mr3,   sum_j mr3 w likewise with velocities,
//   sum_j (mr3 alpha) d likewise with mr3 alpha,
// so with B[k][.] = (x_j - x_ref, y_j - y_ref, z_j - z_ref, vx_j - vx_ref, vy_j - vy_ref, vz_j - vz_ref, 1, any) of
// j-body k (lane (r, q)'s B element is column r of its own j-body q) and A1 = mr3, A2 = mr3 alpha, the accumulators
// C1 += A1 B and C2 += A2 B hold every sum the pair needs. At the end, once a body (row i of C gathered from the four
// lanes of its quad by shuffles),
//   a = C1[i][0..2] - (x_i - x_ref) C1[i][6],
//   jerk = (C1[i][3..5] - (v_i - v_ref) C1[i][6]) - (C2[i][0..2] - (x_i - x_ref) C2[i][6]),
// a fused multiply-add each (and a subtraction). The pair keeps its differences, r^2, r^-1, y2, my, mr3, rv and alpha
// (pair_factors: 22 fp64 instructions) and adds A2's multiply: 23 fp64 vector instructions a pair, and B's
// subtraction once a j-body a lane; a warp's 32 pairs (m8n8k4) take 2 DMMAs of 256 fused multiply-adds each. The
// H200's fp64 tensor rate is twice its vector rate (128 fused multiply-adds an SM a cycle), so the 4 SM cycles of 32
// pairs' DMMAs could hide under the 11.5 of their vector instructions, if the SM issues and feeds both: what this
// section measures. (Measured on an H200: m8n8k4 runs at the vector rate, the m16 shapes at twice it, and the DMMAs'
// time adds to the vector instructions' rather than hiding under it, so a pair costs 23 + 8 = 31 vector-instruction
// times with the m16 shapes, as many as section 2's loop; the lean form, 21 + 8.)
// The sums are other sums than section 2's (no runs, the DMMA's own rounding of its products and C, the cancellation
// of the reference point: the self pair at eps2 > 0 adds m eps^-3 to C[i][6] and m eps^-3 (x_i - x_ref) to
// C[i][0..2], which cancel in a up to their rounding): the tool prints their distance from section 2's sums. kMask:
// the self pair's A1 and A2 are selected to 0 (a comparison and two selects, no fp64 instruction), as section 2's
// self pair adds +0; then eps2 = 0 is allowed too.
// kLean: fewer vector instructions than pair_factors takes, the mass moved into B and the 3 of alpha to the end:
// B[k][.] = m_j (the coordinates about the reference, 1), A1 = y^3 = y (y^2), A2 = y^3 (rv y^2), and the jerk's second
// term 3 (C2[i][0..2] - (x_i - x_ref) C2[i][6]): the differences, r^2, r^-1, y2, y3, rv, rv y2 and A2, 21 fp64
// instructions a pair, and B's subtraction and multiply once a j-body a lane. Other roundings than section 2's.
// A warp takes kK tiles of 8 i-bodies (rows first + 8 t + r), so that one j-body load and one B element serve kK
// pairs; the j-bodies are staged through shared memory as in section 2, each as one record (x, y, z, m, vx, vy, vz,
// 1), from which a lane reads its B element (column 7 of B takes m: nobody reads column 7 of C), kJTile at a time
// (section 2's kTile, or more: fewer barriers). kUnroll instructions' steps unrolled, kMinBlocks blocks an SM asked of
// the compiler.
constexpr int kWarps = kBlock / 32;

__device__ __forceinline__ void dmma(double (&c)[2], const double (&a)[1], const double (&b)[1]) {
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};"
               : "+d"(c[0]), "+d"(c[1])
               : "d"(a[0]), "d"(b[0]));
}
__device__ __forceinline__ void dmma(double (&c)[4], const double (&a)[2], const double (&b)[1]) {
#if __CUDA_ARCH__ >= 900
  asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};"
               : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
               : "d"(a[0]), "d"(a[1]), "d"(b[0]));
#else
  (void)c, (void)a, (void)b;
  __trap();
#endif
}
__device__ __forceinline__ void dmma(double (&c)[4], const double (&a)[4], const double (&b)[2]) {
#if __CUDA_ARCH__ >= 900
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};"
      : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
      : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
#else
  (void)c, (void)a, (void)b;
  __trap();
#endif
}
__device__ __forceinline__ void dmma(double (&c)[4], const double (&a)[8], const double (&b)[4]) {
#if __CUDA_ARCH__ >= 900
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5, %6, %7, %8, %9, %10, %11}, "
      "{%12, %13, %14, %15}, {%0, %1, %2, %3};"
      : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
      : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]), "d"(b[0]),
        "d"(b[1]), "d"(b[2]), "d"(b[3]));
#else
  (void)c, (void)a, (void)b;
  __trap();
#endif
}

// The tensor cores alone and beside vector work: each thread keeps kAcc independent accumulators of the shape
// m{kRows}n8k{kDepth} (A and B fixed), with kFmas fused multiply-adds of two registers (section 1's second case)
// a DMMA, on kChains chains of their own.
template <int kRows, int kDepth, int kFmas>
__global__ void __launch_bounds__(kBlock, 4) dmma_peak(double* out, int iterations, double* ghz) {
  constexpr int kAcc = 4;
  static_assert(kFmas * kAcc % kChains == 0, "whole rounds of the chains");
  ClockProbe const probe = start_probe();
  double c[kAcc][kRows / 4], a[kRows * kDepth / 32], b[kDepth / 4], x[kChains], y[kChains];
#pragma unroll
  for (int q = 0; q < kAcc; ++q)
#pragma unroll
    for (int v = 0; v < kRows / 4; ++v) c[q][v] = 0.0;
#pragma unroll
  for (int v = 0; v < kRows * kDepth / 32; ++v) a[v] = 1e-3 * (1.0 + threadIdx.x * 1e-3 + v);
#pragma unroll
  for (int v = 0; v < kDepth / 4; ++v) b[v] = 1e-3 * (1.0 - threadIdx.x * 1e-3 - v);
#pragma unroll
  for (int h = 0; h < kChains; ++h) {
    x[h] = threadIdx.x + h;
    y[h] = 0.999 - h * 1e-3;
  }
  for (int i = 0; i < iterations; ++i) {
#pragma unroll
    for (int q = 0; q < kAcc; ++q) {
      dmma(c[q], a, b);
#pragma unroll
      for (int f = 0; f < kFmas; ++f) {
        int const h = (q * kFmas + f) % kChains;
        x[h] = __fma_rn(x[h], y[h], 0.5);
      }
    }
  }
  double s = 0;
#pragma unroll
  for (int q = 0; q < kAcc; ++q)
#pragma unroll
    for (int v = 0; v < kRows / 4; ++v) s += c[q][v];
#pragma unroll
  for (int h = 0; h < kChains; ++h) s += x[h];
  out[blockIdx.x * kBlock + threadIdx.x] = s;
  finish_probe(probe, ghz);
}

template <int kRows, int kDepth, int kFmas>
void time_dmma_peak(int sms, int lanes, double* out, double* ghz) {
  int const blocks = sms * 4 * 8, iterations = 4000;
  dmma_peak<kRows, kDepth, kFmas><<<blocks, kBlock>>>(out, 10, ghz);  // warm-up
  NBODY_CHECK_LAUNCH();
  float const ms = best_time_ms(1, [&] { dmma_peak<kRows, kDepth, kFmas><<<blocks, kBlock>>>(out, iterations, ghz); });
  double clock = 0;
  NBODY_CUDA_CHECK(cudaMemcpy(&clock, ghz, sizeof clock, cudaMemcpyDeviceToHost));
  double const seconds = ms * 1e-3, instructions = double(blocks) * kWarps * iterations * 4;  // DMMAs
  double const tensor = instructions * kRows * 8 * kDepth / seconds, vector = instructions * 32 * kFmas / seconds;
  char name[64];
  std::snprintf(name, sizeof name, "m%dn8k%d%s", kRows, kDepth, kFmas ? "," : " alone");
  std::printf("  DMMA %-12s", name);
  if (kFmas) std::printf(" %2d fma x y + 0.5 each:", kFmas);
  std::printf(" %.4e fused multiply-adds/s on the tensor cores, %s", tensor,
              share_of_peak(tensor, sms, lanes, clock).c_str());
  if (kFmas) std::printf("; %.4e fp64 ops/s, %s", vector, share_of_peak(vector, sms, lanes, clock).c_str());
  std::printf(" at %.0f MHz\n", clock * 1e3);
}

template <int kRows, int kDepth, int kK, int kUnroll, int kMinBlocks, bool kMask, bool kLean, int kJTile>
__global__ void __launch_bounds__(kBlock, kMinBlocks)
    dmma_loop(const Body4* __restrict__ pos, const Body4* __restrict__ vel, int n, double eps2, double* out,
              double* ghz) {
  constexpr int kT = kRows / 8, kS = kDepth / 4, kG = kK / kT;  // tiles, steps an instruction; instructions a step
  static_assert(kK % kT == 0 && kJTile % (4 * kS * kUnroll) == 0, "whole instructions a tile");
  ClockProbe const probe = start_probe();
  __shared__ Body4 tile[kJTile][2];  // a j-body's record: position and mass, velocity and 1
  int const lane = threadIdx.x % 32, row = lane / 4, k = lane % 4;
  int const first = (blockIdx.x * kWarps + threadIdx.x / 32) * 8 * kK;  // the warp's first i-body: the reference
  // The lane's column of B as a slot of the record, and its reference coordinate (0 for the 1 and column 7).
  int const slot = row < 3 ? row : row < 7 ? row + 1 : 3;
  double ref_b = 0.0;
  {
    Body4 const p = pos[first], v = vel[first];
    ref_b = row == 0 ? p.x : row == 1 ? p.y : row == 2 ? p.z : row == 3 ? v.x : row == 4 ? v.y : row == 5 ? v.z : 0.0;
  }
  double bx[kK], by[kK], bz[kK], bvx[kK], bvy[kK], bvz[kK];
  double c1[kG][2 * kT], c2[kG][2 * kT];  // tile t: c[t / kT][2 (t % kT) + {0, 1}]
#pragma unroll
  for (int t = 0; t < kK; ++t) {
    Body4 const p = pos[first + 8 * t + row], v = vel[first + 8 * t + row];
    bx[t] = p.x, by[t] = p.y, bz[t] = p.z, bvx[t] = v.x, bvy[t] = v.y, bvz[t] = v.z;
  }
#pragma unroll
  for (int g = 0; g < kG; ++g)
#pragma unroll
    for (int v = 0; v < 2 * kT; ++v) c1[g][v] = c2[g][v] = 0.0;
  for (int j0 = 0; j0 < n; j0 += kJTile) {
    __syncthreads();
#pragma unroll
    for (int e = threadIdx.x; e < 2 * kJTile; e += kBlock) {
      if (e < kJTile) {
        tile[e][0] = pos[j0 + e];
      } else {
        Body4 v = vel[j0 + e - kJTile];
        v.w = 1.0;
        tile[e - kJTile][1] = v;
      }
    }
    __syncthreads();
#pragma unroll kUnroll
    for (int s = 0; s < kJTile; s += 4 * kS) {
      double a1[kG][kT * kS], a2[kG][kT * kS], b[kS];  // tile t, step u: a[t / kT][t % kT + kT u]
#pragma unroll
      for (int u = 0; u < kS; ++u) {
        int const j = s + 4 * u + k;  // the lane's j-body in the staged tile
        Body4 const pj = tile[j][0], vj = tile[j][1];
        b[u] = __dsub_rn(reinterpret_cast<const double*>(tile[j])[slot], ref_b);
        if constexpr (kLean) b[u] = __dmul_rn(pj.w, b[u]);
#pragma unroll
        for (int t = 0; t < kK; ++t) {
          bool const self = kMask && j0 + j == first + 8 * t + row;
          double f1, f2;
          if constexpr (kLean) {
            double const dx = __dsub_rn(pj.x, bx[t]), dy = __dsub_rn(pj.y, by[t]), dz = __dsub_rn(pj.z, bz[t]);
            double const wx = __dsub_rn(vj.x, bvx[t]), wy = __dsub_rn(vj.y, bvy[t]), wz = __dsub_rn(vj.z, bvz[t]);
            double const y = pair_rsqrt(__fma_rn(dz, dz, __fma_rn(dy, dy, __fma_rn(dx, dx, eps2))));
            double const y2 = __dmul_rn(y, y), y3 = __dmul_rn(y, y2);
            double const rv = __fma_rn(dz, wz, __fma_rn(dy, wy, __dmul_rn(dx, wx)));
            f1 = y3;
            f2 = __dmul_rn(y3, __dmul_rn(rv, y2));
          } else {
            PairFactors<double> const f =
                pair_factors<false>(__dsub_rn(pj.x, bx[t]), __dsub_rn(pj.y, by[t]), __dsub_rn(pj.z, bz[t]),
                                    __dsub_rn(vj.x, bvx[t]), __dsub_rn(vj.y, bvy[t]), __dsub_rn(vj.z, bvz[t]), pj.w,
                                    eps2, 0.0);
            f1 = f.mr3;
            f2 = __dmul_rn(f.mr3, f.alpha);
          }
          a1[t / kT][t % kT + kT * u] = self ? 0.0 : f1;
          a2[t / kT][t % kT + kT * u] = self ? 0.0 : f2;
        }
      }
#pragma unroll
      for (int g = 0; g < kG; ++g) {
        dmma(c1[g], a1[g], b);
        dmma(c2[g], a2[g], b);
      }
    }
  }
  // Row r of each tile's C1 and C2 to lane 4 r of its quad, which writes the body's sums.
  Body4 const p0 = pos[first], v0 = vel[first];
#pragma unroll
  for (int t = 0; t < kK; ++t) {
    double s1[8], s2[8];
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      int const from = (lane & ~3) | q;
#pragma unroll
      for (int v = 0; v < 2; ++v) {
        s1[2 * q + v] = __shfl_sync(0xffffffffu, c1[t / kT][2 * (t % kT) + v], from);
        s2[2 * q + v] = __shfl_sync(0xffffffffu, c2[t / kT][2 * (t % kT) + v], from);
      }
    }
    if (k == 0) {
      double const dx[3] = {__dsub_rn(bx[t], p0.x), __dsub_rn(by[t], p0.y), __dsub_rn(bz[t], p0.z)};
      double const dv[3] = {__dsub_rn(bvx[t], v0.x), __dsub_rn(bvy[t], v0.y), __dsub_rn(bvz[t], v0.z)};
      double* const o = out + std::size_t(first + 8 * t + row) * 6;
#pragma unroll
      for (int c = 0; c < 3; ++c) {
        o[c] = __fma_rn(-dx[c], s1[6], s1[c]);
        double const second = __fma_rn(-dx[c], s2[6], s2[c]);
        o[3 + c] = __dsub_rn(__fma_rn(-dv[c], s1[6], s1[3 + c]), kLean ? __dmul_rn(3.0, second) : second);
      }
    }
  }
  finish_probe(probe, ghz);
}

// How far a pass's sums lie from the direct loop's: |a - a_ref| / |a_ref| and |jerk - jerk_ref| / |jerk_ref| of each
// body (a NaN counts as infinite), the largest and the median over the bodies, and the largest over the bodies
// `marked` marks (if any).
struct Distance {
  double max_a, median_a, max_jerk, median_jerk, marked_a, marked_jerk;
};
Distance distance(const std::vector<double>& sums, const std::vector<double>& ref,
                  const std::vector<char>& marked = {}) {
  std::size_t const n = ref.size() / 6;
  std::vector<double> ea(n), ej(n);
  Distance d{0, 0, 0, 0, 0, 0};
  auto relative = [](const double* x, const double* y) {
    double e = 0, r = 0;
    for (int c = 0; c < 3; ++c) e += (x[c] - y[c]) * (x[c] - y[c]), r += y[c] * y[c];
    double const q = r > 0 ? std::sqrt(e / r) : e > 0 ? HUGE_VAL : 0.0;
    return std::isnan(q) ? HUGE_VAL : q;
  };
  for (std::size_t i = 0; i < n; ++i) {
    ea[i] = relative(&sums[6 * i], &ref[6 * i]);
    ej[i] = relative(&sums[6 * i + 3], &ref[6 * i + 3]);
    d.max_a = std::max(d.max_a, ea[i]);
    d.max_jerk = std::max(d.max_jerk, ej[i]);
    if (!marked.empty() && marked[i]) {
      d.marked_a = std::max(d.marked_a, ea[i]);
      d.marked_jerk = std::max(d.marked_jerk, ej[i]);
    }
  }
  std::nth_element(ea.begin(), ea.begin() + n / 2, ea.end());
  std::nth_element(ej.begin(), ej.begin() + n / 2, ej.end());
  d.median_a = ea[n / 2];
  d.median_jerk = ej[n / 2];
  return d;
}

// One launch of a kernel of pair_loop's or dmma_loop's form on `blocks` blocks: its sums (cleared to NaN first).
template <class Kernel>
std::vector<double> sums_of(Kernel kernel, int blocks, const Body4* pos, const Body4* vel, double eps2,
                            const PairData& d) {
  NBODY_CUDA_CHECK(cudaMemset(d.out, 0xff, std::size_t(d.n) * 6 * sizeof(double)));
  kernel<<<blocks, kBlock>>>(pos, vel, d.n, eps2, d.out, d.ghz);
  NBODY_CHECK_LAUNCH();
  std::vector<double> sums(std::size_t(d.n) * 6);
  NBODY_CUDA_CHECK(cudaMemcpy(sums.data(), d.out, sums.size() * sizeof(double), cudaMemcpyDeviceToHost));
  return sums;
}

template <int kRows, int kDepth, int kK>
std::string dmma_shape_name() {
  char text[64];
  std::snprintf(text, sizeof text, "m%dn8k%d, %d tiles a warp (%2d i-bodies)", kRows, kDepth, kK, 8 * kK);
  return text;
}

template <int kRows, int kDepth, int kK, int kUnroll, int kMinBlocks, bool kMask, bool kLean = false,
          int kJTile = kTile>
void time_dmma_loop(const PairData& d) {
  auto const kernel = dmma_loop<kRows, kDepth, kK, kUnroll, kMinBlocks, kMask, kLean, kJTile>;
  cudaFuncAttributes attributes{};
  NBODY_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
  int const blocks = d.n / (kWarps * 8 * kK);
  double const eps2 = 1e-8;
  std::vector<double> const sums = sums_of(kernel, blocks, d.pos, d.vel, eps2, d);  // and the warm-up
  float const best = best_time_ms(3, [&] { kernel<<<blocks, kBlock>>>(d.pos, d.vel, d.n, eps2, d.out, d.ghz); });
  double clock = 0;
  NBODY_CUDA_CHECK(cudaMemcpy(&clock, d.ghz, sizeof clock, cudaMemcpyDeviceToHost));
  Distance const e = distance(sums, d.first);
  double const pairs = double(d.n) * d.n / (best * 1e-3);
  char staged[32] = "";
  if (kJTile != kTile) std::snprintf(staged, sizeof staged, ", staged %d", kJTile);
  std::printf("  %s, unrolled %d, %d blocks an SM, self pair %s%s%s (%3d registers): %.4e pairs/s, %s at %.0f MHz; "
              "from section 2's sums: a %.1e largest, %.1e median, jerk %.1e largest, %.1e median\n",
              dmma_shape_name<kRows, kDepth, kK>().c_str(), kUnroll, kMinBlocks, kMask ? "masked  " : "computed",
              kLean ? ", lean" : "", staged,
              attributes.numRegs, pairs, share_of_peak(pairs * kPairFp64Ops, d.sms, d.lanes, clock).c_str(),
              clock * 1e3, e.max_a, e.median_a, e.max_jerk, e.median_jerk);
}

// The bodies of section 2 with bodies 200 k + 1 moved 1e-6 (the system is 1 across) from bodies 200 k, in a random
// direction: 1% of the bodies in close pairs. marked: the pairs' bodies.
std::vector<Body4> with_close_pairs(std::vector<Body4> pos, std::vector<char>& marked, std::uint64_t state) {
  marked.assign(pos.size(), 0);
  for (std::size_t i = 0; i + 1 < pos.size(); i += 200) {
    double u[3], r2 = 0;
    do {
      r2 = 0;
      for (double& c : u) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        c = double(state >> 11) / 9007199254740992.0 - 0.5;
        r2 += c * c;
      }
    } while (r2 < 1e-4 || r2 > 0.25);
    double const scale = 1e-6 / std::sqrt(r2);
    pos[i + 1] = {pos[i].x + scale * u[0], pos[i].y + scale * u[1], pos[i].z + scale * u[2], pos[i + 1].w};
    marked[i] = marked[i + 1] = 1;
  }
  return pos;
}

// The cancellation case: section 2's loop (its first shape; at eps2 = 0 with the self pair masked as the force pass
// masks it) against section 3's shape.
template <int kRows, int kDepth, int kK, int kUnroll, int kMinBlocks, bool kLean = false, int kJTile = kTile>
void close_pairs(const PairData& d, const Body4* close, const std::vector<char>& marked) {
  int const direct_blocks = d.n / kBlock, dmma_blocks = d.n / (kWarps * 8 * kK);
  auto report = [&](const char* what, const std::vector<double>& sums, const std::vector<double>& ref) {
    Distance const e = distance(sums, ref, marked);
    std::printf("  %s%s, %s: a %.1e largest (%.1e of the close pairs'), %.1e median; jerk %.1e largest (%.1e of the "
                "close pairs'), %.1e median\n",
                dmma_shape_name<kRows, kDepth, kK>().c_str(), kLean ? ", lean" : "", what, e.max_a, e.marked_a,
                e.median_a, e.max_jerk, e.marked_jerk, e.median_jerk);
  };
  auto const computed = dmma_loop<kRows, kDepth, kK, kUnroll, kMinBlocks, false, kLean, kJTile>;
  auto const masked = dmma_loop<kRows, kDepth, kK, kUnroll, kMinBlocks, true, kLean, kJTile>;
  std::vector<double> const soft = sums_of(pair_loop<1, 8, 2, 4, false>, direct_blocks, close, d.vel, 1e-8, d);
  report("eps2 = 1e-8, self pair computed", sums_of(computed, dmma_blocks, close, d.vel, 1e-8, d), soft);
  report("eps2 = 1e-8, self pair masked  ", sums_of(masked, dmma_blocks, close, d.vel, 1e-8, d), soft);
  std::vector<double> const hard = sums_of(pair_loop<1, 8, 2, 4, true>, direct_blocks, close, d.vel, 0.0, d);
  report("eps2 = 0,    self pair masked  ", sums_of(masked, dmma_blocks, close, d.vel, 0.0, d), hard);
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
  std::printf("the fp64 tensor cores (DMMA), alone and beside fused multiply-adds (the share: of the vector peak):\n");
  time_dmma_peak<8, 4, 0>(sms, lanes, out, ghz);
  time_dmma_peak<8, 4, 12>(sms, lanes, out, ghz);  // about the pair loop's 11.5 vector instructions a DMMA
  if (prop.major >= 9) {
    time_dmma_peak<16, 4, 0>(sms, lanes, out, ghz);
    time_dmma_peak<16, 8, 0>(sms, lanes, out, ghz);
    time_dmma_peak<16, 16, 0>(sms, lanes, out, ghz);
    time_dmma_peak<16, 4, 24>(sms, lanes, out, ghz);
    time_dmma_peak<16, 16, 96>(sms, lanes, out, ghz);
  }
  std::printf("the fp64 pair loop with its sums on the fp64 tensor cores (DMMA), N = %ld (the share of the peak at %d "
              "fp64 instructions a pair, as above):\n",
              n, kPairFp64Ops);
  time_dmma_loop<8, 4, 1, 2, 4, false>(d);
  time_dmma_loop<8, 4, 1, 4, 8, false>(d);
  time_dmma_loop<8, 4, 2, 2, 4, false>(d);
  time_dmma_loop<8, 4, 2, 1, 5, false>(d);
  time_dmma_loop<8, 4, 4, 1, 3, false>(d);
  time_dmma_loop<8, 4, 4, 2, 2, false>(d);
  time_dmma_loop<8, 4, 2, 2, 4, true>(d);
  if (prop.major >= 9) {
    time_dmma_loop<16, 4, 2, 2, 4, false>(d);
    time_dmma_loop<16, 4, 4, 1, 3, false>(d);
    time_dmma_loop<16, 8, 2, 1, 4, false>(d);
    time_dmma_loop<16, 8, 4, 1, 3, false>(d);
    time_dmma_loop<16, 16, 2, 1, 4, false>(d);
    time_dmma_loop<16, 16, 2, 1, 3, false>(d);
    time_dmma_loop<16, 8, 2, 1, 4, true>(d);
    time_dmma_loop<16, 8, 4, 2, 2, false>(d);
    time_dmma_loop<16, 16, 4, 1, 2, false>(d);
    time_dmma_loop<16, 4, 4, 1, 3, false, true>(d);
    time_dmma_loop<16, 8, 2, 1, 4, false, true>(d);
    time_dmma_loop<16, 8, 4, 1, 3, false, true>(d);
    time_dmma_loop<16, 8, 4, 1, 3, true, true>(d);
    time_dmma_loop<16, 16, 2, 1, 4, false, true>(d);
    time_dmma_loop<16, 16, 4, 1, 2, false, true>(d);
    time_dmma_loop<16, 16, 4, 1, 2, false, false, 256>(d);
    time_dmma_loop<16, 16, 4, 1, 2, false, true, 256>(d);
    time_dmma_loop<16, 16, 4, 2, 2, false, true, 256>(d);
    time_dmma_loop<16, 8, 4, 1, 3, false, true, 256>(d);
    time_dmma_loop<16, 16, 4, 1, 2, true, true, 256>(d);
    time_dmma_loop<16, 16, 4, 2, 2, false, false, 256>(d);
    time_dmma_loop<16, 16, 4, 4, 2, false, true, 256>(d);
    time_dmma_loop<16, 16, 4, 2, 2, false, true, 512>(d);
    time_dmma_loop<16, 16, 4, 2, 2, true, true, 256>(d);
  }
  time_dmma_loop<8, 4, 4, 1, 3, false, true>(d);
  std::printf("the DMMA sums from section 2's with 1%% of the bodies in close pairs, 1e-6 apart:\n");
  std::vector<char> marked;
  std::vector<Body4> const close = with_close_pairs(pos, marked, state);
  Body4* close_pos = nullptr;
  NBODY_CUDA_CHECK(cudaMalloc(&close_pos, close.size() * sizeof(Body4)));
  NBODY_CUDA_CHECK(cudaMemcpy(close_pos, close.data(), close.size() * sizeof(Body4), cudaMemcpyHostToDevice));
  close_pairs<8, 4, 2, 2, 4>(d, close_pos, marked);
  if (prop.major >= 9) {
    close_pairs<16, 16, 4, 2, 2>(d, close_pos, marked);
    close_pairs<16, 16, 4, 2, 2, true, 256>(d, close_pos, marked);
  }
  NBODY_CUDA_CHECK(cudaFree(close_pos));
  NBODY_CUDA_CHECK(cudaFree(d.pos));
  NBODY_CUDA_CHECK(cudaFree(d.vel));
  NBODY_CUDA_CHECK(cudaFree(out));
  NBODY_CUDA_CHECK(cudaFree(ghz));
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "hermite_pair_ceiling: %s\n", e.what());
  return 1;
}
