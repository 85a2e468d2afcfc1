// sim/kernels/hermite.cuh - the Hermite block step on the GPU: next block time, predictor, active list,
// force+jerk of the active block in the canonical order, corrector and new step.
//
// The physics is sim/physics/hermite_step.h (pair_force_jerk, predict, correct, next_step, start_step); these
// kernels only arrange it. Every kernel of a block step can read what it needs (the block time, the active
// count) from a HermiteControl in device memory, so a whole block step runs, and is captured in a CUDA graph,
// with launches sized by upper bounds and no value from the host.
//
// The canonical order (docs/architecture.md): for active body i, j runs over the groups of
// kernels::segment_layout(N); each group over spans of hermite_span_length(group length) j-bodies; on the GPU each
// span over runs of kHermiteRun j-bodies; a run's sum starts at zero and adds j in index order (the self pair and
// the zero-mass padding past N add +0 through pair_force_jerk's `self`); a span's sum adds its runs' sums in run
// order from zero; a group's partial adds its spans' sums in span order from zero; the total adds the groups'
// partials in group order from zero. hermite_forces computes exactly that whatever the active
// count, the launch grid and the way the work is cut (HermiteForceMode), so the bits never depend on them.
#pragma once

#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "core/real4.h"
#include "sim/kernels/drift_signal.cuh"
#include "sim/kernels/hermite_pair.cuh"
#include "sim/kernels/segments.h"
#include "sim/physics/hermite_step.h"

namespace nbody::sim::kernels {

namespace hk = nbody::sim::hermite;

// Threads of the force kernel (one active body each) and the j-bodies a block stages in shared memory at a
// time: 64 divides every span length (64, 128 or 256), so a tile never straddles two spans.
inline constexpr int kHermiteForceBlock = 128;
inline constexpr int kHermiteTile = 64;
static_assert(kHermiteTile % kHermiteRun == 0, "runs must not straddle tiles");
// Threads of the other Hermite kernels, and the most blocks of the active-list kernels (each block of the
// compaction adds the counts of the blocks before it: 1,024 numbers at most).
inline constexpr int kHermiteBlock = 256;
inline constexpr int kHermiteMaxListBlocks = 1024;

// ---- times as ordered integers: the minimum of t_i + dt_i is an atomicMin over these keys ----
NBODY_HOST_DEVICE inline unsigned long long time_key(double t) {
#if defined(__CUDA_ARCH__)
  auto const bits = static_cast<unsigned long long>(__double_as_longlong(t));
#else
  unsigned long long bits = 0;
  static_assert(sizeof bits == sizeof t);
  __builtin_memcpy(&bits, &t, sizeof bits);
#endif
  return (bits >> 63) ? ~bits : bits | (1ull << 63);
}
NBODY_HOST_DEVICE inline double key_time(unsigned long long key) {
  unsigned long long const bits = (key >> 63) ? key & ~(1ull << 63) : ~key;
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(static_cast<long long>(bits));
#else
  double t = 0;
  __builtin_memcpy(&t, &bits, sizeof t);
  return t;
#endif
}
inline constexpr long long kNoBody = 0x7fffffffffffffffll;

// What the kernels of a block step share in device memory. Written by the kernels themselves in whole block steps
// on the devices (advance_blocks, and each device's own control in advance_together); the multi-device protocol
// through the host uses only the counters and the floor.
struct HermiteControl {
  unsigned long long next_key;  // time_key of min t_i + dt_i, being found (hermite_next_time; the protocol)
  // advance_blocks: the next block's time_key, found while the current block is done (hermite_predict_list adds
  // the bodies that wait, hermite_correct the corrected ones) in key[write_slot], read from key[read_slot] by the
  // next hermite_predict_list; so no block step has a pass of its own over every body to find its time.
  unsigned long long key[2];
  int read_slot, write_slot;
  // hermite_predict_list's place in the active list: the blocks done (high 32 bits) and the bodies listed (low 32
  // bits) of the launch under way; zero between launches (its last block clears it).
  unsigned long long listed;
  double t;                     // the block time reached: the time of the last block step done
  double t_next;                // the block being done
  double t_stop;                // no block beyond this time (advance_blocks)
  unsigned long long steps_left;  // block steps advance_blocks may still do
  unsigned active;              // bodies in the block being done
  // Several devices of one process (HermiteEngine::advance_together): the block steps begun since hermite_arm, which
  // is the count every device announces for the block being done (its meeting's target: HermiteMeeting).
  unsigned long long meetings;
  // Nonzero: every kernel returns at once. Set only by block 0 of a kernel whose every block returns anyway
  // (see hermite_next_time), so no block of a kernel sees it change to a value that changes what it does.
  int halted;
  long long floor_body;  // the lowest global index whose new step fell below the floor, or kNoBody
  unsigned long long block_steps, force_evaluations, interactions;
  unsigned long long levels[hk::kLevels];
};

// The kernels of a block step on the devices (three on one device, four a device in advance_together, six where the
// host orders its meetings) are launched with programmatic dependent launch (Hopper and
// later; the engine's launch_after): a kernel is launched once every block of the one before it has exited, not
// after that grid has been retired and its writes flushed, and each of its blocks waits here, before its first read
// of anything, until they are (the corrector reads what the force pass does not write before it: below). Only the
// force pass lets the next kernel start earlier (below): blocks scheduled
// beside a running grid land on the SMs it leaves free first, and a pass whose work sits in its first blocks (the
// force pass of a small block: one item per block, the rest of the grid idle) then ran those on a few SMs, an fp64
// block of 64 bodies 10 us slower, where the predictor let the force pass start early. Launched without the attribute
// (the protocol, older GPUs), the wait returns at once.
__device__ __forceinline__ void follow_previous_kernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
// The force pass of a block step on one device lets its corrector launch once each of its blocks has begun its last
// item (HermiteForceArgs::corrector_early). The force grid is what stays resident, so the corrector's blocks become
// resident as the force pass's blocks exit (beside the force blocks still running on an SM only where those leave
// room); they read what the force pass does not write and then wait for it. Those reads are of what was complete
// before the force pass began: every force block waits for the predictor (follow_previous_kernel, its first
// statement) before it can let the corrector launch, and the predictor followed the block step before; none of it is
// written again until the corrector's own stores. Its launch and those reads are then off the block step's chain: 1.5
// to 2.3 us a block step of 16 to 256 bodies in fp64 and of 16 to 128 in fp32, 0.6 at 256 in fp32 (docs/benchmarks.md,
// 2026-11-29).
__device__ __forceinline__ void let_next_kernel_start() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" :::);
#endif
}

__device__ __forceinline__ bool halted(const HermiteControl* ctl) {
  return ctl && *static_cast<const volatile int*>(&ctl->halted) != 0;
}

// The active count: read from device memory (a block step on one device) or given at launch (the protocol).
struct ActiveCount {
  const unsigned* device = nullptr;
  unsigned value = 0;
  __device__ unsigned get() const { return device ? *device : value; }
};

// A fp64 value as a double-single pair.
__device__ __forceinline__ float2 split_ds(double x) {
  float const hi = __double2float_rn(x);
  return {hi, __double2float_rn(__dsub_rn(x, double(hi)))};
}

// --precision fp32 in block steps on the devices: the predicted j-bodies as the force pass reads them, double-single pairs (hi with
// the mass in w, lo; split_ds of the fp64 prediction), written once a block step by hermite_predict_list, so that
// the force pass copies them where it split every j-body once for every item that staged it. Padded like xp, vp
// (zero past the own bodies). Null: fp64, and the protocol's passes (which split xp, vp as they stage them: the same
// bits).
struct HermiteSplit {
  float4* pos_hi;
  float4* pos_lo;
  float4* vel_hi;
  float4* vel_lo;
  __device__ void store(int i, const Real4<double>& p, const Real4<double>& v) const {
    float2 const x = split_ds(p.x), y = split_ds(p.y), z = split_ds(p.z);
    float2 const vx = split_ds(v.x), vy = split_ds(v.y), vz = split_ds(v.z);
    pos_hi[i] = {x.x, y.x, z.x, __double2float_rn(p.w)};
    pos_lo[i] = {x.y, y.y, z.y, 0.0f};
    vel_hi[i] = {vx.x, vy.x, vz.x, 0.0f};
    vel_lo[i] = {vx.y, vy.y, vz.y, 0.0f};
  }
};

// The bodies' state, fp64, in device memory: the own slice's (`begin` its first body's global index, `count` its
// bodies), or in advance_together every body's (begin 0, count N: the device's replica), whose j arrays (xp, vp,
// split) still hold the own j-bodies only (hermite_predict_list<true>). The j arrays are padded to whole groups.
struct HermiteSlice {
  Real4<double>* x;      // x, y, z, m at t_i
  Real4<double>* v;      // w unused
  Real4<double>* a;      // w unused
  Real4<double>* jerk;   // w unused
  double* t;             // t_i, block time
  double* dt;            // dt_i
  Real4<double>* xp;     // predicted x, y, z, m: the own j-bodies of the force pass (zero mass past them)
  Real4<double>* vp;     // predicted velocity
  int begin;             // global index of body 0 of these arrays
  int count;             // bodies in them
  HermiteSplit split;    // fp32 block steps on the devices: hermite_predict_list writes these in place of xp, vp
};

// The j-bodies a block holds in shared memory: fp64 as they are (mass in pos.w), fp32 as double-single pairs (hi
// with the mass in w, lo).
template <class Real, int kSize = kHermiteTile>
struct HermiteTileData;
template <int kSize>
struct HermiteTileData<double, kSize> {
  Real4<double> pos[kSize], vel[kSize];
  __device__ void load_pos(int u, const Real4<double>& p) { pos[u] = p; }
  __device__ void load_vel(int u, const Real4<double>& v) { vel[u] = v; }
};
template <int kSize>
struct HermiteTileData<float, kSize> {
  float4 pos_hi[kSize], pos_lo[kSize], vel_hi[kSize], vel_lo[kSize];
  __device__ void load_pos(int u, const Real4<double>& p) {
    float2 const x = split_ds(p.x), y = split_ds(p.y), z = split_ds(p.z);
    pos_hi[u] = {x.x, y.x, z.x, __double2float_rn(p.w)};
    pos_lo[u] = {x.y, y.y, z.y, 0.0f};
  }
  __device__ void load_vel(int u, const Real4<double>& v) {
    float2 const x = split_ds(v.x), y = split_ds(v.y), z = split_ds(v.z);
    vel_hi[u] = {x.x, y.x, z.x, 0.0f};
    vel_lo[u] = {x.y, y.y, z.y, 0.0f};
  }
};

