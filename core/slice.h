// core/slice.h - a contiguous range of bodies [begin, begin + count): what one device integrates.
#pragma once

#include <cstddef>

namespace nbody {

struct Slice {
  std::size_t begin = 0, count = 0;
  std::size_t end() const { return begin + count; }
};

}  // namespace nbody
