// sim/kernels/segments.h - the canonical summation order every GPU force kernel keeps.
//
// Every GPU kernel sums body i's interactions in one canonical order, so all kernels, launch
// shapes and partitions give bitwise-identical accelerations: j runs over `count` segments of
// `length` bodies (positions padded with zero-mass bodies to length * count); each segment is
// summed in index order into a fresh partial, and the partials are added in segment order.
#pragma once

#include <algorithm>
#include <cstddef>

namespace nbody::sim::kernels {

struct SegmentLayout {
  std::size_t length = 0;  // bodies per segment: a power of two from kMinSegment, or a multiple of kSegmentAlign
  std::size_t count = 0;   // segments, at most kMaxSegments
  std::size_t padded() const { return length * count; }
};

inline constexpr std::size_t kMaxSegments = 16;
inline constexpr std::size_t kSegmentAlign = 1024;  // the largest block size
inline constexpr std::size_t kMinSegment = 64;

// About N / kMaxSegments bodies a segment. From 8,193 bodies on, a multiple of kSegmentAlign, so
// that no tile of any block size straddles two segments. Below, the power of two at or above
// N / kMaxSegments (at least kMinSegment): more segments than a few of 1,024 let small N fill the
// GPU, and a power of two is a whole number of tiles of every block size up to its own length
// (kernels with larger blocks tile by the segment length).
inline SegmentLayout segment_layout(std::size_t n) {
  std::size_t const share = (n + kMaxSegments - 1) / kMaxSegments;
  std::size_t length = kMinSegment;
  while (length < share) length *= 2;
  if (length >= kSegmentAlign) length = (share + kSegmentAlign - 1) / kSegmentAlign * kSegmentAlign;
  return {length, std::max<std::size_t>(1, (n + length - 1) / length)};
}

}  // namespace nbody::sim::kernels