// The active body a thread sums for, as the pair arithmetic reads it.
template <class Real>
struct HermiteIBody;
template <>
struct HermiteIBody<double> {
  double x, y, z, vx, vy, vz;
  std::uint64_t index;
  __device__ explicit HermiteIBody(const hk::ActiveBody& b)
      : x(b.x), y(b.y), z(b.z), vx(b.vx), vy(b.vy), vz(b.vz), index(b.index) {}
};
template <>
struct HermiteIBody<float> {
  float4 pos_hi, pos_lo, vel_hi, vel_lo;
  std::uint64_t index;
  __device__ explicit HermiteIBody(const hk::ActiveBody& b) : index(b.index) {
    float2 const x = split_ds(b.x), y = split_ds(b.y), z = split_ds(b.z);
    float2 const vx = split_ds(b.vx), vy = split_ds(b.vy), vz = split_ds(b.vz);
    pos_hi = {x.x, y.x, z.x, 0.0f};
    pos_lo = {x.y, y.y, z.y, 0.0f};
    vel_hi = {vx.x, vy.x, vz.x, 0.0f};
    vel_lo = {vx.y, vy.y, vz.y, 0.0f};
  }
};

__device__ __forceinline__ void add_sums(hk::ForceJerk& span, const PairSums<double>& s) {
  span.ax = __dadd_rn(span.ax, s.ax);
  span.ay = __dadd_rn(span.ay, s.ay);
  span.az = __dadd_rn(span.az, s.az);
  span.jx = __dadd_rn(span.jx, s.jx);
  span.jy = __dadd_rn(span.jy, s.jy);
  span.jz = __dadd_rn(span.jz, s.jz);
  span.phi = __dadd_rn(span.phi, s.phi);
}
__device__ __forceinline__ void add_sums(hk::ForceJerk& span, const PairSums<float>& s) {
  span.ax = __dadd_rn(span.ax, double(s.ax));
  span.ay = __dadd_rn(span.ay, double(s.ay));
  span.az = __dadd_rn(span.az, double(s.az));
  span.jx = __dadd_rn(span.jx, double(s.jx));
  span.jy = __dadd_rn(span.jy, double(s.jy));
  span.jz = __dadd_rn(span.jz, double(s.jz));
  span.phi = __dadd_rn(span.phi, double(s.phi));
}

struct HermiteForceArgs;

// One run: the pairs of the kHermiteRun j-bodies from tile entry u0 (local j j0) summed into `run` (from zero), in
// index order (the pair arithmetic: sim/kernels/hermite_pair.cuh). fp64 first, fp32 below.
//
// fp64 computes the terms of kHermitePairBatch pairs before it adds the first of them (in index order, so the same
// sums): the fp64 pipe waits on each pair's chain of dependent operations (r^2, r^-1, r^-3), and with four warps a
// sub-partition (128 registers) the compiler's own interleaving of two pairs left it 24% idle. Batches of 8 made
// every-body-active steps 4% faster on an H200, on top of the 4% of the folds in shared memory (HermiteFolds;
// docs/benchmarks.md, 2026-11-30); fp32, whose pass is bound by instruction issue rather than by waits, was slower
// batched and keeps its loop.
inline constexpr int kHermitePairBatch = 8;
static_assert(kHermiteRun % kHermitePairBatch == 0, "whole batches a run");
template <bool kSelf, bool kPotential, int kSize, class Args>
__device__ __forceinline__ void sweep_run(const HermiteTileData<double, kSize>& tile, int u0, int j0, const Args& args,
                                          const HermiteIBody<double>& b, double eps2, PairSums<double>& run) {
#pragma unroll 2  // batches of 8: 1 measured 4.15e11 with every body active, 2 4.31e11 (docs/benchmarks.md, 2026-11-30)
  for (int u1 = u0; u1 < u0 + kHermiteRun; u1 += kHermitePairBatch) {
    PairFactors<double> t[kHermitePairBatch];
#pragma unroll
    for (int q = 0; q < kHermitePairBatch; ++q) {
      int const u = u1 + q;
      Real4<double> const pj = tile.pos[u], vj = tile.vel[u];
      double self = 0.0;
      if constexpr (kSelf) {
        int const j = j0 + (u - u0);
        self = double(j >= args.slice_count || std::uint64_t(args.slice_begin + j) == b.index);
      }
      t[q] = pair_factors<kSelf>(__dsub_rn(pj.x, b.x), __dsub_rn(pj.y, b.y), __dsub_rn(pj.z, b.z),
                               __dsub_rn(vj.x, b.vx), __dsub_rn(vj.y, b.vy), __dsub_rn(vj.z, b.vz), pj.w, eps2, self);
    }
#pragma unroll
    for (int q = 0; q < kHermitePairBatch; ++q) add_factors<kPotential>(t[q], run);
  }
}
template <bool kSelf, bool kPotential, int kSize, class Args>
__device__ __forceinline__ void sweep_run(const HermiteTileData<float, kSize>& tile, int u0, int j0, const Args& args,
                                          const HermiteIBody<float>& b, float eps2, PairSums<float>& run) {
#pragma unroll 4
  for (int u = u0; u < u0 + kHermiteRun; ++u) {
    float4 const ph = tile.pos_hi[u], pl = tile.pos_lo[u], vh = tile.vel_hi[u], vl = tile.vel_lo[u];
    float self = 0.0f;
    if constexpr (kSelf) {
      int const j = j0 + (u - u0);
      self = float(j >= args.slice_count || std::uint64_t(args.slice_begin + j) == b.index);
    }
    add_pair<kSelf, kPotential>(
        ds_difference(ph.x, pl.x, b.pos_hi.x, b.pos_lo.x), ds_difference(ph.y, pl.y, b.pos_hi.y, b.pos_lo.y),
        ds_difference(ph.z, pl.z, b.pos_hi.z, b.pos_lo.z), ds_difference(vh.x, vl.x, b.vel_hi.x, b.vel_lo.x),
        ds_difference(vh.y, vl.y, b.vel_hi.y, b.vel_lo.y), ds_difference(vh.z, vl.z, b.vel_hi.z, b.vel_lo.z), ph.w,
        eps2, self, run);
  }
}
// Adds the runs of one tile of j-bodies (local j0 ...) to `span`, in run order.
template <bool kSelf, bool kPotential, class Real, class Args>
__device__ __forceinline__ void sweep_tile(const HermiteTileData<Real>& tile, int j0, const Args& args,
                                           const HermiteIBody<Real>& b, Real eps2, hk::ForceJerk& span) {
  for (int r = 0; r < kHermiteTile; r += kHermiteRun) {
    PairSums<Real> run{0, 0, 0, 0, 0, 0, 0};
    sweep_run<kSelf, kPotential>(tile, r, j0 + r, args, b, eps2, run);
    add_sums(span, run);
  }
}

// ---- how the force pass cuts its work: the same sums in every mode ----
//  per_span:  one work item per (128 active bodies, own span), writing each span's sum: many short items, for
//             small blocks (16 active bodies x 256 spans still fill the GPU);
//  per_group: one item per (128 active bodies, own group), spans folded per thread, writing group partials;
//  fold_all:  one item per 128 active bodies over every group, writing totals (one device: every group own).
// The choice: the way whose items fill the `slots` resident blocks best, wave by wave (a last wave a third full
// costs as much as a full one), the coarser on a tie; per_span only for blocks its buffer holds, where a group has
// several spans and where it fills 5% better (it writes and reads one sum a span). Integer arithmetic: every kernel decides alike.
enum class HermiteForceMode : int { per_span, per_group, fold_all };

struct HermiteCut {
  int groups;                // own groups
  int spans_per_group;
  bool fold_allowed;         // every group is own (one device)
  unsigned slots;            // blocks of the force kernel's grid
  unsigned span_capacity;    // the most active bodies the span buffer holds
};

// a / b, in 32 bits where both fit (always, for any N an int holds and the grids the engine launches): a 64-bit
// division is a long subroutine on the GPU, and every force and corrector thread divides in its first instructions.
NBODY_HOST_DEVICE inline unsigned long long divide(unsigned long long a, unsigned long long b) {
  if (((a | b) >> 32) == 0) return unsigned(a) / unsigned(b);
  return a / b;
}

NBODY_HOST_DEVICE inline HermiteForceMode hermite_force_mode(unsigned active, const HermiteCut& c) {
  unsigned long long const tiles = (active + kHermiteForceBlock - 1) / kHermiteForceBlock;
  unsigned long long const slots = c.slots > 0 ? c.slots : 1;
  auto waves = [&](unsigned long long items) { return divide(items + slots - 1, slots); };
  // a fills at least as well as b, scaled: a / waves(a) x num >= b / waves(b) x den
  auto fills = [&](unsigned long long a, unsigned long long b, unsigned long long num, unsigned long long den) {
    return a * waves(b) * num >= b * waves(a) * den;
  };
  unsigned long long const group_items = tiles * unsigned(c.groups), span_items = group_items * unsigned(c.spans_per_group);
  HermiteForceMode mode = HermiteForceMode::per_group;
  unsigned long long items = group_items;
  if (c.fold_allowed && fills(tiles, group_items, 1, 1)) mode = HermiteForceMode::fold_all, items = tiles;
  if (active <= c.span_capacity && c.spans_per_group > 1 && !fills(items, span_items, 21, 20))
    mode = HermiteForceMode::per_span;
  return mode;
}

