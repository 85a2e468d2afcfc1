// sim/engines/hermite_cpu_forces.cpp - the CPU force+jerk pass in the canonical order. Built with -O3 and the
// machine's vector units (sim/engines/CMakeLists.txt) but strict IEEE arithmetic (no fast-math): the lanes of a
// block run one instruction sequence, so every body gets the same bits in any lane, block or thread.
#include "sim/engines/hermite_cpu_forces.h"

#include <omp.h>

#include <cstdint>

namespace nbody::sim {

namespace {

using hermite::ActiveBody;
using hermite::ForceJerk;
constexpr std::size_t W = kHermiteLanes;

// One block of W active bodies against one group: the group's partials, spans summed in order.
template <class Real>
void block_group(const ActiveBody* active, const HermiteJBodies& jb, std::size_t begin, std::size_t end,
                 std::size_t span, Real eps2, ForceJerk* out, std::size_t stride, std::size_t lanes) {
  // Indices as doubles (exact below 2^53): the lane's self test is then a compare of the lanes' own width.
  double xi[W], yi[W], zi[W], vxi[W], vyi[W], vzi[W], idx[W];
  for (std::size_t l = 0; l < W; ++l) {
    ActiveBody const& b = active[l];
    xi[l] = b.x, yi[l] = b.y, zi[l] = b.z, vxi[l] = b.vx, vyi[l] = b.vy, vzi[l] = b.vz;
    idx[l] = b.index == ~std::uint64_t(0) ? -1.0 : double(b.index);
  }
  double gax[W] = {}, gay[W] = {}, gaz[W] = {}, gjx[W] = {}, gjy[W] = {}, gjz[W] = {}, gphi[W] = {};
  for (std::size_t s0 = begin; s0 < end; s0 += span) {
    std::size_t const s1 = s0 + span < end ? s0 + span : end;
    double ax[W] = {}, ay[W] = {}, az[W] = {}, jx[W] = {}, jy[W] = {}, jz[W] = {}, phi[W] = {};
    for (std::size_t j = s0; j < s1; ++j) {
      std::size_t const local = j - jb.first;
      double const xj = jb.x[local], yj = jb.y[local], zj = jb.z[local];
      double const vxj = jb.vx[local], vyj = jb.vy[local], vzj = jb.vz[local];
      Real const mj = Real(jb.m[local]);
      double const jd = double(j);
#pragma omp simd
      for (std::size_t l = 0; l < W; ++l) {
        auto const t = hermite::pair_force_jerk<Real>(Real(xj - xi[l]), Real(yj - yi[l]), Real(zj - zi[l]),
                                                      Real(vxj - vxi[l]), Real(vyj - vyi[l]), Real(vzj - vzi[l]), mj,
                                                      eps2, Real(idx[l] == jd ? 1.0 : 0.0));
        ax[l] += double(t.ax);
        ay[l] += double(t.ay);
        az[l] += double(t.az);
        jx[l] += double(t.jx);
        jy[l] += double(t.jy);
        jz[l] += double(t.jz);
        phi[l] += double(t.phi);
      }
    }
    for (std::size_t l = 0; l < W; ++l) {
      gax[l] += ax[l], gay[l] += ay[l], gaz[l] += az[l];
      gjx[l] += jx[l], gjy[l] += jy[l], gjz[l] += jz[l];
      gphi[l] += phi[l];
    }
  }
  for (std::size_t l = 0; l < lanes; ++l) out[l * stride] = {gax[l], gay[l], gaz[l], gjx[l], gjy[l], gjz[l], gphi[l], 0.0};
}

}  // namespace

void hermite_partials(const ActiveBody* active, std::size_t count, const HermiteJBodies& j, std::size_t group_length,
                      double eps2, bool fp32, int threads, ForceJerk* out) {
  if (count == 0 || j.count == 0) return;
  std::size_t const groups = (j.count + group_length - 1) / group_length;
  std::size_t const blocks = (count + W - 1) / W;
  std::size_t const span = hermite::hermite_span_length(group_length);
  auto const items = static_cast<long>(blocks * groups);
  // Below about a millisecond of work a parallel region costs more than it saves (and on a loaded machine a
  // team waits for its slowest thread): one thread then.
  bool const parallel = double(count) * double(j.count) > 1e6 && items > 1;
  int const team = threads > 0 ? threads : omp_get_max_threads();
#pragma omp parallel for schedule(dynamic, 1) num_threads(team) if (parallel)
  for (long item = 0; item < items; ++item) {
    std::size_t const g = std::size_t(item) % groups, b = std::size_t(item) / groups;
    std::size_t const begin = j.first + g * group_length;
    std::size_t const end = begin + group_length < j.first + j.count ? begin + group_length : j.first + j.count;
    std::size_t const lanes = count - b * W < W ? count - b * W : W;
    ForceJerk* o = out + g * count + b * W;
    if (fp32)
      block_group<float>(active + b * W, j, begin, end, span, float(eps2), o, 1, lanes);
    else
      block_group<double>(active + b * W, j, begin, end, span, eps2, o, 1, lanes);
  }
}

}  // namespace nbody::sim
