// multigpu/partition.cpp - contiguous weighted slices.
#include "multigpu/partition.h"

#include <cmath>
#include <sstream>

#include "core/errors.h"

namespace nbody::multigpu {

std::vector<Slice> make_partition(std::size_t n, std::size_t devices, const std::vector<double>& weights) {
  if (devices == 0) throw InputError("need at least one device");
  std::vector<double> w = weights.empty() ? std::vector<double>(devices, 1.0) : weights;
  if (w.size() != devices) {
    throw InputError("--weights: " + std::to_string(w.size()) + " weights given for " + std::to_string(devices) +
                     " devices; give one per device");
  }
  double total = 0.0;
  for (double x : w) {
    if (!(x > 0.0) || !std::isfinite(x)) {
      std::ostringstream s;
      s << "--weights: weight " << x << " is not a positive number";
      throw InputError(s.str());
    }
    total += x;
  }
  // Boundaries at the rounded cumulative shares: contiguous, covering, sizes within one of exact.
  std::vector<Slice> slices(devices);
  double cumulative = 0.0;
  std::size_t begin = 0;
  for (std::size_t d = 0; d < devices; ++d) {
    cumulative += w[d];
    std::size_t const end = d + 1 == devices ? n : static_cast<std::size_t>(std::llround(double(n) * cumulative / total));
    slices[d] = {begin, std::max(end, begin) - begin};
    begin = std::max(end, begin);
  }
  return slices;
}

}  // namespace nbody::multigpu