// A sum of the force pass's buffers as four 16-byte loads in place of eight 8-byte ones: half the L1 requests a record
// (every record of those buffers is 64-byte aligned). A small block's corrector, a warp a body reading 16 groups'
// records side by side, was bound by those requests on the few SMs that held its bodies.
__device__ __forceinline__ hk::ForceJerk load_sum(const hk::ForceJerk* p) {
  const auto* q = reinterpret_cast<const double2*>(p);
  double2 const a = q[0], b = q[1], c = q[2], d = q[3];
  return {a.x, a.y, b.x, b.y, c.x, c.y, d.x, d.y};
}

// Where the force pass leaves its sums, and how to read a body's total from them in the canonical order.
struct HermiteSums {
  hk::ForceJerk* span;   // [own span][active]
  hk::ForceJerk* group;  // [own group][active]
  hk::ForceJerk* total;  // [active]
  HermiteCut cut;

  // A body's total: the pass's own (fold_all), or its group partials added in group order (per_group; per_span
  // once hermite_span_groups has made them).
  __device__ hk::ForceJerk total_of(unsigned k, unsigned active) const {
    if (hermite_force_mode(active, cut) == HermiteForceMode::fold_all) return load_sum(&total[k]);
    hk::ForceJerk sum{};
#pragma unroll 4
    for (int g = 0; g < cut.groups; ++g) hk::add_partial(sum, load_sum(&group[std::size_t(g) * active + k]));
    return sum;
  }
  // The loads are independent (only the adds are ordered): unrolled, several are in flight at once.
  __device__ hk::ForceJerk group_of_spans(int g, unsigned k, unsigned active) const {
    hk::ForceJerk p{};
#pragma unroll 8
    for (int s = g * cut.spans_per_group; s < (g + 1) * cut.spans_per_group; ++s)
      hk::add_partial(p, load_sum(&span[std::size_t(s) * active + k]));
    return p;
  }
};

struct HermiteForceArgs {
  const Real4<double>* pos;  // own j-bodies, predicted (HermiteSlice::xp)
  const Real4<double>* vel;  // HermiteSlice::vp
  int slice_begin;           // global index of own j-body 0
  int slice_count;           // own bodies: local j from here on is padding
  int group_length;
  int span_length;
  const hk::ActiveBody* active;  // the whole active block
  ActiveCount count;
  HermiteSums sums;
  const HermiteControl* ctl;  // the single-device path: nothing to do once halted; else nullptr
  // fp32: the j-bodies already split (a block step on one device; HermiteSplit's four arrays one after the other,
  // each of the padded own bodies, groups x group_length), or null. One pointer: the kernel's registers.
  const float4* split;
  bool corrector_early = false;  // the corrector may launch before this pass ends (let_next_kernel_start)
};

// Stages own j-body j as entry u of a block's tile: fp64 as it is; fp32 copied from the split arrays where the block
// step wrote them, else split here (the same bits either way).
template <int kSize>
__device__ __forceinline__ void stage_pos(HermiteTileData<double, kSize>& tile, int u, const HermiteForceArgs& args,
                                          int j) {
  tile.load_pos(u, args.pos[j]);
}
template <int kSize>
__device__ __forceinline__ void stage_vel(HermiteTileData<double, kSize>& tile, int u, const HermiteForceArgs& args,
                                          int j) {
  tile.load_vel(u, args.vel[j]);
}
__device__ __forceinline__ int split_stride(const HermiteForceArgs& args) {
  return args.sums.cut.groups * args.group_length;
}
template <int kSize>
__device__ __forceinline__ void stage_pos(HermiteTileData<float, kSize>& tile, int u, const HermiteForceArgs& args,
                                          int j) {
  if (args.split) {
    tile.pos_hi[u] = args.split[j];
    tile.pos_lo[u] = args.split[j + split_stride(args)];
  } else {
    tile.load_pos(u, args.pos[j]);
  }
}
template <int kSize>
__device__ __forceinline__ void stage_vel(HermiteTileData<float, kSize>& tile, int u, const HermiteForceArgs& args,
                                          int j) {
  if (args.split) {
    tile.vel_hi[u] = args.split[j + 2 * split_stride(args)];
    tile.vel_lo[u] = args.split[j + 3 * split_stride(args)];
  } else {
    tile.load_vel(u, args.vel[j]);
  }
}

// The largest span (hermite_span_length) and the active bodies of one item of the per-span pass below.
inline constexpr int kHermiteMaxSpan = 256;
inline constexpr int kHermiteRunChunk = 32;

// Stages a whole span (`length` j-bodies from j_begin, positions then velocities; all kHermiteForceBlock threads of
// the block) by asynchronous copies from global to shared memory in two halves: the first half of the span's
// positions and velocities, then the second, each its own group of copies, so that the runs of the first half are
// summed while the second is on its way (wait_staged<1>, then wait_staged<0>). A copy takes no register: fp64, which
// loaded a span into registers (a span one round trip), spilled when it first took the halves beside its folds in
// registers; with its folds in shared memory its block steps of 1 to 256 bodies at N = 65,536 are 0.4 to 1.1 us
// shorter in halves, and every-body-active steps 1.6% faster (docs/benchmarks.md, 2026-11-30). fp32 block steps copy
// the split j-bodies; the fp32 protocol passes, which split the j-bodies as they stage them, store them at once (no
// copy group: the waits return at once).
template <int kPending>
__device__ __forceinline__ void wait_staged() {
  __pipeline_wait_prior(kPending);
  __syncthreads();
}
__device__ __forceinline__ void copy_async(float4* shared, const float4* global) {
  __pipeline_memcpy_async(shared, global, sizeof(float4));
}
// fp32: a thread's entries in half a span.
inline constexpr int kHermiteHalfRounds = kHermiteMaxSpan / kHermiteForceBlock;
__device__ __forceinline__ void stage_span(HermiteTileData<double, kHermiteMaxSpan>& tile, const HermiteForceArgs& args,
                                           int j_begin, int length) {
  static_assert(sizeof(Real4<double>) == 2 * sizeof(float4), "two 16-byte copies an entry");
  int const half = length / 2;
  for (int part = 0; part < 2; ++part) {
    // half a span: `half` positions and `half` velocities, 2 copies each: 4 * half copies over the block
    for (int q = int(threadIdx.x); q < 4 * half; q += kHermiteForceBlock) {
      int const entry = q >> 1, piece = q & 1;
      bool const is_pos = entry < half;
      int const j = part * half + (is_pos ? entry : entry - half);
      const Real4<double>* const from = (is_pos ? args.pos : args.vel) + j_begin + j;
      Real4<double>* const to = is_pos ? &tile.pos[j] : &tile.vel[j];
      copy_async(reinterpret_cast<float4*>(to) + piece, reinterpret_cast<const float4*>(from) + piece);
    }
    __pipeline_commit();
  }
}
__device__ __forceinline__ void stage_span(HermiteTileData<float, kHermiteMaxSpan>& tile, const HermiteForceArgs& args,
                                           int j_begin, int length) {
  if (!args.split) {  // the protocol's passes: split here as they are staged
    for (int q = int(threadIdx.x); q < 2 * length; q += kHermiteForceBlock) {
      if (q < length)
        tile.load_pos(q, args.pos[j_begin + q]);
      else
        tile.load_vel(q - length, args.vel[j_begin + q - length]);
    }
    return;
  }
  int const stride = split_stride(args), half = length / 2;
  for (int part = 0; part < 2; ++part) {
#pragma unroll
    for (int k = 0; k < kHermiteHalfRounds; ++k) {
      int const q = int(threadIdx.x) + k * kHermiteForceBlock;
      if (q >= 2 * half) break;
      int const j = part * half + (q < half ? q : q - half);
      const float4* const from = q < half ? args.split + j_begin + j : args.split + 2 * stride + j_begin + j;
      copy_async(q < half ? &tile.pos_hi[j] : &tile.vel_hi[j], from);
      copy_async(q < half ? &tile.pos_lo[j] : &tile.vel_lo[j], from + stride);
    }
    __pipeline_commit();
  }
}

// The per-span pass's shared memory: the span's j-bodies and its runs' sums.
template <class Real>
struct HermiteSpanShared {
  HermiteTileData<Real, kHermiteMaxSpan> tile;
  PairSums<Real> runs[kHermiteMaxSpan / kHermiteRun][kHermiteRunChunk];
};

