// sim/kernels/tuning.h - every launch shape of the CUDA engine, in one place. Each was chosen by
// measurement (tools/kernel_sweep.cu; the numbers are in docs/benchmarks.md). Changing one changes
// the SASS: re-measure the kernels.
#pragma once

#include <cstddef>
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
};

// The fast kernel where segments are short (N <= 4,096 in segments.h): one body per thread, in
// blocks as long as a segment, one block per (body group, segment). A step there is a few
// microseconds of arithmetic; only many short blocks fill the GPU. Measured on an H200 by
// `kernel_sweep small` (docs/benchmarks.md): N = 1,024, 4.1 us per force stage against 40.6 us
// for the large-N shape on 1,024-body segments; from segments of 512 the large-N shape is faster.
inline constexpr std::size_t kSmallShapeLongestSegment = 256;
template <class Real, int kBlock>
struct SmallFastShape {
  static constexpr int block = kBlock, max_registers = 255;
  static constexpr bool prefetch = false;
  using Order = JMajorOrder<1, 4>;
  static constexpr int bodies = Order::bodies;
};

}  // namespace nbody::sim::kernels
