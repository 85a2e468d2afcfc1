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
  std::size_t length = 0;  // bodies per segment, a multiple of kSegmentAlign
  std::size_t count = 0;   // segments, at most kMaxSegments
  std::size_t padded() const { return length * count; }
};

inline constexpr std::size_t kMaxSegments = 16;
inline constexpr std::size_t kSegmentAlign = 1024;  // the largest block size: a tile never straddles two segments

inline SegmentLayout segment_layout(std::size_t n) {
  std::size_t length = (n + kMaxSegments - 1) / kMaxSegments;
  length = std::max(kSegmentAlign, (length + kSegmentAlign - 1) / kSegmentAlign * kSegmentAlign);
  return {length, (n + length - 1) / length};
}

}  // namespace nbody::sim::kernels