// per_span: the span sums of small blocks with the runs of a span side by side. An item is (32 active bodies, one
// span): the block holds the span's j-bodies, its threads sum runs of them for the item's bodies into shared memory,
// a (body, run) a thread, and warp 0 adds each body's runs in run order from zero: the sums of sweep_tile, bit for bit
// (the same runs, the same additions), with 8 times the threads a span for blocks too small to fill the GPU one body
// a thread. (An fp64 block of 64 bodies summed whole spans a thread: 512 warps of 256 dependent pairs, one warp an SM
// sub-partition, the force pass 29.5 us on an H200 where its arithmetic needs 8.5.)
//  - 32 bodies (every item of a block of 32 or more): warp w sums runs w, w + 4, ..., a body a lane;
//  - fewer (a block of fewer than 32 bodies, one item a span): `width` lanes a run (the bodies, rounded up to a power
//    of two), the other lanes of a warp the next runs. A block of one body sums a span's 8 runs in 8 lanes where it
//    summed them in 32 lanes of copies of the body, two runs a warp, and 31 of every 32 pairs computed were thrown
//    away: a block step of one body 5 us shorter in fp64 and 4 in fp32 on an H200, of 16 bodies 3 (docs/benchmarks.md,
//    2026-11-29, with the fp64 force pass at four blocks an SM).
//    A separate loop: the general one made blocks of 32 and more 2 us slower.
template <class Real, bool kPotential>
__device__ __forceinline__ void hermite_span_runs(const HermiteForceArgs& args, unsigned active, Real eps2,
                                                  HermiteSpanShared<Real>& shared) {
  constexpr int kWarps = kHermiteForceBlock / 32;
  static_assert(kHermiteForceBlock % 32 == 0 && kWarps >= 1 && kHermiteRunChunk == 32, "whole warps");
  auto& span_tile = shared.tile;
  auto& runs = shared.runs;
  int const length = args.span_length, spans = args.sums.cut.groups * args.sums.cut.spans_per_group;
  int const run_count = length / kHermiteRun;
  unsigned const lane = threadIdx.x & 31, warp = threadIdx.x / 32;
  unsigned width = kHermiteRunChunk;  // lanes a run
  while (width / 2 >= active && width > 1) width /= 2;
  unsigned const slot = threadIdx.x % width;  // the thread's body in the item (its lane where width is 32)
  unsigned const chunks = (active + kHermiteRunChunk - 1) / kHermiteRunChunk;
  unsigned long long const items = static_cast<unsigned long long>(chunks) * unsigned(spans);
  for (unsigned long long item = blockIdx.x; item < items; item += gridDim.x) {
    if (args.corrector_early && item + gridDim.x >= items) let_next_kernel_start();  // this block's last item
    unsigned long long const quotient = divide(item, chunks);
    unsigned const chunk = unsigned(item - quotient * chunks);
    int const span = int(quotient);
    int const j_begin = span * length;
    // The thread's body is loaded before the span is staged: one round trip to memory for both.
    unsigned const k = chunk * kHermiteRunChunk + slot;
    HermiteIBody<Real> const b(args.active[min(k, active - 1)]);
    __syncthreads();  // every thread has read the previous item's span and runs
    stage_span(span_tile, args, j_begin, length);
    auto sum_run = [&](int r, unsigned lanes) {
      int const j0 = j_begin + r * kHermiteRun;
      bool const any_self = __any_sync(lanes, j0 + kHermiteRun > args.slice_count ||
                                                  b.index - std::uint64_t(args.slice_begin + j0) <
                                                      std::uint64_t(kHermiteRun));
      PairSums<Real> run{0, 0, 0, 0, 0, 0, 0};
      if (any_self)
        sweep_run<true, kPotential>(span_tile, r * kHermiteRun, j0, args, b, eps2, run);
      else
        sweep_run<false, kPotential>(span_tile, r * kHermiteRun, j0, args, b, eps2, run);
      runs[r][slot] = run;
    };
    if (width == kHermiteRunChunk) {
      // The first half's runs while the second half is staged; the second half's from the warp after the last one
      // busy in the first. (This pass runs only where a group has several spans, so spans of 256 and 8 runs: warp w
      // sums runs w and w + 4, as it would without the halves.)
      // One loop over both halves: two copies of it made the pass's code a third larger.
      int const half = run_count / 2;
#pragma unroll 1
      for (int part = 0; part < 2; ++part) {
        if (part == 0)
          wait_staged<1>();
        else
          wait_staged<0>();
        int const first = part == 0 ? int(warp) : half + (int(warp) + kWarps - half % kWarps) % kWarps;
        for (int r = first; r < (part == 0 ? half : run_count); r += kWarps) sum_run(r, 0xffffffffu);
      }
    } else {
      wait_staged<0>();
      for (int r0 = 0; r0 < run_count; r0 += kHermiteForceBlock / int(width)) {
        int const r = r0 + int(threadIdx.x / width);
        unsigned const lanes = __ballot_sync(0xffffffffu, r < run_count);  // lanes past the last run sit out
        if (r < run_count) sum_run(r, lanes);
      }
    }
    __syncthreads();
    if (warp == 0 && lane < width && chunk * kHermiteRunChunk + lane < active) {
      hk::ForceJerk sum{};
      for (int r = 0; r < run_count; ++r) add_sums(sum, runs[r][lane]);
      args.sums.span[std::size_t(span) * active + chunk * kHermiteRunChunk + lane] = sum;
    }
  }
}

// The group partial and the total of each thread's body in the passes that fold spans (per_group, fold_all). They
// change once a span (at most 256 pairs). fp64 keeps them in shared memory, where in registers they took 28 of the
// 128 the pair arithmetic has (every-body-active steps 4% faster on an H200, docs/benchmarks.md, 2026-11-30): a row a
// component and a column a thread, so a warp's accesses fall on consecutive 8-byte words (no bank conflict) and each
// thread touches only its own column (no barrier). They share that memory with the per-span pass's, which a launch
// either runs or does not. fp32 (whose pair needs fewer registers) keeps them in registers: in shared memory its
// every-body-active steps were 0.8% slower.
template <class Real>
struct HermiteFolds {  // fp32: registers
  hk::ForceJerk sum[2];  // group, total
  __device__ void clear(int which) { sum[which] = hk::ForceJerk{}; }
  __device__ void add(int which, const hk::ForceJerk& p) { hk::add_partial(sum[which], p); }
  __device__ hk::ForceJerk get(int which) const { return sum[which]; }
};
struct HermiteSharedFolds {
  double sum[2][7][kHermiteForceBlock];  // [group, total][ax ay az jx jy jz phi][thread]
};
template <>
struct HermiteFolds<double> {
  HermiteSharedFolds& shared;
  __device__ void clear(int which) {
#pragma unroll
    for (int c = 0; c < 7; ++c) shared.sum[which][c][threadIdx.x] = 0.0;
  }
  __device__ void add(int which, const hk::ForceJerk& p) {
    double const v[7] = {p.ax, p.ay, p.az, p.jx, p.jy, p.jz, p.phi};
#pragma unroll
    for (int c = 0; c < 7; ++c) {
      double& s = shared.sum[which][c][threadIdx.x];
      s = __dadd_rn(s, v[c]);  // add_partial's order: the sum so far, then the partial
    }
  }
  __device__ hk::ForceJerk get(int which) const {
    auto const& s = shared.sum[which];
    unsigned const t = threadIdx.x;
    return {s[0][t], s[1][t], s[2][t], s[3][t], s[4][t], s[5][t], s[6][t], 0.0};
  }
};
// The per-span pass's shared memory, and fp64's folds over it.
template <class Real>
union HermiteForceShared {
  HermiteSpanShared<Real> span;
  HermiteSharedFolds folds;
};
static_assert(sizeof(HermiteSharedFolds) <= sizeof(HermiteSpanShared<double>),
              "the folds take no shared memory of their own");
template <class Real>
__device__ __forceinline__ HermiteFolds<Real> make_folds(HermiteForceShared<Real>& shared) {
  if constexpr (std::is_same_v<Real, double>)
    return HermiteFolds<double>{shared.folds};
  else
    return HermiteFolds<Real>{};
}

// The force, jerk and potential of every active body against the own j-bodies, in the canonical order. Each
// thread sums for one active body; the block stages kHermiteTile j-bodies at a time in shared memory. Warps
// with no active body skip the arithmetic but take part in every barrier. The grid is any size (the engine
// launches what stays resident): blocks stride over the work items. The blocks of an SM do not progress alike (the warp
// schedulers favour some: with every body active a favoured block ends its share in a third of the pass), yet items
// handed out as blocks ask, tried, moved ptxas's schedule of every hot loop here, and fp64 passes that never used the
// queue lost 4% (docs/benchmarks.md, 2026-11-30, second entry).
//
// Blocks an SM, measured on an H200 (docs/benchmarks.md): four, at most 128 registers. fp32 (2026-11-25): five, at
// 96, spilled and was slower at every size. fp64 (2026-11-29): at three (160 registers) the 512 items of a block of 64
// bodies took two waves of the 396 blocks; at four they take one, and a block step of 64 bodies is 1.5 us shorter, of
// 128 bodies 3.5 us, with every body active 2.3% slower. The fp64 instantiation with the potential (the protocol's
// passes: the start, the potential, the corrector passes of ranks and of several GPUs without advance_together) stays
// at three: at four it spilled. The engine sizes each instantiation's grid by its own residency. The compiler's own
// choice moved between 96 and 160 registers with small changes elsewhere.
template <class Real, bool kPotential>
__global__ void __launch_bounds__(kHermiteForceBlock, std::is_same_v<Real, double> && kPotential ? 3 : 4)
    hermite_forces(HermiteForceArgs args, double eps2_fp64) {
  follow_previous_kernel();  // first, before any return or trigger: an early corrector relies on it (see above)
  // The count is read before the halt flag (one round trip for both: a halted launch ignores the count).
  unsigned const active = args.count.get();
  if (halted(args.ctl)) return;
  __shared__ HermiteTileData<Real> tile;
  __shared__ HermiteForceShared<Real> shared;
  int const groups = args.sums.cut.groups, spg = args.sums.cut.spans_per_group;
  HermiteForceMode const mode = hermite_force_mode(active, args.sums.cut);
  if (mode == HermiteForceMode::per_span) {
    hermite_span_runs<Real, kPotential>(args, active, Real(eps2_fp64), shared.span);
    return;
  }
  unsigned const tiles = (active + kHermiteForceBlock - 1) / kHermiteForceBlock;
  unsigned const units = mode == HermiteForceMode::fold_all ? 1u
                         : mode == HermiteForceMode::per_group ? unsigned(groups)
                                                               : unsigned(groups * spg);
  unsigned long long const items = static_cast<unsigned long long>(tiles) * units;
  Real const eps2 = Real(eps2_fp64);
  for (unsigned long long item = blockIdx.x; item < items; item += gridDim.x) {
    if (args.corrector_early && item + gridDim.x >= items) let_next_kernel_start();  // this block's last item
    unsigned long long const quotient = divide(item, tiles);
    unsigned const tile_index = unsigned(item - quotient * tiles), unit = unsigned(quotient);
    unsigned const first = tile_index * kHermiteForceBlock;
    unsigned const k = first + threadIdx.x;
    bool const warp_busy = first + (threadIdx.x & ~31u) < active;
    HermiteIBody<Real> const b(args.active[min(k, active - 1)]);
    int s_begin = 0, s_end = groups * spg;
    if (mode == HermiteForceMode::per_group) {
      s_begin = int(unit) * spg;
      s_end = s_begin + spg;
    } else if (mode == HermiteForceMode::per_span) {
      s_begin = int(unit);
      s_end = s_begin + 1;
    }
    HermiteFolds<Real> folds = make_folds(shared);
    folds.clear(0);
    folds.clear(1);
    for (int s = s_begin; s < s_end; ++s) {
      hk::ForceJerk span{};
      int const j_begin = s * args.span_length, j_end = j_begin + args.span_length;
      for (int j0 = j_begin; j0 < j_end; j0 += kHermiteTile) {
        __syncthreads();  // every thread has read the previous tile
        if (threadIdx.x < kHermiteTile)
          stage_pos(tile, int(threadIdx.x), args, j0 + int(threadIdx.x));  // converted once a tile, not once a pair
        else
          stage_vel(tile, int(threadIdx.x) - kHermiteTile, args, j0 + int(threadIdx.x) - kHermiteTile);
        __syncthreads();
        if (warp_busy) {
          // A tile with no lane's own body and no padding calls the pair with self = 0 as a constant: m (1 - 0)
          // folds to m, two operations fewer a pair; r2 + 0 stays (r2 >= +0, so it is r2 either way). Same bits.
          bool const any_self = j0 + kHermiteTile > args.slice_count ||
                                __any_sync(0xffffffffu, b.index - std::uint64_t(args.slice_begin + j0) <
                                                            std::uint64_t(kHermiteTile));
          if (any_self)
            sweep_tile<true, kPotential>(tile, j0, args, b, eps2, span);
          else
            sweep_tile<false, kPotential>(tile, j0, args, b, eps2, span);
        }
      }
      if (mode == HermiteForceMode::per_span) {
        if (k < active) args.sums.span[std::size_t(s) * active + k] = span;
        continue;
      }
      folds.add(0, span);
      if ((s + 1) % spg == 0) {
        if (mode == HermiteForceMode::per_group) {
          if (k < active) args.sums.group[std::size_t(s / spg) * active + k] = folds.get(0);
        } else {
          folds.add(1, folds.get(0));
        }
        folds.clear(0);
      }
    }
    if (mode == HermiteForceMode::fold_all && k < active) args.sums.total[k] = folds.get(1);
  }
}

