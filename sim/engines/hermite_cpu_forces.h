// sim/engines/hermite_cpu_forces.h - the CPU Hermite engine's force+jerk pass: per-group partials of an active
// block against a j-slice, in the canonical order, OpenMP over work items and SIMD over active bodies.
#pragma once

#include <cstddef>

#include "sim/physics/hermite_step.h"

namespace nbody::sim {

// The j-bodies of one engine's slice, predicted, as structure-of-arrays (index 0 is global body `first`).
struct HermiteJBodies {
  const double *x, *y, *z, *vx, *vy, *vz, *m;
  std::size_t first = 0, count = 0;
};

// Active bodies per SIMD block: every lane sums its own body's j in index order, so a body's sums do not
// depend on which lane, block or thread computes them (nor on how many bodies are active).
inline constexpr std::size_t kHermiteLanes = 8;

// For every active body k (`count` of them, `active` padded to a multiple of kHermiteLanes) and every group g
// of `j` (groups of `group_length` bodies from j.first, a multiple of it): out[g * count + k] = the group's
// partial (docs/architecture.md: spans of hermite_span_length(group_length), each summed in index order from
// zero, added in span order from zero). `fp32`: the pair arithmetic in fp32 on the fp64 differences. OpenMP
// over (block of kHermiteLanes active bodies, group) work items with `threads` threads (0: the default).
void hermite_partials(const hermite::ActiveBody* active, std::size_t count, const HermiteJBodies& j,
                      std::size_t group_length, double eps2, bool fp32, int threads, hermite::ForceJerk* out);

}  // namespace nbody::sim
