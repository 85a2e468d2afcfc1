// sim/engines/simd_forces.cpp - the fast fp32 CPU force path. Built with -O3 -ffast-math (see
// sim/engines/CMakeLists.txt) so 1/sqrt becomes the hardware rsqrt estimate plus one Newton step
// (about 23 correct bits) and the fixed-width lane loop vectorises; nothing else lives here.
#include <cmath>

#include "sim/engines/simd_forces.h"

namespace nbody::sim {

void SimdForces::load(const Real4<float>* pos_mass, std::size_t n) {
  std::size_t const padded = (n + kSimdWidth - 1) / kSimdWidth * kSimdWidth;
  x_.assign(padded, 0.0f);  // capacity is kept: after the first step these do not allocate
  y_.assign(padded, 0.0f);
  z_.assign(padded, 0.0f);
  m_.assign(padded, 0.0f);  // padding bodies have zero mass and pull nothing
  for (std::size_t j = 0; j < n; ++j) {
    x_[j] = pos_mass[j].x;
    y_[j] = pos_mass[j].y;
    z_[j] = pos_mass[j].z;
    m_[j] = pos_mass[j].w;
  }
}

void SimdForces::accelerations(std::size_t begin, std::size_t count, float eps2, Real3<float>* acc,
                               const std::atomic<bool>* cancel) const {
  constexpr std::size_t W = kSimdWidth;
  constexpr std::size_t I = kBodiesPerBlock;
  static_assert(W % I == 0, "the padding must cover a whole block of i-bodies");
  if (count == 0) return;
  std::size_t const padded = x_.size();
  const float* __restrict xs = x_.data();
  const float* __restrict ys = y_.data();
  const float* __restrict zs = z_.data();
  const float* __restrict ms = m_.data();
  // Blocks of I bodies start at multiples of I in the global numbering, so body i always sits
  // in lane-block slot i % I and gets the same instruction sequence whatever the slice.
  auto const first_block = static_cast<long>(begin / I);
  auto const last_block = static_cast<long>((begin + count + I - 1) / I);
#pragma omp parallel for schedule(static) if (double(count) * double(padded) > 1e6)
  for (long block = first_block; block < last_block; ++block) {
    if (cancel && cancel->load(std::memory_order_relaxed)) continue;  // given up: skip what is left
    std::size_t const i0 = std::size_t(block) * I;
    float xi[I], yi[I], zi[I];
    for (std::size_t k = 0; k < I; ++k) {
      xi[k] = xs[i0 + k];
      yi[k] = ys[i0 + k];
      zi[k] = zs[i0 + k];
    }
    float ax[I][W] = {}, ay[I][W] = {}, az[I][W] = {};
    for (std::size_t jb = 0; jb < padded; jb += W) {
#pragma omp simd
      for (std::size_t l = 0; l < W; ++l) {
        float const xj = xs[jb + l], yj = ys[jb + l], zj = zs[jb + l], mj = ms[jb + l];
        for (std::size_t k = 0; k < I; ++k) {
          float const dx = xj - xi[k], dy = yj - yi[k], dz = zj - zi[k];
          float const r2 = dx * dx + dy * dy + dz * dz + eps2;
          float const inv_r = 1.0f / std::sqrt(r2);
          float const s = mj * inv_r * inv_r * inv_r;
          ax[k][l] += s * dx;
          ay[k][l] += s * dy;
          az[k][l] += s * dz;
        }
      }
    }
    for (std::size_t k = 0; k < I; ++k) {
      std::size_t const i = i0 + k;
      if (i < begin || i >= begin + count) continue;
      float sx = 0.0f, sy = 0.0f, sz = 0.0f;  // lanes in a fixed order
      for (std::size_t l = 0; l < W; ++l) {
        sx += ax[k][l];
        sy += ay[k][l];
        sz += az[k][l];
      }
      acc[i - begin] = {sx, sy, sz};
    }
  }
}

}  // namespace nbody::sim