// Group partials from span sums: [g][k] for every own group g and active body k, one thread each (a body's
// spans of one group are added in span order; the groups of one body run side by side). Nothing to do unless the
// force pass wrote span sums. `ctl`: the single-device path (nothing once halted).
__global__ void hermite_span_groups(HermiteSums sums, ActiveCount count, const HermiteControl* ctl) {
  follow_previous_kernel();
  if (halted(ctl)) return;
  unsigned const active = count.get();
  if (hermite_force_mode(active, sums.cut) != HermiteForceMode::per_span) return;
  unsigned long long const n = static_cast<unsigned long long>(sums.cut.groups) * active;
  for (unsigned long long q = blockIdx.x * blockDim.x + threadIdx.x; q < n; q += gridDim.x * blockDim.x) {
    int const g = int(q / active);
    unsigned const k = unsigned(q % active);
    sums.group[q] = sums.group_of_spans(g, k, active);
  }
}

// The multi-device protocol's last stage for one device's groups: out[k] = prefix[k] (zero where null) plus each
// own group's partial [g][k] in group order (the canonical order's group stage, continued from the groups of the
// devices before). One thread a body.
// `count` and `ctl`: nothing once halted (the protocol passes neither: a count given, no control).
__global__ void hermite_add_groups(const hk::ForceJerk* group, int groups, ActiveCount active, const hk::ForceJerk* prefix,
                                   hk::ForceJerk* out, const HermiteControl* ctl) {
  if (halted(ctl)) return;
  unsigned const count = active.get();
  for (unsigned k = blockIdx.x * blockDim.x + threadIdx.x; k < count; k += gridDim.x * blockDim.x) {
    hk::ForceJerk t = prefix ? load_sum(&prefix[k]) : hk::ForceJerk{};
    for (int g = 0; g < groups; ++g) hk::add_partial(t, load_sum(&group[std::size_t(g) * count + k]));
    out[k] = t;
  }
}

// ---- the block's time, the predictor and the active list ----

// Arms the control for a run of block steps from block time t (or clears the minimum before a search): the
// values are the host's (the protocol may have moved the time since the last run).
__global__ void hermite_arm(HermiteControl* ctl, double t, double t_stop, unsigned long long steps, bool resume) {
  ctl->next_key = time_key(INFINITY);
  if (resume) {
    ctl->key[0] = ctl->key[1] = time_key(INFINITY);
    ctl->read_slot = 0;
    ctl->write_slot = 1;
    ctl->t = t;
    ctl->t_stop = t_stop;
    ctl->steps_left = steps;
    ctl->halted = 0;
    ctl->meetings = 0;
  }
}

// min over the slice's bodies of t_i + dt_i into *target (atomicMin on ordered keys: exact, any order): the
// protocol's own_next_time, and the first block of each advance_blocks and advance_together run (there over the
// replica: every body).
__global__ void hermite_next_time(HermiteSlice s, unsigned long long* target) {
  unsigned long long key = time_key(INFINITY);
  for (int i = int(blockIdx.x * blockDim.x + threadIdx.x); i < s.count; i += int(gridDim.x * blockDim.x))
    key = min(key, time_key(s.t[i] + s.dt[i]));
  for (int o = 16; o > 0; o /= 2) key = min(key, __shfl_xor_sync(0xffffffffu, key, o));
  __shared__ unsigned long long warp_min[kHermiteBlock / 32];
  if ((threadIdx.x & 31) == 0) warp_min[threadIdx.x / 32] = key;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < int(blockDim.x / 32); ++w) key = min(key, warp_min[w]);
    atomicMin(target, key);
  }
}

// The block time: the host's (`ctl` null), or (a block step on one device) the minimum just found, unless
// that passes t_stop (or there is none): then the run halts here and the step does nothing.
struct BlockClock {
  HermiteControl* ctl = nullptr;
  double t = 0.0;
};

// The contiguous run of own bodies block `b` of `blocks` looks at in the active-list kernels (a whole number
// of rounds of kHermiteBlock; the same in both kernels, which are launched with the same grid).
__device__ __forceinline__ int list_chunk(int count, int blocks) {
  int const per = (count + blocks - 1) / blocks;
  return (per + kHermiteBlock - 1) / kHermiteBlock * kHermiteBlock;
}

__device__ __forceinline__ bool is_active(const HermiteSlice& s, int i, double t, bool all) {
  return all || s.t[i] + s.dt[i] == t;
}

// Predicts every own body to the block time (with `predict`) and counts the active ones of each block's chunk
// into counts[blockIdx.x] (with `counts`): the protocol (advance_blocks has hermite_predict_list). Launched with
// blockDim kHermiteBlock.
__global__ void hermite_predict(HermiteSlice s, BlockClock clock, bool predict, bool all, unsigned* counts) {
  double const t = clock.t;
  int const chunk = list_chunk(s.count, int(gridDim.x));
  int const begin = int(blockIdx.x) * chunk, end = min(s.count, begin + chunk);
  unsigned active = 0;
  for (int base = begin; base < end; base += kHermiteBlock) {
    int const i = base + int(threadIdx.x);
    bool const in = i < end;
    if (in && predict) {
      Real4<double> const x = s.x[i], v = s.v[i], a = s.a[i], j = s.jerk[i];
      hk::V3 xp, vp;
      hk::predict({x.x, x.y, x.z}, {v.x, v.y, v.z}, {a.x, a.y, a.z}, {j.x, j.y, j.z}, t - s.t[i], xp, vp);
      s.xp[i] = {xp.x, xp.y, xp.z, x.w};
      s.vp[i] = {vp.x, vp.y, vp.z, 0.0};
    }
    if (counts) active += unsigned(__syncthreads_count(in && is_active(s, i, t, all)));
  }
  if (counts && threadIdx.x == 0) counts[blockIdx.x] = active;
}

// Block-wide sum of one unsigned per thread (blockDim kHermiteBlock); every thread gets it.
__device__ __forceinline__ unsigned block_sum(unsigned v, unsigned* scratch) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  __syncthreads();
  if ((threadIdx.x & 31) == 0) scratch[threadIdx.x / 32] = v;
  __syncthreads();
  unsigned total = 0;
  for (int w = 0; w < kHermiteBlock / 32; ++w) total += scratch[w];
  return total;
}

// The active list: the active own bodies (predicted) in index order into out[], their count into *count_out
// (and ctl->active with a device clock). Same grid as hermite_predict, whose counts it reads. `out` and
// `count_out` may be mapped pinned host memory (the protocol: the list goes to the host with no copy).
__global__ void hermite_compact(HermiteSlice s, BlockClock clock, bool all, const unsigned* counts,
                                hk::ActiveBody* out, unsigned* count_out) {
  double const t = clock.t;
  __shared__ unsigned scratch[kHermiteBlock / 32];
  unsigned before = 0;
  for (int q = int(threadIdx.x); q < int(blockIdx.x); q += kHermiteBlock) before += counts[q];
  unsigned offset = block_sum(before, scratch);
  int const chunk = list_chunk(s.count, int(gridDim.x));
  int const begin = int(blockIdx.x) * chunk, end = min(s.count, begin + chunk);
  unsigned const lane = threadIdx.x & 31, warp = threadIdx.x / 32;
  for (int base = begin; base < end; base += kHermiteBlock) {
    int const i = base + int(threadIdx.x);
    bool const flag = i < end && is_active(s, i, t, all);
    unsigned const ballot = __ballot_sync(0xffffffffu, flag);
    __syncthreads();  // the previous round has read scratch
    if (lane == 0) scratch[warp] = unsigned(__popc(ballot));
    __syncthreads();
    unsigned position = offset + unsigned(__popc(ballot & ((1u << lane) - 1u))), round = 0;
    for (int w = 0; w < kHermiteBlock / 32; ++w) {
      if (w < int(warp)) position += scratch[w];
      round += scratch[w];
    }
    if (flag) {
      Real4<double> const x = s.xp[i], v = s.vp[i];
      out[position] = {x.x, x.y, x.z, x.w, v.x, v.y, v.z, std::uint64_t(s.begin + i)};
    }
    offset += round;
  }
  if (blockIdx.x == gridDim.x - 1 && threadIdx.x == 0) *count_out = offset;
}

