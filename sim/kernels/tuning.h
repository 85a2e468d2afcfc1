// sim/kernels/tuning.h - every launch shape of the CUDA engine, in one place. Each was chosen by
// measurement (tools/kernel_sweep.cu; the numbers are in docs/benchmarks.md). Changing one changes
// the SASS: re-measure the kernels.
#pragma once

#include <type_traits>

#include "sim/kernels/pair_order.h"

namespace nbody::sim::kernels {

// Threads per block of the element-wise kernels (kick, damp, drift, reduce, potential).
inline constexpr int kElementwiseBlock = 256;
// Threads per block of the naive and tiled kernels unless --block-size says otherwise.
inline constexpr int kDefaultBlock = 256;

// The fast kernel: 4 bodies per thread in blocks of 128, steps of 4 j-bodies, no register cap.
// Blocks of 128 rather than 256 keep 5 blocks (20 warps) on each SM and halve the work in a
// block, so the last wave ends more evenly. fp32 double-buffers its tiles and issues its pairs in
// the measured order; fp64 does neither (its registers leave no room for the prefetched body).
template <class Real>
struct FastShape {
  static constexpr bool is_float = std::is_same_v<Real, float>;
  static constexpr int block = 128, max_registers = 255;
  static constexpr bool prefetch = is_float;
  using Order = std::conditional_t<is_float, MeasuredOrder4x4, JMajorOrder<4, 4>>;
  static constexpr int bodies = Order::bodies;
  static constexpr bool fold_reduce = false;  // split launches sum their partials in reduce_partials
};

// The fast kernel where segments are shorter than kSegmentAlign (N <= 8,192, segments.h): a
// block no longer than the shortest segment, one body per thread, one block per (group, segment),
// and the partial sums added by the kernel's last block instead of a launch of their own. A step
// there is a few microseconds of arithmetic: the GPU must be filled by many short blocks, and
// every launch saved counts (`kernel_sweep small`, docs/benchmarks.md).
template <class Real>
struct SmallFastShape {
  static constexpr int block = 64, max_registers = 255;
  static constexpr bool prefetch = false;
  using Order = JMajorOrder<1, 4>;
  static constexpr int bodies = Order::bodies;
  static constexpr bool fold_reduce = true;
};

}  // namespace nbody::sim::kernels
