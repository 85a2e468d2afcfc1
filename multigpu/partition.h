// multigpu/partition.h - contiguous slices of N bodies over devices, optionally weighted.
#pragma once

#include <cstddef>
#include <vector>

#include "sim/engines/engine.h"

namespace nbody::multigpu {

// Splits [0, n) into `devices` contiguous slices with sizes proportional to `weights` (empty:
// equal). Any n works, fewer bodies than devices too (some slices are then empty). Throws
// InputError for a weight count that does not match or a weight that is not positive.
std::vector<Slice> make_partition(std::size_t n, std::size_t devices, const std::vector<double>& weights = {});

}  // namespace nbody::multigpu