// A block step on one device: hermite_predict and hermite_compact in one pass. Each block predicts its chunk of
// own bodies to the block time (into xp, vp, or for --precision fp32 into the double-single arrays the force pass
// reads, see HermiteSplit), counts the active ones and finds the least t_i + dt_i of the others (the next block's
// key, one atomicMin a block), then takes a run of places in the active list with one atomicAdd and writes its
// active bodies there in index order. The list's runs are in the order the blocks reached the atomic, so the list
// is not in index order; nothing on one device depends on its order (each active body's sums, corrector and next
// time are its own; the control's counts and minima are exact in any order). The block that finishes last (the
// same atomic counts the blocks) stores the count and clears the counter for the next launch. No block waits for
// another. Launched with blockDim kHermiteBlock.
//
// kReplica: a block step of several devices (HermiteEngine::advance_together), where every device holds every body's
// state. `s` is all of it (begin 0, count N), of which [j_begin, j_end) are this device's j-bodies: only those are
// predicted into the j arrays (xp, vp or the split arrays, at i - j_begin), and every active body is listed,
// whichever device's j-body it is, so that each device finds the same block (in its own list order: the devices'
// partials meet by body index, hermite_scatter_groups). A body that is neither is read no further than its t_i, dt_i.
// Block 0 counts the block step begun (HermiteControl::meetings).

// One body's state at t_i, as the predictor reads it.
struct BodyAtStart {
  Real4<double> x, v, a, j;
  double t, dt;
  __device__ void load(const HermiteSlice& s, int i) {
    load_state(s, i);
    load_time(s, i);
  }
  __device__ void load_state(const HermiteSlice& s, int i) {
    x = s.x[i];
    v = s.v[i];
    a = s.a[i];
    j = s.jerk[i];
  }
  __device__ void load_time(const HermiteSlice& s, int i) {
    t = s.t[i];
    dt = s.dt[i];
  }
  __device__ void predict(double t_block, Real4<double>& xp, Real4<double>& vp) const {
    hk::V3 p, q;
    hk::predict({x.x, x.y, x.z}, {v.x, v.y, v.z}, {a.x, a.y, a.z}, {j.x, j.y, j.z}, t_block - t, p, q);
    xp = {p.x, p.y, p.z, x.w};
    vp = {q.x, q.y, q.z, 0.0};
  }
};
template <bool kReplica>
__global__ void hermite_predict_list(HermiteSlice s, HermiteControl* ctl, hk::ActiveBody* out, int j_begin, int j_end) {
  __shared__ unsigned scratch[kHermiteBlock / 32];
  __shared__ unsigned long long waiting_min[kHermiteBlock / 32];
  __shared__ unsigned before_shared;
  // What the block reads that does not depend on the block time is read at once, in one round trip: the control's
  // fields beside the halt flag (both keys: the one read_slot names is taken), and the state of the chunk's first
  // round of bodies, kept in registers for both passes below (with a block per kHermiteBlock bodies, up to
  // N = 262,144, the only round; kReplica: only their t_i and dt_i, the rest read where a body needs it). A halted
  // launch reads them and ignores them.
  follow_previous_kernel();
  int const id = int(blockIdx.x);
  // kReplica: rounds dealt out to the blocks in turn (block b's round r at (r gridDim.x + b) kHermiteBlock), so
  // that with a grid of the own bodies' size each block has about one round of own j-bodies to predict and the rest
  // only to look at; else one contiguous chunk a block.
  int const chunk = list_chunk(s.count, int(gridDim.x));
  int const step = kReplica ? int(gridDim.x) * kHermiteBlock : kHermiteBlock;
  int const begin = kReplica ? id * kHermiteBlock : id * chunk;
  int const end = kReplica ? s.count : min(s.count, begin + chunk);
  BodyAtStart first{};
  int const i_first = begin + int(threadIdx.x);
  if (i_first < end) {
    if constexpr (kReplica)
      first.load_time(s, i_first);
    else
      first.load(s, i_first);
  }
  int const slot = ctl->read_slot;
  unsigned long long const key0 = ctl->key[0], key1 = ctl->key[1];
  unsigned long long const steps_left = ctl->steps_left;
  long long const floor_body = ctl->floor_body;
  double const t_stop = ctl->t_stop;
  // Nothing once halted; a halt (every block sees the same values, so every block returns) when no step is left,
  // a step fell below the floor, or the next block passes t_stop (or there is none: +inf).
  if (halted(ctl)) return;
  double const t = key_time(slot ? key1 : key0);
  if (steps_left == 0 || floor_body != kNoBody || !(t <= t_stop)) {
    if (id == 0 && threadIdx.x == 0) ctl->halted = 1;
    return;
  }
  if (id == 0 && threadIdx.x == 0) {  // no block of this kernel reads these
    ctl->t_next = t;
    ctl->write_slot = slot ^ 1;
    if constexpr (kReplica) ctl->meetings += 1;
  }
  unsigned const lane = threadIdx.x & 31, warp = threadIdx.x / 32;
  unsigned mine = 0;
  unsigned long long waiting = time_key(INFINITY);
  bool flag_first = false;
  Real4<double> xp_first{}, vp_first{};
  for (int base = begin; base < end; base += step) {
    int const i = base + int(threadIdx.x);
    bool flag = false;
    if (i < end) {
      BodyAtStart b = first;
      if (base != begin) {
        if constexpr (kReplica)
          b.load_time(s, i);
        else
          b.load(s, i);
      }
      double const next = b.t + b.dt;
      flag = next == t;
      if (!flag) waiting = min(waiting, time_key(next));
      bool const j_body = !kReplica || (i >= j_begin && i < j_end);
      if (j_body || flag) {
        if constexpr (kReplica) b.load_state(s, i);
        Real4<double> xp, vp;
        b.predict(t, xp, vp);
        int const j = kReplica ? i - j_begin : i;
        if (!j_body) {
        } else if (s.split.pos_hi) {
          s.split.store(j, xp, vp);
        } else {
          s.xp[j] = xp;
          s.vp[j] = vp;
        }
        if (base == begin) xp_first = xp, vp_first = vp;
      }
      if (base == begin) flag_first = flag;
    }
    mine += unsigned(__syncthreads_count(flag));
  }
  for (int o = 16; o > 0; o /= 2) waiting = min(waiting, __shfl_xor_sync(0xffffffffu, waiting, o));
  if (lane == 0) waiting_min[warp] = waiting;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < kHermiteBlock / 32; ++w) waiting = min(waiting, waiting_min[w]);
    if (waiting != time_key(INFINITY)) atomicMin(&ctl->key[slot ^ 1], waiting);
    unsigned long long const was = atomicAdd(&ctl->listed, (1ull << 32) | mine);
    before_shared = unsigned(was);
    if ((was >> 32) == gridDim.x - 1u) {  // the last block: every other one has its places
      ctl->active = unsigned(was) + mine;
      atomicExch(&ctl->listed, 0ull);
    }
  }
  __syncthreads();
  unsigned offset = before_shared;
  for (int base = begin; base < end; base += step) {
    int const i = base + int(threadIdx.x);
    bool const flag = base == begin ? flag_first : i < end && s.t[i] + s.dt[i] == t;
    unsigned const ballot = __ballot_sync(0xffffffffu, flag);
    __syncthreads();  // the previous round has read scratch
    if (lane == 0) scratch[warp] = unsigned(__popc(ballot));
    __syncthreads();
    unsigned position = offset + unsigned(__popc(ballot & ((1u << lane) - 1u))), round = 0;
    for (int w = 0; w < kHermiteBlock / 32; ++w) {
      if (w < int(warp)) position += scratch[w];
      round += scratch[w];
    }
    if (flag) {
      Real4<double> x = xp_first, v = vp_first;
      if (base != begin) {  // predicted again (the same bits): the fp32 path keeps no fp64 prediction in memory
        BodyAtStart b;
        b.load(s, i);
        b.predict(t, x, v);
      }
      out[position] = {x.x, x.y, x.z, x.w, v.x, v.y, v.z, std::uint64_t(s.begin + i)};
    }
    offset += round;
  }
}

// ---- several devices of one process: block steps with no host round trip (HermiteEngine::advance_together) ----
// Every device holds every body's state (its replica: the same bits on every device) and does the whole block step
// itself but for the force pass, which covers its own j-bodies: it lists the active bodies (hermite_predict_list<true>),
// computes their partials against its own groups, leaves them by body index (hermite_scatter_groups) and, once every
// device has, adds every device's group partials in group order, read where they are (peer memory), and corrects every
// active body (hermite_correct<true>). So each device finds what the next block step needs (its time, its list, the
// floor) in its own memory, and the devices meet once a block step, before their correctors.
//
// The meeting is on the GPUs: flags in device memory, not events (a wait for another GPU's event cost about 4.6 us on
// 2 x H200, a flag about 0.7: tools/wait_latency). Once a device's partials are made, it counts the block step in its
// `announced` and stores the count into its slot of every device's `arrived` (a release at system scope: stream order
// puts the partials' writes before it, and the release is cumulative, as for sim/kernels/drift_signal.cuh). Before its
// corrector reads the others' partials, it waits until the count of every device in `waits_for` has reached the block
// step's (HermiteControl::meetings; acquire loads). A device's partials of block step k + 2 go where those of block
// step k went (two buffers, by parity): by then every device has announced block step k + 1, after its corrector of
// block step k read them.
// Where no engines share a GPU, the corrector announces and waits itself (meet_in_every_block). Where engines share
// one, the announcement and the wait are one-thread kernels (hermite_announce, hermite_await), which never hold the
// multiprocessors the other engine needs, and only engines on distinct GPUs wait for each other on the GPU: engines
// that share one are ordered by events (the engine's stream waits for the other's announcement), so nothing depends on
// a GPU running two streams' kernels side by side, which tools that serialise kernels (compute-sanitizer) do not. The
// host queues every device's announcement before any device's wait wherever it waits after each launch
// (CUDA_LAUNCH_BLOCKING, NBODY_DEBUG_SYNC) or engines share a GPU. Every device halts at the same block step (each
// finds the same block time, floor and steps left), before its announcement, so none waits for one that never comes.
// A wait that lasts kPollHostAfterNs reads `released`, which the host sets when it gives up on the devices
// (HermiteEngine::abandon); one of `stall_ns`, longer than the host's own bound on the batch (so the host gives up
// first, and says which GPU it waited for), traps with a message.
inline constexpr int kHermiteMaxPeers = 16;
struct HermiteSignals {  // one a device, in its memory, zeroed before the first block step of advance_together
  unsigned long long announced;
  unsigned long long arrived[kHermiteMaxPeers];  // [device d]: stored by device d
};
struct HermiteMeeting {
  HermiteSignals* device[kHermiteMaxPeers];  // every device's signals, in device order (this one's at `self`)
  int count;
  int self;
  unsigned waits_for;              // bit d: this device waits on the GPU for device d's announcements
  unsigned long long stall_ns;     // a wait this long traps (see above)
  const unsigned* released;        // mapped pinned host memory: nonzero once the host gave up
};

__device__ __forceinline__ void announce_partials(const HermiteMeeting& m) {
  HermiteSignals* const own = m.device[m.self];
  unsigned long long const n = own->announced + 1;
  own->announced = n;
  cuda::atomic_thread_fence(cuda::memory_order_release, cuda::thread_scope_system);
  for (int d = 0; d < m.count; ++d)
    if (d != m.self)
      cuda::atomic_ref<unsigned long long, cuda::thread_scope_system>(m.device[d]->arrived[m.self])
          .store(n, cuda::memory_order_relaxed);
}

// Until every device in `waits_for` has announced `target` block steps. `lead`: the one waiter of a wait (the one
// thread, or block 0 of meet_in_every_block) reads the host word often and traps; the other blocks of
// meet_in_every_block read it every kPollHostRarelyNs and never trap, so that a long wait costs no more bus reads, and
// a stall no more messages, than one waiter's.
inline constexpr unsigned long long kPollHostRarelyNs = 1000000;
__device__ __forceinline__ void await_partials(const HermiteMeeting& m, unsigned long long target, bool lead = true) {
  const HermiteSignals* const own = m.device[m.self];
  unsigned long long const start = global_nanoseconds();
  unsigned long long const every = lead ? kPollHostEveryNs : kPollHostRarelyNs;
  unsigned long long host_check = lead ? kPollHostAfterNs : kPollHostRarelyNs;  // the host word is read over the bus
  for (int d = 0; d < m.count; ++d) {
    if (d == m.self || !((m.waits_for >> d) & 1u)) continue;
    cuda::atomic_ref<unsigned long long, cuda::thread_scope_system> arrived(
        const_cast<unsigned long long&>(own->arrived[d]));
    while (arrived.load(cuda::memory_order_acquire) < target) {
      __nanosleep(32);
      unsigned long long const waited = global_nanoseconds() - start;
      if (waited < host_check) continue;
      host_check = waited + every;
      if (cuda::atomic_ref<unsigned, cuda::thread_scope_system>(const_cast<unsigned&>(*m.released))
              .load(cuda::memory_order_relaxed) != 0)
        return;  // given up on: what follows is not used
      if (lead && waited > m.stall_ns) {
        printf("nbody: GPU waited %llu s for another GPU's block step (hermite4); giving up\n",
               m.stall_ns / 1000000000ull);
        __trap();
      }
    }
  }
}

// One thread each, where engines share a GPU or the host waits after each launch (see above).
__global__ void hermite_announce(HermiteMeeting m, const HermiteControl* ctl) {
  follow_previous_kernel();
  if (halted(ctl)) return;
  announce_partials(m);
}
__global__ void hermite_await(HermiteMeeting m, const HermiteControl* ctl) {
  follow_previous_kernel();
  if (halted(ctl)) return;
  await_partials(m, ctl->meetings);
}

// Both at the start of the corrector, where no engines share a GPU (no kernel boundary between the wait and the read:
// on 2 x H200 the block step at N = 4,096 went from 43.3 to 40.5 us, docs/benchmarks.md): block 0 announces, and every
// block waits for every device's (thread 0; the rest at the barrier), so a block reads the others' partials only after
// their announcement. The count to wait for is the block step's (HermiteControl::meetings, which hermite_predict_list
// wrote), not this device's own count, which block 0 may be writing. No block waits for another block of its own
// device, only for the other devices' block 0; and the engine launches the corrector with no more blocks than stay
// resident together (HermiteCudaEngine's resident_correct_), so every block 0 runs while the others wait, unless
// another process holds the GPU's multiprocessors, where the host's bound ends the wait (every waiting block reads the
// host's word, block 0 often and the others rarely; only block 0 traps).
__device__ __forceinline__ void meet_in_every_block(const HermiteMeeting& m, const HermiteControl* ctl) {
  if (threadIdx.x == 0) {
    unsigned long long const target = ctl->meetings;
    if (blockIdx.x == 0) announce_partials(m);
    await_partials(m, target, blockIdx.x == 0);
  }
  __syncthreads();
}

// After the force pass of a block step on several devices: each own group's partial of each active body, from the
// pass's span sums (per_span, added in span order) or its group partials (per_group), into by_index[group][body
// index], where every device's corrector finds it whatever the order of its own list. Nothing once halted.
__global__ void hermite_scatter_groups(HermiteSums sums, ActiveCount count, const hk::ActiveBody* list,
                                       hk::ForceJerk* by_index, unsigned long long bodies, const HermiteControl* ctl) {
  follow_previous_kernel();
  if (halted(ctl)) return;
  unsigned const active = count.get();
  if (active == 0) return;
  bool const spans = hermite_force_mode(active, sums.cut) == HermiteForceMode::per_span;
  unsigned long long const n = static_cast<unsigned long long>(sums.cut.groups) * active;
  for (unsigned long long q = blockIdx.x * blockDim.x + threadIdx.x; q < n; q += gridDim.x * blockDim.x) {
    unsigned long long const g = divide(q, active);
    unsigned const k = unsigned(q - g * active);
    hk::ForceJerk const p = spans ? sums.group_of_spans(int(g), k, active) : load_sum(&sums.group[q]);
    by_index[g * bodies + list[k].index] = p;
  }
}

// ---- the corrector ----
// advance_together's totals: every device's group partials ([own group][body index] each, hermite_scatter_groups),
// in device order, read where they are (peer memory) and added in group order from zero: the sums hermite_add_groups
// passes device after device, found with one wait for the devices in place of one each.
struct HermiteGroupsOnDevices {
  const hk::ForceJerk* group[kHermiteMaxPeers];
  int groups[kHermiteMaxPeers];
  int count;  // devices; 0: not these (the totals are given, or on this device)
  unsigned long long bodies;  // N: a group's partials are [body index]
};

struct HermiteCorrectArgs {
  const hk::ActiveBody* active;  // the whole active block
  ActiveCount own_first;         // the own bodies' place in it
  ActiveCount own_count;
  const hk::ForceJerk* own_totals;  // given totals, [own active]; or nullptr: from `sums` (one device)
  HermiteSums sums;
  ActiveCount active_count;  // the whole block's count (to read `sums`)
  BlockClock clock;          // with ctl: the single-device path (the time, halting, the block's bookkeeping)
  HermiteControl* ctl;       // counters and the floor
  unsigned long long j_bodies;  // own j-bodies: interactions per active body (the control's bookkeeping)
  bool initialise;           // the start: a, jerk and the start step instead of the corrector
  hk::HermiteParams params;
  // hermite_correct<true>: every device's group partials; with `meet`, the devices' meeting first
  // (meet_in_every_block); the bodies [counted_begin, counted_end) whose force evaluations and step levels this device
  // counts (its own j-bodies: every device corrects every active body, and the counts are summed over devices).
  HermiteGroupsOnDevices devices;
  HermiteMeeting meeting;
  bool meet;
  unsigned long long counted_begin, counted_end;
  // Launched before the force pass ends (HermiteForceArgs::corrector_early, with programmatic dependent launch): what
  // the force pass does not write is read first, then every block that reads its sums waits for it. Block 0 always
  // waits, so the corrector's grid ends after the force pass's even where no other block waits (the kernel after it
  // waits for the corrector's grid alone).
  bool early;
};

// hk::step_level (the histogram's level of a step), exactly, without its loop: the least k >= 0 with top 2^-k <= dt
// (top = pow2_at_most(dt_max), a power of two, so top 2^-k <= dt exactly when k >= ilogb(top) - ilogb(dt)), at most
// kLevels - 1; 0 for dt >= top or NaN (the loop stops at once), kLevels - 1 for dt <= 0 (it never stops).
__device__ __forceinline__ int step_level_device(double dt, double top) {
  if (!(dt < top)) return 0;
  if (!(dt > 0.0)) return hk::kLevels - 1;
  int const k = ilogb(top) - ilogb(dt);
  return k < hk::kLevels - 1 ? k : hk::kLevels - 1;
}

// What the corrector reads of one own active body besides its force: its place and its state at t_i. Loaded before
// the force total, so these loads (which need only the active list) are in flight while the total's sums are read,
// not one round trip after them.
struct CorrectorInput {
  std::uint64_t index;
  int i;
  Real4<double> x, v, a, jerk;
  double dt;
};
__device__ __forceinline__ CorrectorInput load_corrector_input(const HermiteSlice& s, const HermiteCorrectArgs& c,
                                                               unsigned first, unsigned k) {
  CorrectorInput in{};
  in.index = c.active[first + k].index;
  in.i = int(in.index) - s.begin;
  if (!c.initialise) {
    in.x = s.x[in.i];
    in.v = s.v[in.i];
    in.a = s.a[in.i];
    in.jerk = s.jerk[in.i];
    in.dt = s.dt[in.i];
  }
  return in;
}

// One own active body with its total force f: corrected (or initialised), its new step taken, counted by the level
// of the step that ended (with `counted`; and as a force evaluation with `evaluation` too), a step below the floor
// remembered. Returns the time_key of its next time.
__device__ __forceinline__ unsigned long long correct_body(const HermiteSlice& s, const HermiteCorrectArgs& c,
                                                           const CorrectorInput& in, const hk::ForceJerk& f, double t,
                                                           bool counted = true, bool evaluation = false) {
  int const i = in.i;
  hk::V3 const a1{f.ax, f.ay, f.az}, j1{f.jx, f.jy, f.jz};
  double step = 0.0;
  if (c.initialise) {
    s.a[i] = {a1.x, a1.y, a1.z, 0.0};
    s.jerk[i] = {j1.x, j1.y, j1.z, 0.0};
    step = hk::start_step(a1, j1, f.phi, t, c.params);
  } else {
    hk::V3 x{in.x.x, in.x.y, in.x.z}, v{in.v.x, in.v.y, in.v.z}, a{in.a.x, in.a.y, in.a.z},
        j{in.jerk.x, in.jerk.y, in.jerk.z};
    double const dt = in.dt;
    double const wanted = hk::correct(x, v, a, j, a1, j1, dt, c.params);
    s.x[i] = {x.x, x.y, x.z, in.x.w};
    s.v[i] = {v.x, v.y, v.z, 0.0};
    s.a[i] = {a.x, a.y, a.z, 0.0};
    s.jerk[i] = {j.x, j.y, j.z, 0.0};
    double const top = hk::pow2_at_most(c.params.dt_max);
    step = hk::next_step(wanted, dt, t, top, hk::step_floor(t, c.params));
    if (counted) {
      atomicAdd(&c.ctl->levels[step_level_device(dt, top)], 1ull);
      if (evaluation) atomicAdd(&c.ctl->force_evaluations, 1ull);
    }
  }
  s.t[i] = t;
  s.dt[i] = step;
  if (hk::below_floor(step, t, c.params)) atomicMin(&c.ctl->floor_body, static_cast<long long>(in.index));
  return time_key(t + step);
}

// Corrects each own active body (or initialises it). Its total: given (the protocol), the force pass's (fold_all),
// its group partials added in group order (per_group), or (per_span, one device) made here from the span sums, two
// warps a body: four threads add group g's spans in span order, thread 0 adds the groups in group order, then corrects.
// On one device (clock.ctl) each corrected body's next time goes into the next block's key (see HermiteControl).
// Grid-stride over the own active bodies (threads, or warps). Launched with blockDim kHermiteBlock.
//
// A small block's corrector is a chain of round trips to memory, so what does not depend on the corrected bodies is
// read or done off that chain: the control's fields in one round trip with the halt flag, each body's state while its
// sums are read, and the block step's bookkeeping by block 0 at its start; blocks with no body return at once.
// kOnDevices: advance_together's corrector, each total from every device's group partials (c.devices), on every
// device for every active body (each device's own list, its replica of every body's state).
template <bool kOnDevices>
__global__ void __launch_bounds__(kHermiteBlock, 2) hermite_correct(HermiteSlice s, HermiteCorrectArgs c) {
  bool const early = !kOnDevices && c.early;
  if (!early) follow_previous_kernel();
  HermiteControl* const clock = c.clock.ctl;
  // Read before the halt flag: a halted launch ignores them. (Early, all of them were written before the force pass
  // started: by hermite_predict_list, hermite_arm or the host.)
  double const t = clock ? clock->t_next : c.clock.t;
  unsigned const n = c.own_count.get(), active = c.active_count.get(), first = c.own_first.get();
  int const write_slot = clock ? clock->write_slot : 0;
  bool const stop = clock && halted(clock);
  unsigned const warps = blockDim.x / 32;
  // No body here in any arrangement below. Block 0 always goes on (see HermiteCorrectArgs::early; on several devices
  // it announces this device's partials).
  if (blockIdx.x > 0 && blockIdx.x >= n) return;
  bool const span_sums = !kOnDevices && !c.own_totals && hermite_force_mode(active, c.sums.cut) == HermiteForceMode::per_span;
  // The first body of this pair of warps in the per-span arrangement below (a small block: its only one), its state
  // read before the wait. 128 registers at most (two blocks an SM): holding it across the wait took the compiler to
  // 132, one block an SM, and a second wave of the grid (5 us more a block step of 256 bodies).
  CorrectorInput first_in{};
  unsigned const first_k = (threadIdx.x / 64) * gridDim.x + blockIdx.x;
  if (early && span_sums && !stop && (threadIdx.x & 63) == 0 && first_k < n)
    first_in = load_corrector_input(s, c, first, first_k);
  if (early) follow_previous_kernel();
  if (stop) return;
  if constexpr (kOnDevices) {
    if (c.meet) meet_in_every_block(c.meeting, c.ctl);
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    // Nothing below reads these (the key it fills is key[write_slot]; hermite_predict_list reads the rest).
    if (!c.initialise && !kOnDevices) c.ctl->force_evaluations += n;
    if (clock) {
      clock->t = t;
      clock->block_steps += 1;
      clock->interactions += static_cast<unsigned long long>(active) * c.j_bodies;
      clock->steps_left -= 1;
      // The slot the next block's time was read from is the one after it to fill: cleared now (no block of this
      // kernel reads read_slot or that key; hermite_predict_list reads and fills the other two).
      int const read = clock->read_slot;
      clock->key[read] = time_key(INFINITY);
      clock->read_slot = read ^ 1;
    }
  }
  unsigned long long key = time_key(INFINITY);
  if constexpr (kOnDevices) {
    __shared__ hk::ForceJerk group_sums[kHermiteBlock / 32][kMaxSegments];
    // Every group's partial read at once, two lanes a group (at most kMaxSegments groups in all), where it is;
    // lane 0 adds them in group order, then corrects. A warp a body, consecutive bodies in consecutive blocks.
    unsigned const lane = threadIdx.x & 31, warp = threadIdx.x / 32;
    int groups = 0;
    for (int d = 0; d < c.devices.count; ++d) groups += c.devices.groups[d];
    for (unsigned k = warp * gridDim.x + blockIdx.x; k < n; k += gridDim.x * warps) {
      CorrectorInput in{};
      if (lane == 0) in = load_corrector_input(s, c, first, k);
      unsigned long long const index = c.active[first + k].index;
      unsigned const g = lane / 2, half = lane & 1;
      if (g < unsigned(groups)) {
        int d = 0;
        unsigned local = g;
        while (local >= unsigned(c.devices.groups[d])) local -= unsigned(c.devices.groups[d++]);
        const auto* r =
            reinterpret_cast<const double2*>(&c.devices.group[d][local * c.devices.bodies + index]) + 2 * half;
        double2 const u = r[0], v = r[1];
        double* const out = reinterpret_cast<double*>(&group_sums[warp][g]) + 4 * half;
        out[0] = u.x;
        out[1] = u.y;
        out[2] = v.x;
        out[3] = v.y;
      }
      __syncwarp();
      if (lane == 0) {
        hk::ForceJerk total{};
        for (int q = 0; q < groups; ++q) hk::add_partial(total, group_sums[warp][q]);
        key = min(key, correct_body(s, c, in, total, t, index >= c.counted_begin && index < c.counted_end, true));
      }
      __syncwarp();
    }
  } else if (span_sums) {
    // Two warps a body (a pair, which waits for itself with named barrier 1 + pair): four threads a group, each adding
    // one double2 of a record's four over the group's spans in span order (each component its own sum, as
    // add_partial adds them), every load of it in flight at once; thread 0 of the pair adds the groups in group
    // order, then corrects. The same k in a whole pair; consecutive bodies in consecutive blocks, so a small block's
    // bodies (and the loads of their span sums) spread over as many SMs as there are bodies.
    static_assert(kHermiteBlock % 64 == 0 && kHermiteBlock / 64 <= 15, "pairs of warps, each its own barrier");
    __shared__ alignas(16) hk::ForceJerk group_sums[kHermiteBlock / 64][kMaxSegments];
    unsigned const q = threadIdx.x & 63, pair = threadIdx.x / 64;
    auto pair_barrier = [pair] { asm volatile("bar.sync %0, 64;" ::"r"(1 + pair) : "memory"); };
    for (unsigned k = first_k; k < n; k += gridDim.x * (warps / 2)) {
      CorrectorInput in{};
      if (q == 0) in = early && k == first_k ? first_in : load_corrector_input(s, c, first, k);
      unsigned const g = q / 4, quarter = q & 3;
      if (g < unsigned(c.sums.cut.groups)) {
        double2 sum{0.0, 0.0};
        int const spg = c.sums.cut.spans_per_group;
#pragma unroll 16
        for (int p = int(g) * spg; p < int(g + 1) * spg; ++p) {
          const hk::ForceJerk& record = c.sums.span[std::size_t(p) * active + first + k];
          double2 const u = reinterpret_cast<const double2*>(&record)[quarter];
          sum.x = __dadd_rn(sum.x, u.x);
          sum.y = __dadd_rn(sum.y, u.y);
        }
        reinterpret_cast<double2*>(&group_sums[pair][g])[quarter] = sum;
      }
      pair_barrier();
      if (q == 0) {
        hk::ForceJerk total{};
        for (int g = 0; g < c.sums.cut.groups; ++g) hk::add_partial(total, group_sums[pair][g]);
        key = min(key, correct_body(s, c, in, total, t));
      }
      pair_barrier();
    }
  } else {
    for (unsigned k = blockIdx.x * blockDim.x + threadIdx.x; k < n; k += gridDim.x * blockDim.x) {
      CorrectorInput const in = load_corrector_input(s, c, first, k);
      hk::ForceJerk const f = c.own_totals ? load_sum(&c.own_totals[k])
                                           : c.sums.total_of(first + k, active);
      key = min(key, correct_body(s, c, in, f, t));
    }
  }
  if (clock && !c.initialise) {
    for (int o = 16; o > 0; o /= 2) key = min(key, __shfl_xor_sync(0xffffffffu, key, o));
    if ((threadIdx.x & 31) == 0 && key != time_key(INFINITY)) atomicMin(&c.ctl->key[write_slot], key);
  }
}

}  // namespace nbody::sim::kernels
